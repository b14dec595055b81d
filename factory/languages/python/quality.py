"""Python's ``quality`` facet: the inputs stage's job kinds ``arcs`` and ``ablation`` of the
Python worker (``factory.quality.jobs``)."""

from factory.quality.jobs import KINDS

__all__ = ["KINDS"]
