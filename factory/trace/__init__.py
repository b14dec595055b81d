"""The trace stage's core: a line tracer with the semantics of docs/design.md §4 (see semantics.md)."""

from factory.trace.statements import statement_starts
from factory.trace.tracer import trace_call

__all__ = ["statement_starts", "trace_call"]
