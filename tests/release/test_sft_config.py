"""The release's ``sft`` config: the sft stage's examples (``--extra-input sft=DIR``)."""

from __future__ import annotations

from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.contracts import SFT_SCHEMA, TASKS_SCHEMA
from factory.io import read_table
from factory.params import AssembleParams, SftParams
from factory.release.card import card_configs
from factory.release.splits import split_of
from factory.sft import run_sft_stage
from factory.solvers import CachedSolver, ResponseCache
from tests.solvers.helpers import ScriptedSolver


@pytest.fixture(scope="module")
def sft_dir(small_tasks: Path, small_release: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """data/sft as the stage writes it: a scripted teacher (a TEST DOUBLE) right once in 2 samples,
    asked about 30 tasks of small_tasks: 25 of programs its release keeps, then 5 of programs it
    drops (near duplicates or contaminated), whose examples go with them."""
    out = tmp_path_factory.mktemp("sft")
    asked = [r for r in read_table(small_tasks).to_pylist() if r["family"] in SftParams().families]
    kept = [r for r in asked if r["program_id"] in small_release["kept"]][:25]
    dropped = [r for r in asked if r["program_id"] not in small_release["kept"]][:5]
    assert len(kept) == 25 and len(dropped) == 5
    (out / "tasks").mkdir()
    pq.write_table(
        pa.Table.from_pylist(kept + dropped, schema=TASKS_SCHEMA), out / "tasks" / "part-00000.parquet"
    )
    solver = CachedSolver(ScriptedSolver(kept + dropped, lambda p: 1), ResponseCache(out / "c.sqlite"))
    params = SftParams(enabled=True, n=2, limit=30)
    run_sft_stage(out / "tasks", out / "sft", out / "sft.json", params, seed=0, solver=solver)
    return out / "sft"


def test_release_has_an_sft_config_of_chat_messages(
    small_tasks, small_release, sft_dir, assemble, tmp_path
) -> None:
    examples = read_table(sft_dir).to_pylist()
    assert len(examples) == 30
    base = small_release["stats"]
    stats = assemble(small_tasks, tmp_path / "out", extra_inputs={"sft": sft_dir})
    folder = tmp_path / "out" / "release"
    assert "sft" in {c["config_name"] for c in card_configs((folder / "README.md").read_text())}
    ds = datasets.load_dataset(str(folder), "sft", cache_dir=str(tmp_path / "cache"))
    loaded = {r["task_id"]: (split, r) for split in ds for r in ds[split]}
    # An example goes with its program: those the release drops (near duplicates, contaminated) take theirs.
    expected = {e["task_id"] for e in examples if e["program_id"] in small_release["kept"]}
    assert set(loaded) == expected and len(expected) == 25
    for split, r in loaded.values():
        user, assistant = r["messages"]
        assert user["role"] == "user" and assistant["role"] == "assistant" and assistant["content"]
        assert split == split_of(
            r["program_id"], AssembleParams().test_share
        )  # the split of the program it comes from
    # the examples are released, but they are not items: the tier/family table is the tasks' own
    assert stats["items_by_tier_family"] == base["items_by_tier_family"]
    assert stats["configs"]["sft"] == {
        s: sum(sp == s for sp, _ in loaded.values()) for s in ("train", "test")
    }
    assert {k: v for k, v in stats["configs"].items() if k != "sft"} == base["configs"]


def test_an_empty_sft_folder_leaves_the_config_out(small_tasks, assemble, tmp_path) -> None:
    from factory.io import ShardWriter

    with ShardWriter(tmp_path / "sft", SFT_SCHEMA):
        pass  # the stage off (the default): one empty shard
    assemble(small_tasks, tmp_path / "out", extra_inputs={"sft": tmp_path / "sft"})
    card = (tmp_path / "out" / "release" / "README.md").read_text()
    assert "sft" not in {c["config_name"] for c in card_configs(card)}
    assert "`sft`" not in card and "`messages`" not in card
    assert not (tmp_path / "out" / "release" / "sft").exists()
