"""The assemble plan on hand-made rows: ids computed where missing, exact and near duplicates,
unparsable programs, and each config's rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.params import AssembleParams
from factory.release import counts
from factory.release.benchmarks import BenchmarkIndex
from factory.release.configs import ConfigSpec
from factory.release.plan import (
    compute_program_id_safe,
    config_column,
    decide_programs,
    plan_rows,
    read_rows,
)

F = "def f(x):\n    return x + 1\n"
G = "def g(y):\n    return y + 1\n"  # F renamed: a near duplicate
H = "def h(z):\n    return z * 2\n"
K = "def k(a):\n    return a - 3\n"
BROKEN = "def (:\n"
CONFIGS = [
    ConfigSpec("output", "tasks", ("output",)),
    ConfigSpec("codegen", "extra", ("codegen",), counted=False),
]


def _shard(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-00000.parquet")
    return folder


@pytest.fixture
def plan(tmp_path: Path) -> dict:
    tasks = _shard(
        tmp_path / "tasks",
        [
            {"task_id": "t1", "program_id": "p-f", "family": "output", "source": F, "tier": 1},
            {"task_id": "t2", "program_id": "p-g", "family": "output", "source": G, "tier": 2},
            {"task_id": "t1", "program_id": "p-f", "family": "output", "source": F, "tier": 1},
            {"task_id": "t3", "program_id": "p-h", "family": "input", "source": H, "tier": 1},
        ],
    )
    extra = _shard(
        tmp_path / "extra",  # no program_id, no tier
        [
            {"task_id": "t3", "family": "codegen", "source": H},  # a task_id the tasks input has
            {"task_id": "c1", "family": "codegen", "source": K},
            {"task_id": "c2", "family": "codegen", "source": BROKEN},
        ],
    )
    inputs = {"tasks": tasks, "extra": extra}
    rows = read_rows(inputs, {name: pq.read_schema(d / "part-00000.parquet") for name, d in inputs.items()})
    programs = decide_programs(rows, AssembleParams(), BenchmarkIndex(12, 0.5))
    return {"rows": rows, "programs": programs, "plan": plan_rows(rows, programs, CONFIGS)}


def test_rows_without_a_program_id_get_the_computed_one(plan: dict) -> None:
    ids = plan["rows"].get_column("program_id").to_list()
    assert ids[:4] == ["p-f", "p-g", "p-f", "p-h"]
    assert ids[4:6] == [compute_program_id_safe(H), compute_program_id_safe(K)]
    assert ids[6].startswith("unparsable:")
    assert plan["rows"].get_column("tier").to_list() == [1, 2, 1, 1, None, None, None]


def test_each_row_has_its_fate(plan: dict) -> None:
    fates = plan["plan"].select("input", "ordinal", "task_id", "drop").rows()
    assert fates == [
        ("tasks", 0, "t1", None),
        ("tasks", 1, "t2", "near_duplicate"),  # "p-f" < "p-g": f stays
        ("tasks", 2, "t1", "exact_duplicate"),
        ("tasks", 3, "t3", None),
        ("extra", 0, "t3", "exact_duplicate"),  # across inputs too (and its program is not judged)
        ("extra", 1, "c1", None),
        ("extra", 2, "c2", "unparsable"),
    ]
    assert "source" not in plan["plan"].columns


def test_each_config_takes_its_input_and_families(plan: dict) -> None:
    frame = plan["plan"]
    assert frame.get_column(config_column("output")).to_list() == [True] + [False] * 6
    assert frame.get_column(config_column("codegen")).to_list() == [False] * 5 + [True, False]
    assert frame.get_column("input").to_list()[:4] == ["tasks"] * 4  # a config is never a column


def test_the_counts_of_the_plan(plan: dict) -> None:
    frame, programs = plan["plan"], plan["programs"]
    assert counts.drops(frame) == {"exact_duplicate": 2, "near_duplicate": 1, "unparsable": 1}
    assert counts.tier_family(frame, CONFIGS) == {(1, "output"): 1, (1, "input"): 1}
    assert sum(sum(s.values()) for s in counts.config_rows(frame, CONFIGS).values()) == 2
    stats = counts.program_stats(programs, [])
    assert stats["programs"] == {"in": 5, "kept": 3, "near_duplicate": 1, "unparsable": 1}
