"""Running pipeline stages through the CLI, as ``dvc repro`` does, into a folder of one's own
(used by ``test_pipeline.py`` and ``backend/test_pipeline_on_ray.py``)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from factory.registry import stage

REPO = Path(__file__).resolve().parents[1]


def stage_command(execverify: str, name: str, params: Path, out: Path) -> list[str]:
    """Stage ``name``'s ``cmd:`` of dvc.yaml (the registry's), with ``params`` and its folders
    under ``out`` (``data/cases`` -> ``out/cases``, ``phase2=data/phase2`` -> ``phase2=out/phase2``)."""
    words = shlex.split(stage(name).dvc_command())
    words[0] = execverify
    words[words.index("--params") + 1] = str(params)

    def moved(word: str) -> str:
        name, is_pair, path = word.rpartition("=")
        if not path.startswith("data/"):
            return word
        return f"{name}{is_pair}{out / path.removeprefix('data/')}"

    return [moved(w) for w in words]


def run_stages(execverify: str, stages: tuple[str, ...], params: Path, out: Path) -> dict[str, dict]:
    """Run ``stages`` in order with ``params`` into ``out`` (from the repository root, as dvc
    does); each must exit 0 and print its summary. Returns each stage's stats JSON."""
    stats = {}
    for name in stages:
        proc = subprocess.run(
            stage_command(execverify, name, params, out),
            capture_output=True,
            text=True,
            timeout=600,
            cwd=REPO,
            env={"CI": "1", "PATH": "/usr/bin:/bin"},
        )
        assert proc.returncode == 0, f"stage {name}: {proc.stderr[-4000:]}"
        assert "dropped because" in proc.stderr  # the one-screen summary
        stats[name] = json.loads((out / "metrics" / f"{name}.json").read_text())
    return stats


def output_files(out: Path) -> dict[str, bytes]:
    """Every file under ``out`` (shards, pools, stats), by its path relative to ``out``."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
