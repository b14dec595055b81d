"""Fixtures shared across the test tree."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CRUXEVAL = SHARED / "benchmarks" / "cruxeval" / "cruxeval.jsonl"


@pytest.fixture(scope="session")
def execverify() -> str:
    """The installed console script (tests call the CLI as a user would)."""
    script = Path(sys.executable).parent / "execverify"
    if not script.exists():
        pytest.fail(f"{script} is missing: run `pip install -e .` in the venv first")
    return str(script)


@pytest.fixture(scope="session")
def cruxeval_path() -> Path:
    """CRUXEval's 800 cases (shared/ sits beside the repository); missing data fails the test."""
    if not CRUXEVAL.is_file():
        pytest.fail(f"CRUXEval data not found at {CRUXEVAL} (shared/ must sit beside the repository)")
    return CRUXEVAL


@pytest.fixture(scope="session")
def cruxeval_records(cruxeval_path: Path) -> list[dict[str, Any]]:
    """The CRUXEval records (``code``, ``input``, ``output``, ``id``), in file order."""
    return [json.loads(line) for line in cruxeval_path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def cruxeval_traced(
    cruxeval_records: list[dict[str, Any]],
) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    """(index, record, trace) of every CRUXEval case whose input is a literal and whose trace is
    ``ok``, traced in-process once per test session (12 inputs are expressions, not literals)."""
    from factory.errors import UserError
    from factory.trace.tracer import trace_call

    traced = []
    for index, record in enumerate(cruxeval_records):
        try:
            trace = trace_call(record["code"], "f", record["input"])
        except UserError:
            continue
        if trace["status"] == "ok":
            traced.append((index, record, trace))
    return traced


@dataclass(frozen=True)
class WhiteBoxCase:
    """A white-box item, the program it is about and the gold answer lines, one per question."""

    source: str
    item: dict[str, Any]
    gold_lines: list[str]


@pytest.fixture
def white_box() -> WhiteBoxCase:
    """The white-box item the scoring and reward tests share: ``f(3)`` on a two-branch program,
    the output question, two next_line and two state questions (one ``Nil``)."""
    source = "def f(x):\n    y = x * 2\n    if y > 10:\n        return y\n    return -y\n"
    questions = [
        {"family": "output", "answer": "-6", "answer_type": "int"},
        {"family": "next_line", "line": 2, "occurrence": 1, "answer": 3},
        {"family": "next_line", "line": 3, "occurrence": 1, "answer": 5},
        {"family": "state", "line": 2, "occurrence": 1, "var": "y", "answer": "6; int"},
        {"family": "state", "line": 4, "occurrence": 1, "var": "y", "answer": "Nil"},
    ]
    item = {
        "family": "white_box",
        "source": source,
        "entry": "f",
        "args": "3",
        "questions": json.dumps(questions),
    }
    return WhiteBoxCase(source, item, ["assert f(3) == -6", "if y > 10:", "return -y", "6; int", "Nil"])
