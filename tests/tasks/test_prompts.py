"""Prompts and gold completions: the gold of every item scores the maximum with the one scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factory.scoring import score_item
from factory.tasks import prompts
from factory.tasks.analysis import has_multiline_statement
from factory.tasks.items import build_items_for_case
from factory.tasks.prompts import (
    gold_completion,
    numbered_program,
    ordinal,
    render_prompt,
)
from factory.tasks.questions import questions_from_trace
from factory.trace import trace_call

CRUXEVAL = Path(__file__).resolve().parents[2] / "data" / "benchmarks" / "cruxeval" / "cruxeval.jsonl"
MAX = {"white_box": 2.0, "output": 1.0, "input": 1.0, "coverage": 1.0}

PROGRAMS = [
    (
        "def helper(a):\n    return a * 2\n\ndef f(xs):\n    total = 0\n    for x in xs:\n"
        "        if x > 1:\n            total += helper(x)\n        else:\n            total -= 1\n"
        "    return total\n",
        "[1, 2, 3]",
    ),
    (
        "def f(d, key):\n    out = {}\n    while key in d:\n        out[key] = d[key]\n"
        "        key = d[key]\n        if len(out) > 2:\n            break\n    return out\n",
        "{'a': 'b', 'b': 'c', 'c': 'a'}, 'a'",
    ),
    ("def f(s):\n    t = s.upper()\n    u = t + '!'\n    return (t, u)\n", "'ab'"),
    (
        "def f(n):\n    try:\n        r = 10 // n\n    except ZeroDivisionError:\n        r = -1\n"
        "    return {r, n}\n",
        "0",
    ),
    (
        "def f(xs):\n    ys = [x * 2\n          for x in xs]\n    return sorted(\n        ys,\n"
        "        reverse=True,\n    )\n",
        "[3, 1, 2]",
    ),
]


def items_of(source: str, args: str, case_id: str = "c", seed: int = 0) -> list[dict]:
    trace = trace_call(source, "f", args)
    assert trace["status"] == "ok", trace
    return build_items_for_case(
        {"source": source, "entry": "f", "args": args, "case_id": case_id}, trace, seed=seed
    )


def wrong_line(question: dict, item: dict) -> str:
    """An answer line that is surely wrong for ``question``."""
    family, gold = question["family"], question["answer"]
    if family == "output":
        value = "None" if gold != "None" else "0"
        return f"assert {item['entry']}({item['args']}) == {value}"
    if family == "next_line":
        return "-1" if gold != -1 else item["source"].splitlines()[0].strip()
    if family == "state":
        return "Nil" if gold != "Nil" else "0; int"
    if family == "coverage":
        return "NO" if gold == "YES" else "YES"
    raise AssertionError(family)


def with_one_wrong(item: dict, index: int) -> str:
    questions = json.loads(item["questions"])
    lines = gold_completion(item).splitlines()
    start = lines.index("<answer>") + 1
    number = f"{index + 1}. " if len(questions) > 1 else ""  # the gold numbers several answers
    lines[start + index] = number + wrong_line(questions[index], item)
    return "\n".join(lines)


def test_ordinal() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip


def test_numbered_program() -> None:
    assert numbered_program("def f(x):\n    return x\n\n") == "  1 | def f(x):\n  2 |     return x"
    long = "".join(f"x{i} = {i}\n" for i in range(1200))
    assert numbered_program(long).splitlines()[0] == "   1 | x0 = 0"


def test_multiline_statements_are_detected() -> None:
    assert has_multiline_statement(PROGRAMS[4][0])
    assert not has_multiline_statement(PROGRAMS[0][0])
    assert "several lines" in items_of(*PROGRAMS[4])[0]["prompt"]
    assert "several lines" not in items_of(*PROGRAMS[0])[0]["prompt"]


def test_format_example_is_right() -> None:
    """The format-only example's answers are the true ones (a wrong example would mislead)."""
    example = prompts.language_prompts("python").EXAMPLE
    trace = trace_call(example.source, example.entry, example.args)
    assert trace["output_repr"] == "3"
    real = questions_from_trace(example.source, trace)

    def key(q: dict) -> tuple:
        return (q["family"], q.get("line"), q.get("occurrence"), q.get("var"))

    gold = {key(q): q["answer"] for q in real}
    for family, questions in example.questions.items():
        for q in questions:
            if family in ("output", "input"):
                assert q["answer"] == trace["output_repr"]
            else:
                assert gold[key(q)] == q["answer"], q


