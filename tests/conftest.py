"""Fixtures shared across the test tree."""

from __future__ import annotations

import json
import sys
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
