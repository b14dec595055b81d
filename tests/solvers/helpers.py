"""Shared test pieces: CRUXEval task rows, a tasks folder, and a scripted solver (a test double)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from factory.io import ShardWriter
from factory.params import TasksParams
from factory.solvers.base import BaseSolver, Sampling
from factory.tasks.items import build_items_for_case
from factory.tasks.prompts import gold_completion
from factory.tasks.stage import TASKS_SCHEMA


def cruxeval_task_rows(
    traced: list[tuple[int, dict[str, Any], dict[str, Any]]], cases: int
) -> list[dict[str, Any]]:
    """Task rows of every family from the first ``cases`` traced CRUXEval cases."""
    rows: list[dict[str, Any]] = []
    for index, record, trace in traced[:cases]:
        case = {"source": record["code"], "entry": "f", "args": record["input"], "case_id": f"crux{index}"}
        for row in build_items_for_case(case, trace, seed=0, params=TasksParams()):
            rows.append({**row, "tier": index % 3 + 1})
    return rows


def write_tasks(rows: list[dict[str, Any]], folder: Path) -> Path:
    with ShardWriter(folder, TASKS_SCHEMA) as writer:
        writer.write_many(rows)
    return folder


class ScriptedSolver(BaseSolver):
    """A TEST DOUBLE, not a model: answers a prompt with the gold completion for the first
    ``right(prompt)`` samples and with unparseable text for the rest; counts its calls."""

    model_id = "scripted-test-double"

    def __init__(self, rows: Sequence[dict[str, Any]], right: Callable[[str], int]):
        self.gold = {row["prompt"]: gold_completion(row) for row in rows}
        self.right = right
        self.calls = 0
        self.prompts: list[str] = []

    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        self.calls += 1
        self.prompts += list(prompts)
        return [[self.gold[p] if i < self.right(p) else "I do not know." for i in range(n)] for p in prompts]
