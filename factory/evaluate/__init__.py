"""Evaluation of a solver model on CRUXEval (output / input) or on our release's test split."""

from factory.evaluate.benchmarks import BENCHMARKS, load_benchmark
from factory.evaluate.metrics import pass_at_k, summarize
from factory.evaluate.run import evaluate

__all__ = ["BENCHMARKS", "evaluate", "load_benchmark", "pass_at_k", "summarize"]
