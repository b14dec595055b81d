"""The language seam is real: a fixture language, registered here, synthesizes programs through the
same loader, generator, tier check and stage, and no code under factory/ names it.

The language is ``toy_language.Toy`` (tests/languages/fixtures/): Python-like text written its own
way (2-space indents, its own parenthesisation). test_seam_end_to_end.py runs the later stages on
it.
"""

from __future__ import annotations

import ast
import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from toy_language import Toy

from factory.grammar.loader import GrammarError, load_grammar
from factory.grammar.model import Grammar
from factory.io import read_table
from factory.languages import language, register, unregister
from factory.params import SynthesizeParams
from factory.synth.check import check_program
from factory.synth.generator import GenerationFailed, generate_program
from factory.synth.stage import run_synthesize_stage
from factory.synth.tiers import TIERS

FIXTURE = Path(__file__).parent / "fixtures" / "toy"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def toy() -> Iterator[Grammar]:
    register(Toy())
    try:
        yield load_grammar(FIXTURE)
    finally:
        unregister("toy")


def test_the_grammar_folder_chooses_the_language(toy: Grammar) -> None:
    assert toy.language == "toy"
    assert isinstance(language(toy.language), Toy)


def test_programs_of_every_tier_are_rendered_by_the_language_and_meet_their_tier(toy: Grammar) -> None:
    made = dict.fromkeys(TIERS, 0)
    for tier in TIERS:
        for target in toy.targets():
            for seed in range(4):
                try:
                    program = generate_program(toy, target, tier, random.Random(f"{tier}:{target}:{seed}"))
                except GenerationFailed:
                    continue
                made[tier] += 1
                assert check_program(program.source, tier, target, toy) == [], program.source
                ast.parse(program.source)
                indents = {len(line) - len(line.lstrip(" ")) for line in program.source.splitlines()}
                assert indents <= {0, 2, 4, 6, 8}, program.source  # toy's 2-space indentation
                assert 2 in indents
    assert all(count >= 4 for count in made.values()), made


def test_the_language_fills_templates_and_writes_guards(
    toy: Grammar, monkeypatch: pytest.MonkeyPatch
) -> None:
    import factory.synth.statements

    monkeypatch.setattr(factory.synth.statements, "GUARD_SHARE", 1.0)  # rare by default: here, always
    sources = []
    for seed in range(200):
        try:
            # Tier 4: a pop inside a nested construct, where its list may be empty (a guard).
            sources.append(generate_program(toy, "list.pop", 4, random.Random(seed)).source)
        except GenerationFailed:
            continue
    text = "\n".join(sources)
    assert "if (len(" in text  # a guard, parenthesised by toy's conjunction
    assert re.search(r"\+ \([^)]*[+*]", text)  # a nested operand, parenthesised by toy's fill


def test_the_synthesize_stage_runs_on_the_fixture_language(toy: Grammar, tmp_path: Path) -> None:
    params = SynthesizeParams(grammars=[str(FIXTURE)], tiers=[1, 3, 6], programs_per_target_tier=2, workers=1)
    stats = run_synthesize_stage(5, params, tmp_path / "programs", tmp_path / "s.json").to_dict()
    rows = read_table(tmp_path / "programs").to_pylist()
    assert rows and stats["out"] == len(rows)
    assert {r["grammar_hash"] for r in rows} == {toy.grammar_hash}
    assert all("\n  " in r["source"] and "\n    return" not in r["source"] for r in rows if r["tier"] == 1)


def test_the_loader_checks_templates_with_the_language(toy: Grammar, tmp_path: Path) -> None:
    folder = tmp_path / "toy"
    shutil.copytree(FIXTURE, folder)
    with (folder / "int.yaml").open("a") as f:
        f.write('  - {name: pow, template: "{recv} ** 2", receiver: int, returns: int}\n')
    with pytest.raises(
        GrammarError, match=r"int\.yaml:\d+: operation 'pow': template is not a Toy expression"
    ):
        load_grammar(folder)


def test_no_code_under_factory_names_the_fixture_language() -> None:
    named = [p for p in (REPO / "factory").rglob("*.py") if re.search(r"\btoy\b", p.read_text(), re.I)]
    assert named == []
