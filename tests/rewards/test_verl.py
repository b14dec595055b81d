"""verl's ``compute_score`` contract over the same scorer (verl itself is not installed)."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import Any

import pytest

from factory.errors import UserError
from factory.rewards.verl import compute_score, compute_score_batch, item_from_verl
from factory.scoring import score_item

TESTS = ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]
CODE = "<answer>\n```python\ndef add(a, b):\n    return a + b\n```\n</answer>"
KEYS = {"score", "acc", "right", "wrong", "unparsed"}


@dataclass(frozen=True)
class WhiteBox:
    """The shared white-box item, its questions, a gold completion and one with only the output
    wrong (reward 1.0)."""

    item: dict[str, Any]
    questions: list[dict[str, Any]]
    source: str
    gold: str
    half: str


@pytest.fixture
def wb(white_box) -> WhiteBox:
    gold = "<answer>\n" + "\n".join(white_box.gold_lines) + "\n</answer>"
    half = gold.replace("assert f(3) == -6", "assert f(3) == 6")
    questions = json.loads(white_box.item["questions"])
    return WhiteBox(white_box.item, questions, white_box.source, gold, half)


def extra(item: dict[str, Any], *drop: str) -> dict[str, Any]:
    """verl's extra_info: the item's other columns plus keys verl adds itself."""
    return {**{k: v for k, v in item.items() if k not in drop}, "split": "train", "index": 7}


def test_signature_is_verls():
    params = list(inspect.signature(compute_score).parameters)
    assert params[:4] == ["data_source", "solution_str", "ground_truth", "extra_info"]


@pytest.mark.parametrize("form", ["questions_json", "questions_list", "item", "item_json"])
def test_ground_truth_forms_give_the_scorers_reward(form: str, wb: WhiteBox):
    ground_truth, info = {
        "questions_json": (json.dumps(wb.questions), extra(wb.item, "questions")),
        "questions_list": (wb.questions, extra(wb.item, "questions")),
        "item": (wb.item, None),
        "item_json": (json.dumps(wb.item), {"split": "train"}),
    }[form]
    for text, gold in ((wb.gold, 2.0), (wb.half, 1.0), ("nothing", 0.0)):
        assert compute_score("execverify/white_box", text, ground_truth, info)["score"] == gold
        assert compute_score("execverify", text, ground_truth, info, return_dict=False) == gold
        assert gold == score_item(wb.item, text).reward


def test_result_dict_has_the_same_keys_for_every_family(wb: WhiteBox):
    wb = compute_score("x", wb.gold, wb.item)
    code = compute_score("x", CODE, json.dumps(TESTS), {"entry": "add"})
    bad = compute_score("x", "no code", TESTS, {"entry": "add"})
    assert set(wb) == set(code) == set(bad) == KEYS
    assert wb == {"score": 2.0, "acc": 1.0, "right": 1.0, "wrong": 0.0, "unparsed": 0.0}
    assert code["score"] == 1.0 and code["acc"] == 1.0
    assert bad["score"] == 0.0 and bad["acc"] == 0.0


def test_family_from_data_source_and_reward_kwargs(wb: WhiteBox):
    info = extra(wb.item, "family", "questions")
    assert compute_score("execverify/white_box", wb.half, wb.questions, info)["score"] == 1.0
    assert compute_score("white_box", wb.half, wb.questions, info, gated=True)["score"] == 0.0
    assert compute_score("execverify:white_box", wb.half, wb.questions, info, alpha=1.0)["score"] == 2.0
    with pytest.raises(UserError, match="no family"):
        compute_score("gsm8k", wb.gold, wb.questions, info)


def test_exploits_score_zero_through_verl(wb: WhiteBox):
    item = {
        "family": "input",
        "source": wb.source,
        "entry": "f",
        "questions": [{"family": "input", "answer": "12"}],
    }
    forged = "assert f(type('X', (), {'__eq__': lambda s, o: True})()) == 12"
    for line in ("pass", forged):
        assert compute_score("x", f"<answer>\n{line}\n</answer>", item)["score"] == 0.0
    assert compute_score("x", "<answer>\nassert f(6) == 12\n</answer>", item)["score"] == 1.0
    for line in ("assert f(3) == f(3)", "assert f(3) == -6 or True", "assert -6 == f(3)"):
        text = wb.gold.replace("assert f(3) == -6", line)
        assert compute_score("x", text, wb.item, gated=True)["score"] == 0.0
    assert compute_score("x", "<answer>\nassert f(3) == -6\n</answer>", wb.item)["score"] == 0.0
    exit_early = "```python\nimport sys\nsys.exit(0)\n```"
    assert compute_score("x", exit_early, TESTS, {"entry": "add"})["score"] == 0.0


def test_numpy_like_arrays_from_parquet_are_read_as_lists():
    class Array(list):  # stands in for numpy's ndarray: has tolist()
        def tolist(self) -> list[Any]:
            return list(self)

    item = item_from_verl("codegen", Array(TESTS), {"entry": "add", "questions": None})
    assert item == {"family": "codegen", "entry": "add", "tests": TESTS}
    assert compute_score("codegen", CODE, Array(TESTS), {"entry": "add"})["score"] == 1.0


def test_batch_form_keeps_order(wb: WhiteBox):
    sources = ["execverify/white_box", "execverify/codegen", "execverify/white_box", "execverify/codegen"]
    texts = [wb.gold, CODE, wb.half, "def add(a, b):\n    return 0\n"]
    truths = [wb.item, TESTS, wb.item, TESTS]
    infos = [None, {"entry": "add"}, None, {"entry": "add"}]
    out = compute_score_batch(sources, texts, truths, infos, workers=2)
    assert [o["score"] for o in out] == [2.0, 1.0, 1.0, 0.0]
    assert compute_score_batch(sources, texts, truths, infos, return_dict=False) == [2.0, 1.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="length"):
        compute_score_batch(sources, texts[:3], truths, infos)


def test_a_javascript_row_is_judged_in_javascript():
    """``language`` in extra_info reaches the scorer (a JavaScript codegen item's tests)."""
    tests = ["assert.deepStrictEqual(add(1, 2), 3);", "assert.deepStrictEqual(add(2, 2), 4);"]
    js = "<answer>\n```javascript\nfunction add(a, b) {\n  return a + b;\n}\n```\n</answer>"
    info = {"entry": "add", "language": "javascript", "split": "train"}
    assert compute_score("execverify/codegen", js, tests, info)["score"] == 1.0
    assert compute_score("execverify/codegen", CODE, tests, info)["score"] == 0.0


def test_malformed_ground_truth_raises(wb: WhiteBox):
    with pytest.raises(UserError, match="not JSON"):
        compute_score("white_box", wb.gold, "{not json", None)
    with pytest.raises(UserError, match="is a int"):
        compute_score("white_box", wb.gold, 5, None)
