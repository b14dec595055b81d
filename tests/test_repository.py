"""The repository stands alone: a user's clone has nothing beside it."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_no_file_names_a_folder_outside_the_repository() -> None:
    """No tracked file may point at the workplace's folder beside the checkouts (a clone has none)."""
    needle = "../" + "shared"  # split so that this file does not name it
    found = subprocess.run(
        ["git", "grep", "-l", "-F", needle], cwd=REPO, capture_output=True, text=True
    ).stdout.split()
    assert found == []


def test_the_bundled_benchmarks_carry_their_licenses() -> None:
    for name in ("cruxeval", "humaneval", "mbpp"):
        folder = REPO / "data" / "benchmarks" / name
        assert (folder / "LICENSE").is_file() and (folder / "SOURCE.md").is_file(), name


def test_git_tracked_stage_outputs_survive_a_failed_run() -> None:
    """DVC deletes a stage's outputs before running it unless they persist; the stats, metrics and
    plot files are git-tracked (``cache: false``), so a failed run must not delete them (each stage
    replaces them atomically when it succeeds)."""
    import yaml

    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    uncached = [
        (name, path, spec)
        for name, stage in stages.items()
        for key in ("outs", "metrics", "plots")
        for entry in stage.get(key, [])
        if isinstance(entry, dict)
        for path, spec in entry.items()
        if spec and spec.get("cache") is False
    ]
    assert uncached and all(spec.get("persist") is True for _, _, spec in uncached), [
        (n, p) for n, p, s in uncached if not s.get("persist")
    ]
