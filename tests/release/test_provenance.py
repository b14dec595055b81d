"""The release's provenance: the dirty flag sees untracked files, and the lock's entry of the
stage being built (the previous release) never shapes the new one."""

from __future__ import annotations

import subprocess
from pathlib import Path

from factory.release.provenance import git_commit, stage_revisions


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "grammars").mkdir(parents=True)
    (repo / "grammars" / "str.yaml").write_text("type: str\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    return repo


def test_a_clean_tree_gives_the_bare_commit(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    head = _git(repo, "rev-parse", "HEAD").strip()
    assert git_commit(repo) == head


def test_an_untracked_grammar_file_makes_it_dirty(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "grammars" / "bytes.yaml").write_text("type: bytes\n")
    assert git_commit(repo).endswith("-dirty")


def test_a_changed_tracked_file_makes_it_dirty(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "grammars" / "str.yaml").write_text("type: str  # edited\n")
    assert git_commit(repo).endswith("-dirty")


def test_what_the_pipeline_writes_does_not_make_it_dirty(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "data" / "metrics").mkdir(parents=True)
    (repo / "data" / "metrics" / "tasks.json").write_text("{}\n")
    (repo / "dvc.lock").write_text("schema: '2.0'\n")
    assert not git_commit(repo).endswith("-dirty")


def test_outside_git_it_is_unknown(tmp_path: Path) -> None:
    assert git_commit(tmp_path) == "unknown"


def test_the_stage_being_built_is_not_recorded(tmp_path: Path) -> None:
    lock = tmp_path / "dvc.lock"
    lock.write_text(
        "schema: '2.0'\nstages:\n"
        "  tasks:\n    outs:\n    - path: data/tasks\n      md5: aaa.dir\n"
        "  assemble:\n    outs:\n    - path: data/release\n      md5: bbb.dir\n"
    )
    assert stage_revisions(lock) == {"tasks": "data/tasks aaa.dir"}
