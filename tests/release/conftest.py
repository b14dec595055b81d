"""Fixtures of the release tests: a tasks table with planted items, and one release built from it."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.contracts import TASKS_SCHEMA, program_id
from factory.io import read_table, shard_paths
from factory.params import AssembleParams
from factory.release.normalize import BUILTINS
from factory.release.stage import run_assemble_stage
from factory.tasks.items import build_items_for_case, default_case_id
from factory.trace.tracer import trace_call

REPO = Path(__file__).resolve().parents[2]


def rename(source: str, prefix: str = "zz") -> str:
    """``source`` with every local identifier renamed (attributes and builtins kept)."""
    new: dict[str, str] = {}

    def name(old: str) -> str:
        return old if old in BUILTINS else new.setdefault(old, f"{prefix}_{len(new) * 7 % 13}_{len(old)}")

    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = name(node.id)
        elif isinstance(node, ast.arg):
            node.arg = name(node.arg)
        elif isinstance(node, ast.FunctionDef):
            node.name = name(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            node.names = [name(n) for n in node.names]
    return ast.unparse(tree) + "\n"


def items_of(source: str, entry: str, args: str, **extra: Any) -> list[dict[str, Any]]:
    """The task rows of one case, traced in-process (as the tasks stage makes them)."""
    trace = trace_call(source, entry, args)
    assert trace["status"] == "ok", trace["status"]
    case = {"source": source, "entry": entry, "args": args, "program_id": program_id(source), **extra}
    case["case_id"] = default_case_id(source, entry, args)
    rows = build_items_for_case(case, trace, seed=3)
    return [{f.name: row.get(f.name) for f in TASKS_SCHEMA} for row in rows]


def write_shard(rows: list[dict[str, Any]], path: Path, schema: pa.Schema = TASKS_SCHEMA) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


@pytest.fixture(scope="session")
def planted(small_tasks: Path, cruxeval_records: list, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The small tasks table plus one shard holding: a renamed CRUXEval program's items, a renamed
    copy of one synthesized program (a near duplicate) and five rows repeated (exact duplicates)."""
    out = tmp_path_factory.mktemp("planted") / "tasks"
    out.mkdir()
    for path in shard_paths(small_tasks):
        shutil.copy(path, out / path.name)
    rows = read_table(small_tasks).to_pylist()
    crux = next(r for r in cruxeval_records if r["id"] == "sample_488")
    crux_source = rename(crux["code"])
    crux_entry = rename("def f(): pass").split("(")[0].removeprefix("def ")
    crux_rows = items_of(crux_source, crux_entry, crux["input"], tier=3)
    original = next(r for r in rows if r["tier"] == 4 and r["family"] == "white_box")
    copy_source = rename(original["source"], "q")
    copy_entry = copy_source.split("(")[0].removeprefix("def ")
    copy_rows = items_of(copy_source, copy_entry, original["args"], tier=4)
    write_shard(crux_rows + copy_rows + rows[:5], out / "part-99999.parquet")
    return {
        "dir": out,
        "cruxeval_pid": crux_rows[0]["program_id"],
        "near_pair": {original["program_id"], copy_rows[0]["program_id"]},
        "rows": len(rows) + len(crux_rows) + len(copy_rows) + 5,
    }


def _assemble(tasks: Path, out: Path, **kwargs: Any) -> dict[str, Any]:
    """Run the stage with the default params (benchmarks found from the repository root)."""
    params = kwargs.pop("params", AssembleParams())
    run_assemble_stage(
        tasks, out / "release", out / "assemble.json", params, plots_dir=out / "plots", root=REPO, **kwargs
    )
    return json.loads((out / "assemble.json").read_text())


@pytest.fixture(scope="session")
def release(planted: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("release")
    stats = _assemble(planted["dir"], out)
    return {"dir": out / "release", "stats": stats, "out": out}


@pytest.fixture(scope="session")
def small_release(small_tasks: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The release of ``small_tasks`` alone: its folder, stats and ``kept``, the ids of the programs
    it releases (the others are near duplicates or contaminated; rows of an extra input go with
    their program). Tests pick their extra rows by it, so their counts do not depend on the data."""
    out = tmp_path_factory.mktemp("small_release")
    stats = _assemble(small_tasks, out)
    families = set(read_table(small_tasks).column("family").to_pylist())
    folders = [out / "release" / family / split for family in families for split in ("train", "test")]
    kept = {pid for d in folders if d.is_dir() for pid in read_table(d).column("program_id").to_pylist()}
    return {"dir": out / "release", "stats": stats, "kept": kept}


@pytest.fixture(scope="session")
def assemble():
    """``assemble(tasks_dir, out_dir, **kwargs)``: run the stage, return its stats."""
    return _assemble


@pytest.fixture(scope="session")
def shard():
    """``shard(rows, path, schema=TASKS_SCHEMA)``: write rows as one parquet file."""
    return write_shard


@pytest.fixture(scope="session")
def renamed():
    """``renamed(source)``: the source with its local identifiers renamed."""
    return rename
