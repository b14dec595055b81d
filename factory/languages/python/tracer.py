"""Python's ``tracer`` facet: the job kinds of the settrace tracer (``factory.trace.jobs``)."""

from factory.trace.jobs import KINDS

__all__ = ["KINDS"]
