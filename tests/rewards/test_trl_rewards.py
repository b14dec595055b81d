"""TRL reward functions: TRL's keyword contract, None for items a function does not judge, gold
answers at the maximum, the known exploits at 0, the gated mode, batch order, per-family logs."""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass
from typing import Any

import pytest

from factory.errors import UserError
from factory.rewards import trl as rewards
from factory.scoring import score_item

OUTPUT = {
    "family": "output",
    "source": "def g(xs):\n    return sorted(xs)[::-1]\n",
    "entry": "g",
    "args": "[3, 1, 2]",
    "questions": [{"family": "output", "answer": "[3, 2, 1]", "answer_type": "list"}],
}
CODEGEN = {
    "family": "codegen",
    "entry": "add",
    "tests": json.dumps(
        ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(0, 0) == 0", "assert add(2, 2) == 4"]
    ),
}
GOOD_CODE = "<answer>\n```python\ndef add(a, b):\n    return a + b\n```\n</answer>"


@dataclass(frozen=True)
class Cases:
    """The shared white-box item, items of the other families on the same program, and one of
    every family in a mixed batch with a gold completion each."""

    white_box: dict[str, Any]
    gold_lines: list[str]
    source: str
    input: dict[str, Any]
    mixed: list[dict[str, Any]]
    mixed_gold: list[str]


@pytest.fixture
def cases(white_box) -> Cases:
    source = white_box.source
    same_program = {"source": source, "entry": "f", "args": "3"}
    item_input = {**same_program, "family": "input"}
    item_input["questions"] = json.dumps([{"family": "input", "answer": "12", "answer_type": "int"}])
    coverage = {**same_program, "family": "coverage"}
    coverage["questions"] = [{"family": "coverage", "line": 4, "answer": "NO"}]
    next_line = {**same_program, "family": "next_line"}
    next_line["questions"] = [{"family": "next_line", "line": 3, "occurrence": 1, "answer": 5}]
    mixed = [white_box.item, OUTPUT, item_input, CODEGEN, coverage, next_line]
    mixed_gold = [
        answer(white_box.gold_lines),
        answer(["assert g([3, 1, 2]) == [3, 2, 1]"]),
        answer(["assert f(6) == 12"]),
        GOOD_CODE,
        answer(["NO"]),
        answer(["return -y"]),
    ]
    return Cases(white_box.item, white_box.gold_lines, source, item_input, mixed, mixed_gold)


def answer(lines: list[str]) -> str:
    return "<reasoning>Trace it.</reasoning>\n<answer>\n" + "\n".join(lines) + "\n</answer>"


def columns(items: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The keyword arguments TRL passes: every dataset column, one value per completion (None
    where a row lacks it, as in a `datasets.Dataset` of mixed families), plus TRL's extras."""
    keys = ["family", "language", "source", "entry", "args", "questions", "tests"]
    cols: dict[str, Any] = {k: [item.get(k) for item in items] for k in keys}
    cols["prompts"] = ["prompt"] * len(items)
    cols["completion_ids"] = [[1, 2, 3]] * len(items)
    cols["trainer_state"] = object()
    cols["log_extra"] = lambda column, values: None
    return cols


def call(fn: Any, items: list[dict[str, Any]], completions: list[Any], **extra: Any) -> list[Any]:
    out = fn(completions=completions, **columns(items), **extra)
    assert len(out) == len(completions)
    return out


# -- which items each function judges -------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "judged"),
    [
        (rewards.white_box_reward, [2.0, 1.0, None, None, None, None]),
        (rewards.input_reward, [None, None, 1.0, None, None, None]),
        (rewards.codegen_reward, [None, None, None, 1.0, None, None]),
        (rewards.coverage_reward, [None, None, None, None, 1.0, None]),
        (rewards.trace_reward, [None, None, None, None, None, 1.0]),
    ],
)
def test_each_function_judges_its_families_and_returns_none_for_others(fn, judged, cases: Cases):
    assert call(fn, cases.mixed, cases.mixed_gold) == judged


def test_every_family_is_judged_by_exactly_one_function(cases: Cases):
    funcs = rewards.reward_funcs()
    out = [call(fn, cases.mixed, cases.mixed_gold) for fn in funcs]
    for i in range(len(cases.mixed)):
        assert sum(o[i] is not None for o in out) == 1
    names = [fn.__name__ for fn in funcs]
    assert names == ["white_box_reward", "input_reward", "codegen_reward", "coverage_reward", "trace_reward"]
    assert rewards.reward_funcs(with_format=True)[-1] is rewards.format_reward


def test_conversational_completions_judge_the_last_assistant_message(cases: Cases):
    conversations = [[{"role": "assistant", "content": text}] for text in cases.mixed_gold]
    assert call(rewards.white_box_reward, cases.mixed, conversations)[:2] == [2.0, 1.0]
    assert call(rewards.codegen_reward, cases.mixed, conversations)[3] == 1.0
    parts = [[{"role": "assistant", "content": [{"type": "text", "text": cases.mixed_gold[0]}]}]]
    assert call(rewards.white_box_reward, [cases.white_box], parts) == [2.0]
    user_only = [[{"role": "user", "content": cases.mixed_gold[0]}]]
    assert call(rewards.white_box_reward, [cases.white_box], user_only) == [0.0]


