"""Python's ``untrusted`` facet: one call of a program in the untrusted sandbox, as the scorer runs
an input answer (``factory.sandbox.untrusted.runner.call_function``)."""

from __future__ import annotations

from factory.sandbox.untrusted.runner import call_function

__all__ = ["call_function"]
