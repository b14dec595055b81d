"""The repository stands alone: a user's clone has nothing beside it."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_no_file_names_a_folder_outside_the_repository() -> None:
    """No tracked file may point at ``../shared`` (the workplace's folder beside the checkouts)."""
    needle = "../" + "shared"  # split so that this file does not name it
    found = subprocess.run(
        ["git", "grep", "-l", "-F", needle], cwd=REPO, capture_output=True, text=True
    ).stdout.split()
    assert found == []


def test_the_bundled_benchmarks_carry_their_licenses() -> None:
    for name in ("cruxeval", "humaneval", "mbpp"):
        folder = REPO / "data" / "benchmarks" / name
        assert (folder / "LICENSE").is_file() and (folder / "SOURCE.md").is_file(), name