# -- values ---------------------------------------------------------------------------------


def test_gold_is_the_maximum_and_wrong_answers_score_less(cases: Cases):
    wb = [cases.white_box] * 4
    completions = [
        answer(cases.gold_lines),
        answer(["assert f(3) == -6", "x", "x", "x", "x"]),  # output right, white-box wrong
        answer(["assert f(3) == 6", *cases.gold_lines[1:]]),  # output wrong, white-box right
        "no answer at all",
    ]
    assert call(rewards.white_box_reward, wb, completions) == [2.0, 1.0, 1.0, 0.0]
    assert call(rewards.make_white_box_reward(alpha=0.25), wb, completions) == [2.0, 1.5, 0.5, 0.0]
    wrong_code = "<answer>\n```python\ndef add(a, b):\n    return a * b\n```\n</answer>"
    assert call(rewards.codegen_reward, [CODEGEN] * 2, [GOOD_CODE, wrong_code]) == [1.0, 0.5]  # 0*0, 2*2 pass
    assert call(
        rewards.input_reward,
        [cases.input] * 2,
        [answer(["assert f(6) == 12"]), answer(["assert f(5) == 12"])],
    ) == [
        1.0,
        0.0,
    ]


def test_gated_mode_gives_zero_when_the_output_is_wrong(cases: Cases):
    wb = [cases.white_box] * 2
    completions = [answer(["assert f(3) == 6", *cases.gold_lines[1:]]), answer(cases.gold_lines)]
    gated = rewards.make_white_box_reward(gated=True)
    assert call(gated, wb, completions) == [0.0, 2.0]
    assert call(rewards.white_box_reward, wb, completions) == [1.0, 2.0]


@pytest.mark.parametrize(
    "line",
    [
        "assert f(3) == f(3)",
        "assert f(3) == -6 or True",
        "assert -6 == f(3)",
        "assert f(3) == (lambda: -6)()",
    ],
)
def test_output_exploits_score_zero(line: str, cases: Cases):
    out = call(
        rewards.make_white_box_reward(gated=True),
        [cases.white_box, OUTPUT],
        [answer([line, *cases.gold_lines[1:]]), answer([line.replace("f(3)", "g([3, 1, 2])")])],
    )
    assert out == [0.0, 0.0]


def test_input_exploits_score_zero(cases: Cases):
    forged = "assert f(type('X', (), {'__eq__': lambda s, o: True})()) == 12"
    lines = ["pass", forged, "assert f(*[6]) == 12", "assert f(x=6) == 12"]
    assert call(rewards.input_reward, [cases.input] * 4, [answer([line]) for line in lines]) == [0.0] * 4


@pytest.mark.parametrize("n_lines", [0, 1, 4, 6, 10])
def test_fewer_or_more_lines_score_zero(n_lines: int, cases: Cases):
    lines = (cases.gold_lines * 2)[:n_lines]
    assert call(rewards.white_box_reward, [cases.white_box], [answer(lines)]) == [0.0]
    assert call(rewards.input_reward, [cases.input], [answer(["assert f(6) == 12"] * 2)]) == [0.0]


def test_codegen_forged_passes_score_zero():
    hostile = [
        "import sys\nsys.exit(0)\n",
        "import os\nos._exit(0)\n",
        "print('4 passed, 0 failed')\nraise SystemExit(0)\n",
        "class A:\n    def __eq__(self, o):\n        return True\ndef add(a, b):\n    return A()\n",
    ]
    out = call(rewards.codegen_reward, [CODEGEN] * len(hostile), [f"```python\n{h}```" for h in hostile])
    assert out == [0.0] * len(hostile)


JS_OUTPUT = {
    "family": "output",
    "language": "javascript",
    "source": "function g(xs) {\n  return xs.toSorted((a, b) => b - a);\n}\n",
    "entry": "g",
    "args": "[3, 1, 2]",
    "questions": [{"family": "output", "answer": "[3, 2, 1]", "answer_type": "array"}],
}
JS_CODEGEN = {
    "family": "codegen",
    "language": "javascript",
    "entry": "add",
    "tests": json.dumps(["assert.deepStrictEqual(add(1, 2), 3);", "assert.deepStrictEqual(add(-1, 1), 0);"]),
}


