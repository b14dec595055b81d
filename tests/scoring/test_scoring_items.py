"""Item-level scoring: the known exploits one by one, validation, conversations, batches, and
real benchmark data (CRUXEval gold answers score the maximum, MBPP solutions pass)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factory.errors import UserError
from factory.scoring import ScoreResult, needs_execution, score_batch, score_item

BENCH = Path(__file__).resolve().parents[2] / "data" / "benchmarks"


def answer(lines: list[str]) -> str:
    return "Let me trace it.\n<answer>\n" + "\n".join(lines) + "\n</answer>"


def with_output(line: str, gold_lines: list[str]) -> str:
    return answer([line, *gold_lines[1:]])


# -- the known exploits (docs/design.md §5), each scores 0 on its question -----------------


def test_gold_scores_the_maximum(white_box):
    result = score_item(white_box.item, answer(white_box.gold_lines))
    assert (result.reward, result.r_io, result.r_wb, result.n_right) == (2.0, 1.0, 1.0, 5)


@pytest.mark.parametrize(
    "line",
    [
        "assert f(3) == f(3)",
        "assert f(3) == -6 or True",
        "assert -6 == f(3)",
        "assert f(3) == (lambda: -6)()",
        "assert f(3) == abs(-6) * -1",
    ],
)
def test_output_exploits_score_zero(line: str, white_box):
    result = score_item(white_box.item, with_output(line, white_box.gold_lines))
    assert result.r_io == 0.0
    assert result.per_question[0]["verdict"] in ("wrong", "unparsed")
    assert score_item(white_box.item, with_output(line, white_box.gold_lines), gated=True).reward == 0.0


def test_input_pass_and_forged_eq_score_zero(white_box):
    item = {
        "family": "input",
        "source": white_box.source,
        "entry": "f",
        "args": "3",
        "questions": [{"family": "input", "answer": "-6"}],
    }
    forged = "assert f(type('X', (), {'__eq__': lambda s, o: True})()) == -6"
    for line in ("pass", forged):
        result = score_item(item, answer([line]))
        assert (result.reward, result.status) == (0.0, None)
    assert score_item(item, answer(["assert f(-3) == -6"])).reward == 0.0  # f(-3) is 6
    assert score_item(item, answer(["assert f(3) == 'anything'"])).reward == 1.0


@pytest.mark.parametrize("n_lines", [0, 1, 4, 6, 10])
def test_fewer_or_more_lines_score_zero(n_lines: int, white_box):
    lines = (white_box.gold_lines * 2)[:n_lines]
    result = score_item(white_box.item, answer(lines))
    assert result.reward == 0.0
    assert result.n_unparsed == 5
    assert all(q["answer"] is None for q in result.per_question)


def test_blank_lines_and_fences_do_not_count_as_lines(white_box):
    text = "<answer>\n```python\n\n" + "\n\n".join(white_box.gold_lines) + "\n\n```\n</answer>"
    assert score_item(white_box.item, text).reward == 2.0


def numbered(lines: list[str]) -> list[str]:
    return [f"{i}. {line}" for i, line in enumerate(lines, 1)]


def test_answers_numbered_one_to_n_are_read_without_their_numbers(white_box):
    result = score_item(white_box.item, answer(numbered(white_box.gold_lines)))
    assert (result.reward, result.n_right) == (2.0, 5)
    assert result.per_question[1]["answer"] == "if y > 10:"


@pytest.mark.parametrize("line", ["assert f(3) == f(3)", "assert f(3) == -6 or True", "pass"])
def test_numbering_lets_no_output_exploit_through(line: str, white_box):
    text = answer(numbered([line, *white_box.gold_lines[1:]]))
    result = score_item(white_box.item, text)
    assert result.r_io == 0.0 and result.per_question[0]["verdict"] in ("wrong", "unparsed")
    assert result.n_right == 4  # the numbering of the other answers was read
    assert score_item(white_box.item, text, gated=True).reward == 0.0


@pytest.mark.parametrize("n_lines", [4, 6])
def test_numbered_lines_must_still_be_one_per_question(n_lines: int, white_box):
    lines = numbered((white_box.gold_lines * 2)[:n_lines])
    assert score_item(white_box.item, answer(lines)).n_unparsed == 5


@pytest.mark.parametrize(
    "numbers",
    [[1, 2, 3, 5, 4], [0, 1, 2, 3, 4], [1, 2, 2, 3, 4], [2, 3, 4, 5, 6], [1, 2, 3, 4, None]],
)
def test_numbering_out_of_order_is_no_numbering(numbers: list[int | None], white_box):
    """Only ``1. `` to ``n. `` in order are question numbers: other prefixes stay part of the
    answers, which are then wrong (nothing is reordered or guessed)."""
    pairs = zip(numbers, white_box.gold_lines, strict=True)
    lines = [line if k is None else f"{k}. {line}" for k, line in pairs]
    result = score_item(white_box.item, answer(lines))
    assert [q["answer"] for q in result.per_question] == lines
    assert result.r_io == 0.0 and result.n_right == numbers.count(None)


# -- forms of completion --------------------------------------------------------------------


def test_conversational_completion_judges_the_last_assistant_message(white_box):
    conversation = [
        {"role": "user", "content": "trace f(3)"},
        {"role": "assistant", "content": answer(white_box.gold_lines)},
    ]
    assert score_item(white_box.item, conversation).reward == 2.0
    assert (
        score_item(white_box.item, [{"role": "user", "content": answer(white_box.gold_lines)}]).reward == 0.0
    )


def test_result_to_dict_round_trips_through_json(white_box):
    result = score_item(white_box.item, answer(white_box.gold_lines))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["reward"] == 2.0
    assert data["per_question"][1] == {
        "family": "next_line",
        "verdict": "right",
        "answer": "if y > 10:",
    }
    assert set(data) == {
        "reward",
        "family",
        "per_question",
        "n_right",
        "n_wrong",
        "n_unparsed",
        "r_io",
        "r_wb",
        "status",
    }


def test_alpha_weights_the_two_halves(white_box):
    lines = ["assert f(3) == -6", "x", "x", "x", "x"]  # output right, white-box all wrong
    assert score_item(white_box.item, answer(lines), alpha=0.0).reward == 2.0
    assert score_item(white_box.item, answer(lines), alpha=1.0).reward == 0.0
    assert score_item(white_box.item, answer(lines), alpha=0.25).reward == 1.5
    with pytest.raises(ValueError):
        score_item(white_box.item, answer(lines), alpha=1.5)


# -- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"family": "weird", "entry": "f"}, "unknown family"),
        ({"family": "output", "entry": "f", "source": "x"}, "needs 'questions'"),
        ({"family": "codegen", "entry": "f"}, "needs 'tests'"),
        ({"family": "codegen", "entry": "f", "tests": "not json"}, "not valid JSON"),
        ({"family": "codegen", "entry": "f", "tests": []}, "non-empty"),
        ({"family": "codegen", "entry": "not a name", "tests": ["assert 1"]}, "entry"),
    ],
)
def test_bad_items_raise_user_errors(item: dict[str, Any], message: str):
    with pytest.raises(UserError, match=message):
        score_item(item, "anything")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"questions": [{"family": "oracle", "answer": 1}]}, "unknown question family"),
        ({"questions": [{"family": "next_line", "answer": 1}]}, "first question must be the output"),
        ({"args": None}, "needs 'args'"),
        ({"family": "coverage"}, "coverage questions only"),
    ],
)
def test_bad_white_box_items_raise_user_errors(changes: dict[str, Any], message: str, white_box):
    with pytest.raises(UserError, match=message):
        score_item({**white_box.item, **changes}, "anything")


# -- batches --------------------------------------------------------------------------------


def test_batch_keeps_order_and_matches_single_scoring(white_box):
    codegen = {"family": "codegen", "entry": "f", "tests": ["assert f(1) == 2", "assert f(2) == 3"]}
    inputs = {
        "family": "input",
        "source": white_box.source,
        "entry": "f",
        "questions": [{"family": "input", "answer": "12"}],
    }
    items = [white_box.item, codegen, inputs, white_box.item, codegen, inputs]
    completions = [
        answer(white_box.gold_lines),
        "def f(x):\n    return x + 1\n",
        answer(["assert f(6) == 12"]),
        answer(white_box.gold_lines[:1] + ["x"] * 4),
        "def f(x):\n    return x\n",
        answer(["assert f(7) == 12"]),
    ]
    results = score_batch(items, completions, workers=2)
    assert [r.reward for r in results] == [2.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    assert all(isinstance(r, ScoreResult) for r in results)
    assert [needs_execution(i) for i in items] == [False, True, True] * 2
    with pytest.raises(ValueError):
        score_batch(items, completions[:-1])


# -- real data ------------------------------------------------------------------------------


def test_cruxeval_gold_outputs_score_one_and_neighbours_do_not(cruxeval_records):
    records = cruxeval_records
    items, good, bad = [], [], []
    for rec in records:
        item = {
            "family": "output",
            "source": rec["code"],
            "entry": "f",
            "args": rec["input"],
            "questions": [{"family": "output", "answer": rec["output"]}],
        }
        try:
            score_item(item, "")
        except UserError:
            continue  # a few CRUXEval inputs are expressions, not literals
        items.append(item)
        good.append(answer([f"assert f({rec['input']}) == {rec['output']}"]))
        bad.append(answer([f"assert f({rec['input']}) == {rec['output']!r}"]))  # a str instead
    assert len(items) > 700
    assert all(r.reward == 1.0 for r in score_batch(items, good))
    assert all(r.reward == 0.0 for r in score_batch(items, bad))


def test_cruxeval_inputs_are_judged_by_running_the_program(cruxeval_records):
    records = cruxeval_records[:40]
    items, completions = [], []
    for rec in records:
        items.append(
            {
                "family": "input",
                "source": rec["code"],
                "entry": "f",
                "questions": [{"family": "input", "answer": rec["output"]}],
            }
        )
        completions.append(answer([f"assert f({rec['input']}) == {rec['output']}"]))
    results = score_batch(items, completions, workers=2)
    literal_inputs = [r for r in results if r.per_question[0]["verdict"] != "wrong"]
    assert len(literal_inputs) >= 35
    assert all(r.reward == 1.0 and r.status == "ok" for r in literal_inputs)


def test_mbpp_reference_solutions_pass_their_tests():
    path = BENCH / "mbpp" / "sanitized-mbpp.json"
    if not path.is_file():
        pytest.skip(f"MBPP not found at {path}")
    records = json.loads(path.read_text())[:60]
    items, completions = [], []
    for rec in records:
        imports = "\n".join(rec["test_imports"])
        tests = [f"{imports}\n{t}" if imports else t for t in rec["test_list"]]
        items.append({"family": "codegen", "entry": "unused", "tests": tests})
        completions.append(f"<answer>\n```python\n{rec['code']}\n```\n</answer>")
    results = score_batch(items, completions, workers=2)
    assert sum(r.reward == 1.0 for r in results) >= 59, [
        (rec["task_id"], r.status) for rec, r in zip(records, results, strict=True) if r.reward < 1
    ]
