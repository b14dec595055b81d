"""Stage stats: the full stats file, the headline numbers beside it, and dvc.yaml declaring the
headline files as the metrics (so `dvc metrics show` is a narrow table) and the full ones as outputs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from factory.stats import SUMMARY_KEYS, StageStats, summary_path

REPO = Path(__file__).resolve().parents[1]
DVC = str(Path(sys.executable).parent / "dvc")


def _stats() -> StageStats:
    stats = StageStats("execute", items_in=4669, items_out=4578)
    stats.drop("error:KeyError", 24)
    stats.drop("timeout", 67)
    stats.extra["yield_by_tier"] = {"1": {"in": 784, "ok": 771}}
    return stats


def test_write_puts_the_full_stats_at_the_path_and_the_headline_beside_it(tmp_path: Path) -> None:
    _stats().write(tmp_path / "metrics" / "execute.json")
    full = json.loads((tmp_path / "metrics" / "execute.json").read_text())
    assert full["dropped"] == {"error:KeyError": 24, "timeout": 67} and full["dropped_total"] == 91
    assert full["yield_by_tier"] == {"1": {"in": 784, "ok": 771}} and "provenance" in full
    head = json.loads((tmp_path / "metrics" / "summary" / "execute.json").read_text())
    assert head == {"in": 4669, "out": 4578, "dropped": 91, "yield": 0.9805}
    assert set(head) == set(SUMMARY_KEYS)


def test_the_headline_has_no_yield_when_nothing_came_in(tmp_path: Path) -> None:
    assert StageStats("sft").summary() == {"in": 0, "out": 0, "dropped": 0}
    assert summary_path("data/metrics/sft.json") == Path("data/metrics/summary/sft.json")
    assert summary_path(tmp_path / "x.json") == tmp_path / "summary" / "x.json"


def test_dvc_yaml_declares_the_headline_as_metrics_and_the_full_stats_as_outputs() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    outs_of = {}
    for name, stage in stages.items():
        outs = {}
        for entry in stage.get("outs", []):
            outs.update(entry if isinstance(entry, dict) else {entry: None})
        outs_of.update(dict.fromkeys(outs, name))
        written = re.search(r"--stats (\S+)", stage["cmd"])
        if written is None:
            continue
        written = written.group(1)
        metrics = [p for entry in stage.get("metrics", []) for p in entry]
        assert metrics == [str(summary_path(written))], name
        # versioned in git, like the metrics, and kept through a failed run
        assert outs.get(written) == {"cache": False, "persist": True}, name
    for dep in stages["assemble"]["deps"]:  # the card reads the full stats: they stay in the DAG
        if dep.startswith("data/metrics/"):
            assert dep in outs_of, dep


def test_dvc_metrics_show_is_a_row_per_stage_of_four_columns(tmp_path: Path) -> None:
    """The project's dvc.yaml in a fresh DVC repository, each stage's stats written as the stage
    writes them: `dvc metrics show` reads only the headline files."""
    subprocess.run([DVC, "init", "--no-scm", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "dvc.yaml").write_text((REPO / "dvc.yaml").read_text())
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    for name, stage in stages.items():
        written = re.search(r"--stats (\S+)", stage["cmd"])
        if written is not None:
            (_stats() if name != "sft" else StageStats("sft")).write(tmp_path / written.group(1))
    proc = subprocess.run([DVC, "metrics", "show", "--json"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)[""]["data"]
    assert set(shown) == {f"data/metrics/summary/{name}.json" for name in stages}
    columns = {key for metrics in shown.values() for key in metrics["data"]}
    assert columns == set(SUMMARY_KEYS)
    table = subprocess.run([DVC, "metrics", "show"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert table.splitlines()[0].split() == ["Path", *sorted(SUMMARY_KEYS)]
