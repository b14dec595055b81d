"""``execverify publish``: what can be tested without a server that accepts uploads.

The dry run, the argument checks and the token lookup run for real; "network down" talks to a
closed port; "tag exists" and "repository missing" talk to a real Hub-compatible server (olah,
read-only), so the refusal and the one-line errors come from real HTTP answers. The upload itself
(``HfApi.upload_folder`` + ``create_tag``) needs a server that accepts commits, which none here does.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def publish(execverify: str, release: dict, tmp_path: Path):
    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        drop = ("HF_", "HUGGINGFACE", "TRANSFORMERS_OFFLINE")
        base = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        base["HF_HOME"] = str(tmp_path / "hf")  # no stored login
        return subprocess.run(
            [execverify, "publish", "--folder", str(release["dir"]), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={**base, **(env or {})},
        )

    return run


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert all(n in proc.stderr for n in needles), proc.stderr


def test_dry_run_lists_every_file_and_needs_no_token_or_network(publish, release: dict) -> None:
    down = {"HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"}
    proc = publish("--repo-id", "org/name", "--version", "v1.2.3", "--dry-run", "--private", env=down)
    assert proc.returncode == 0, proc.stderr
    files = sorted(p.relative_to(release["dir"]).as_posix() for p in release["dir"].rglob("*") if p.is_file())
    listed = [line.split()[-1] for line in proc.stdout.splitlines()[1:-1]]
    assert listed == files and "README.md" in listed and "phase1/train/part-00000.parquet" in listed
    assert "tag v1.2.3" in proc.stdout and "private" in proc.stdout and "Release v1.2.3 (git " in proc.stdout


def test_bad_arguments_are_one_line_exit_2(publish, tmp_path: Path) -> None:
    _error(publish("--repo-id", "no-org", "--version", "v1.0.0", "--dry-run"), "ORG/NAME")
    _error(publish("--repo-id", "org/name", "--version", "1.0", "--dry-run"), "vMAJOR.MINOR.PATCH")
    proc = publish("--repo-id", "org/name", "--version", "v1.0.0", "--folder", str(tmp_path))
    _error(proc, "not a release folder")


def test_no_token_and_no_network_are_one_line_exit_2(publish) -> None:
    _error(publish("--repo-id", "org/name", "--version", "v1.0.0"), "no Hugging Face token", "HF_TOKEN")
    down = {"HF_TOKEN": "hf_test", "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"}
    _error(
        publish("--repo-id", "org/name", "--version", "v1.0.0", env=down),
        "publish to datasets/org/name failed",
    )


def test_an_existing_tag_is_refused_and_server_refusals_are_one_line(
    publish, olah_hub, release: dict
) -> None:
    olah_hub.publish(release["dir"], "pubtest/taken", "v1.0.0")
    hub = {"HF_TOKEN": "hf_test", "HF_ENDPOINT": olah_hub.endpoint}
    _error(
        publish("--repo-id", "pubtest/taken", "--version", "v1.0.0", env=hub),
        "tag v1.0.0 already exists",
        "--force",
    )
    # a new version of an existing repository: the read-only server refuses the commit
    _error(publish("--repo-id", "pubtest/taken", "--version", "v1.0.1", env=hub), "failed")
    # a repository that does not exist: creating it is refused
    _error(publish("--repo-id", "pubtest/missing", "--version", "v1.0.0", env=hub), "failed")
