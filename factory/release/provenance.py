"""What made a release: git commit, the DVC revision of each stage, the solver, the Python version."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from factory.errors import UserError
from factory.io import SAFE_YAML_LOADER, parse_json_object, provenance


def git_commit(root: Path = Path(".")) -> str:
    """HEAD's commit, with ``-dirty`` when the tree differs from it (a changed tracked file or an
    untracked, not ignored one, such as a new grammar file); ``unknown`` outside git. The data
    folder and the lock files, which the pipeline itself writes, do not count."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
        changes = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", ".", *_PIPELINE_WRITES],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}-dirty" if changes else head


# What `dvc repro` writes into the tree (git pathspecs excluded from the dirty check).
_PIPELINE_WRITES = tuple(
    f":(exclude){path}" for path in ("dvc.lock", "data", "train/dvc.lock", "train/metrics", "train/plots")
)


def stage_revisions(lock_path: Path, skip: str = "assemble") -> dict[str, str]:
    """Each stage's output hash from dvc.lock (``path md5``); empty when there is no lock file.

    ``skip`` is the stage being built: its entry holds the *previous* release's hash, which must
    not shape the new one (a forced rebuild of the same inputs gives the same bytes).
    """
    if not lock_path.is_file():
        return {}
    try:
        lock = yaml.load(lock_path.read_text(), Loader=SAFE_YAML_LOADER) or {}  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        raise UserError(f"{lock_path}: not valid YAML") from None
    revisions = {}
    for stage, entry in sorted((lock.get("stages") or {}).items()):
        if stage == skip:
            continue
        outs = [o for o in (entry or {}).get("outs", []) if isinstance(o, dict) and "md5" in o]
        if outs:
            revisions[stage] = ", ".join(f"{o['path']} {o['md5']}" for o in outs)
    return revisions


def difficulty_provenance(path: Path | None) -> dict[str, Any] | None:
    """The solver and pass-rate band from the difficulty stats JSON, or None without one."""
    if path is None:
        return None
    if not path.is_file():
        raise UserError(f"{path}: difficulty stats not found")
    stats = parse_json_object(path.read_text(), str(path))
    keys = ("enabled", "solver", "solver_model", "n", "min_pass", "max_pass", "passes_by_family_tier")
    return {k: stats.get(k) for k in keys}


def release_provenance(
    params: dict[str, Any], grammar_hashes: list[str], lock_path: Path, difficulty: dict[str, Any] | None
) -> dict[str, Any]:
    """Everything the card records about how the release was made (no timestamps)."""
    return {
        **provenance(),
        "git_commit": git_commit(),
        "grammar_hash": ", ".join(grammar_hashes) or "unknown",
        "dvc_stages": stage_revisions(lock_path),
        "difficulty": difficulty,
        "params": params,
    }
