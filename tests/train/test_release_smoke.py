"""The CPU smoke test of training on a published release (issue 7):

a release built by the pipeline (synthesize → inputs → execute → trace → tasks, phase2, assemble
with the phase2 config), published into a Hub-compatible server (olah: a git commit and a tag)
and read back by repo id and revision; a tiny randomly initialised model (a tokenizer trained on
the spot) runs 2 GRPO steps of phase 1, saves, and 2 steps of phase 2 from that checkpoint; the
rewards are finite and logged per family.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from factory.phase2.stage import run_phase2_stage
from factory.release.stage import run_assemble_stage
from factory.tasks.stage import run_tasks_stage
from factory.trace.stage import run_trace_stage

REPO = Path(__file__).resolve().parents[2]
REPO_ID = "execverify/smoke"


@pytest.fixture(scope="module")
def built_release(data_chain) -> Path:
    """The data pipeline on the default params restricted to tier 2, then assemble with phase2."""
    tmp, p = data_chain((2,))
    run_trace_stage(tmp / "executions", tmp / "traces", tmp / "trace.json", p.trace, p.execute)
    run_tasks_stage(tmp / "traces", tmp / "tasks", tmp / "tasks.json", p.seed, p.tasks)
    run_phase2_stage(
        p.seed, p.phase2, p.inputs, p.execute, p.synthesize.grammars,
        tmp / "programs", tmp / "executions", tmp / "spares", tmp / "phase2", tmp / "phase2.json",
    )  # fmt: skip
    stats = run_assemble_stage(
        tmp / "tasks", tmp / "release", tmp / "assemble.json", p.assemble,
        plots_dir=tmp / "plots", root=REPO, extra_inputs={"phase2": tmp / "phase2"},
    )  # fmt: skip
    assert stats.items_out > 0
    assert (tmp / "release" / "phase2" / "train").is_dir()
    return tmp / "release"


def _train(params: Path, phase: str, env: dict[str, str]) -> dict:
    proc = subprocess.run(
        [sys.executable, str(REPO / "train" / "grpo.py"), "--params", str(params), "--phase", phase],
        capture_output=True,
        text=True,
        timeout=900,
        env={**env, "TOKENIZERS_PARALLELISM": "false", "CI": "1"},
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout[proc.stdout.index("{\n") :])


@pytest.mark.slow
def test_two_phases_on_a_release_read_back_by_repo_id_and_revision(
    built_release: Path, olah_hub, tmp_path: Path
) -> None:
    commit = olah_hub.publish(built_release, REPO_ID, "v1")
    # A later version whose card still names phase2 but which has lost its files.
    later = tmp_path / "later"
    shutil.copytree(built_release, later, ignore=shutil.ignore_patterns("phase2"))
    olah_hub.publish(later, REPO_ID, "v2")
    raw = yaml.safe_load((REPO / "train" / "params.yaml").read_text())
    raw["data"] = {"path": REPO_ID, "revision": "v1"}
    for phase in ("phase1", "phase2"):
        raw[phase].update(
            output_dir=str(tmp_path / "out" / phase),
            plots_dir=str(tmp_path / "plots" / phase),
            metrics=str(tmp_path / "metrics" / f"{phase}.json"),
            max_items=16,
        )
        raw[phase]["grpo"] = {**raw[phase]["grpo"], "max_steps": 2}
    raw["phase2"]["init"] = str(tmp_path / "out" / "phase1")
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(raw))
    env = olah_hub.env(tmp_path / "home")

    first = _train(params, "phase1", env)
    assert first["steps"] == 2 and first["data"] == {"path": REPO_ID, "revision": "v1"}
    assert set(first["families"]) == {"white_box", "input"}  # the release's phase1 mix
    assert first["reward_functions"] == ["white_box_reward", "input_reward"]
    checkpoint = tmp_path / "out" / "phase1"
    assert (checkpoint / "model.safetensors").is_file() and (checkpoint / "tokenizer.json").is_file()

    second = _train(params, "phase2", env)
    assert second["steps"] == 2 and second["families"] == ["codegen"]
    assert second["reward_functions"] == ["codegen_reward"]
    one = json.loads((checkpoint / "tokenizer.json").read_text())["model"]["vocab"]
    assert json.loads((tmp_path / "out/phase2/tokenizer.json").read_text())["model"]["vocab"] == one

    for metrics, phase in ((first, "phase1"), (second, "phase2")):
        history = json.loads((tmp_path / "out" / phase / "log_history.json").read_text())
        logged = [e for e in history if "reward" in e]
        assert len(logged) == 2
        for entry in logged:
            assert math.isfinite(entry["reward"])
            per_family = {k for k in entry if k.startswith("scoring/") and k.endswith("/reward")}
            assert per_family and all(math.isfinite(entry[k]) for k in per_family)
            for name in metrics["reward_functions"]:
                assert f"rewards/{name}/mean" in entry
        assert all(math.isfinite(v) for v in metrics["mean_reward"].values())
        curves = {f.stem for f in (tmp_path / "plots" / phase).glob("*.csv")}
        assert "total" in curves and len(curves) >= 2
    assert "codegen" in second["mean_reward"]

    # The pinned revision is what is read: v2 has no phase2 files.
    raw["data"]["revision"] = "v2"
    params.write_text(yaml.safe_dump(raw))
    proc = subprocess.run(
        [sys.executable, str(REPO / "train" / "grpo.py"), "--params", str(params), "--phase", "phase2"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=REPO,
    )
    assert proc.returncode == 2 and "cannot load" in proc.stderr and "Traceback" not in proc.stderr
    assert len(commit) == 40
