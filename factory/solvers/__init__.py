"""Solver models (docs/design.md §7): one interface, ``generate(prompts, n, ...) -> n texts per prompt``.

Backends: ``openai`` (any OpenAI-compatible server), ``vllm`` (offline engine on a GPU),
``transformers`` (a local model; ``embedded`` is Qwen2.5-Coder-0.5B-Instruct, ``smollm2`` the small
SmolLM2-135M-Instruct, both from wheels: ``factory.solvers.embedded``).
``make_solver`` builds one and puts the on-disk response cache in front; ``solver_from_params``
does so from a params section (``difficulty``, ``sft``, ``execverify eval``'s options).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from factory.errors import UserError
from factory.solvers.base import Sampling, Solver
from factory.solvers.cache import CachedSolver, ResponseCache, default_cache_dir
from factory.solvers.embedded import embedded_model

if TYPE_CHECKING:
    from factory.params import BackendParams, SolverParams
    from factory.solvers.ray_data import Placement

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
    "solver_from_params",
]


def make_backend(kind: str, model: str | None, **options: Any) -> Solver:
    """A backend by name; ``options`` are that backend's keyword arguments."""
    _check_kind(kind)
    if kind == "transformers":
        from factory.solvers.transformers_backend import TransformersSolver

        return TransformersSolver(model, **options)
    if kind == "openai":
        from factory.solvers.openai_backend import OpenAISolver

        return OpenAISolver(model or "", **options)
    from factory.solvers.vllm_backend import VLLMSolver

    return VLLMSolver(model or "", **options)


def make_solver(
    kind: str,
    model: str | None,
    cache_path: str | Path | None = None,
    label: str = "solver",
    placement: Placement | None = None,
    **options: Any,
) -> CachedSolver:
    """A backend behind the response cache (default: ``<user cache>/responses.sqlite``); with a
    ``placement``, the backend runs as replicas on Ray (``factory.solvers.ray_data``)."""
    _check_kind(kind)  # now, as the backend is built only on the first cache miss
    cache = ResponseCache(cache_path or default_cache_dir() / "responses.sqlite")

    def build() -> Solver:
        if placement is None:
            return make_backend(kind, model, **options)
        from factory.solvers.ray_data import RaySolver

        return RaySolver(kind, model, options, placement)

    return CachedSolver(
        build, cache, label=label, model_id=model_id(kind, model), one_pass=placement is not None
    )


def solver_from_params(
    params: SolverParams, label: str, backend: BackendParams | None = None
) -> CachedSolver:
    """``make_solver`` with the solver, model, cache and backend options of a params section; on
    Ray replicas when ``backend`` is ``ray`` (the openai solver asks its server from here: the
    server scales itself)."""
    placement = None
    if backend is not None and backend.kind == "ray" and params.solver != "openai":
        from factory.solvers.ray_data import Placement

        placement = Placement(
            backend.address, params.replicas, params.tensor_parallel_size, params.replica_cpus
        )
    options = params.backend_options()
    return make_solver(params.solver, params.model, params.cache or None, label, placement, **options)


def _check_kind(kind: str) -> None:
    if kind not in BACKENDS:
        raise UserError(f"unknown solver {kind!r} (expected one of {', '.join(BACKENDS)})")


def model_id(kind: str, model: str | None) -> str:
    """The name a model's responses are cached and reported under (without loading it)."""
    embedded = embedded_model(model) if kind == "transformers" else None
    if embedded is not None:
        return embedded.model_id
    if not model:
        raise UserError(f"the {kind} solver needs a model name")
    return model
