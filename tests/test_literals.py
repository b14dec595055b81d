"""``factory.literals.literal_eval``: the standard library's rules and errors, no garbage cycles."""

from __future__ import annotations

import ast
import gc
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factory.literals import literal_eval

CRUXEVAL = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "cruxeval" / "cruxeval.jsonl"

TEXTS = [
    "1",
    " \t-2.5",
    "+3",
    "1+2j",
    "-1-2j",
    "(1,)",
    "[1, (2, 'a'), {3: [b'x']}, {4, 5}, set(), None, True, ...]",
    "{'a': -0.0, 'b': {'c': ()}}",
    "-(1)",
    "1+2",  # refused: only a number plus an imaginary one
    "2j+1",
    "x",
    "f(1)",
    "set([1])",
    "{**a}",
    "[1, [2, [3, foo]]]",
    "-'a'",
    "1 if 2 else 3",
    "((1, 2), [3], {4: 5})",
    "{[1]: 2}",  # TypeError: unhashable
    "{1, [2]}",
    "(1, 2",  # SyntaxError
    "\n1",
]


def _outcome(fn, arg):
    try:
        return ("value", repr(fn(arg)), type(fn(arg)).__name__)
    except Exception as exc:  # the very same exception, message included (but node addresses)
        return ("error", type(exc).__name__, re.sub(r" at 0x[0-9a-f]+", "", str(exc)))


@pytest.mark.parametrize("text", TEXTS)
def test_same_values_and_errors_as_the_standard_library(text: str) -> None:
    assert _outcome(literal_eval, text) == _outcome(ast.literal_eval, text)
    try:
        tree = ast.parse(text.lstrip(" \t"), mode="eval")
    except SyntaxError:
        return
    assert _outcome(literal_eval, tree) == _outcome(ast.literal_eval, tree)
    assert _outcome(literal_eval, tree.body) == _outcome(ast.literal_eval, tree.body)


def test_same_values_on_every_cruxeval_input_and_output() -> None:
    checked = 0
    for line in CRUXEVAL.read_text().splitlines():
        record = json.loads(line)
        for text in (record["output"], f"({record['input']},)"):
            assert _outcome(literal_eval, text) == _outcome(ast.literal_eval, text)
            checked += 1
    assert checked == 1600


def test_no_garbage_cycles() -> None:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for text in TEXTS * 20:
            _outcome(literal_eval, text)
        assert gc.collect() == 0
        for _ in range(20):
            ast.literal_eval("[1, 2]")
        assert gc.collect() > 0  # the standard library's does make some: the check can fail
    finally:
        if enabled:
            gc.enable()


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: st.lists(inner) | st.tuples(inner, inner) | st.dictionaries(st.text(), inner),
    max_leaves=30,
)


@given(_VALUES, st.integers(0, 300))
def test_repr_exceeds_is_never_wrong(value: object, limit: int) -> None:
    """``repr_exceeds`` is a lower bound: it says "too long" only when the repr is."""
    from factory.literals import repr_exceeds

    if repr_exceeds(value, limit):
        assert len(repr(value)) > limit


def test_repr_exceeds_sees_huge_values_at_once() -> None:
    from factory.literals import repr_exceeds

    assert repr_exceeds("x" * 10**7, 2000) and repr_exceeds(list(range(10**6)), 2000)
    assert repr_exceeds(10**5000, 2000) and not repr_exceeds(10**1000, 2000)
    assert not repr_exceeds({"a": [1, 2], "b": (3,)}, 2000)


def test_args_are_the_values_compiled_code_builds() -> None:
    from factory.literals import parse_args

    # A set display of constants is copied from a frozenset constant; its order is the one a
    # test's `f({...})` call sees, which inserting the items in text order need not give.
    text = "{-1, -4, 1, 12}, [1, {2: (3,)}], set(), -2.5, 1+2j"
    assert [list(v) if isinstance(v, set) else v for v in parse_args(text)] == [
        list(eval(f"({text},)")[0]),
        [1, {2: (3,)}],
        [],
        -2.5,
        1 + 2j,
    ]
    assert parse_args("") == () and parse_args("1, [2],") == (1, [2])


def test_widened_sets_keep_the_values_and_separate_colliding_elements() -> None:
    from factory.literals import parse_args, widened_sets

    (value,) = parse_args("[{5, 13}, ({-1, -2},), {'k': {1}}]")
    assert widened_sets(value) == value
    assert list(value[0]) != list(widened_sets(value)[0])  # 5 and 13 collide in a small table


def test_second_view_gives_the_sandbox_childs_set_order_where_widening_cannot() -> None:
    from factory.literals import marshal_copy, parse_args, second_view, widened_sets

    # -1 and -2 hash alike: no table separates them, a wide one may keep their order (where the
    # second lands depends on the padding's addresses); the sandbox's child gets a marshal copy,
    # whose elements come sorted: the other order.
    (pair,) = parse_args("{-1, -2}")
    assert list(pair) == [-1, -2]
    assert list(second_view((pair,))[0]) == list(marshal_copy((pair,))[0]) == [-2, -1]  # type: ignore[index]
    # -3 and 5 collide in a small table; the wide one happens to repeat the compiled order.
    (collide,) = parse_args("{-3, 5}")
    assert list(collide) == list(widened_sets(collide)) == [5, -3]
    assert list(second_view((collide,))[0]) == [-3, 5]
    # Where the copy keeps every order, the sets are widened as before.
    (value,) = parse_args("{5, 13}")
    assert list(marshal_copy((value,))[0]) == list(value)  # type: ignore[index]
    assert list(second_view((value,))[0]) == list(widened_sets(value)) != list(value)


def test_widened_sets_do_not_depend_on_the_allocation_history() -> None:
    """The padding's slots are fixed: the same set widens to the same order whatever objects the
    process allocated before (an ``object()`` padding's hash is its address)."""
    import random

    from factory.literals import widened_sets

    rng = random.Random(7)
    sets = [{rng.randrange(-20, 100) for _ in range(rng.randrange(2, 9))} for _ in range(200)]
    sets += [{"ab", "ba", "c", "word", "x y"}, {-1, -2, 5, 13}]
    first = [list(widened_sets(s)) for s in sets]
    kept = []
    for junk in (1, 7, 33, 250, 1000):
        kept.append([object() for _ in range(junk)])  # moves where the next objects are allocated
        assert [list(widened_sets(s)) for s in sets] == first
