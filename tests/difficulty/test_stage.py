"""The difficulty stage with the real scorer and a scripted solver (a test double), plus its CLI."""

from __future__ import annotations

import json
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import pytest

from factory.contracts import DIFFICULTY_SCHEMA, TASKS_SCHEMA
from factory.difficulty import run_difficulty_stage
from factory.difficulty.stage import _with_stats
from factory.io import ShardWriter, read_table, shard_paths
from factory.params import DifficultyParams
from factory.solvers import CachedSolver, ResponseCache
from tests.solvers.helpers import ScriptedSolver, cruxeval_task_rows, write_tasks


@pytest.fixture(scope="module")
def rows(cruxeval_traced):
    return cruxeval_task_rows(cruxeval_traced, 8)


def right_count(prompt: str) -> int:
    return zlib.crc32(prompt.encode()) % 5  # 0..4 of 4 samples right, fixed per prompt


def run(rows, tmp_path: Path, double: ScriptedSolver, **params):
    tasks = tmp_path / "tasks"
    if not tasks.exists():
        write_tasks(rows, tasks)
    p = DifficultyParams(**{"enabled": True, "n": 4, "min_pass": 1, "max_pass": 3, **params})
    solver = CachedSolver(double, ResponseCache(tmp_path / "cache.sqlite"))
    out = tmp_path / "out"
    result = run_difficulty_stage(
        tasks, out, tmp_path / "pass", tmp_path / "m.json", p, seed=3, solver=solver
    )
    return result, read_table(out).to_pylist(), read_table(tmp_path / "pass").to_pylist()


def test_band_pass_stats_and_metrics(rows, tmp_path: Path) -> None:
    double = ScriptedSolver(rows, right_count)
    result, kept, stats = run(rows, tmp_path, double)
    expected = {r["task_id"]: right_count(r["prompt"]) for r in rows}
    assert {s["task_id"]: s["passes"] for s in stats} == expected  # every judged task, in or out
    assert {r["task_id"] for r in kept} == {t for t, c in expected.items() if 1 <= c <= 3}
    for r in kept:
        assert r["solver_model"] == "scripted-test-double" and r["n"] == 4
        assert r["pass_rate"] == r["passes"] / 4
    assert all(s["in_band"] == (1 <= s["passes"] <= 3) for s in stats)
    assert all(s["unparsed"] == 4 - s["passes"] for s in stats)
    m = json.loads((tmp_path / "m.json").read_text())
    for key in ("enabled", "solver", "solver_model", "n", "min_pass", "max_pass"):
        assert key in m
    assert m["solver_model"] == "scripted-test-double" and m["n"] == 4
    assert m["in"] == len(rows) and m["out"] == len(kept)
    assert m["dropped"]["too_hard"] == sum(c == 0 for c in expected.values())
    assert sum(f["in"] for f in m["by_family"].values()) == len(rows)
    assert sum(t["kept"] for t in m["by_tier"].values()) == len(kept)
    assert m["passes_histogram"] == {
        str(k): list(expected.values()).count(k) for k in sorted(set(expected.values()))
    }
    by_cell = m["passes_by_family_tier"]  # the card's difficulty table
    for r in rows:
        assert by_cell[r["family"]][str(r["tier"])][str(expected[r["task_id"]])] >= 1
    assert sum(v for tiers in by_cell.values() for c in tiers.values() for v in c.values()) == len(rows)
    assert result.model_calls == 1 and result.prompts_asked == len({r["prompt"] for r in rows})


def test_the_card_shows_the_passes_by_family_and_tier() -> None:
    from factory.release.card import _difficulty_section

    diff = {
        "enabled": True, "solver": "transformers", "solver_model": "m", "n": 2, "min_pass": 0,
        "max_pass": 1, "passes_by_family_tier": {"output": {"1": {"0": 3, "2": 1}, "4": {"1": 5}}},
    }  # fmt: skip
    section = _difficulty_section(diff)
    assert "| family | tier | 0 | 1 | 2 |" in section
    assert "| output | tier 1 | 3 | 0 | 1 |" in section and "| output | tier 4 | 0 | 5 | 0 |" in section
    assert _difficulty_section({**diff, "passes_by_family_tier": {}}) == ""  # nothing judged
    assert _difficulty_section(None) == ""


