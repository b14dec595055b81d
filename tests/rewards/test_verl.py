"""verl's ``compute_score`` contract over the same scorer (verl itself is not installed)."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

from factory.errors import UserError
from factory.rewards.verl import compute_score, compute_score_batch, item_from_verl
from factory.scoring import score_item

SOURCE = "def f(x):\n    y = x * 2\n    if y > 10:\n        return y\n    return -y\n"
QUESTIONS = [
    {"family": "output", "answer": "-6", "answer_type": "int"},
    {"family": "next_line", "line": 2, "occurrence": 1, "answer": 3},
    {"family": "state", "line": 2, "occurrence": 1, "var": "y", "answer": "6; int"},
]
WHITE_BOX = {
    "family": "white_box",
    "source": SOURCE,
    "entry": "f",
    "args": "3",
    "questions": json.dumps(QUESTIONS),
}
GOLD = "<answer>\nassert f(3) == -6\nif y > 10:\n6; int\n</answer>"
HALF = "<answer>\nassert f(3) == 6\nif y > 10:\n6; int\n</answer>"  # output wrong, white-box right
TESTS = ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]
CODE = "<answer>\n```python\ndef add(a, b):\n    return a + b\n```\n</answer>"
KEYS = {"score", "acc", "right", "wrong", "unparsed"}


def extra(item: dict[str, Any], *drop: str) -> dict[str, Any]:
    """verl's extra_info: the item's other columns plus keys verl adds itself."""
    return {**{k: v for k, v in item.items() if k not in drop}, "split": "train", "index": 7}


def test_signature_is_verls():
    params = list(inspect.signature(compute_score).parameters)
    assert params[:4] == ["data_source", "solution_str", "ground_truth", "extra_info"]


@pytest.mark.parametrize(
    ("ground_truth", "info"),
    [
        (json.dumps(QUESTIONS), extra(WHITE_BOX, "questions")),  # questions JSON + columns
        (QUESTIONS, extra(WHITE_BOX, "questions")),  # questions as a list
        (WHITE_BOX, None),  # the whole item
        (json.dumps(WHITE_BOX), {"split": "train"}),  # the whole item as JSON
    ],
)
def test_ground_truth_forms_give_the_scorers_reward(ground_truth: Any, info: Any):
    for text, gold in ((GOLD, 2.0), (HALF, 1.0), ("nothing", 0.0)):
        assert compute_score("execverify/white_box", text, ground_truth, info)["score"] == gold
        assert compute_score("execverify", text, ground_truth, info, return_dict=False) == gold
        assert gold == score_item(WHITE_BOX, text).reward


def test_result_dict_has_the_same_keys_for_every_family():
    wb = compute_score("x", GOLD, WHITE_BOX)
    code = compute_score("x", CODE, json.dumps(TESTS), {"entry": "add"})
    bad = compute_score("x", "no code", TESTS, {"entry": "add"})
    assert set(wb) == set(code) == set(bad) == KEYS
    assert wb == {"score": 2.0, "acc": 1.0, "right": 1.0, "wrong": 0.0, "unparsed": 0.0}
    assert code["score"] == 1.0 and code["acc"] == 1.0
    assert bad["score"] == 0.0 and bad["acc"] == 0.0


def test_family_from_data_source_and_reward_kwargs():
    info = extra(WHITE_BOX, "family", "questions")
    assert compute_score("execverify/white_box", HALF, QUESTIONS, info)["score"] == 1.0
    assert compute_score("white_box", HALF, QUESTIONS, info, gated=True)["score"] == 0.0
    assert compute_score("execverify:white_box", HALF, QUESTIONS, info, alpha=1.0)["score"] == 2.0
    with pytest.raises(UserError, match="no family"):
        compute_score("gsm8k", GOLD, QUESTIONS, info)


def test_exploits_score_zero_through_verl():
    item = {
        "family": "input",
        "source": SOURCE,
        "entry": "f",
        "questions": [{"family": "input", "answer": "12"}],
    }
    forged = "assert f(type('X', (), {'__eq__': lambda s, o: True})()) == 12"
    for line in ("pass", forged):
        assert compute_score("x", f"<answer>\n{line}\n</answer>", item)["score"] == 0.0
    assert compute_score("x", "<answer>\nassert f(6) == 12\n</answer>", item)["score"] == 1.0
    for line in ("assert f(3) == f(3)", "assert f(3) == -6 or True", "assert -6 == f(3)"):
        text = GOLD.replace("assert f(3) == -6", line)
        assert compute_score("x", text, WHITE_BOX, gated=True)["score"] == 0.0
    assert compute_score("x", "<answer>\nassert f(3) == -6\n</answer>", WHITE_BOX)["score"] == 0.0
    exit_early = "```python\nimport sys\nsys.exit(0)\n```"
    assert compute_score("x", exit_early, TESTS, {"entry": "add"})["score"] == 0.0


def test_numpy_like_arrays_from_parquet_are_read_as_lists():
    class Array(list):  # stands in for numpy's ndarray: has tolist()
        def tolist(self) -> list[Any]:
            return list(self)

    item = item_from_verl("codegen", Array(TESTS), {"entry": "add", "questions": None})
    assert item == {"family": "codegen", "entry": "add", "tests": TESTS}
    assert compute_score("codegen", CODE, Array(TESTS), {"entry": "add"})["score"] == 1.0


def test_batch_form_keeps_order():
    sources = ["execverify/white_box", "execverify/codegen", "execverify/white_box", "execverify/codegen"]
    texts = [GOLD, CODE, HALF, "def add(a, b):\n    return 0\n"]
    truths = [WHITE_BOX, TESTS, WHITE_BOX, TESTS]
    infos = [None, {"entry": "add"}, None, {"entry": "add"}]
    out = compute_score_batch(sources, texts, truths, infos, workers=2)
    assert [o["score"] for o in out] == [2.0, 1.0, 1.0, 0.0]
    assert compute_score_batch(sources, texts, truths, infos, return_dict=False) == [2.0, 1.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="length"):
        compute_score_batch(sources, texts[:3], truths, infos)


def test_malformed_ground_truth_raises():
    with pytest.raises(UserError, match="not JSON"):
        compute_score("white_box", GOLD, "{not json", None)
    with pytest.raises(UserError, match="is a int"):
        compute_score("white_box", GOLD, 5, None)
