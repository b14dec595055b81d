"""Prompts for task items, and the gold completion that proves prompt and scorer agree (docs/design.md §5).

One prompt shape for every family: short instructions with the answer rules of the families the
item asks about, a format-only example on a fixed tiny program, then the task (the program with
line numbers, the call, the numbered questions) and the reply format: reasoning in
``<reasoning>...</reasoning>``, then exactly one answer line per question, in order, in
``<answer>...</answer>``, which is what ``factory.scoring`` parses. With several questions the
answers are keyed by question number (``1. ``, ``2. ``...) and the example's reasoning is worked
question by question; an item of one question keeps a bare line and a ``...`` reasoning. The
program's language (a registered name, ``factory.languages``) gives the name the wording uses
("the Python program") and the statement analysis that says whether a statement spans several
lines.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from factory import languages
from factory.tasks.questions import line_text

Question = Mapping[str, Any]

ITEM_FAMILIES = ("white_box", "output", "input", "coverage")

# ``{language}``: the language's display name.
_INTRO = {
    "white_box": "Work out how the {language} program below executes for the given call, then answer "
    "the questions about its execution.",
    "output": "Work out what the {language} function below returns for the given call.",
    "input": "Find an input for which the {language} function below returns the given output.",
    "coverage": "Work out which lines of the {language} program below run for the given call.",
}

_COUNTING = (
    "- Executions: the k-th execution of a line is the k-th time its statement runs. Execution "
    "goes into called helper functions (the line after a call can be a helper's line; after the "
    "helper returns, the caller goes on with its next line). A for/while header also runs for "
    "the final check that ends the loop."
)
_MULTILINE = "- A statement written over several lines counts as its first line."
_RULES = {
    "output": "- Complete the assertion: write the whole assertion with ?? replaced by the return "
    "value as a {language} literal.",
    "input": "- Complete the assertion: write the whole assertion with ?? replaced by arguments "
    "written as {language} literals (no names, no calls); any arguments that make it hold are right.",
    "next_line": "- Which line runs next: copy that line's code exactly, without its number; write "
    "-1 if nothing runs after it ({entry} has returned) or if the line does not run that many "
    "times.",
    "coverage": "- Does a line run: write YES or NO.",
}


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 21st, ..."""
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@functools.lru_cache(maxsize=64)  # a case's items share their program
def numbered_program(source: str) -> str:
    """The program as shown to the model: ``  1 | def f(x):``, one row per source line."""
    lines = source.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    width = max(3, len(str(len(lines))))
    return "\n".join(f"{i:>{width}} | {text}".rstrip() for i, text in enumerate(lines, 1))


def call_text(entry: str, args: str) -> str:
    return f"{entry}({args})"


@functools.cache
def language_prompts(language: str) -> ModuleType:
    """The ``prompts`` facet of a registered language: its example, state rule and assertions."""
    prompts: ModuleType = languages.language(language).facet("prompts")
    return prompts


def question_text(question: Question, entry: str, args: str | None, *, language: str = "python") -> str:
    """The wording of one question (``language``: the program's, a registered name)."""
    family = question["family"]
    assertion = language_prompts(language).assertion
    if family == "output":
        return f"Complete the assertion: {assertion(call_text(entry, args or ''), '??')}"
    if family == "input":
        return f"Complete the assertion: {assertion(f'{entry}(??)', question['answer'])}"
    if family == "next_line":
        return (
            f"Which line runs right after the {ordinal(question['occurrence'])} execution of "
            f"line {question['line']}?"
        )
    if family == "state":
        return (
            f"What are the value and type of `{question['var']}` right after the "
            f"{ordinal(question['occurrence'])} execution of line {question['line']}?"
        )
    if family == "coverage":
        return f"Does line {question['line']} run during this call?"
    raise ValueError(f"unknown question family {family!r}")


def answer_line(
    question: Question, entry: str, args: str | None, source: str, *, language: str = "python"
) -> str:
    """The gold answer line of one question, in the format the scorer parses."""
    family = question["family"]
    if family in ("output", "input"):
        return language_prompts(language).assertion(call_text(entry, args or ""), question["answer"])
    if family == "next_line":
        return line_text(source, int(question["answer"]))
    if family in ("state", "coverage"):
        return str(question["answer"])
    raise ValueError(f"unknown question family {family!r}")