def test_white_box_prompt_shape() -> None:
    item = items_of(*PROGRAMS[0])[0]
    assert item["family"] == "white_box"
    prompt = item["prompt"]
    questions = json.loads(item["questions"])
    assert "  1 | def helper(a):\n  2 |     return a * 2\n  3 |\n  4 | def f(xs):" in prompt
    assert "Call: f([1, 2, 3])" in prompt
    assert "Format example (format only" in prompt and "unrelated to your task" in prompt
    assert "  1 | def demo(n):" in prompt
    task = prompt[prompt.index("Your task:") :]
    assert "1. Complete the assertion: assert f([1, 2, 3]) == ??" in task
    for i, q in enumerate(questions[1:], 2):
        assert f"\n{i}. " in task
        assert f"line {q['line']}?" in task.splitlines()[task.splitlines().index("Questions:") + i]
    assert f"exactly {len(questions)} lines" in task
    assert "<reasoning>" in prompt and "<answer>" in prompt
    # The rules of the families asked, and only those.
    assert "-1" in prompt and "Nil" in prompt and "type(x).__name__" in prompt
    assert "YES or NO" not in prompt
    assert len(prompt) < 4500


def test_prompts_of_other_families() -> None:
    items = {it["family"]: it for it in items_of(*PROGRAMS[0])}
    assert set(items) == {"white_box", "output", "input", "coverage"}
    output = items["output"]["prompt"]
    assert "1. Complete the assertion: assert f([1, 2, 3]) == ??" in output
    assert "Nil" not in output and "YES or NO" not in output
    inp = items["input"]["prompt"]
    assert "1. Complete the assertion: assert f(??) == 9" in inp
    assert "Call:" not in inp and "[1, 2, 3]" not in inp  # the input is not given away
    cov = items["coverage"]["prompt"]
    assert "YES or NO" in cov and "Does line" in cov and "Call: f([1, 2, 3])" in cov


def test_render_prompt_refuses_bad_items() -> None:
    base = {"source": "def f(x):\n    return x\n", "entry": "f", "args": "1"}
    with pytest.raises(ValueError, match="family"):
        render_prompt({**base, "family": "codegen", "questions": [{"family": "output"}]})
    with pytest.raises(ValueError, match="question"):
        render_prompt({**base, "family": "output", "questions": []})


@pytest.mark.parametrize("index", range(len(PROGRAMS)))
def test_gold_scores_the_maximum_and_one_wrong_answer_less(index: int) -> None:
    for item in items_of(*PROGRAMS[index]):
        best = MAX[item["family"]]
        assert score_item(item, gold_completion(item)).reward == best, item["family"]
        if item["family"] == "input":
            continue  # judged by running: see test_input_items
        for i in range(item["n_questions"]):
            result = score_item(item, with_one_wrong(item, i))
            assert result.reward < best and result.n_right == item["n_questions"] - 1


def test_gold_completion_of_cruxeval_items(cruxeval_traced: list) -> None:
    """Every execution-free item of every CRUXEval program: the gold scores the maximum and one
    wrong answer scores less."""
    n_items, n_programs = 0, 0
    for _, row, trace in cruxeval_traced:
        case = {"source": row["code"], "entry": "f", "args": row["input"], "case_id": row["id"]}
        items = build_items_for_case(case, trace, seed=7)
        n_programs += 1
        for item in items:
            if item["family"] == "input":
                continue
            assert score_item(item, gold_completion(item)).reward == MAX[item["family"]], item
            wrong = n_items % item["n_questions"]
            assert score_item(item, with_one_wrong(item, wrong)).reward < MAX[item["family"]]
            n_items += 1
    assert n_programs > 750 and n_items > 2000


