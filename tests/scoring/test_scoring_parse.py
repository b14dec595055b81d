"""Reading completions: the text to judge, the answer block, the answer lines, the code."""

from __future__ import annotations

import pytest

from factory.scoring.parse import (
    answer_block,
    answer_lines,
    completion_text,
    extract_code,
    split_answers,
)


def test_completion_text_plain_and_conversational():
    assert completion_text("abc") == "abc"
    assert completion_text(None) == ""
    conversation = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "question"},
        {"role": "assistant", "content": "first"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "second"},
    ]
    assert completion_text(conversation) == "second"
    assert completion_text([{"role": "user", "content": "only the prompt"}]) == ""
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "a"}, "b"]}]
    assert completion_text(parts) == "ab"
    assert completion_text({"role": "assistant", "content": "single"}) == "single"


@pytest.mark.parametrize(
    ("text", "block"),
    [
        ("no block here", None),
        ("<answer>x</answer>", "x"),
        ("<answer>old</answer> thinking <answer>new</answer> trailing", "new"),
        ("<ANSWER>upper</Answer>", "upper"),
        ("<answer>a</answer> then <answer>cut off by a stop string", "cut off by a stop string"),
        ("<answer>\n1\n2\n</answer>", "\n1\n2\n"),
        # A closing tag cut short on its own last line is no answer line ...
        ("<answer>\nassert f(1) == 'A'\n</answer", "\nassert f(1) == 'A'"),
        ("<answer>\n1\n  </a", "\n1"),
        # ... anything else after the answer stays, and is judged.
        ("<answer>\n1</answer", "\n1</answer"),
        ("<answer>\n1\n</b", "\n1\n</b"),
        ("<answer>\n1\n</answer x", "\n1\n</answer x"),
    ],
)
def test_answer_block(text: str, block: str | None):
    assert answer_block(text) == block


def test_answer_lines_are_tolerant_of_form():
    block = "\n```python\n  assert f(1) == 2  \n\n`5`\n```\n   \nYES\n```assert f(2) == 3```\n"
    assert answer_lines(block) == ["assert f(1) == 2", "5", "YES", "assert f(2) == 3"]


def test_answer_lines_keep_meaning():
    # A trailing period can be a float: it is left to the judges. Numbering is not removed.
    assert answer_lines("assert f(1) == 1.\n1. 5; int\n- x") == [
        "assert f(1) == 1.",
        "1. 5; int",
        "- x",
    ]


def test_split_answers_needs_exactly_one_line_per_question():
    text = "<answer>\na\nb\n</answer>"
    assert split_answers(text, 2) == ["a", "b"]
    assert split_answers(text, 1) is None
    assert split_answers(text, 3) is None
    assert split_answers("a\nb", 2) is None  # no block at all
    assert split_answers("<answer>\n\n a \n\n\n b \n</answer>", 2) == ["a", "b"]
    assert split_answers("<answer>\na\n</answer", 1) == ["a"]  # the closing tag cut short


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (
            "```python\ndraft\n```\n<answer>\n```python\nfinal\n```\n</answer>",
            "final\n",
        ),
        ("<answer>\n```python\none\n```\n```py\ntwo\n```\n</answer>", "two\n"),
        ("<answer>\n```\nplain fence\n```\n</answer>", "plain fence\n"),
        ("```python\noutside\n```\n<answer>\n    def f():\n        pass\n</answer>", None),
        ("text\n```python\nfirst\n```\n```python\nlast\n```", "last\n"),
        ("text\n```\nany fence\n```", "any fence\n"),
        ("def f(x):\n    return x\n", "def f(x):\n    return x\n"),
        ("<answer>\n```python\ndef f():\n    return 1\n", "def f():\n    return 1\n"),
    ],
)
def test_extract_code(text: str, code: str | None):
    if code is None:  # the block itself, dedented, when it holds no fence
        assert extract_code(text) == "def f():\n    pass"
    else:
        assert extract_code(text) == code
