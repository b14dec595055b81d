"""Python's ``codegen`` facet: the text of a code-generation item (``factory.phase2.items`` builds
the prompt around it; docs/design.md §9).

A test is a Python ``assert`` on the call and the output's type; the scorer runs it with the
``untrusted`` facet's ``run_tests``, in the parent, calling into the sandbox.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from factory.grammar.types import Type, parse_type

#: The code fence of answers, and the fence tags the scorer prefers when it extracts the code.
FENCE = "python"
FENCE_TAGS = frozenset({"python", "py", "python3"})
PLAIN_RULE = "- Use plain Python (built-ins only); do not read input or print."


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


def type_rule(param_types: Sequence[Sequence[str]]) -> str | None:
    """No rule line: the signature's annotations give the types."""
    return None


def shown_example(entry: str, args: str, output: str) -> str:
    """One example of the prompt, as an interpreter session shows it."""
    return f">>> {entry}({args})\n{output}"


def memorizer_source(entry: str, shown: Sequence[tuple[str, str]], default: str) -> str:
    """A program that only memorises the shown examples: it returns the recorded output for a shown
    call and, for any other call, ``default`` (an output text)."""
    pairs = ", ".join(f"(({args},), {output})" for args, output in shown)
    return (
        f"_SEEN = [{pairs}]\n\n\n"
        f"def {entry}(*args):\n"
        "    for seen_args, output in _SEEN:\n"
        "        if seen_args == args:\n"
        "            return output\n"
        f"    return {default}\n"
    )


def same_args(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether ``memorizer_source`` takes two argument lists for the same call (its ``==``)."""
    return a == b
