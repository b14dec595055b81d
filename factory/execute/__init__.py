"""The execute stage: run every case in the sandbox under two hash seeds (docs/design.md §2, §4)."""

from factory.execute.runner import Executor, execute_cases

__all__ = ["Executor", "execute_cases"]
