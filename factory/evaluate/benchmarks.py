"""Benchmark items: CRUXEval-O / CRUXEval-I from its JSONL, or task rows from a parquet folder.

CRUXEval records become ``output`` / ``input`` items through the tasks stage's own item builder
(the same prompt and the same scorer as our data); the gold output is the benchmark's, so nothing
runs here. A release folder (the Hub layout: ``<config>/<split>-*.parquet``) or a stage folder
such as ``data/tasks`` gives its rows as they are; when the folder has a test split only that
split is read, and rows repeated across configs count once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from factory.errors import UserError
from factory.literals import literal_eval
from factory.params import TasksParams
from factory.release.benchmarks import load_records
from factory.tasks.items import ITEM_FAMILIES, build_items_with_reasons

BENCHMARKS = ("cruxeval-o", "cruxeval-i", "release")


def load_benchmark(
    benchmark: str, path: str | Path, limit: int = 0
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The items of a benchmark (at most ``limit`` when > 0) and the counts of records skipped
    by reason."""
    path = Path(path)
    if benchmark in ("cruxeval-o", "cruxeval-i"):
        return _cruxeval(path, "output" if benchmark == "cruxeval-o" else "input", limit)
    if benchmark == "release":
        return _release(path, limit)
    raise UserError(f"unknown benchmark {benchmark!r} (expected one of {', '.join(BENCHMARKS)})")


def _cruxeval(path: Path, family: str, limit: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    if not path.is_file():
        raise UserError(f"{path}: CRUXEval file not found (a JSONL with code, input, output, id)")
    params = TasksParams(families=[family])
    items: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    for number, record in enumerate(load_records(path), 1):
        try:
            code, args, output = record["code"], record["input"], record["output"]
        except KeyError:
            message = f"{path}: record {number} is not a CRUXEval record (needs code, input, output)"
            raise UserError(message) from None
        try:
            output_type = type(literal_eval(output)).__name__
        except (ValueError, SyntaxError):
            skipped["output_not_literal"] = skipped.get("output_not_literal", 0) + 1
            continue
        case = {"source": code, "entry": "f", "args": args, "case_id": record.get("id") or f"line{number}"}
        # The gold output is the benchmark's: the item needs no trace for output/input questions.
        gold = {"status": "ok", "output_repr": output, "output_type": output_type, "steps": [], "states": []}
        built, reasons = build_items_with_reasons(case, gold, seed=0, params=params)
        if not built:
            reason = reasons[0].split(":", 1)[1] if reasons else "no_item"
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        items += built
        if limit and len(items) >= limit:
            break
    return items, skipped


def _release(path: Path, limit: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    if not path.is_dir():
        raise UserError(f"{path}: release folder not found")
    files = sorted(path.rglob("*.parquet"))
    if not files:
        raise UserError(f"{path}: no parquet files in this folder")
    test = [f for f in files if f.name.startswith("test") or f.parent.name == "test"]
    items: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    seen: set[str] = set()
    for file in test or files:
        try:
            rows = pq.read_table(file).to_pylist()
        except Exception as exc:  # pyarrow raises several types for a broken file
            raise UserError(f"{file}: not a readable parquet file ({type(exc).__name__})") from None
        for row in rows:
            missing = [
                k for k in ("task_id", "family", "prompt", "questions", "source", "entry") if k not in row
            ]
            if missing:
                raise UserError(f"{file}: rows lack task columns {missing}")
            if row["family"] not in ITEM_FAMILIES:
                skipped[f"family_{row['family']}"] = skipped.get(f"family_{row['family']}", 0) + 1
                continue
            if row["task_id"] in seen:
                continue
            seen.add(row["task_id"])
            items.append(row)
            if limit and len(items) >= limit:
                return items, skipped
    return items, skipped
