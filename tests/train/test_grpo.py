"""train/grpo.py on a release-like folder written here: phase 1 (2 steps, a tiny random model and
a tokenizer trained on the spot), then phase 2 from its checkpoint; rewards finite, per family.

Needs the `train` extra; nothing is downloaded.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from factory.errors import UserError
from factory.phase2.importer import read_rows, row_to_item
from factory.tasks.items import build_items_for_case
from tests.train.helpers import hub_card

for _var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "train"
sys.path.insert(0, str(TRAIN))

import grpo  # noqa: E402
from grpo_params import load_train_params  # noqa: E402

MBPP = REPO / "data" / "benchmarks" / "mbpp" / "sanitized-mbpp.json"
CARD = hub_card("phase1", "phase2") + "# A release-like folder (the Hub layout) written by the test.\n"


def write_release(folder: Path, phase1: list[dict[str, Any]], phase2: list[dict[str, Any]]) -> Path:
    """A folder in the Hub's layout with configs phase1 and phase2 (what the release stage writes)."""
    for config, rows in (("phase1", phase1), ("phase2", phase2)):
        (folder / config).mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), folder / config / "train-00000-of-00001.parquet")
    (folder / "README.md").write_text(CARD)
    return folder


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory, cruxeval_traced: list) -> Path:
    """Phase 1: white_box/output/input/coverage items of 12 CRUXEval cases, given tiers 1-3;
    phase 2: 12 MBPP items through the importer."""
    phase1 = []
    for index, record, trace in cruxeval_traced[:12]:
        case = {"source": record["code"], "entry": "f", "args": record["input"], "tier": 1 + index % 3}
        phase1 += build_items_for_case(case, trace, seed=0)
    phase2 = [row_to_item(row, "mbpp", i, 1) for i, row in zip(range(12), read_rows(str(MBPP)), strict=False)]
    return write_release(tmp_path_factory.mktemp("release"), phase1, phase2)


def _params(tmp: Path, release: Path, **overrides: Any) -> Any:
    base = {
        "data.path": str(release),
        "phase1.max_items": 24,
        "phase1.output_dir": str(tmp / "out/phase1"),
        "phase1.plots_dir": str(tmp / "plots/phase1"),
        "phase1.metrics": str(tmp / "metrics/phase1.json"),
        "phase1.grpo.max_steps": 2,
        "phase2.init": str(tmp / "out/phase1"),
        "phase2.output_dir": str(tmp / "out/phase2"),
        "phase2.plots_dir": str(tmp / "plots/phase2"),
        "phase2.metrics": str(tmp / "metrics/phase2.json"),
        "phase2.grpo.max_steps": 2,
    }
    base.update(overrides)
    return load_train_params(TRAIN / "params.yaml", base)


def test_the_release_folder_loads_with_load_dataset(release: Path) -> None:
    import datasets

    phase1 = datasets.load_dataset(str(release), "phase1", split="train")
    phase2 = datasets.load_dataset(str(release), "phase2", split="train")
    assert {"white_box", "output", "input"} <= set(phase1["family"]) and set(phase2["family"]) == {"codegen"}


def test_curriculum_orders_by_tier_and_sampling_is_seeded(release: Path, tmp_path: Path) -> None:
    p = _params(tmp_path, release)
    items = grpo.load_items(str(release), None, p.phase1, seed=0)
    assert len(items) == 24
    tiers = items["tier"]
    assert tiers == sorted(tiers) and len(set(tiers)) == 3
    again = grpo.load_items(str(release), None, p.phase1, seed=0)
    assert items["task_id"] == again["task_id"]
    other = grpo.load_items(str(release), None, p.phase1, seed=1)
    assert set(items["task_id"]) != set(other["task_id"])
    assert grpo.grpo_config(p.phase1, 0).shuffle_dataset is False
    only = p.phase1.model_copy(update={"families": ["input"], "max_items": None})
    assert set(grpo.load_items(str(release), None, only, seed=0)["family"]) == {"input"}


