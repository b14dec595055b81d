"""Fixtures shared across the test tree."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def execverify() -> str:
    """The installed console script (tests call the CLI as a user would)."""
    script = Path(sys.executable).parent / "execverify"
    if not script.exists():
        pytest.fail(f"{script} is missing: run `pip install -e .` in the venv first")
    return str(script)
