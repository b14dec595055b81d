"""The execute stage: run every case in the sandbox under two hash seeds (DESIGN §3, §4)."""

from factory.execute.runner import Executor, execute_cases

__all__ = ["Executor", "execute_cases"]
