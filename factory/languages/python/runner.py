"""Python's ``runner`` facet: the trusted worker's job kinds that call a program (``run``, ``lines``)."""

from factory.sandbox.trusted.worker import KINDS

__all__ = ["KINDS"]
