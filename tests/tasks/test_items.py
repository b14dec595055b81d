"""Items of one traced case: structure, typed golds, ids, features, families, determinism."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from factory.params import Params, TasksParams
from factory.scoring import score_item
from factory.tasks.analysis import program_features
from factory.tasks.items import build_items_for_case, build_items_with_reasons, task_id
from factory.tasks.prompts import gold_completion
from factory.tasks.sampling import is_trivial
from factory.trace import trace_call

LOOPS = """def helper(a):
    return a * 2

def f(xs):
    total = 0
    for x in xs:
        if x > 1:
            total += helper(x)
        elif x == 0:
            total -= 1
        else:
            pass
    return total
"""
STRAIGHT = "def f(a, b):\n    c = a + b\n    d = c * 2\n    return [c, d]\n"
COLUMNS = {
    "task_id", "case_id", "program_id", "language", "family", "prompt", "questions", "answer", "source",
    "entry", "args", "tier", "target", "grammar_hash", "trace_length", "n_questions", "n_lines",
    "n_loops", "n_branches", "has_helper", "max_depth", "output_repr", "output_type",
}  # fmt: skip


def case(source: str, args: str, **extra: object) -> dict:
    return {"source": source, "entry": "f", "args": args, "case_id": "c1", "program_id": "p1",
            "tier": 3, "target": "list.append", **extra}  # fmt: skip


def build(source: str, args: str, seed: int = 0, **params: object) -> list[dict]:
    trace = trace_call(source, "f", args)
    assert trace["status"] == "ok"
    return build_items_for_case(case(source, args), trace, seed=seed, params=TasksParams(**params))


def test_one_item_per_family_with_every_column() -> None:
    items = build(LOOPS, "[2, 0, 3]")
    assert [it["family"] for it in items] == ["white_box", "output", "input", "coverage"]
    for item in items:
        assert set(item) == COLUMNS
        assert item["case_id"] == "c1" and item["program_id"] == "p1" and item["tier"] == 3
        assert item["n_questions"] == len(json.loads(item["questions"]))
        assert item["output_repr"] == "9" and item["output_type"] == "int"
        assert item["trace_length"] == len(trace_call(LOOPS, "f", "[2, 0, 3]")["steps"])
    assert len({it["task_id"] for it in items}) == 4


def test_white_box_item() -> None:
    item = build(LOOPS, "[2, 0, 3]")[0]
    questions = json.loads(item["questions"])
    answers = json.loads(item["answer"])
    assert questions[0] == {"family": "output", "answer": "9", "answer_type": "int"}
    families = [q["family"] for q in questions]
    assert families == ["output"] + ["next_line"] * 5 + ["state"] * 5
    assert answers == [q["answer"] for q in questions]
    for q, a in zip(questions, answers, strict=True):
        if q["family"] == "next_line":
            assert isinstance(a, int) and not isinstance(a, bool)
        else:
            assert isinstance(a, str)
    assert not any(is_trivial(q) for q in questions[1:])
    assert score_item(item, gold_completion(item)).reward == 2.0


def test_typed_golds_of_other_families() -> None:
    items = {it["family"]: it for it in build(LOOPS, "[2, 0, 3]")}
    assert json.loads(items["output"]["answer"]) == ["9"]
    assert json.loads(items["input"]["questions"]) == [
        {"family": "input", "answer": "9", "answer_type": "int"}
    ]
    coverage = json.loads(items["coverage"]["questions"])
    assert 1 <= len(coverage) <= 3
    assert set(json.loads(items["coverage"]["answer"])) <= {"YES", "NO"}
    assert "NO" in json.loads(items["coverage"]["answer"])  # line 12 (pass) never runs


def test_program_features() -> None:
    assert program_features(LOOPS) == {
        "n_lines": 13, "n_loops": 1, "n_branches": 2, "has_helper": True, "max_depth": 2,
    }  # fmt: skip
    assert program_features(STRAIGHT + "\n\n") == {
        "n_lines": 4, "n_loops": 0, "n_branches": 0, "has_helper": False, "max_depth": 0,
    }  # fmt: skip
    nested = (
        "def f(x):\n    while x:\n        for i in x:\n            if i:\n                x = 0\n"
        "    return x\n"
    )
    assert program_features(nested)["max_depth"] == 3


def test_a_match_statement_program_gives_features_and_items() -> None:
    """A ``match`` statement has cases, not a body: its program was once dropped as unparseable."""
    source = (
        "def f(x):\n"
        "    match x:\n"
        "        case [a, b] if a > b:\n"
        "            return a\n"
        "        case _:\n"
        "            return 0 if x else 1\n"
    )
    assert program_features(source) == {
        "n_lines": 6, "n_loops": 0, "n_branches": 3, "has_helper": False, "max_depth": 1,
    }  # fmt: skip
    trace = trace_call(source, "f", "[3, 1]")
    items = build_items_for_case({"source": source, "entry": "f", "args": "[3, 1]"}, trace, seed=0)
    assert {item["family"] for item in items} >= {"white_box", "output"}


def test_task_id_is_a_content_hash() -> None:
    q = [{"family": "output", "answer": "1", "answer_type": "int"}]
    assert task_id("c", "output", q) == task_id("c", "output", [dict(q[0])])
    assert task_id("c", "output", q) != task_id("d", "output", q)
    assert task_id("c", "output", q) != task_id("c", "input", q)
    assert len(task_id("c", "output", q)) == 16


def test_deterministic_and_seeded() -> None:
    assert build(LOOPS, "[1, 2, 0, 3, 5, 0]", seed=3) == build(LOOPS, "[1, 2, 0, 3, 5, 0]", seed=3)
    white = {build(LOOPS, "[1, 2, 0, 3, 5, 0]", seed=s)[0]["questions"] for s in range(10)}
    assert len(white) > 1


def test_params_choose_families_and_counts() -> None:
    items = build(LOOPS, "[2, 0, 3]", families=["output", "coverage"], coverage_per_item=1)
    assert [it["family"] for it in items] == ["output", "coverage"]
    assert items[1]["n_questions"] == 1
    item = build(LOOPS, "[2, 0, 3]", families=["white_box"], next_line=2, state=0)[0]
    assert [q["family"] for q in json.loads(item["questions"])] == ["output", "next_line", "next_line"]
    # A plain dict is validated like params.yaml.
    trace = trace_call(LOOPS, "f", "[1]")
    assert build_items_for_case(case(LOOPS, "[1]"), trace, seed=0, params={"families": ["input"]})
    with pytest.raises(ValidationError):
        TasksParams(families=["codegen"])
    with pytest.raises(ValidationError):
        TasksParams(families=[])
    assert Params().tasks == TasksParams()


def test_straight_line_and_looping_programs() -> None:
    item = build(STRAIGHT, "1, 2")[0]
    questions = json.loads(item["questions"])
    # Straight-line: one next-physical-line question; the states of c and d (both read later).
    assert [(q["family"], q.get("trivial")) for q in questions] == [
        ("output", None),
        ("next_line", True),
        ("state", False),
        ("state", False),
    ]
    assert score_item(item, gold_completion(item)).reward == 2.0
    for seed in range(10):
        looping = build(LOOPS, "[3, 1, 0, 2]", seed=seed)[0]
        assert not any(is_trivial(q) for q in json.loads(looping["questions"])[1:])


def test_drop_reasons() -> None:
    source = "def f(x):\n    return x\n"
    trace = trace_call(source, "f", "1")
    items, reasons = build_items_with_reasons(case(source, "1"), trace, seed=0)
    # One statement: no coverage question worth asking, and no white-box one (its only next line
    # is the -1 after the final return, and no variable changes).
    assert [it["family"] for it in items] == ["output", "input"]
    assert reasons == ["white_box:no_white_box_question", "coverage:no_informative_line"]
    assert build_items_with_reasons(case(source, "1"), {"status": "error:X"}, seed=0) == (
        [],
        ["case:trace_error:X"],
    )
    bad = {**trace, "output_repr": "<object>"}
    assert build_items_with_reasons(case(source, "1"), bad, seed=0)[1] == ["case:output_not_literal"]
    tagged = trace_call(source, "f", "'</answer>'")
    reasons = build_items_with_reasons(case(source, "'</answer>'"), tagged, seed=0)[1]
    assert reasons == ["case:answer_tag_in_text"]


def test_answer_tags_in_the_program_are_never_golds() -> None:
    source = (
        "def f(n):\n    s = ''\n    for i in range(n):\n        t = '</answer>'\n        s += 'a'\n"
        "    return s\n"
    )
    for seed in range(10):
        item = build(source, "3", seed=seed)[0]
        for q in json.loads(item["questions"]):
            assert not (q["family"] == "next_line" and q["answer"] == 4)
            assert "answer>" not in str(q["answer"])
        assert score_item(item, gold_completion(item)).reward == 2.0


def test_usable_without_a_stage() -> None:
    """The CLI gives only source, entry and args: ids are hashed, other columns are None."""
    source, args = LOOPS, "[2]"
    trace = trace_call(source, "f", args)
    items = build_items_for_case({"source": source, "entry": "f", "args": args}, trace, seed=0)
    assert items and all(len(it["case_id"]) == 16 for it in items)
    assert items[0]["tier"] is None and items[0]["program_id"] is None
    again = build_items_for_case({"source": source, "entry": "f", "args": args}, trace, seed=0)
    assert items == again


def test_no_input_item_where_a_random_argument_list_would_give_the_output() -> None:
    trace = trace_call(LOOPS, "f", "[2, 0, 3]")

    def families(share: float | None, **params: object) -> tuple[list[str], list[str]]:
        extra = {} if share is None else {"output_share": share}
        items, reasons = build_items_with_reasons(
            case(LOOPS, "[2, 0, 3]", **extra), trace, seed=0, params=TasksParams(**params)
        )
        return [it["family"] for it in items], reasons

    assert families(0.5) == (["white_box", "output", "coverage"], ["input:guessable_output"])
    assert "input" in families(0.25)[0], "at the bound: kept"
    assert "input" in families(0.1)[0]
    assert "input" in families(None)[0], "a case with no share (a benchmark's) is not judged"
    assert "input" in families(0.5, input_max_output_share=0.6)[0]
