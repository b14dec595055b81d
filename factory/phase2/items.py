"""Code-generation items: the schema, the unit-test text and the prompt (docs/design.md §5, §9).

An item asks for a function. Items from our programs are programming by example: the prompt shows
the function's signature and a few calls with their results (executed cases of the program);
``tests`` holds *hidden* tests, calls on other inputs of the same program, so that copying the
shown examples does not earn the reward. Items imported from outside datasets carry the problem
text of that dataset and its own tests. ``tests`` is what the codegen reward judges (the
fraction passed in the untrusted sandbox); ``examples`` are the tests shown in the prompt.

What differs by language (the signature, a test's text, how an example is shown, the answer's
code fence, the memorizer) is the language's ``codegen`` facet; the prompt's frame is here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from factory import languages

FAMILY = "codegen"


def codegen(language: str) -> ModuleType:
    """The ``codegen`` facet of a registered language: its item text."""
    facet: ModuleType = languages.language(language).facet("codegen")
    return facet


def _answer_rule(fence: str) -> str:
    return (
        "- First reason inside <reasoning>...</reasoning>, then give the whole function inside "
        f"<answer>...</answer> as one ```{fence} code block."
    )


def task_id(origin: str, program_id: str, tests: Sequence[str]) -> str:
    """A content id: the same origin, program and tests give the same id."""
    text = json.dumps([origin, program_id, list(tests)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def synth_prompt(
    entry: str,
    sig: str,
    shown: Sequence[tuple[str, str]],
    *,
    language: str = "python",
    types: str | None = None,
) -> str:
    """The programming-by-example prompt: the signature and the calls ``(args, output_repr)``;
    ``types``: a rule line giving the parameters' types (a language without annotations)."""
    text = codegen(language)
    examples = [text.shown_example(entry, args, output) for args, output in shown]
    name = languages.language(language).display_name
    return "\n".join(
        [
            f"Write the {name} function `{entry}` that behaves like the examples below.",
            "",
            "Answer rules:",
            f"- Use exactly this signature: `{sig}`",
            *([types] if types else []),
            "- The function must return the values shown (with the same types) for these calls, and "
            "work the same way for other arguments: hidden tests call it with other inputs.",
            text.PLAIN_RULE,
            _answer_rule(text.FENCE),
            "",
            "Examples:",
            *examples,
            "",
            "Reply with <reasoning>...</reasoning>, then <answer>...</answer> holding the function.",
        ]
    )


def imported_prompt(problem: str, entry: str, shown: Sequence[str]) -> str:
    """The prompt of an imported item (Python): the dataset's problem text, the tests it shows,
    and the same answer rules as our own items."""
    parts = [
        "Solve the programming problem below in Python.",
        "",
        "Problem:",
        problem.strip(),
        "",
        "Answer rules:",
        f"- Define the function `{entry}`; hidden tests call it.",
        _answer_rule(codegen("python").FENCE),
    ]
    if shown:
        parts += ["", "Your code should pass these tests:", *shown]
    parts += ["", "Reply with <reasoning>...</reasoning>, then <answer>...</answer> holding the code."]
    return "\n".join(parts)


def gold_completion(item: Mapping[str, Any]) -> str:
    """The reference completion of an item: its reference solution in the answer format of the
    item's language (its ``language`` field; Python without one)."""
    fence = codegen(item.get("language") or "python").FENCE
    return (
        f"<reasoning>\nReference solution.\n</reasoning>\n<answer>\n```{fence}\n"
        f"{str(item['source']).rstrip()}\n```\n</answer>"
    )


def memorizer_source(entry: str, shown: Sequence[tuple[str, str]], language: str = "python") -> str:
    """A program that only memorises the shown examples: it returns the recorded output for a shown
    call and, for any other call, the most common shown output (the first one on ties)."""
    outputs = [output for _, output in shown]
    default = max(outputs, key=outputs.count)
    source: str = codegen(language).memorizer_source(entry, shown, default)
    return source


__all__ = [
    "FAMILY",
    "codegen",
    "gold_completion",
    "imported_prompt",
    "memorizer_source",
    "synth_prompt",
    "task_id",
]