def test_reward_functions_match_the_families_present(release: Path, tmp_path: Path) -> None:
    p = _params(tmp_path, release)
    names = [fn.__name__ for fn in grpo.reward_functions(["white_box", "input"], p.phase1)]
    assert names == ["white_box_reward", "input_reward"]
    assert [fn.__name__ for fn in grpo.reward_functions(["codegen"], p.phase2)] == ["codegen_reward"]


def test_reward_curves_per_family() -> None:
    history = [
        {"step": 1, "reward": 0.5, "scoring/white_box/reward": 0.25, "scoring/input/reward": 1.0},
        {"step": 2, "reward": 0.0, "scoring/white_box/reward": 0.0},
        {"step": 2, "train_loss": 0.1},
    ]
    curves = grpo.reward_curves(history)
    assert curves == {
        "total": [(1, 0.5), (2, 0.0)],
        "white_box": [(1, 0.25), (2, 0.0)],
        "input": [(1, 1.0)],
    }


@pytest.mark.slow
def test_phase1_then_phase2_from_its_checkpoint(release: Path, tmp_path: Path) -> None:
    p = _params(tmp_path, release)
    first = grpo.run_phase(p, "phase1")
    assert first["steps"] == 2 and first["families"] == ["coverage", "input", "output", "white_box"]
    assert first["reward_functions"] == ["white_box_reward", "input_reward", "coverage_reward"]
    checkpoint = tmp_path / "out/phase1"
    assert (checkpoint / "model.safetensors").is_file() and (checkpoint / "tokenizer.json").is_file()
    for name, value in first["mean_reward"].items():
        assert math.isfinite(value), name
    # Every family of the sampled items got a curve, logged at both steps or where it was sampled.
    curves = {f.stem for f in (tmp_path / "plots/phase1").glob("*.csv")}
    assert "total" in curves and curves - {"total"} <= set(first["families"]) and len(curves) >= 2
    history = json.loads((checkpoint / "log_history.json").read_text())
    logged = [e for e in history if "reward" in e]
    assert len(logged) == 2
    for entry in logged:
        assert math.isfinite(entry["reward"])
        assert any(k.startswith("rewards/white_box_reward/") for k in entry)

    second = grpo.run_phase(p, "phase2")
    assert second["steps"] == 2 and second["families"] == ["codegen"]
    assert second["reward_functions"] == ["codegen_reward"]
    assert math.isfinite(second["mean_reward"]["codegen"]) and math.isfinite(second["mean_reward"]["total"])
    # Phase 2 started from phase 1's checkpoint: its tokenizer is phase 1's (a tiny model built
    # anew would train a tokenizer on the phase-2 prompts), and the model shape is the same.
    one = json.loads((checkpoint / "tokenizer.json").read_text())["model"]["vocab"]
    two = json.loads((tmp_path / "out/phase2/tokenizer.json").read_text())["model"]["vocab"]
    assert one == two
    assert json.loads((tmp_path / "out/phase2/config.json").read_text())["vocab_size"] == len(one)
    assert (tmp_path / "plots/phase2/codegen.csv").read_text().startswith("step,reward\n1,")


def test_bad_train_params_are_one_line_and_exit_2(release: Path, tmp_path: Path) -> None:
    raw = yaml.safe_load((TRAIN / "params.yaml").read_text())
    raw["phase1"]["grpo"]["no_such_argument"] = 1
    raw["data"]["path"] = str(release)
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(raw))
    proc = subprocess.run(
        [sys.executable, str(TRAIN / "grpo.py"), "--params", str(tmp_path / "p.yaml"), "--phase", "phase1"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 2, proc.stderr
    assert "no_such_argument" in proc.stderr and "Traceback" not in proc.stderr
    with pytest.raises(UserError, match="phase1.curriculum"):
        load_train_params(TRAIN / "params.yaml", {"phase1.curriculum": "yes"})
    with pytest.raises(UserError, match="set by the script"):
        load_train_params(TRAIN / "params.yaml", {"phase1.grpo.output_dir": "x"})
    p = _params(tmp_path, release, **{"phase1.config": "nope"})
    with pytest.raises(UserError, match="cannot load"):
        grpo.load_items(str(release), None, p.phase1, seed=0)
