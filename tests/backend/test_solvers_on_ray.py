"""The model stages on Ray Data, for real: a two-node Ray cluster on 127.0.0.1 and SmolLM2-135M
(the transformers solver) as the engine of each replica. The outputs equal the local backend's,
the response cache in the driver asks each (model, prompt, sampling, sample index) once across
the replicas and never again, a lost replica's batch runs again, and bad settings are one line."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from factory.difficulty import run_difficulty_stage
from factory.errors import UserError
from factory.params import BackendParams, DifficultyParams, Params, SftParams, validate_section
from factory.sft import run_sft_stage
from factory.solvers import Sampling, make_solver
from factory.solvers.ray_data import Placement, RaySolver
from tests.backend.cluster import RayCluster
from tests.pipeline import output_files
from tests.solvers.helpers import cruxeval_task_rows, write_tasks

# Ray Data's process title of a replica actor (``.submit`` while it answers a batch)
REPLICA_TITLE = "ray::MapWorker(MapBatches(Replica))"
SMOL = {"solver": "transformers", "model": "smollm2", "threads": 1, "batch_size": 2, "max_tokens": 24}


@pytest.fixture(scope="module")
def tasks(cruxeval_traced: list, embedded_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight output / input tasks of CRUXEval, one of them twice (the cache asks it once)."""
    rows = [r for r in cruxeval_task_rows(cruxeval_traced, 12) if r["family"] in ("output", "input")][:7]
    rows.append({**rows[2], "task_id": rows[2]["task_id"] + "-again"})
    return write_tasks(rows, tmp_path_factory.mktemp("tasks") / "tasks")


def _difficulty(tasks: Path, out: Path, cache: Path, backend: BackendParams | None) -> Any:
    params = DifficultyParams(
        enabled=True, n=3, max_pass=3, temperature=0.0, chunk=3, cache=str(cache), **SMOL
    )
    return run_difficulty_stage(
        tasks, out / "band", out / "pass_stats", out / "metrics.json", params, seed=5, backend=backend
    )


def test_difficulty_on_ray_equals_local_and_a_cached_rerun_asks_nothing(
    cluster: RayCluster, tasks: Path, tmp_path: Path
) -> None:
    local = _difficulty(tasks, tmp_path / "local", tmp_path / "local.sqlite", None)
    ray = BackendParams(kind="ray", address=cluster.address)
    on_ray = _difficulty(tasks, tmp_path / "ray", tmp_path / "ray.sqlite", ray)
    expected = output_files(tmp_path / "local")
    assert len(expected) >= 3 and output_files(tmp_path / "ray") == expected  # shards and stats
    # The same batches were asked (3 rounds of 3 tasks, 7 distinct prompts, greedy: one sample
    # each) and the same hits counted (the repeated prompt).
    assert (on_ray.model_calls, on_ray.prompts_asked, on_ray.cache_hits) == (3, 7, 1)
    assert (local.model_calls, local.prompts_asked, local.cache_hits) == (3, 7, 1)
    # The rerun asks nothing: not even the cluster, which this address does not lead to.
    nowhere = BackendParams(kind="ray", address="127.0.0.1:1")
    again = _difficulty(tasks, tmp_path / "again", tmp_path / "ray.sqlite", nowhere)
    assert (again.model_calls, again.prompts_asked, again.cache_hits) == (0, 0, 8)
    assert output_files(tmp_path / "again") == expected


def test_sft_on_ray_equals_local_with_sampling(cluster: RayCluster, tasks: Path, tmp_path: Path) -> None:
    # Sampled (temperature 0.7, 2 samples): each replica gets the batches, and so the seeds, of
    # the local path's calls.
    def sft(name: str, backend: BackendParams | None) -> None:
        params = SftParams(
            enabled=True, n=2, temperature=0.7, chunk=4, cache=str(tmp_path / f"{name}.sqlite"), **SMOL
        )
        run_sft_stage(
            tasks, tmp_path / name / "sft", tmp_path / name / "sft.json", params, seed=3, backend=backend
        )

    sft("local", None)
    sft("ray", BackendParams(kind="ray", address=cluster.address))
    expected = output_files(tmp_path / "local")
    assert len(expected) >= 2 and output_files(tmp_path / "ray") == expected
    local, ray = (sqlite3.connect(tmp_path / f"{n}.sqlite") for n in ("local", "ray"))
    query = "SELECT key, text FROM responses ORDER BY key"
    assert local.execute(query).fetchall() == ray.execute(query).fetchall()
    assert len(ray.execute(query).fetchall()) == 7 * 2  # every distinct prompt x sample, once


def _solver(cluster: RayCluster, cache: Path, replicas: int = 2) -> Any:
    options = {"threads": 1, "batch_size": 2}
    placement = Placement(cluster.address, replicas=replicas)
    return make_solver("transformers", "smollm2", cache, "test", placement, **options)