def _questions(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    questions = item["questions"]
    return json.loads(questions) if isinstance(questions, str) else list(questions)


def _block(
    family: str,
    source: str,
    entry: str,
    args: str | None,
    questions: Sequence[Question],
    language: str,
) -> list[str]:
    """Program, call and numbered questions."""
    parts = ["Program:", numbered_program(source), ""]
    if family != "input":
        parts += [f"Call: {call_text(entry, args or '')}", ""]
    parts.append("Questions:" if len(questions) > 1 else "Question:")
    parts += [f"{i}. {question_text(q, entry, args, language=language)}" for i, q in enumerate(questions, 1)]
    return parts


@functools.lru_cache(maxsize=64)
def _example(family: str, shape: tuple[str, ...], language: str) -> tuple[str, ...]:
    """The format-only example block (the language's ``PromptExample``) of an item of ``family``
    whose questions are of the families ``shape``, in order: the example asks the same number of
    each, in the same order."""
    example = language_prompts(language).EXAMPLE
    taken: dict[str, int] = {}
    questions, why = [], []
    for f in shape:
        k = taken.get(f, 0) % len(example.questions[f])
        questions.append(example.questions[f][k])
        why.append(example.why[f][k])
        taken[f] = taken.get(f, 0) + 1
    answers = [
        answer_line(q, example.entry, example.args, example.source, language=language) for q in questions
    ]
    return (
        "Format example (format only: a different program; its questions and values are "
        "illustrative and unrelated to your task):",
        *_block(family, example.source, example.entry, example.args, questions, language),
        "<reasoning>",
        *(numbered(why) if len(questions) > 1 else ["..."]),
        "</reasoning>",
        "<answer>",
        *numbered(answers),
        "</answer>",
    )


def numbered(lines: Sequence[str]) -> list[str]:
    """Answer (or reasoning) lines keyed by question number, ``1. ...``, when there are several."""
    if len(lines) == 1:
        return list(lines)
    return [f"{i}. {line}" for i, line in enumerate(lines, 1)]


def render_prompt(item: Mapping[str, Any], *, language: str = "python") -> str:
    """The prompt of an item (a dict with ``family``, ``source``, ``entry``, ``args`` and
    ``questions``, a list or its JSON text) whose program is in ``language`` (a registered name)."""
    family = item["family"]
    if family not in ITEM_FAMILIES:
        raise ValueError(f"unknown item family {family!r} (expected one of {ITEM_FAMILIES})")
    source, entry, args = item["source"], item["entry"], item.get("args")
    questions = _questions(item)
    if not questions:
        raise ValueError("an item needs at least one question")
    shape = tuple(q["family"] for q in questions)
    families = tuple(dict.fromkeys(shape))
    lang = languages.language(language)
    white_box = not _WHITE_BOX_FAMILIES.isdisjoint(families)
    multiline = white_box and lang.facet("analysis").has_multiline_statement(source)
    n = len(questions)
    parts = [
        _head(family, shape, multiline, entry, lang.name),
        *_block(family, source, entry, args, questions, lang.name),
        "",
        f"Reply with <reasoning>...</reasoning>, then <answer>...</answer> holding exactly {n} "
        f"line{'s' if n > 1 else ''}.",
    ]
    return "\n".join(parts)


_REPLY_RULE = {
    False: "- First reason inside <reasoning>...</reasoning>, then give the answers inside "
    "<answer>...</answer>: one line per question, in the order asked, with no numbering and "
    "no other text.",
    True: "- First reason inside <reasoning>...</reasoning>, question by question, then give the "
    "answers inside <answer>...</answer>: one line per question, in the order asked, each "
    "starting with its question's number (`1. `, `2. `, ...), with no other text.",
}
_WHITE_BOX_FAMILIES = frozenset({"next_line", "state", "coverage"})  # they ask about lines


@functools.lru_cache(maxsize=256)
def _head(family: str, shape: tuple[str, ...], multiline: bool, entry: str, language: str) -> str:
    """A prompt up to its task block: intro, answer rules and the format-only example (items
    of one family whose questions have the same families in the same order share it);
    ``language``: the registered name."""
    families = list(dict.fromkeys(shape))
    display = languages.language(language).display_name
    rule_texts = {**_RULES, "state": language_prompts(language).STATE_RULE}
    rules = []
    if {"next_line", "state"} & set(families):
        rules.append(_COUNTING)
    if multiline:
        rules.append(_MULTILINE)
    rules += [rule_texts[f].format(entry=entry, language=display) for f in families]
    parts = [
        _INTRO[family].format(language=display),
        "",
        "Answer rules:",
        *rules,
        _REPLY_RULE[len(shape) > 1],
        "",
        *_example(family, shape, language),
        "",
        "Your task:",
    ]
    return "\n".join(parts)


def gold_completion(item: Mapping[str, Any], *, language: str = "python") -> str:
    """The reference completion of an item: every gold answer, in the prompt's format
    (``language``: the program's, unless the item names its own)."""
    questions = _questions(item)
    source, entry, args = item["source"], item["entry"], item.get("args")
    language = item.get("language") or language
    answers = [answer_line(q, entry, args, source, language=language) for q in questions]
    body = "\n".join(numbered(answers))
    return "<reasoning>\nReference answer.\n</reasoning>\n<answer>\n" + body + "\n</answer>"