def test_javascript_rows_are_judged_in_javascript():
    """The row's `language` column reaches the scorer: a JavaScript answer line and a JavaScript
    function score 1; Python's forms of them 0."""
    js_line = answer(["assert.deepStrictEqual(g([3, 1, 2]), [3, 2, 1]);"])
    py_line = answer(["assert g([3, 1, 2]) == [3, 2, 1]"])
    assert call(rewards.white_box_reward, [JS_OUTPUT, JS_OUTPUT], [js_line, py_line]) == [1.0, 0.0]
    js_code = "<answer>\n```javascript\nfunction add(a, b) {\n  return a + b;\n}\n```\n</answer>"
    assert call(rewards.codegen_reward, [JS_CODEGEN, JS_CODEGEN], [js_code, GOOD_CODE]) == [1.0, 0.0]


# -- batches and logs ------------------------------------------------------------------------


def test_batch_order_is_preserved_and_matches_single_scoring(cases: Cases):
    order = [3, 0, 2, 5, 1, 4, 2, 3, 0]
    items = [cases.mixed[i] for i in order]
    completions = [cases.mixed_gold[i] if k % 2 else "<answer>\nnope\n</answer>" for k, i in enumerate(order)]
    funcs = rewards.reward_funcs(workers=2)
    combined = [
        next(v for v in vals if v is not None)
        for vals in zip(*(call(fn, items, completions) for fn in funcs), strict=True)
    ]
    assert combined == [score_item(item, c).reward for item, c in zip(items, completions, strict=True)]


def test_breakdown_is_kept_and_sent_to_trl_log_metric(cases: Cases):
    logged: list[tuple[str, float]] = []
    fn = rewards.make_white_box_reward()
    completions = [answer(cases.gold_lines), "garbage", answer(["assert g([3, 1, 2]) == [1, 2, 3]"])]
    out = call(
        fn,
        [cases.white_box, cases.white_box, OUTPUT],
        completions,
        log_metric=lambda k, v: logged.append((k, v)),
    )
    assert out == [2.0, 0.0, 0.0]
    assert fn.last_breakdown == {
        "output": {"n": 1.0, "reward": 0.0, "unparsed": 0.0},
        "white_box": {"n": 2.0, "reward": 1.0, "unparsed": 0.5, "r_io": 0.5, "r_wb": 0.5},
    }
    assert ("scoring/white_box/r_io", 0.5) in logged and ("scoring/output/reward", 0.0) in logged
    assert [r.family if r else None for r in fn.last_results] == ["white_box", "white_box", "output"]


def test_functions_have_stable_names_and_pickle(cases: Cases):
    fn = rewards.make_white_box_reward(alpha=0.3, gated=True)
    assert fn.__name__ == "white_box_reward"
    assert rewards.make_white_box_reward(name="wb_phase1").__name__ == "wb_phase1"
    clone = pickle.loads(pickle.dumps(fn))
    assert (clone.__name__, clone.alpha, clone.gated) == ("white_box_reward", 0.3, True)
    assert call(clone, [cases.white_box], [answer(cases.gold_lines)]) == [2.0]


def test_bad_calls_raise_clear_errors(cases: Cases):
    with pytest.raises(ValueError, match="'family' column"):
        rewards.white_box_reward(completions=["x"], source=[cases.source])
    with pytest.raises(ValueError, match="2 values for 1 completions"):
        rewards.white_box_reward(completions=["x"], family=["white_box", "white_box"])
    with pytest.raises(ValueError, match="alpha"):
        rewards.make_white_box_reward(alpha=2.0)
    with pytest.raises(ValueError, match="families"):
        rewards.FamilyReward("x", ["oracle"])
    with pytest.raises(ValueError, match="workers"):
        rewards.make_codegen_reward(workers=0)
    assert 8 <= rewards.default_workers() <= 64
    with pytest.raises(UserError):  # a malformed item is a data bug, not a zero reward
        call(rewards.white_box_reward, [{**cases.white_box, "questions": "not json"}], ["x"])


def test_format_reward(cases: Cases):
    items = [cases.white_box, cases.white_box, cases.white_box, CODEGEN, OUTPUT, OUTPUT]
    completions = [
        answer(cases.gold_lines),
        answer(cases.gold_lines[:3]),  # wrong number of lines
        "<answer>\n" + "\n".join(cases.gold_lines) + "\n</answer>",  # no reasoning
        "<reasoning>Add them.</reasoning>\n" + GOOD_CODE,
        [{"role": "assistant", "content": answer(["assert g([3, 1, 2]) == [0]"])}],  # wrong but well formed
        answer(["x"]) + "\ntrailing text",
    ]
    assert call(rewards.format_reward, items, completions) == [1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    assert rewards.format_reward.__name__ == "format_reward"


def test_the_reward_logs_name_the_sandbox_layers_in_force(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    from factory.sandbox.untrusted import runner

    monkeypatch.setattr(runner, "_last_layers", None)  # as in a fresh training process
    with caplog.at_level("INFO", logger="factory.sandbox.untrusted.runner"):
        assert call(rewards.codegen_reward, [CODEGEN], [GOOD_CODE]) == [1.0]
    said = [r.getMessage() for r in caplog.records if "untrusted code runs under" in r.getMessage()]
    assert len(said) == 1
    assert all(layer in said[0] for layer in runner.KERNEL_LAYERS), said
