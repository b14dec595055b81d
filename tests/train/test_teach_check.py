"""train/teach_check.py dry-run on the CPU with a tiny shape: evaluate, train one GRPO step,
evaluate the checkpoint, before/after side by side. A tiny random model answers nothing: the test
asserts the check's pipeline (every set judged twice, a step trained, the report written), not
the model's skill.

Needs the `train` extra; nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.tasks.items import build_items_for_case
from tests.train.helpers import hub_card

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "train"
sys.path.insert(0, str(TRAIN))

import grpo  # noqa: E402
import teach_check  # noqa: E402
from grpo_params import TinyModel  # noqa: E402


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory, cruxeval_traced: list) -> Path:
    """Phase 1's train split and each family's test split, from 8 CRUXEval cases."""
    folder = tmp_path_factory.mktemp("release")
    items = []
    for index, record, trace in cruxeval_traced[:8]:
        case = {"source": record["code"], "entry": "f", "args": record["input"], "tier": 1 + index % 3}
        items += build_items_for_case(case, trace, seed=0)
    (folder / "phase1").mkdir()
    pq.write_table(pa.Table.from_pylist(items), folder / "phase1" / "train-00000-of-00001.parquet")
    for family in teach_check.RELEASE_CONFIGS:
        rows = [i for i in items if i["family"] == family]
        assert rows, family
        (folder / family / "test").mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), folder / family / "test" / "part-00000.parquet")
    (folder / "README.md").write_text(hub_card("phase1"))
    return folder


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory, release: Path) -> Path:
    """A tiny random Qwen2 and a tokenizer trained on the release's prompts, saved as a folder."""
    prompts = pq.read_table(release / "phase1").column("prompt").to_pylist()
    tokenizer = grpo.train_tokenizer(prompts, 1000)
    model = grpo.tiny_model(TinyModel(), tokenizer)
    folder = tmp_path_factory.mktemp("tiny")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_the_dry_run_evaluates_trains_and_evaluates_again(release: Path, tiny_model: Path, tmp_path: Path):
    out = tmp_path / "check"
    argv = [
        sys.executable, str(TRAIN / "teach_check.py"), "--cpu", "--model", str(tiny_model),
        "--data", str(release), "--limit", "2", "--per-family", "1", "--max-steps", "1",
        "--max-tokens", "8", "--train-items", "4", "--generations", "2", "--out", str(out),
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "teach_check.json").read_text())
    sets = ["cruxeval-o", "cruxeval-i", *(f"release/{c}" for c in teach_check.RELEASE_CONFIGS)]
    for when in ("before", "after"):
        assert sorted(report[when]) == sorted(sets)
        for name in sets:
            scores = report[when][name]
            assert scores["items"] == (2 if name.startswith("cruxeval") else 1), name
            assert 0.0 <= scores["pass@1"] <= 1.0 and 0 <= scores["unparsed"] <= scores["items"]
    assert report["train"]["steps"] == 1 and report["train"]["items"] == 4
    assert (out / "phase1" / "model.safetensors").is_file()  # what "after" evaluated
    lines = done.stdout.splitlines()  # (the training part logs its steps there too)
    header = next(i for i, line in enumerate(lines) if line.startswith("set ") and "before" in line)
    assert [line.split()[0] for line in lines[header + 1 : header + 1 + len(sets)]] == sets


def test_the_table_shows_the_change_per_set() -> None:
    before = {"cruxeval-o": {"items": 10, "pass@1": 0.2, "unparsed": 3}}
    after = {"cruxeval-o": {"items": 10, "pass@1": 0.3, "unparsed": 1}}
    line = teach_check.table(before, after).splitlines()[1].split()
    assert line == ["cruxeval-o", "10", "0.200", "0.300", "+0.100", "3/1"]
