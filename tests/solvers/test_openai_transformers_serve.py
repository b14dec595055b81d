"""The openai backend, the difficulty stage and `execverify eval` against a REAL local
OpenAI-compatible server (`transformers serve` with the embedded SmolLM2-135M on 127.0.0.1)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from factory.difficulty import run_difficulty_stage
from factory.io import read_table
from factory.params import DifficultyParams
from factory.solvers.openai_backend import OpenAISolver
from tests.solvers.helpers import cruxeval_task_rows, write_tasks

pytestmark = pytest.mark.slow  # starts a real server and a real model (about a minute idle, more under load)


def test_openai_backend_gets_n_choices_from_a_server_that_ignores_n(transformers_server, embedded_dir):
    s = OpenAISolver(str(embedded_dir), base_url=transformers_server, concurrency=2, timeout_s=120)
    out = s.generate(["Say hi.", "Name a colour."], 2, 1.0, 1.0, 6, 3)
    assert [len(x) for x in out] == [2, 2]
    assert all(isinstance(t, str) and t for x in out for t in x)
    assert s.requests == 4  # one choice per request: each prompt was asked twice


def test_difficulty_stage_through_the_server_then_rerun_from_cache(
    transformers_server, embedded_dir, cruxeval_traced, tmp_path: Path
):
    rows = [r for r in cruxeval_task_rows(cruxeval_traced, 6) if r["family"] in ("output", "input")][:3]
    tasks = write_tasks(rows, tmp_path / "tasks")
    params = DifficultyParams(
        enabled=True,
        solver="openai",
        model=str(embedded_dir),
        base_url=transformers_server,
        n=2,
        max_pass=2,
        max_tokens=8,
        concurrency=2,
        cache=str(tmp_path / "cache.sqlite"),
    )
    out, pstats, metrics = tmp_path / "difficulty", tmp_path / "pass_stats", tmp_path / "m.json"
    first = run_difficulty_stage(tasks, out, pstats, metrics, params, seed=1)
    assert first.prompts_asked == 3 and first.model_calls == 1
    table = read_table(pstats).to_pylist()
    assert len(table) == 3 and all(r["n"] == 2 and r["passes"] + r["unparsed"] <= 2 for r in table)
    assert all(r["pass_rate"] == r["passes"] / 2 for r in table)
    m = json.loads(metrics.read_text())
    assert m["enabled"] is True and m["solver"] == "openai" and m["n"] == 2
    again = run_difficulty_stage(
        tasks, out, pstats, metrics, params.model_copy(update={"max_pass": 0}), seed=1
    )
    assert again.model_calls == 0 and again.cache_hits == 6  # re-banding asks the model nothing


def test_eval_cli_through_the_server(transformers_server, embedded_dir, execverify, cruxeval_path, tmp_path):
    cmd = [
        execverify,
        "eval",
        "--benchmark",
        "cruxeval-o",
        "--path",
        str(cruxeval_path),
        "--solver",
        "openai",
        "--model",
        str(embedded_dir),
        "--base-url",
        transformers_server,
        "--limit",
        "2",
        "--n",
        "2",
        "--max-tokens",
        "8",
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--json",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["items"] == 2 and report["n"] == 2
    assert sum(report["samples"].values()) == 4 and report["model_calls"] == 1
    assert report["pass@1"] == pytest.approx(report["samples"]["right"] / 4)  # mean of c / n over items
    assert report["pass@1"] <= report["pass@2"] and report["pass@2"] in (0.0, 0.5, 1.0)
