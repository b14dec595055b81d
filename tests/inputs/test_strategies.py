"""The project's strategy kinds (words, readable_floats, mixture) and what the grammar draws with them."""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import strategies as st

from factory.grammar.loader import load_grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.pools import draw_type_pool
from factory.inputs.strategies import (
    HYPOTHESIS_KINDS,
    PROJECT_KINDS,
    readable_floats,
    strategy_for,
    weighted,
    weighted_branches,
    words,
)
from factory.literals import literal_eval

GRAMMAR = load_grammar("grammars/python")
VOCABULARY = ("apple", "red", "tree", "sky", "banana", "cat")


def _values(type_text: str, seed: int = 42) -> list:
    """One type's pool as the inputs stage draws it (seed 42, pool size 256), as values."""
    return [literal_eval(text) for text in draw_type_pool(GRAMMAR, type_text, seed, 256)]


def test_words_follow_their_arguments() -> None:
    strategy = words(
        VOCABULARY, min_words=2, max_words=3, sep=[", ", "-"], case="upper", end="!", pad=["", " "]
    )
    drawn = draw_examples(strategy, 60, seed=1)
    assert len(drawn) == 60
    for text in drawn:
        core = text.strip()
        assert core.endswith("!")
        parts = re.split(r", |-", core[:-1])
        assert 2 <= len(parts) <= 3 and all(p.lower() in VOCABULARY and p.isupper() for p in parts), text
    assert {", " in t for t in drawn} == {True, False}  # both separators are drawn
    assert any(t != t.strip() for t in drawn) and any(t == t.strip() for t in drawn)


def test_words_cases_and_max_length() -> None:
    assert set(draw_examples(words(VOCABULARY, max_length=3), 30, seed=2)) <= {"red", "sky", "cat"}
    titled = draw_examples(words(VOCABULARY, min_words=2, max_words=2, case="title"), 20, seed=3)
    assert all(t.istitle() for t in titled)
    capital = draw_examples(words(VOCABULARY, min_words=3, max_words=3, case="capitalize"), 20, seed=3)
    assert all(t[0].isupper() and t[1:] == t[1:].lower() for t in capital)
    mixed = draw_examples(words(VOCABULARY, min_words=3, max_words=3, case="mixed"), 40, seed=4)
    assert any(w.isupper() for t in mixed for w in t.split()) and any(
        w.islower() for t in mixed for w in t.split()
    )


def test_words_are_independent_draws() -> None:
    """Hypothesis builds later examples by mutating earlier ones; rendering from a drawn seed keeps
    the words independent (no "ball ball ball" runs beyond chance)."""
    drawn = draw_examples(
        words(tuple(f"w{c}" for c in "abcdefghijklmnopqrst"), min_words=3, max_words=3), 200, 5
    )
    all_same = sum(len(set(t.split())) == 1 for t in drawn)
    assert all_same <= 4  # chance: 200 / 400 = 0.5 expected
    assert drawn == draw_examples(words(tuple(f"w{c}" for c in "abcdefghijklmnopqrst"), 3, 3), 200, 5)


@pytest.mark.parametrize(
    "bad", [{"case": "loud"}, {"min_words": 3, "max_words": 1}, {"max_length": 1}, {"sep": []}]
)
def test_words_refuse_bad_arguments(bad: dict) -> None:
    with pytest.raises(ValueError):
        words(VOCABULARY, **bad)


def test_readable_floats_are_short_fractions_within_bounds() -> None:
    drawn = draw_examples(readable_floats(-10, 25, [1, 4, 100]), 300, seed=6)
    assert len(set(drawn)) > 100
    for x in drawn:
        assert -10 <= x <= 25
        assert (Fraction(repr(x)) * 100).denominator == 1, x  # its repr is the short decimal
    assert any(x != int(x) for x in drawn) and any(x == int(x) for x in drawn)
    with pytest.raises(ValueError):
        readable_floats(1, 0)


def test_weighted_follows_the_weights() -> None:
    strategy = st.tuples(weighted([(9, st.just("a")), (1, st.just("b"))]), st.integers(0, 10**6))
    counts = Counter(letter for letter, _ in draw_examples(strategy, 1000, seed=7))
    assert 0.04 <= counts["b"] / 1000 <= 0.2, counts


def test_project_kinds_never_shadow_hypothesis() -> None:
    assert not (set(PROJECT_KINDS) | {"mixture"}) & HYPOTHESIS_KINDS


def test_a_mixture_has_one_branch_per_entry_and_others_one() -> None:
    assert [w for w, _ in weighted_branches(GRAMMAR, parse_type("list[int]"))] == [90.0, 5.0, 5.0]
    assert len(weighted_branches(GRAMMAR, parse_type("bool"))) == 1
    # the whole mixture is one strategy too (nested in containers, and for strategy_for's callers)
    assert all(
        isinstance(v, tuple) for v in draw_examples(strategy_for(GRAMMAR, parse_type("tuple[int]")), 20, 1)
    )


def test_strings_look_like_data() -> None:
    """The issue's target: >= 40% of drawn strings have a run of four ASCII letters (CRUXEval:
    46%), while the short constants programs look for are still often present."""
    values = _values("str")
    four = sum(bool(re.search(r"[A-Za-z]{4}", s)) for s in values) / len(values)
    assert four >= 0.4
    for constant in (" ", ",", "a", "e", "-", "1"):
        assert sum(constant in s for s in values) / len(values) >= 0.05, constant
    assert "" in values and any(len(s) == 1 for s in values)
    assert any(s != s.strip() for s in values) and any(s.isdigit() for s in values)
    assert any(s.istitle() for s in values) and any(" " in s and s.endswith(".") for s in values)
    assert not any("\n" in s or "\t" in s for s in values)


def test_strings_inside_containers_are_short() -> None:
    elements = [s for value in _values("list[str]") for s in value]
    assert all(len(s) <= 5 for s in elements)
    assert sum(len(s) >= 3 for s in elements) / len(elements) >= 0.4  # mostly short words


def test_numbers_have_negatives_and_a_wider_range() -> None:
    ints = _values("int")
    assert min(ints) < 0 and max(ints) > 100
    assert sum(-20 <= n <= 100 for n in ints) / len(ints) >= 0.8  # mostly small
    floats = _values("float")
    assert all(-100 <= x <= 100 and len(repr(x)) <= 6 for x in floats)
    assert any(x < 0 for x in floats) and any(x != int(x) for x in floats)