def test_rerun_and_reband_make_zero_model_calls_and_same_bytes(rows, tmp_path: Path) -> None:
    double = ScriptedSolver(rows, right_count)
    run(rows, tmp_path, double)
    first = sorted(p.read_bytes() for p in (tmp_path / "out").glob("*.parquet"))
    again, _, _ = run(rows, tmp_path, double)
    assert again.model_calls == 0 and double.calls == 1
    assert sorted(p.read_bytes() for p in (tmp_path / "out").glob("*.parquet")) == first
    reband, kept, _ = run(rows, tmp_path, double, max_pass=4)
    assert reband.model_calls == 0 and len(kept) > 0


def test_limit_judges_only_the_first_tasks(rows, tmp_path: Path) -> None:
    result, kept, stats = run(rows, tmp_path, ScriptedSolver(rows, lambda p: 2), limit=5, chunk=3)
    assert len(stats) == 5 and len(kept) == 5
    assert result.stats.dropped["not_judged_over_limit"] == len(rows) - 5


def test_off_by_default_passes_everything_with_a_loud_notice(rows, tmp_path: Path, execverify) -> None:
    write_tasks(rows, tmp_path / "tasks")
    params = tmp_path / "params.yaml"
    params.write_text("seed: 1\n")
    cmd = [
        execverify,
        "stage",
        "difficulty",
        "--params",
        str(params),
        "--tasks",
        str(tmp_path / "tasks"),
        "--out",
        str(tmp_path / "out"),
        "--pass-stats",
        str(tmp_path / "pass"),
        "--stats",
        str(tmp_path / "m.json"),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "DIFFICULTY FILTER OFF" in done.stderr
    out = read_table(tmp_path / "out")
    assert out.num_rows == len(rows) and out.column("n").to_pylist() == [0] * len(rows)
    assert (
        out.select([f.name for f in TASKS_SCHEMA]).to_pylist() == read_table(tmp_path / "tasks").to_pylist()
    )
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["enabled"] is False and m["solver_model"] is None and "notice" in m
    assert read_table(tmp_path / "pass").num_rows == 0


def test_off_writes_the_shards_of_the_rows_made_dicts(rows, tmp_path: Path) -> None:
    """Off, the tasks go through as Arrow batches: the same bytes as each made a dict
    (``_with_stats``) and written by ``write_many``, shard for shard; a table without a column
    (``language``) gets nulls; the metrics count every tier (null ones too) and family."""
    tasks = [{**r, "tier": None} if i % 3 == 0 else r for i, r in enumerate(rows)]
    old_schema = TASKS_SCHEMA.remove(TASKS_SCHEMA.get_field_index("language"))
    with ShardWriter(tmp_path / "tasks", old_schema, rows_per_shard=5) as writer:
        writer.write_many(tasks)
    p = DifficultyParams().model_copy(update={"rows_per_shard": 3})  # at least 100 in params.yaml
    run_difficulty_stage(tmp_path / "tasks", tmp_path / "out", tmp_path / "pass", tmp_path / "m.json", p, 1)
    with ShardWriter(tmp_path / "dicts", DIFFICULTY_SCHEMA, rows_per_shard=3) as writer:
        writer.write_many(_with_stats(r, None, None) for r in read_table(tmp_path / "tasks").to_pylist())
    out, dicts = shard_paths(tmp_path / "out"), shard_paths(tmp_path / "dicts")
    assert len(out) > 1 and [p.name for p in out] == [p.name for p in dicts]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(out, dicts, strict=True))
    assert read_table(tmp_path / "out").column("language").null_count == len(rows)
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["in"] == m["out"] == len(rows) and read_table(tmp_path / "pass").num_rows == 0
    tiers, families = Counter(str(r["tier"]) for r in tasks), Counter(r["family"] for r in tasks)
    assert m["by_tier"] == {t: {"in": n, "kept": n} for t, n in tiers.items()}
    assert m["by_family"] == {f: {"in": n, "kept": n} for f, n in families.items()}


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("difficulty: {min_pass: 4, max_pass: 2}\n", "min_pass (4) must not exceed max_pass"),
        ("difficulty: {solver: llama}\n", "difficulty.solver"),
        ("difficulty: {n: 0}\n", "difficulty.n"),
        ("difficulty: {bogus: 1}\n", "difficulty.bogus"),
    ],
)
def test_bad_params_are_one_line_and_exit_2(tmp_path: Path, execverify, yaml_text: str, message: str) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(yaml_text)
    done = subprocess.run(
        [execverify, "stage", "difficulty", "--params", str(params)], capture_output=True, text=True
    )
    assert done.returncode == 2 and message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
