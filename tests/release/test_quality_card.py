"""The card's Quality section and the quality figures in the assemble stats."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from factory.errors import UserError
from factory.inputs.pool_table import write_pools
from factory.inputs.pools import draw_pools
from factory.release.card import quality_value


@pytest.fixture(scope="module")
def pools(small_tasks: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The argument pools of the small chain's programs (as the inputs stage writes them)."""
    out = tmp_path_factory.mktemp("pools") / "pools"
    write_pools(
        {"python": draw_pools(small_tasks.parent / "programs", "grammars/python", 5, 48, workers=1)}, out
    )
    return out


def quality_rows(card: str) -> dict[str, list[str]]:
    section = card.split("## Quality")[1].split("\n## ")[0]
    rows = [line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows}


def test_the_card_shows_the_quality_figures_per_tier(
    small_tasks: Path, pools: Path, tmp_path: Path, assemble
):
    stats = assemble(small_tasks, tmp_path / "a", pools_dir=pools)
    card = (tmp_path / "a" / "release" / "README.md").read_text()
    table = quality_rows(card)
    assert table["share of programs unless said"] == ["tier 1", "tier 4", "all"]  # the tiers released
    quality = stats["quality"]["python"]
    assert quality["random_inputs"] == 40 and quality["programs_without_pool"] == 0
    figures = quality["figures"]
    for label, key in (
        ("output identical over 40 random well-typed inputs", "constant_output"),
        ("a trivial operation: constant-only, self or identity", "trivial_operation"),
    ):
        assert table[label] == [quality_value(figures[g][key], "share") for g in ("1", "4", "all")]
    assert table["`if` tests with one outcome over the program's inputs (share of reached tests)"][0] == "–"
    assert table["programs"][-1] == f"{figures['all']['programs']:,}"
    assert figures["all"]["programs"] == figures["1"]["programs"] + figures["4"]["programs"]
    assert re.search(r"Output types \(share of the released cases\): `\w+` \d+%", card)
    assert "a fixed sample of 15 programs per tier" in card
    # the same input gives the same figures, byte for byte
    assemble(small_tasks, tmp_path / "b", pools_dir=pools)
    assert (tmp_path / "b" / "release" / "README.md").read_text() == card


def test_without_pools_the_random_figures_are_not_measured(release: dict) -> None:
    table = quality_rows((release["dir"] / "README.md").read_text())
    assert set(table["input items solved by a random well-typed argument list"]) == {"–"}
    assert release["stats"]["quality"]["python"]["programs_without_pool"] > 0
    assert table["a trivial operation: constant-only, self or identity"][-1].endswith("%")


def test_a_missing_pools_folder_is_a_user_error(small_tasks: Path, tmp_path: Path, assemble) -> None:
    with pytest.raises(UserError, match="input folder not found"):
        assemble(small_tasks, tmp_path / "c", pools_dir=tmp_path / "no-pools")
    assert not (tmp_path / "c" / "release").exists()


def test_the_card_has_a_quality_table_per_language() -> None:
    from factory.quality.measure import summarize
    from factory.release.card import _quality_section

    def one(programs: int) -> dict:
        figures = summarize([])
        figures["all"]["programs"] = programs
        return {"random_inputs": 40, "ablation_per_tier": 15, "programs_without_pool": 0, "figures": figures}

    alone = _quality_section({"python": one(3)})
    assert "###" not in alone and quality_rows(alone)["programs"] == ["3"]
    both = _quality_section({"javascript": one(5), "python": one(3)})
    assert both.index("### Python") < both.index("### JavaScript")  # Python's first, whatever the order
    assert both.startswith(alone.split("| share of programs")[0])  # one intro
    python, javascript = both.split("### JavaScript")
    assert quality_rows(python)["programs"] == ["3"]
    assert quality_rows("## Quality" + javascript)["programs"] == ["5"]
    assert _quality_section(one(3)) == alone  # a summary from before the figures were per language
