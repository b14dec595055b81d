"""Python's ``untrusted`` facet: the untrusted sandbox's runs, as the scorer makes them: one call of
a program for an input answer (``factory.sandbox.untrusted.runner.call_function``), and a codegen
completion's tests (``run_tests``)."""

from __future__ import annotations

from factory.sandbox.untrusted import runner
from factory.sandbox.untrusted.runner import TestReport, call_function

__all__ = ["call_function", "run_tests"]


def run_tests(code: str, tests: list[str], entry: str, *, timeout_s: float, memory_mb: int) -> TestReport:
    """The tests (Python asserts) run against the code, calling into the sandbox; the entry is
    bound in each test even when it shadows a built-in."""
    return runner.run_tests(code, tests, timeout_s=timeout_s, memory_mb=memory_mb, expose=(entry,))
