"""JavaScript's ``prompts`` facet: the format-only example of its prompts, the state rule, and the
answer line of an output or input question, ``assert.deepStrictEqual(f(<args>), <value>);``,
written and read back with tree-sitter (docs/languages.md §6.6).

Reading is strict: the line is one statement, a call of ``assert.deepStrictEqual`` (or
``assert.strictEqual``) with exactly two arguments, the first a call of the entry by its name. Its
arguments and the expected value are read as literals by the value model (``values``), so a name,
a call of anything but ``new Set``/``new Map``, a spread, an operator (``|| true``) or a
comparison is no literal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tree_sitter import Node

from factory.languages.base import NO_VALUE, Assertion, Language, PromptExample
from factory.languages.javascript import values
from factory.languages.python import prompts as python_prompts
from factory.languages.tree import text as node_text

STATE_RULE = (
    "- Value and type: write `<value>; <type>`, the value as a {language} literal (strings in "
    "double quotes, as JSON writes them; a Set as `new Set([...])`, a Map as `new Map([...])`) "
    "and the type as one of number, string, boolean, null, undefined, array, object, Set, Map, "
    'e.g. `[1, "a"]; array`, read in the function that the line belongs to, once that execution '
    "of the line is over; write Nil if the line does not run that many times."
)

#: The assertion functions an answer may call: deep strict equality, and strict equality (the
#: same verdicts on the primitives it is meant for; the scorer compares values either way).
ASSERTIONS = ("assert.deepStrictEqual", "assert.strictEqual")

_SOURCE = (
    "function demo(n) {\n"
    "  let s = 0;\n"
    "  for (let i = 0; i < n; i++) {\n"
    "    s += i;\n"
    "  }\n"
    "  if (s > 5) {\n"
    "    return -s;\n"
    "  }\n"
    "  return s;\n"
    "}\n"
)
# Python's example questions (factory/languages/python/prompts.py) on this program's lines: a
# test traces it and checks every answer.
_LINES = {2: 2, 3: 3, 4: 4, 5: 6, 6: 7, 7: 9}  # Python's example line -> this one's


def _translated(question: Mapping[str, Any]) -> dict[str, Any]:
    moved = dict(question)
    if "line" in moved:
        moved["line"] = _LINES[moved["line"]]
    if moved["family"] == "next_line" and moved["answer"] != -1:
        moved["answer"] = _LINES[moved["answer"]]
    if moved["family"] == "state" and moved["answer"] != "Nil":
        moved["answer"] = moved["answer"].replace("; int", "; number")
    if "answer_type" in moved:
        moved["answer_type"] = "number"
    return moved


_QUESTIONS = {
    family: [_translated(q) for q in pool] for family, pool in python_prompts.EXAMPLE.questions.items()
}
_WHY: dict[str, list[str]] = {
    "output": ["s = 0 + 1 + 2 = 3; 3 > 5 is false, so line 9 returns 3."],
    "input": ["n = 3 gives s = 0 + 1 + 2 = 3, not above 5, so demo(3) returns 3."],
    "next_line": [
        "line 3 tests i < n for i = 0, 1, 2 and a 4th time to end the loop; line 6 comes next.",
        "s = 3 is not above 5, so line 7 never runs: -1.",
        "after the loop body, execution goes back to the loop header, line 3.",
        "3 > 5 is false, so line 9 runs next.",
        "the loop starts with i = 0, so its body, line 4, runs next.",
    ],
    "state": [
        "the 2nd run of line 4 has i = 1: s = 0 + 1 = 1, a number.",
        "line 4 runs only 3 times (i = 0, 1, 2): Nil.",
        "the 3rd run of line 4 has i = 2: s = 1 + 2 = 3, a number.",
        "the 2nd run of line 3 has set i to 1, a number.",
        "line 2 sets s = 0, a number.",
    ],
    "coverage": list(python_prompts.EXAMPLE.why["coverage"]),  # no line number in them
}
EXAMPLE = PromptExample(source=_SOURCE, entry="demo", args="3", questions=_QUESTIONS, why=_WHY)


def assertion(call: str, expected: str) -> str:
    """The answer line of an output or input question: ``assert.deepStrictEqual(f(1), 2);``."""
    return f"assert.deepStrictEqual({call}, {expected});"


def read_assertion(line: str, entry: str, values_model: Language) -> Assertion | str:
    """``assert.deepStrictEqual(<entry>(<literals>), <literal>);`` read back (the semicolon may be
    left out), or the verdict of a line that is not one: ``unparsed`` when the line is not one
    call of an assertion function with two arguments; ``wrong`` when its first argument is not a
    plain call of the entry (reversed operands, another function, a spread, `f(1) || true`)."""
    try:
        tree = values.parser().parse(line.encode())
    except (ValueError, MemoryError, RecursionError):
        return "unparsed"
    root = tree.root_node
    statements = [c for c in root.named_children if c.type != "comment"]
    if root.has_error or len(statements) != 1 or statements[0].type != "expression_statement":
        return "unparsed"
    call = statements[0].named_children[0]
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if call.type != "call_expression" or function is None or arguments is None:
        return "unparsed"
    if function.type != "member_expression" or node_text(function) not in ASSERTIONS:
        return "unparsed"
    operands = _arguments(arguments)
    if operands is None or len(operands) != 2:
        return "unparsed"
    actual, expected = operands
    if actual.type != "call_expression":
        return "wrong"  # reversed operands, a tautology, `f(1) || true`
    name = actual.child_by_field_name("function")
    call_args = actual.child_by_field_name("arguments")
    if name is None or name.type != "identifier" or node_text(name) != entry or call_args is None:
        return "wrong"  # another function, `f.call(...)`, an optional call
    if call_args.type != "arguments" or any(c.type == "optional_chain" for c in actual.children):
        return "wrong"  # a tagged template, `f?.(x)`
    nodes = _arguments(call_args)
    args = None if nodes is None else tuple(_value(node, values_model) for node in nodes)
    if args is not None and any(a is NO_VALUE for a in args):
        args = None
    return Assertion(args, _value(expected, values_model))


def _arguments(node: Node) -> list[Node] | None:
    """The argument nodes of a call; None when one is a spread or a hole."""
    found = []
    for child in node.named_children:
        if child.type == "comment":
            continue
        if child.type == "spread_element":
            return None
        found.append(child)
    return found


def _value(node: Node, values_model: Language) -> Any:
    """The value of the literal ``node`` is written as (``NO_VALUE``: none), through the language's
    ``literal_value`` (the text re-read on its own, as any literal the scorer reads)."""
    try:
        return values_model.literal_value(node_text(node))
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError, OverflowError):
        return NO_VALUE
