"""The quality figures of JavaScript programs: the ``measure`` facet's job on the node worker, the
pool found from JavaScript argument values, and a release of two languages measured per language."""

from __future__ import annotations

import shutil

import pytest

from factory.languages.javascript.measure import shape_args
from factory.quality.measure import ALL, Program, ablation_sample, measure, release_quality, summarize
from factory.quality.signature import PoolIndex, args_shapes

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js >= 20) is not on PATH")

JS = "javascript"
NUMBERS = [str(i) for i in range(-5, 45)]
ARRAYS = ["[3, 1, 2]", "[5]", "[]", "[7, 7, 1, 0]", "[2, 4, 6, 8]", "[9, -1]", "[1.5, 2]", "[0, 0]"]
# Constant output, an `if` test with one outcome on its inputs (n > 100), a dead store.
CONSTANT = """function f(n) {
  let unused = n;
  if (n > 100) {
    return 1;
  }
  return 7;
}
"""
# Real work: both outcomes of its test, no trivial operation.
SUM = """function f(xs) {
  let total = 0;
  for (const v of xs) {
    if (v > 2) {
      total += v;
    }
  }
  return total;
}
"""
# A trivial operation (identity) and an irrelevant statement (`const extra = ...`).
TRIVIAL = """function f(s) {
  const extra = s.length;
  const same = s.slice(0);
  return same + "!";
}
"""
PROGRAMS = [
    Program("c", 1, CONSTANT, "f", ("3", "8"), ("number", "number"), (("ci", "7"),), language=JS),
    Program("s", 1, SUM, "f", ("[1, 5]", "[3, 4]"), ("number", "number"), (("si", "99"),), language=JS),
    Program("t", 2, TRIVIAL, "f", ('"ab"', '"xyz"'), ("string", "string"), language=JS),
]
POOLS = {"c": NUMBERS, "s": ARRAYS, "t": None}


@pytest.fixture(scope="module")
def measured():
    return measure(PROGRAMS, lambda p: POOLS[p.key], workers=1)


def test_the_javascript_job_measures_each_program(measured) -> None:
    constant, total, trivial = measured
    assert constant.facts is not None and constant.facts.dead_stores == ("unused",)
    assert (constant.reached_tests, constant.one_outcome_tests) == (1, 1)
    assert constant.random_ok == 40 and constant.random_constant is True
    assert constant.solved == [True]  # every argument list gives 7
    assert constant.irrelevant == 3  # the dead store, the if that never returns and its return
    assert (total.reached_tests, total.one_outcome_tests) == (1, 0)
    assert total.random_constant is False and total.random_ok >= 2 and total.solved == [False]
    assert total.irrelevant == 0 and total.facts is not None and total.facts.trivial == ()
    assert trivial.facts is not None and [t.text for t in trivial.facts.trivial] == ["s.slice(0)"]
    assert trivial.random_constant is None and trivial.solved == []  # no pool
    assert trivial.irrelevant == 1 and (trivial.strings, trivial.four_letter_strings) == (2, 0)


def test_the_javascript_figures(measured) -> None:
    figures = summarize(measured)
    assert set(figures) == {"1", "2", ALL}
    every = figures[ALL]
    assert every["constant_output"] == 0.5 and every["constant_output_judged"] == 2
    assert every["one_outcome_if_tests"] == 0.5 and every["reached_if_tests"] == 2
    assert every["trivial_identity"] == round(1 / 3, 4) and every["dead_store"] == round(2 / 3, 4)
    assert every["random_solves_input_item"] == 0.5 and every["clean"] == round(1 / 3, 4)
    assert every["output_types"] == {"number": round(4 / 6, 4), "string": round(2 / 6, 4)}


def test_measuring_javascript_twice_gives_the_same_figures(measured) -> None:
    assert summarize(measure(PROGRAMS, lambda p: POOLS[p.key], workers=2)) == summarize(measured)


def test_a_javascript_pool_is_found_from_its_values() -> None:
    # numbers are one type (1 and 1.5 alike); a Set and a Map are not an array or an object
    assert args_shapes(["1", "1.5"], shape_args) == [("float",)]
    pools = {
        '["array[number]"]': ARRAYS,
        '["Set[number]"]': ["new Set([1, 2])", "new Set([])"],
        '["Map[string, number]"]': ['new Map([["a", 1]])'],
        '["object[number]"]': ['{"a": 1}', "{}"],
        '["number", "string"]': ['1, "a"', '2.5, "b"'],
        '["array[pair[number, string]]"]': ['[[1, "a"], [2, "b"]]', "[]"],
    }
    index = PoolIndex(pools, shape_args)
    assert index.signature(["[4, 0.5]"]) == '["array[number]"]'
    assert index.signature(["new Set([3])"]) == '["Set[number]"]'
    assert index.signature(['new Map([["z", 2]])']) == '["Map[string, number]"]'
    assert index.signature(['{"k": 3}']) == '["object[number]"]'
    assert index.signature(['7, "x"']) == '["number", "string"]'
    assert index.signature(['"x", 7']) is None
    assert index.signature(['[[-1, "x"], [2, "then"]]']) == '["array[pair[number, string]]"]'


def test_a_release_of_two_languages_is_measured_per_language() -> None:
    rows = [
        {"program_id": "p", "source": "def f(n):\n    return n + 1\n", "entry": "f", "tier": 1, "args": "2",
         "family": "input", "task_id": "t", "output_repr": "3", "output_type": "int", "language": "python"},
        {"program_id": "j", "source": CONSTANT, "entry": "f", "tier": 1, "args": "4",
         "family": "output", "task_id": "u", "output_repr": "7", "output_type": "number", "language": JS},
    ]  # fmt: skip
    pools = {"python": {'["int"]': NUMBERS}, JS: {'["number"]': NUMBERS}}
    quality = release_quality(rows, pools, workers=1)
    assert list(quality) == ["python", JS]
    assert quality[JS]["programs_without_pool"] == 0 and quality[JS]["random_inputs"] == 40
    assert quality[JS]["figures"][ALL]["constant_output"] == 1.0
    assert quality["python"]["figures"][ALL]["constant_output"] == 0.0
    assert quality["python"]["figures"][ALL]["programs"] == 1 == quality[JS]["figures"][ALL]["programs"]


def test_random_runs_that_run_away_are_stopped_by_their_step_budget() -> None:
    # Loops forever when n > 5 (4 of the 40 argument lists, all drawn): each such run stops at
    # RUN_STEPS steps, and after three of them the job runs no more (Python's MAX_SLOW).
    source = "function f(n) {\n  let i = 0;\n  while (n > 5) {\n    i += 1;\n  }\n  return i;\n}\n"
    program = Program("loop", 1, source, "f", ("1", "2"), ("number",), (("li", "0"),), language=JS)
    [m] = measure([program], lambda p: [str(i) for i in range(-30, 10)], workers=1)
    assert m.facts is not None and m.irrelevant is not None  # the job and the ablation answered
    assert 2 <= m.random_ok < 36 and m.random_constant is True  # the runs that returned gave 0
    assert m.solved == [False]  # skipped: three runs had overrun


def test_the_ablation_sample_is_per_language_and_tier() -> None:
    python = [Program(f"p{i}", 1, "", "f", ()) for i in range(4)]
    javascript = [Program(f"j{i}", 1, "", "f", (), language=JS) for i in range(4)]
    chosen = ablation_sample(python + javascript, 2)
    assert len(chosen & {p.key for p in python}) == 2 and len(chosen & {p.key for p in javascript}) == 2
    assert ablation_sample(python, 2) == chosen & {p.key for p in python}  # Python's as before
