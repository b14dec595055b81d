"""Related arguments: a parameter's value made from another of its type (part, more, overlap)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from typing import Any

import pytest

from factory.grammar.loader import load_grammar
from factory.inputs.pools import combine_pools, draw_pool, draw_type_values
from factory.inputs.related import RELATIONS, Relations, related_value
from factory.literals import canonical_repr, parse_args

GRAMMAR = load_grammar("grammars/python")


@pytest.mark.parametrize("seed", range(20))
def test_a_part_is_a_proper_non_empty_part_in_order(seed: int) -> None:
    rng = random.Random(seed)
    assert (part := related_value({1, 2, 3, 4}, {9}, "part", rng)) and part < {1, 2, 3, 4}
    items = [5, 1, 4, 1, 3]
    sub = related_value(items, [0], "part", rng)
    assert 0 < len(sub) < len(items)
    it = iter(items)
    assert all(x in it for x in sub)  # a subsequence: the order kept
    d = {"a": 1, "b": 2, "c": 3}
    assert (sub_d := related_value(d, {"z": 0}, "part", rng)) and sub_d.items() < d.items()
    words = related_value("the quick brown fox", "x", "part", rng)
    assert "the quick brown fox".startswith(words) or "the quick brown fox".endswith(words)
    assert words and words != "the quick brown fox" and not words.startswith(" ")
    chars = related_value("abcdef", "x", "part", rng)
    assert chars and chars in "abcdef" and chars != "abcdef"


@pytest.mark.parametrize("seed", range(20))
def test_more_is_a_superset_by_one_or_two_of_its_own(seed: int) -> None:
    rng = random.Random(seed)
    more = related_value({1, 2}, {2, 7, 8, 9}, "more", rng)
    assert more > {1, 2} and 1 <= len(more - {1, 2}) <= 2 and more - {1, 2} <= {7, 8, 9}
    longer = related_value(["a", "b"], ["c", "d", "e"], "more", rng)
    assert longer[:2] == ["a", "b"] and 3 <= len(longer) <= 4
    assert "ab" in related_value("ab", "xyz", "more", rng)


def test_an_overlap_shares_elements_of_both() -> None:
    rng = random.Random(3)
    for _ in range(20):
        both = related_value({1, 2, 3}, {7, 8}, "overlap", rng)
        assert both & {1, 2, 3} and both & {7, 8}


@pytest.mark.parametrize("relation", RELATIONS)
def test_nothing_is_related_across_kinds_or_from_an_empty_value(relation: str) -> None:
    rng = random.Random(0)
    assert related_value(set(), {1}, relation, rng) is None
    assert related_value([1], {1}, relation, rng) is None
    assert related_value("", "ab", relation, rng) is None


def _relations(types: list[str], share: float = 0.25) -> Relations:
    values = {t: draw_type_values(GRAMMAR, t, 7, 128)[1] for t in types}
    return Relations(share, values, lambda v, t: canonical_repr(v))


def test_numbers_bools_and_mixed_tuples_are_never_related() -> None:
    relations = _relations(["int", "bool", "float", "pair[int, str]", "set[str]", "str", "dict[str, int]"])
    assert not any(relations.relatable(t) for t in ("int", "bool", "float", "pair[int, str]"))
    assert all(relations.relatable(t) for t in ("set[str]", "str", "dict[str, int]"))


def _pools(types: list[str]) -> dict[str, list[str]]:
    return {t: draw_type_values(GRAMMAR, t, 7, 128)[0] for t in set(types)}


def test_related_tuples_replace_a_share_and_leave_the_rest_as_drawn() -> None:
    key = '["set[int]", "set[int]"]'
    pools = _pools(["set[int]"])
    plain = combine_pools(key, pools, 1, 400)
    related = combine_pools(key, pools, 1, 400, _relations(["set[int]"]))
    changed = [(a, b) for a, b in zip(plain, related, strict=True) if a != b]
    assert 0.15 * 400 < len(changed) < 0.3 * 400
    for before, after in changed:  # the first parameter is drawn, the second made from it
        assert parse_args(before)[0] == parse_args(after)[0]
    pairs = [parse_args(row) for row in related]
    assert all(a != b for a, b in pairs)
    subsets = sum(1 for a, b in pairs if b and b < a)
    supersets = sum(1 for a, b in pairs if a and a < b)
    drawn = [parse_args(row) for row in plain]
    by_chance = sum(1 for a, b in drawn if (b and b < a) or (a and a < b))  # small sets of small ints
    assert subsets > 10 and supersets > 10 and subsets + supersets > 3 * by_chance
    assert combine_pools(key, pools, 1, 400, _relations(["set[int]"])) == related
    assert combine_pools(key, pools, 1, 400, _relations(["set[int]"], share=0.0)) == plain


def test_a_third_parameter_may_be_made_from_either_earlier_one() -> None:
    key = '["str", "str", "str"]'
    rows = [parse_args(r) for r in combine_pools(key, _pools(["str"]), 2, 300, _relations(["str"]))]
    assert all(len(set(values)) == 3 for values in rows)

    def inside(a: Any, b: Any) -> bool:
        return bool(a) and a in b

    assert sum(inside(c, a) or inside(a, c) for a, _, c in rows) > 15
    assert sum(inside(c, b) or inside(b, c) for _, b, c in rows) > 15


def test_the_pipeline_pool_relates_by_the_param_and_is_reproducible() -> None:
    key = '["list[str]", "list[str]"]'
    plain = draw_pool(GRAMMAR, key, 4, 128)
    related = draw_pool(GRAMMAR, key, 4, 128, related_share=0.25)
    assert related != plain and related == draw_pool(GRAMMAR, key, 4, 128, related_share=0.25)


def test_related_sets_do_not_depend_on_the_hash_seed() -> None:
    """A set of strings iterates in the process's hash-seed order; the made values must not."""
    code = (
        "import random; from factory.inputs.related import related_value\n"
        "print([sorted(related_value(set('abcdefgh'), set('wxyz'), r, random.Random(1))) for r in "
        "('part', 'more', 'overlap')])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1 and outputs != {""}


def test_a_set_of_mixed_elements_is_related_too() -> None:
    part = related_value({1, "a", (2, "b")}, {"z"}, "part", random.Random(4))
    assert part and part < {1, "a", (2, "b")}
