"""Argument pools: exact shares per type, distinct values per parameter, distinct candidates."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from factory.contracts import PROGRAMS_SCHEMA
from factory.grammar.loader import load_grammar
from factory.inputs.pools import (
    DISTINCT_MIN_VALUES,
    _first_distinct,
    _shares,
    _shuffled,
    candidates_for,
    combine_pools,
    draw_pools,
    draw_type_pool,
)
from factory.io import ShardWriter
from factory.literals import literal_eval, parse_args
from factory.params import InputsParams

GRAMMAR = load_grammar("grammars/python")


def _value(text: str) -> Any:
    return literal_eval(text)


def test_shares_split_exactly() -> None:
    assert _shares([90, 5, 5], 256) == [230, 13, 13]
    assert sum(_shares([4, 3, 12, 6, 4], 256)) == 256
    assert _shares([1.0], 7) == [7]


def test_a_type_pool_has_each_branch_share() -> None:
    """5% empty and 5% one-element lists, though there is only one empty list to draw."""
    pool = draw_type_pool(GRAMMAR, "list[int]", 42, 256)
    assert len(pool) == 256
    sizes = [len(_value(text)) for text in pool]
    assert sizes.count(0) == 13 and sizes.count(1) == 13
    assert all(2 <= n <= 8 for n in sizes if n > 1)
    assert len(set(pool)) > 200


def test_type_pools_depend_only_on_seed_and_type() -> None:
    first = draw_type_pool(GRAMMAR, "str", 42, 64)
    draw_type_pool(GRAMMAR, "dict[str, int]", 42, 64)  # other draws in between change nothing
    assert draw_type_pool(GRAMMAR, "str", 42, 64) == first
    assert draw_type_pool(GRAMMAR, "str", 43, 64) != first


def test_parameters_of_one_type_get_different_values() -> None:
    pools = {"str": ["'a'", "'b'", "'c'"] * 4 + ["''"] * 8 + [f"'w{i}'" for i in range(10)]}
    rows = combine_pools('["str", "str", "str"]', pools, 1, 100)
    assert len(rows) == 100
    for row in rows:
        values = parse_args(row)
        assert len(set(values)) == 3, row
    # a pool with one distinct value cannot help it
    assert set(combine_pools('["int", "int"]', {"int": ["7"] * 20}, 1, 5)) == {"7, 7"}


def test_a_type_with_few_values_meets_every_combination() -> None:
    assert DISTINCT_MIN_VALUES > 2
    rows = combine_pools('["bool", "bool"]', {"bool": ["True", "False"] * 50}, 1, 100)
    assert set(rows) == {"True, True", "True, False", "False, True", "False, False"}


def test_repeated_values_carry_their_share_into_the_signature_pool() -> None:
    pools = {"str": ["''"] * 10 + [f"'w{i}'" for i in range(90)], "int": [str(i) for i in range(100)]}
    rows = combine_pools('["str", "int"]', pools, 3, 100)
    assert sum(row.startswith("'', ") for row in rows) == 10


def test_candidates_are_distinct_and_reproducible() -> None:
    pool = ["1", "1", "1", "2", "3", "2", "4", "5", "5", "6"] * 3
    params = InputsParams(candidates=4)
    program = {"index": 9, "param_types": json.dumps([["n", "int"]])}
    pools = {'["int"]': pool}
    picked = candidates_for(program, pools, GRAMMAR, 1, params)
    assert len(picked) == 4 and len(set(picked)) == 4
    assert candidates_for(program, pools, GRAMMAR, 1, params) == picked
    assert (
        len(candidates_for(program, pools, GRAMMAR, 1, InputsParams(candidates=20))) == 6
    )  # all distinct ones


def test_candidates_are_the_first_distinct_of_a_full_sample() -> None:
    # The lazy shuffle draws what random.sample(pool, len(pool)) draws, item by item.
    for n in (1, 2, 5, 6, 12, 30, 256):
        pool = [str(i % (n // 2 + 1)) for i in range(n)]
        for seed in range(5):
            full = random.Random(f"7:{seed}").sample(pool, n)
            assert list(_shuffled(random.Random(f"7:{seed}"), pool)) == full
            for k in (0, 1, 4, n + 1):
                lazy = _first_distinct(_shuffled(random.Random(f"7:{seed}"), pool), k)
                assert lazy == list(dict.fromkeys(full))[:k]


def test_draw_pools_is_the_same_in_one_process_or_several(tmp_path: Path) -> None:
    rows = [
        {
            "program_id": f"p{i}",
            "index": i,
            "source": "def f(a, b):\n    return a\n",
            "entry": "f",
            "tier": 1,
            "target": "str.add",
            "param_types": json.dumps(types),
            "n_lines": 2,
            "grammar_hash": GRAMMAR.grammar_hash,
        }
        for i, types in enumerate([[["a", "str"], ["b", "str"]], [["a", "bool"], ["b", "int"]]])
    ]
    with ShardWriter(tmp_path / "programs", PROGRAMS_SCHEMA) as writer:
        writer.write_many(rows)
    one = draw_pools(tmp_path / "programs", "grammars/python", 5, 32, workers=1)
    two = draw_pools(tmp_path / "programs", "grammars/python", 5, 32, workers=2)
    assert one == two and set(one) == {'["str", "str"]', '["bool", "int"]'}
    assert all(len(rows) == 32 for rows in one.values())
    assert all(len(set(parse_args(row))) == 2 for row in one['["str", "str"]'])
