"""The sft stage: only responses the scorer judges right are kept, in chat format."""

from __future__ import annotations

import json
import subprocess
import zlib
from pathlib import Path

import pytest

from factory.io import read_table
from factory.params import SftParams
from factory.scoring import score_item
from factory.sft import run_sft_stage
from factory.solvers import CachedSolver, ResponseCache
from factory.solvers.transformers_backend import TransformersSolver
from tests.solvers.helpers import ScriptedSolver, cruxeval_task_rows, write_tasks


@pytest.fixture(scope="module")
def rows(cruxeval_traced):
    return cruxeval_task_rows(cruxeval_traced, 8)


def test_keeps_only_right_responses_of_the_chosen_families(rows, tmp_path: Path) -> None:
    tasks = write_tasks(rows, tmp_path / "tasks")
    double = ScriptedSolver(rows, lambda p: zlib.crc32(p.encode()) % 3)  # 0..2 right of 3
    solver = CachedSolver(double, ResponseCache(tmp_path / "c.sqlite"))
    params = SftParams(enabled=True, n=3, per_task=2)
    stats = run_sft_stage(tasks, tmp_path / "sft", tmp_path / "m.json", params, seed=0, solver=solver)
    out = read_table(tmp_path / "sft").to_pylist()
    used = [r for r in rows if r["family"] in ("output", "input")]
    expected = {r["task_id"]: min(zlib.crc32(r["prompt"].encode()) % 3, 2) for r in used}
    got: dict[str, int] = {}
    for ex in out:
        got[ex["source_task_id"]] = got.get(ex["source_task_id"], 0) + 1
        user, assistant = ex["messages"]
        assert user["role"] == "user" and assistant["role"] == "assistant"
        row = next(r for r in rows if r["task_id"] == ex["source_task_id"])
        assert ex["task_id"] == f"{row['task_id']}:sft{ex['sample_index']}"
        assert (ex["program_id"], ex["source"]) == (row["program_id"], row["source"])  # for the release
        assert user["content"] == row["prompt"]
        assert score_item(row, assistant["content"]).reward == 1.0
    assert got == {t: c for t, c in expected.items() if c}
    assert len({ex["task_id"] for ex in out}) == len(out)
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["examples"] == len(out) and m["teacher_model"] == "scripted-test-double"
    assert stats.dropped["no_right_response"] == sum(c == 0 for c in expected.values())
    assert sum(v for k, v in stats.dropped.items() if k.startswith("family_")) == len(rows) - len(used)


def test_off_by_default(rows, tmp_path: Path, execverify) -> None:
    write_tasks(rows, tmp_path / "tasks")
    (tmp_path / "p.yaml").write_text("seed: 0\n")
    cmd = [
        execverify,
        "stage",
        "sft",
        "--params",
        str(tmp_path / "p.yaml"),
        "--tasks",
        str(tmp_path / "tasks"),
        "--out",
        str(tmp_path / "sft"),
        "--stats",
        str(tmp_path / "m.json"),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "SFT STAGE OFF" in done.stderr
    assert read_table(tmp_path / "sft").num_rows == 0
    assert json.loads((tmp_path / "m.json").read_text())["enabled"] is False


@pytest.mark.slow
def test_embedded_teacher_on_a_few_items(rows, tmp_path: Path) -> None:
    """The embedded model as teacher: it gets few right; every kept example must score 1."""
    few = [r for r in rows if r["family"] == "output"][:2]
    tasks = write_tasks(few, tmp_path / "tasks")
    backend = TransformersSolver("smollm2", device="cpu", threads=1)
    solver = CachedSolver(backend, ResponseCache(tmp_path / "c.sqlite"))
    params = SftParams(enabled=True, n=2, max_tokens=24)
    stats = run_sft_stage(tasks, tmp_path / "sft", tmp_path / "m.json", params, seed=0, solver=solver)
    assert stats.items_in == 2 and stats.items_out + stats.dropped["no_right_response"] == 2
    out = read_table(tmp_path / "sft").to_pylist()
    assert json.loads((tmp_path / "m.json").read_text())["examples"] == len(out)
    assert len({ex["source_task_id"] for ex in out}) == stats.items_out and solver.model_calls == 1
    for ex in out:
        row = next(r for r in few if r["task_id"] == ex["source_task_id"])
        assert score_item(row, ex["messages"][1]["content"]).reward == 1.0
