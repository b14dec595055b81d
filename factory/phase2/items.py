"""Code-generation items: the schema, the unit-test text and the prompt (docs/design.md §5, §9).

An item asks for a function. Items from our programs are programming by example: the prompt shows
the function's signature and a few calls with their results (executed cases of the program);
``tests`` holds *hidden* tests, calls on other inputs of the same program, so that copying the
shown examples does not earn the reward. Items imported from outside datasets carry the problem
text of that dataset and its own tests. ``tests`` is what the codegen reward judges (the
fraction passed in the untrusted sandbox); ``examples`` are the tests shown in the prompt.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from factory.grammar.types import Type, parse_type

FAMILY = "codegen"

_ANSWER_RULE = (
    "- First reason inside <reasoning>...</reasoning>, then give the whole function inside "
    "<answer>...</answer> as one ```python code block."
)


def task_id(origin: str, program_id: str, tests: Sequence[str]) -> str:
    """A content id: the same origin, program and tests give the same id."""
    text = json.dumps([origin, program_id, list(tests)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def example_test(entry: str, args: str, output_repr: str, output_type: str) -> str:
    """A unit test for one executed case: the call equals the recorded output, of the same type
    (``==`` alone would accept ``True`` for ``1`` or ``1.0`` for ``1``)."""
    return f"assert (_r := {entry}({args})) == {output_repr} and type(_r).__name__ == {output_type!r}"


def annotation(t: Type) -> str:
    """A Python annotation for a grammar type: ``pair[A, B]`` is ``tuple[A, B]``, ``tuple[T]`` is
    ``tuple[T, ...]`` (the grammar's tuples are homogeneous); other types as they are written."""
    args = [annotation(a) for a in t.args]
    if t.name == "pair":
        return f"tuple[{', '.join(args)}]"
    if t.name == "tuple" and len(args) == 1:
        return f"tuple[{args[0]}, ...]"
    return f"{t.name}[{', '.join(args)}]" if args else t.name


def signature(entry: str, param_types: Sequence[Sequence[str]], output_types: Sequence[str]) -> str:
    """``def f(xs: list[int], s: str) -> int:``; the return type only when every case agrees."""
    params = ", ".join(f"{name}: {annotation(parse_type(t))}" for name, t in param_types)
    returns = set(output_types)
    ret = ""
    if len(returns) == 1:
        (only,) = returns
        ret = " -> None" if only == "NoneType" else f" -> {only}"
    return f"def {entry}({params}){ret}:"


def synth_prompt(entry: str, sig: str, shown: Sequence[tuple[str, str]]) -> str:
    """The programming-by-example prompt: the signature and the calls ``(args, output_repr)``."""
    examples = [f">>> {entry}({args})\n{output}" for args, output in shown]
    return "\n".join(
        [
            f"Write the Python function `{entry}` that behaves like the examples below.",
            "",
            "Answer rules:",
            f"- Use exactly this signature: `{sig}`",
            "- The function must return the values shown (with the same types) for these calls, and "
            "work the same way for other arguments: hidden tests call it with other inputs.",
            "- Use plain Python (built-ins only); do not read input or print.",
            _ANSWER_RULE,
            "",
            "Examples:",
            *examples,
            "",
            "Reply with <reasoning>...</reasoning>, then <answer>...</answer> holding the function.",
        ]
    )


def imported_prompt(problem: str, entry: str, shown: Sequence[str]) -> str:
    """The prompt of an imported item: the dataset's problem text, the tests it shows, and the
    same answer rules as our own items."""
    parts = [
        "Solve the programming problem below in Python.",
        "",
        "Problem:",
        problem.strip(),
        "",
        "Answer rules:",
        f"- Define the function `{entry}`; hidden tests call it.",
        _ANSWER_RULE,
    ]
    if shown:
        parts += ["", "Your code should pass these tests:", *shown]
    parts += ["", "Reply with <reasoning>...</reasoning>, then <answer>...</answer> holding the code."]
    return "\n".join(parts)


def gold_completion(item: Mapping[str, Any]) -> str:
    """The reference completion of an item: its reference solution in the answer format."""
    return (
        "<reasoning>\nReference solution.\n</reasoning>\n<answer>\n```python\n"
        f"{str(item['source']).rstrip()}\n```\n</answer>"
    )


def memorizer_source(entry: str, shown: Sequence[tuple[str, str]]) -> str:
    """A program that only memorises the shown examples: it returns the recorded output for a shown
    call and, for any other call, the most common shown output (the first one on ties)."""
    pairs = ", ".join(f"(({args},), {output})" for args, output in shown)
    outputs = [output for _, output in shown]
    default = max(outputs, key=outputs.count)
    return (
        f"_SEEN = [{pairs}]\n\n\n"
        f"def {entry}(*args):\n"
        "    for seen_args, output in _SEEN:\n"
        "        if seen_args == args:\n"
        "            return output\n"
        f"    return {default}\n"
    )


__all__ = [
    "FAMILY",
    "annotation",
    "example_test",
    "gold_completion",
    "imported_prompt",
    "memorizer_source",
    "signature",
    "synth_prompt",
    "task_id",
]
