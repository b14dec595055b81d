"""The synthesize → inputs → execute pipeline through the CLI, as dvc runs it: byte-identical reruns."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from factory.io import read_table, shard_paths
from tests.pipeline import run_stages

STAGES = ("synthesize", "inputs", "execute")


def test_same_params_and_seed_give_byte_identical_outputs(execverify: str, tmp_path: Path) -> None:
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["synthesize"]["tiers"] = [2, 5]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    first = run_stages(execverify, STAGES, tmp_path / "params.yaml", tmp_path / "a")
    second = run_stages(execverify, STAGES, tmp_path / "params.yaml", tmp_path / "b")
    for folder in ("programs", "cases", "executions"):
        a, b = shard_paths(tmp_path / "a" / folder), shard_paths(tmp_path / "b" / folder)
        assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b], folder
    for stage in STAGES:
        assert first[stage] == second[stage]
        assert first[stage]["in"] == first[stage]["out"] + first[stage]["dropped_total"]
    executions = read_table(tmp_path / "a" / "executions")
    assert executions.num_rows == first["execute"]["in"]
    ok = [s for s in executions.column("status").to_pylist() if s == "ok"]
    assert len(ok) == first["execute"]["out"] >= 0.8 * executions.num_rows
    assert set(first["execute"]["yield_by_tier"]) == {"2", "5"}


def test_bad_params_are_one_line_and_exit_2(execverify: str, tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("seed: 1\nsynthesize: {tiers: [9]}\n")
    proc = subprocess.run(
        [execverify, "stage", "synthesize", "--params", str(tmp_path / "p.yaml")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.count("\n") == 1 and "synthesize.tiers" in proc.stderr and "Traceback" not in proc.stderr
    )
    proc = subprocess.run(
        [execverify, "stage", "synthesize", "--params", str(tmp_path / "missing.yaml")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "not found" in proc.stderr
