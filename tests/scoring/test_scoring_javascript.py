"""Scoring JavaScript items (docs/languages.md §6.6): gold answers score the maximum, the known
exploits score 0, in the ``assert.deepStrictEqual(f(...), value);`` format."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from factory.languages import language
from factory.scoring import score_item
from factory.scoring.judge import input_arguments, judge_output

JS = language("javascript")
SOURCE = (
    "function f(xs, k) {\n"
    "  const out = [];\n"
    "  for (const x of xs) {\n"
    "    if (x > k) {\n"
    "      out.push(x * 2);\n"
    "    }\n"
    "  }\n"
    "  return out;\n"
    "}\n"
)
SETS = 'function g(s) {\n  return new Map([["n", s.size], ["a", [...s]]]);\n}\n'


def answer(line: str) -> str:
    return f"<reasoning>\n...\n</reasoning>\n<answer>\n{line}\n</answer>"


def output_item(
    source: str = SOURCE, entry: str = "f", args: str = "[1, 5, 3], 2", gold: str = "[10, 6]"
) -> dict:
    return {
        "family": "output",
        "language": "javascript",
        "source": source,
        "entry": entry,
        "args": args,
        "questions": [{"family": "output", "answer": gold}],
    }


@pytest.mark.parametrize(
    "line",
    [
        "assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6]);",
        "assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6])",  # the semicolon may be left out
        "assert.deepStrictEqual( f([1,5,3,], 2) , [10,6,] ) ;",  # formatting is free
        "assert.strictEqual(f([1, 5, 3], 2), [10, 6]);",  # the scorer compares values either way
        "`assert.deepStrictEqual(f([0x1, 5, 3], 2.0), [1e1, 6]);`",
    ],
)
def test_gold_output_scores_the_maximum(line: str) -> None:
    assert score_item(output_item(), answer(line)).reward == 1.0


def test_collections_and_strings() -> None:
    item = output_item(SETS, "g", 'new Set(["a", "b"])', 'new Map([["n", 2], ["a", ["a", "b"]]])')
    line = "assert.deepStrictEqual(g(new Set(['a', 'b'])), new Map([['n', 2], ['a', [`a`, \"b\"]]]));"
    assert score_item(item, answer(line)).reward == 1.0
    unordered = "assert.deepStrictEqual(g(new Set(['a', 'b'])), new Map([['a', ['a', 'b']], ['n', 2]]));"
    assert score_item(item, answer(unordered)).reward == 1.0  # the value model's equality, as node's
    wrong = "assert.deepStrictEqual(g(new Set(['a', 'b'])), new Map([['n', 2], ['a', ['b', 'a']]]));"
    assert score_item(item, answer(wrong)).reward == 0.0  # an array's order is part of its value


@pytest.mark.parametrize(
    "line",
    [
        "assert.deepStrictEqual(1, 1);",  # a tautology
        "assert.deepStrictEqual([10, 6], [10, 6]);",
        "assert.deepStrictEqual(f([1, 5, 3], 2), f([1, 5, 3], 2));",
        "assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6]) || true;",
        "assert.deepStrictEqual(f([1, 5, 3], 2) || true, [10, 6]);",
        "assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6] || true);",
        "assert.deepStrictEqual([10, 6], f([1, 5, 3], 2));",  # reversed operands
        "assert.deepStrictEqual(f([1, 5, 3], 2) === f([1, 5, 3], 2), true);",
        "assert.ok(f([1, 5, 3], 2));",
        "assert.notDeepStrictEqual(f([1, 5, 3], 2), []);",
        "assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6], 'msg');",
        "assert = { deepStrictEqual() {} }; assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6]);",
        "f = () => [10, 6]; assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6]);",
        "assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6]); assert.deepStrictEqual(1, 1);",
        "process.exit(0); assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6]);",
        "process.exit(0)",
        "assert.deepStrictEqual(f(...[[1, 5, 3], 2]), [10, 6]);",
        "assert.deepStrictEqual(f(xs, 2), [10, 6]);",  # a name
        "assert.deepStrictEqual(f([1, 5, 3], 2), [5 * 2, 6]);",  # an expression
        "assert.deepStrictEqual(f([1, 5, 3], 2), Array.of(10, 6));",  # a call
        "assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6].map((x) => x));",
        "assert.deepStrictEqual(f.call(null, [1, 5, 3], 2), [10, 6]);",
        "assert.deepStrictEqual(f?.([1, 5, 3], 2), [10, 6]);",
        "assert.deepStrictEqual(h([1, 5, 3], 2), [10, 6]);",  # another function
        "assert.deepStrictEqual(f([1, 5, 3], 3), [10, 6]);",  # other arguments
        "assert.deepStrictEqual(f([1, 5, 3], 2), [10, 7]);",
        "assert.deepStrictEqual(f([1, 5, 3], 2), ['10', '6']);",  # types count
        "assert f([1, 5, 3], 2) == [10, 6]",  # Python's format
        "[10, 6]",
    ],
)
def test_output_exploits_score_zero(line: str) -> None:
    result = score_item(output_item(), answer(line))
    assert result.reward == 0.0, line
    assert result.per_question[0]["verdict"] in ("wrong", "unparsed")


def test_verdicts() -> None:
    gold = [10, 6]
    args = ([1, 5, 3], 2)
    assert judge_output("assert.deepStrictEqual(1, 1);", "f", args, gold, JS) == "wrong"
    assert (
        judge_output("assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6]); 1;", "f", args, gold, JS)
        == "unparsed"
    )
    assert judge_output("assert f([1, 5, 3], 2) == [10, 6]", "f", args, gold, JS) == "unparsed"
    assert input_arguments("assert.deepStrictEqual(f(1, 'a'), 0);", "f", JS) == (1, "a")
    assert input_arguments("assert.deepStrictEqual(f(1, x), 0);", "f", JS) == "wrong"
    assert input_arguments("assert.deepStrictEqual(f(require('child_process')), 0);", "f", JS) == "wrong"


# -- input items: the original program runs on the proposed literals in the untrusted sandbox -----


def input_item(gold: str = "[10, 6]") -> dict:
    return {**output_item(gold=gold), "family": "input", "questions": [{"family": "input", "answer": gold}]}


@pytest.mark.parametrize(
    "line",
    [
        "assert.deepStrictEqual(f([1, 5, 3], 2), [10, 6]);",  # the item's own arguments: no run
        "assert.deepStrictEqual(f([5, 3], 1), [10, 6]);",  # other arguments, run in the sandbox
        "assert.deepStrictEqual(f([0, 5, -1, 3], 2.5), [10, 6]);",
        "assert.strictEqual(f([5, 3], 1), 'anything');",  # the expected value is not judged
    ],
)
def test_gold_input_scores_the_maximum(line: str) -> None:
    assert score_item(input_item(), answer(line)).reward == 1.0


def test_input_collections_run() -> None:
    item = {**output_item(SETS, "g", 'new Set(["a", "b"])', '[["n", 1]]'), "family": "input"}
    item["questions"] = [{"family": "input", "answer": 'new Map([["n", 1], ["a", ["z"]]])'}]
    assert score_item(item, answer("assert.deepStrictEqual(g(new Set(['z'])), 0);")).reward == 1.0
    assert score_item(item, answer("assert.deepStrictEqual(g(new Set(['y'])), 0);")).reward == 0.0


HUGE = "[" + ", ".join(["123456789"] * 50_000) + "]"
DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    "line",
    [
        "assert.deepStrictEqual(f([1, 5], 2), [10, 6]);",  # wrong arguments
        "assert.deepStrictEqual(f(require('child_process').execSync('id'), 2), [10, 6]);",
        "assert.deepStrictEqual(f(process.exit(0), 2), [10, 6]);",
        "assert.deepStrictEqual(f((() => { while (true); })(), 2), [10, 6]);",
        "assert.deepStrictEqual(f({ get x() { return [5, 3]; } }, 1), [10, 6]);",
        "assert.deepStrictEqual(f(`${[5, 3]}`, 1), [10, 6]);",
        "assert.deepStrictEqual(f(...[[5, 3], 1]), [10, 6]);",
        "assert.deepStrictEqual(f([5, 3], 1), [10, 6]); process.exit(0);",
        "assert.deepStrictEqual([10, 6], f([5, 3], 1));",
        f"assert.deepStrictEqual(f({HUGE}, 1), [10, 6]);",
        f"assert.deepStrictEqual(f({DEEP}, 1), [10, 6]);",
        "assert.deepStrictEqual(f(5, 1), [10, 6]);",  # for...of a number throws: TypeError
    ],
)
def test_hostile_input_answers_score_zero(line: str) -> None:
    jobs = Path(tempfile.gettempdir()).glob("execverify-isolated-*")
    before = set(jobs)
    result = score_item(input_item(), answer(line))
    assert result.reward == 0.0, line[:80]
    assert set(Path(tempfile.gettempdir()).glob("execverify-isolated-*")) == before  # nothing left