def test_two_replicas_ask_each_prompt_and_sample_once(cluster: RayCluster, tmp_path: Path) -> None:
    prompts = ["Say hi.", "Name a colour.", "Say hi.", "What is 2 + 3?", "Name a colour.", "Count to 3."]
    solver = _solver(cluster, tmp_path / "c.sqlite")
    solver.chunk = 1  # a batch per prompt: both replicas get some
    sampling = Sampling(temperature=1.0, max_tokens=8, seed=1)
    try:
        solver.prefetch([prompts[:3], prompts[3:]], 2, sampling)
        backend = solver.backend
        assert isinstance(backend, RaySolver) and backend.replicas == 2
        assert len(backend.answered_by) == 2  # two replica processes answered
        assert sum(backend.answered_by.values()) == solver.model_calls == solver.prompts_asked == 4
        texts = solver.generate(prompts, 2, **sampling.to_dict())  # from the cache now
        assert solver.model_calls == 4
    finally:
        solver.close()
    rows = sqlite3.connect(tmp_path / "c.sqlite").execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert rows == 4 * 2
    assert texts[0] == texts[2] and texts[1] == texts[4] and all(len(t) == 2 for t in texts)


def test_a_lost_replica_s_batch_runs_again(cluster: RayCluster, tmp_path: Path) -> None:
    prompts = [f"Write the number {i} in words." for i in range(8)]
    sampling = Sampling(temperature=0.0, max_tokens=16)
    reference = _solver(cluster, tmp_path / "reference.sqlite", replicas=1)
    try:
        expected = reference.generate(prompts, 1, **sampling.to_dict())
    finally:
        reference.close()
    killed: list[int] = []

    def kill_a_busy_replica() -> None:
        deadline = time.monotonic() + 240
        while not killed and time.monotonic() < deadline:
            busy = cluster.actor_pids(title=REPLICA_TITLE, method="submit", busy=True)
            if busy:
                os.kill(busy[0], signal.SIGKILL)
                killed.append(busy[0])
            time.sleep(0.2)

    solver = _solver(cluster, tmp_path / "c.sqlite")
    solver.chunk = 1
    killer = threading.Thread(target=kill_a_busy_replica)
    killer.start()
    try:
        solver.prefetch([prompts], 1, sampling)
        got = solver.generate(prompts, 1, **sampling.to_dict())
    finally:
        killer.join()
        solver.close()
    assert killed, "no busy replica was found"
    assert got == expected and solver.prompts_asked == 8


def test_more_replicas_than_the_cluster_holds_is_one_line(cluster: RayCluster, tmp_path: Path) -> None:
    solver = _solver(cluster, tmp_path / "c.sqlite", replicas=3)
    try:
        with pytest.raises(UserError) as raised:
            solver.generate(["Say hi."], 1, temperature=0.0, max_tokens=4)
    finally:
        solver.close()
    assert str(raised.value) == (
        f"the Ray cluster at {cluster.address} (0 GPUs, 2 CPUs) holds 2 solver replicas of 1 CPUs, "
        "not 3: lower replicas, replica_cpus or tensor_parallel_size"
    )


def test_a_replica_that_cannot_load_its_model_is_one_line(cluster: RayCluster, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    placement = Placement(cluster.address, replicas=1)
    solver = make_solver("transformers", str(missing), tmp_path / "c.sqlite", "test", placement, threads=1)
    try:
        with pytest.raises(UserError) as raised:
            solver.generate(["Say hi."], 1, temperature=0.0, max_tokens=4)
    finally:
        solver.close()
    assert str(raised.value).startswith(f"cannot load model {str(missing)!r} offline")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"tensor_parallel_size": 2}, "tensor_parallel_size above 1 is for the vllm solver"),
        ({"replicas": -1}, "difficulty.replicas"),
        ({"replica_cpus": 0}, "difficulty.replica_cpus"),
    ],
)
def test_bad_replica_settings_are_one_line(section: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError) as raised:
        validate_section(Params, {"difficulty": section}, "params.yaml")
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_the_stage_command_without_a_cluster_is_one_line_and_exit_2(
    execverify: str, tasks: Path, tmp_path: Path
) -> None:
    params = {
        "backend": {"kind": "ray", "address": "127.0.0.1:1"},
        "difficulty": {"enabled": True, "n": 1, "max_pass": 1, "cache": str(tmp_path / "c.sqlite"), **SMOL},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    out = tmp_path / "out"
    cmd = [
        execverify,
        "stage",
        "difficulty",
        "--params",
        str(tmp_path / "params.yaml"),
        "--tasks",
        str(tasks),
    ]
    cmd += ["--out", str(out / "d"), "--pass-stats", str(out / "p"), "--stats", str(out / "m.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "backend.address 127.0.0.1:1: no Ray head answers there" in lines[0]
    assert not out.exists()
