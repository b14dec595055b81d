"""Python's ``measure`` facet: the worker kinds of the quality figures (``factory.quality.measure``)
and the argument values their pool lookup reads.

``KINDS``: ``quality`` (``factory.quality.probe``: static facts, ``if`` outcomes, random runs, item
solves) and ``ablation``; ``WORKER``: None, the Python worker; ``shape_args``: an argument text's
values as ``factory.quality.signature`` shapes them (Python's are its own)."""

from factory.literals import parse_args as shape_args
from factory.quality import jobs, probe

KINDS = {**jobs.KINDS, **probe.KINDS}
WORKER = None

__all__ = ["KINDS", "WORKER", "shape_args"]
