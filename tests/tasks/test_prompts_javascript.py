"""JavaScript prompts (docs/languages.md §6.6): they name the language, show the JavaScript example
and ask for ``assert.deepStrictEqual`` lines; the example's answers are the tracer's."""

from __future__ import annotations

import json

from factory.languages.javascript.trace_calls import trace_call_js
from factory.scoring import score_item
from factory.tasks import prompts
from factory.tasks.prompts import gold_completion, render_prompt
from factory.tasks.questions import questions_from_trace

SOURCE = "function f(xs) {\n  let t = 0;\n  for (const x of xs) {\n    t += x;\n  }\n  return t;\n}\n"


def item(family: str, questions: list[dict]) -> dict:
    return {"family": family, "source": SOURCE, "entry": "f", "args": "[1, 2]", "questions": questions}


def test_format_example_is_right() -> None:
    example = prompts.language_prompts("javascript").EXAMPLE
    trace = trace_call_js(example.source, example.entry, example.args)
    assert trace["output_repr"] == "3"
    real = questions_from_trace(example.source, trace, language="javascript")
    gold = {(q["family"], q.get("line"), q.get("occurrence"), q.get("var")): q["answer"] for q in real}
    for family, questions in example.questions.items():
        for q in questions:
            if family in ("output", "input"):
                assert q["answer"] == trace["output_repr"]
            else:
                assert gold[(q["family"], q.get("line"), q.get("occurrence"), q.get("var"))] == q["answer"], q


def test_output_prompt_is_javascript() -> None:
    prompt = render_prompt(item("output", [{"family": "output", "answer": "3"}]), language="javascript")
    assert prompt.startswith("Work out what the JavaScript function below returns")
    assert "  1 | function demo(n) {" in prompt and "def " not in prompt
    assert "Complete the assertion: assert.deepStrictEqual(f([1, 2]), ??);" in prompt
    assert "assert.deepStrictEqual(demo(3), 3);" in prompt  # the example's answer


def test_input_and_state_prompts() -> None:
    prompt = render_prompt(item("input", [{"family": "input", "answer": "3"}]), language="javascript")
    assert "Complete the assertion: assert.deepStrictEqual(f(??), 3);" in prompt
    wb = item(
        "white_box",
        [
            {"family": "output", "answer": "3"},
            {"family": "state", "line": 4, "occurrence": 1, "var": "t", "answer": "1; number"},
        ],
    )
    prompt = render_prompt(wb, language="javascript")
    assert "number, string, boolean" in prompt and "type(x).__name__" not in prompt
    assert "1. s = 0 + 1 + 2 = 3; 3 > 5 is false, so line 9 returns 3." in prompt


def test_gold_completion_scores_the_maximum() -> None:
    wb = item(
        "white_box",
        [
            {"family": "output", "answer": "3"},
            {"family": "next_line", "line": 4, "occurrence": 1, "answer": 3},
            {"family": "state", "line": 4, "occurrence": 2, "var": "t", "answer": "3; number"},
            {"family": "coverage", "line": 6, "answer": "YES"},
        ],
    )
    wb["language"] = "javascript"
    gold = gold_completion(wb)
    assert "1. assert.deepStrictEqual(f([1, 2]), 3);" in gold
    assert score_item(wb, gold).reward == 2.0
    assert json.loads(json.dumps(wb))  # a plain row
