"""The quality measurement: parameter shapes, the ``quality`` job in real workers, the figures."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from factory.errors import UserError
from factory.grammar.loader import load_grammar
from factory.quality.measure import (
    ALL,
    Measured,
    Program,
    ablation_sample,
    measure,
    programs_from_rows,
    random_args,
    release_quality,
    summarize,
)
from factory.quality.signature import PoolIndex, grammar_signature, parsed_once, shape_of

INTS = [str(i) for i in range(-5, 30)]
LISTS = ["[3, 1, 2]", "[5]", "[]", "[7, 7, 1, 0]", "[2, 4, 6, 8]", "[9, -1]", "[1, 2, 3, 4, 5]", "[0, 0]"]


def test_shapes_read_from_values() -> None:
    assert shape_of(3) == ("int",) and shape_of(True) == ("bool",)
    assert shape_of([1, 2]) == ("list", ("int",))
    assert shape_of([]) == ("list", ("?",))
    assert shape_of({"a": [1]}) == ("dict", ("str",), ("list", ("int",)))
    assert shape_of((1, 2, 3)) == ("tuple*", ("int",), 3)
    assert shape_of((1, "a")) == ("tuple", ("int",), ("str",))
    assert shape_of([1, "a"]) is None and shape_of(None) is None


def test_a_programs_pool_is_found_from_its_arguments() -> None:
    pools = {
        '["pair[int, int]"]': ["(1, 2)", "(3, 4)", "(5, 5)"],
        '["tuple[int]"]': ["(1, 2, 3)", "(4,)", "(5, 6)", "()"],
        '["list[int]"]': LISTS,
        '["list[str]"]': ["['a']", "['b', 'c']"],
        '["int", "list[int]"]': ["1, [2]", "3, []"],
    }
    index = PoolIndex(pools)
    assert index.signature(["(1, 9, 3)", "(2, 2)"]) == '["tuple[int]"]'  # lengths differ: not a pair
    assert index.signature(["(7, 8)"]) == '["pair[int, int]"]'  # ambiguous: the first key in order
    assert index.signature(["[]", "[4, 5]"]) == '["list[int]"]'
    assert index.signature(["['x']"]) == '["list[str]"]'
    assert index.signature(["4, [1]"]) == '["int", "list[int]"]'
    assert index.signature(["{1: 2}"]) is None
    assert index.signature(["f(1)"]) is None  # not literals


def test_a_benchmark_input_gets_grammar_types() -> None:
    grammar = load_grammar("grammars/python")
    assert json.loads(grammar_signature(["'abc', 3"], grammar) or "null") == ["str", "int"]
    assert json.loads(grammar_signature(["[], {'a': 1}"], grammar) or "null") == [
        "list[int]",
        "dict[str, int]",
    ]
    assert json.loads(grammar_signature(["(1, 'a')"], grammar) or "null") == ["pair[int, str]"]
    assert grammar_signature(["[1, 'a']"], grammar) is None
    assert grammar_signature(["None"], grammar) is None


def program(key: str, source: str, inputs: list[str], tier: int = 1, **extra) -> Program:
    return Program(key=key, tier=tier, source=source, entry="f", inputs=tuple(inputs), **extra)


POOLS = {"strings": ["'hello'", "'x'", "'Name Here'", "'a-b'"], "solver": ["3"]}


def pool_of(p: Program) -> list[str]:
    return POOLS.get(p.key, INTS)


@pytest.fixture(scope="module")
def measured():
    programs = [
        # constant output, a constant-only operation, an irrelevant statement
        program(
            "const",
            "def f(n):\n    m = n + 1\n    return len([7, -1])\n",
            ["3", "4"],
            output_types=("int", "int"),
        ),
        # clean: every statement counts, the output follows n
        program("clean", "def f(n):\n    m = n * 2\n    return m - 1\n", ["3", "4"]),
        # its pool holds one argument list: its items are tried on n = 3 (f(3) == 5)
        program("solver", "def f(n):\n    return n * 2 - 1\n", ["1"], items=(("i1", "5"), ("i2", "7"))),
        # an if test that only ever goes one way on its own inputs
        program(
            "branch",
            "def f(n):\n    if n > 100:\n        return 0\n    return n\n",
            ["3", "4"],
            tier=2,
        ),
        # runs away on random inputs (n large): bounded, measured as far as it ran
        program(
            "slow",
            "def f(n):\n    t = 0\n    for i in range(n * 10**5):\n        t += i\n    return t\n",
            ["1", "2"],
            tier=2,
        ),
        program("strings", "def f(s):\n    return s.upper()\n", ["'word'", "'ab'"], tier=2),
        # strip() with no whitespace to strip on its own inputs: an inert operation
        program("inert", "def f(s):\n    t = s.strip()\n    return t + '!'\n", ["'a'", "'b c'"], tier=3),
    ]
    return measure(programs, pool_of, workers=2)


def test_the_job_measures_each_program(measured) -> None:
    by_key = {m.program.key: m for m in measured}
    const, clean, branch, slow, strings, solver = (
        by_key[k] for k in ("const", "clean", "branch", "slow", "strings", "solver")
    )
    assert const.random_constant is True and clean.random_constant is False
    assert const.irrelevant == 1 and clean.irrelevant == 0
    assert [t.kind for t in const.facts.trivial] == ["constant"] and clean.facts.trivial == ()
    assert (branch.reached_tests, branch.one_outcome_tests) == (1, 1)
    assert solver.solved == [True, False] and solver.random_constant is None  # one random run: not judged
    assert (
        slow.facts is not None and slow.random_ok >= 2
    )  # its first draws ran; the slow ones did not hang the job
    assert (strings.strings, strings.four_letter_strings) == (2, 1)


def test_the_figures_per_tier_and_overall(measured) -> None:
    figures = summarize(measured)
    assert list(figures) == ["1", "2", "3", ALL]
    one, everything = figures["1"], figures[ALL]
    assert one["programs"] == 3 and everything["programs"] == 7
    assert one["constant_output_judged"] == 2 and one["constant_output"] == 0.5
    assert one["trivial_operation"] == round(1 / 3, 4)
    assert one["input_items"] == 2 and one["random_solves_input_item"] == 0.5
    assert one["one_outcome_if_tests"] is None  # no if test reached in tier 1
    assert figures["2"]["one_outcome_if_tests"] == 1.0
    assert one["clean"] == round(2 / 3, 4)  # "clean" and "solver" (not judged constant is not constant)
    assert one["irrelevant_statements"] == round(1 / 5, 4)  # 5 statements, one irrelevant
    assert one["median_relevant_statements"] == 1.0
    assert one["output_types"] == {"int": 1.0}
    assert everything["four_letter_strings"] == 0.25  # 'word' of 'word', 'ab', 'a', 'b c'
    assert figures["3"]["inert_operation"] == 1.0  # `t = s` gives the same outputs
    assert one["inert_operation"] == round(1 / 3, 4)  # "const": `m = n` changes nothing either
    assert figures["2"]["inert_operation"] == 0.0


def test_measuring_twice_gives_the_same_figures(measured) -> None:
    again = measure([m.program for m in measured], pool_of, workers=1)
    assert summarize(again) == summarize(measured)


def test_draws_are_seeded_by_the_program() -> None:
    p = program("k", "def f(n):\n    return n\n", ["1"])
    assert random_args(p, INTS) == random_args(p, INTS)
    assert len(set(random_args(p, INTS))) == len(random_args(p, INTS)) == 35
    assert random_args(p, INTS) != random_args(program("other", p.source, ["1"]), INTS)


def test_programs_from_rows_and_the_ablation_sample() -> None:
    base = {"source": "def f(n):\n    return n\n", "entry": "f", "output_type": "int"}
    cases = [("b", 1, "2", "output", "t1"), ("b", 1, "2", "input", "t2"), ("b", 1, "1", "input", "t3")]
    cases.append(("a", 3, "5", "white_box", "t4"))
    rows = [
        {**base, "program_id": pid, "tier": tier, "args": a, "family": fam, "task_id": t, "output_repr": a}
        for pid, tier, a, fam, t in cases
    ]
    programs = programs_from_rows(rows)
    assert [p.key for p in programs] == ["a", "b"]
    assert programs[1].inputs == ("1", "2") and programs[1].output_types == ("int", "int")
    assert programs[1].items == (("t2", "2"), ("t3", "1"))
    assert programs[0].output_types == ("int",) and programs[0].items == ()
    assert programs[1].output_chars == (1, 1)  # each case's output text ("1", "2"), once
    assert ablation_sample(programs, None) == {"a", "b"}
    assert ablation_sample(programs, 1) == {"a", "b"}  # one per tier
    assert ablation_sample(programs * 3, 0) == set()


def test_the_output_length_figures() -> None:
    short = program("s", "def f(n):\n    return n\n", ["1"], tier=1)
    figures = summarize(
        [
            Measured(replace(short, output_chars=(1, 3, 51))),
            Measured(replace(short, key="t", output_chars=(50, 80))),
            Measured(replace(short, key="u", tier=2)),  # no case output known: counts in neither
        ]
    )
    assert figures["1"]["median_output_chars"] == 50.0
    assert figures["1"]["long_output"] == 0.4  # 51 and 80 of five: longer than 50 characters
    assert figures["2"]["median_output_chars"] is None and figures["2"]["long_output"] is None


def test_release_quality_without_pools_leaves_the_random_figures_out() -> None:
    rows = [
        {"program_id": "p", "source": "def f(n):\n    return n + 1\n", "entry": "f", "tier": 1, "args": "2",
         "family": "input", "task_id": "t", "output_repr": "3", "output_type": "int"},
    ]  # fmt: skip
    quality = release_quality(rows, None, workers=1)["python"]
    assert quality["random_inputs"] == 0 and quality["programs_without_pool"] == 1
    figures = quality["figures"]["1"]
    assert figures["constant_output"] is None and figures["random_solves_input_item"] is None
    assert figures["irrelevant_statements"] == 0.0 and figures["clean"] == 1.0


def test_parsed_once_reads_a_text_once_and_fails_alike_again() -> None:
    read: list[str] = []

    def parse(text: str) -> tuple[int, ...]:
        read.append(text)
        if not text.isdigit():
            raise UserError(f"not a number: {text}")
        return (int(text),)

    once = parsed_once(parse)
    assert once("1") == once("1") == (1,)
    for _ in range(2):
        with pytest.raises(UserError, match="not a number: x"):
            once("x")
    assert read == ["1", "x"]
