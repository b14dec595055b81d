"""The trace stage's core: a line tracer with the semantics of docs/design.md §4 (see semantics.md)."""

from factory.trace.tracer import statement_starts, trace_call, trace_job

__all__ = ["statement_starts", "trace_call", "trace_job"]