def test_input_items() -> None:
    """Input items run in the sandbox: a handful only."""
    for source, args in PROGRAMS[:3]:
        item = next(it for it in items_of(source, args) if it["family"] == "input")
        assert score_item(item, gold_completion(item)).reward == 1.0
    item = next(it for it in items_of(*PROGRAMS[0]) if it["family"] == "input")
    assert score_item(item, "<answer>\nassert f([5, 5]) == 9\n</answer>").reward == 0.0  # 20
    assert score_item(item, "<answer>\nassert f([5, 0]) == 9\n</answer>").reward == 1.0  # 10 - 1


def test_the_format_example_has_the_items_shape() -> None:
    """As many example questions of each family, in the same order, as the item asks: its
    answer block has exactly the item's line count (small models copy that count)."""
    for source, args in PROGRAMS:
        for item in items_of(source, args):
            questions = json.loads(item["questions"])
            prompt = item["prompt"]
            example = prompt[prompt.index("Format example") : prompt.index("Your task:")]
            answers = example[example.index("<answer>\n") + 9 : example.index("\n</answer>")].splitlines()
            assert len(answers) == len(questions), (item["family"], answers)
            asked = example[example.index("Question") : example.index("<reasoning>")].splitlines()[1:]
            kinds = ["output" if "assert demo(3)" in a else "input" if "demo(??)" in a
                     else "next_line" if "Which line" in a else "state" if "value and type" in a
                     else "coverage" for a in asked if a.strip()]  # fmt: skip
            assert kinds == [q["family"] for q in questions]
    next_lines = [{"family": "next_line", "line": 5, "occurrence": k, "answer": 6} for k in range(1, 8)]
    output = {"family": "output", "answer": "1", "answer_type": "int"}
    many = {"family": "white_box", "source": PROGRAMS[0][0], "entry": "f", "args": PROGRAMS[0][1],
            "questions": [output, *next_lines]}  # fmt: skip
    example = prompts.render_prompt(many).split("Your task:")[0]
    assert example.count("Which line runs right after") == 7, "past the pool's end it goes round again"


def test_several_answers_are_numbered_and_the_example_reasons() -> None:
    """An item of several questions asks for answers keyed by question number and shows a
    worked, numbered example reasoning (a bare `...` was copied by the embedded model, which then
    wrote a line too many); an item of one question keeps bare lines and the `...`."""
    for family, item in {it["family"]: it for it in items_of(*PROGRAMS[0])}.items():
        prompt, n = item["prompt"], item["n_questions"]
        example = prompt[prompt.index("Format example") : prompt.index("Your task:")]
        reasoning = example[example.index("<reasoning>\n") + 12 : example.index("\n</reasoning>")]
        answers = example[example.index("<answer>\n") + 9 : example.index("\n</answer>")].splitlines()
        if n == 1:
            assert reasoning == "..." and "with no numbering" in prompt, family
            assert not answers[0][0].isdigit()
            continue
        assert "each starting with its question's number" in prompt, family
        assert [a.split(". ", 1)[0] for a in answers] == [str(i) for i in range(1, n + 1)]
        assert [r.split(". ", 1)[0] for r in reasoning.splitlines()] == [str(i) for i in range(1, n + 1)]
        gold = gold_completion(item).split("<answer>\n")[1].splitlines()
        assert gold[0].startswith("1. ") and gold[n - 1].startswith(f"{n}. "), family


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_example_reasoning_pools_match_the_question_pools(language: str) -> None:
    example = prompts.language_prompts(language).EXAMPLE
    assert {f: len(p) for f, p in example.why.items()} == {f: len(p) for f, p in example.questions.items()}
    for family, pool in example.questions.items():
        for question, why in zip(pool, example.why[family], strict=True):
            answer = str(question["answer"])
            if family == "state" or (family == "next_line" and answer == "-1"):
                assert answer.split(";")[0] in why, (question, why)
