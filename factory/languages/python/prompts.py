"""Python's ``prompts`` facet: the format-only example of its prompts, the state rule, and the
answer line of an output or input question, ``assert f(<args>) == <value>``, written and read back
(with ``ast``; docs/design.md §5)."""

from __future__ import annotations

import ast
from typing import Any

from factory import threadsafe_ast
from factory.languages.base import NO_VALUE, Assertion, Language, PromptExample

STATE_RULE = (
    "- Value and type: write `<value>; <type>`, the value as a {language} literal (as repr "
    "shows it) and the type as type(x).__name__, e.g. `[1, 'a']; list`, read in the function "
    "that the line belongs to, once that execution of the line is over; write Nil if the line "
    "does not run that many times."
)

_SOURCE = (
    "def demo(n):\n"
    "    s = 0\n"
    "    for i in range(n):\n"
    "        s += i\n"
    "    if s > 5:\n"
    "        return -s\n"
    "    return s\n"
)
# The example asks as many questions of each family, in the same order, as the item does (taken
# in this order, round again past the end): its answer block has the very shape the item's must
# have, which small models copy (with a fixed two-per-family example, Qwen2.5-Coder-0.5B left
# every white-box item of a first sample unparsed: it wrote the example's line count).
_QUESTIONS: dict[str, list[dict[str, Any]]] = {
    "output": [{"family": "output", "answer": "3", "answer_type": "int"}],
    "input": [{"family": "input", "answer": "3", "answer_type": "int"}],
    "next_line": [
        {"family": "next_line", "line": 3, "occurrence": 4, "answer": 5},
        {"family": "next_line", "line": 6, "occurrence": 1, "answer": -1},
        {"family": "next_line", "line": 4, "occurrence": 1, "answer": 3},
        {"family": "next_line", "line": 5, "occurrence": 1, "answer": 7},
        {"family": "next_line", "line": 3, "occurrence": 1, "answer": 4},
    ],
    "state": [
        {"family": "state", "line": 4, "occurrence": 2, "var": "s", "answer": "1; int"},
        {"family": "state", "line": 4, "occurrence": 4, "var": "s", "answer": "Nil"},
        {"family": "state", "line": 4, "occurrence": 3, "var": "s", "answer": "3; int"},
        {"family": "state", "line": 3, "occurrence": 2, "var": "i", "answer": "1; int"},
        {"family": "state", "line": 2, "occurrence": 1, "var": "s", "answer": "0; int"},
    ],
    "coverage": [
        {"family": "coverage", "line": 4, "answer": "YES"},
        {"family": "coverage", "line": 6, "answer": "NO"},
        {"family": "coverage", "line": 7, "answer": "YES"},
        {"family": "coverage", "line": 5, "answer": "YES"},
        {"family": "coverage", "line": 2, "answer": "YES"},
    ],
}
# The example's reasoning for an item of several questions: one line per question, in the
# pools' order, numbered as its answers are. A worked example keyed by question number, not a
# bare `...`: with `...` and unnumbered answers, Qwen2.5-Coder-0.5B copied the `...`, then wrote
# a code line before each state answer, one line too many (15 of 20 white-box items unparsed).
_WHY: dict[str, list[str]] = {
    "output": ["s = 0 + 1 + 2 = 3; 3 > 5 is false, so line 7 returns 3."],
    "input": ["n = 3 gives s = 0 + 1 + 2 = 3, not above 5, so demo(3) returns 3."],
    "next_line": [
        "line 3 runs for i = 0, 1, 2 and a 4th time to end the loop; line 5 comes next.",
        "s = 3 is not above 5, so line 6 never runs: -1.",
        "after the loop body, execution goes back to the loop header, line 3.",
        "3 > 5 is false, so line 7 runs next.",
        "the loop starts with i = 0, so its body, line 4, runs next.",
    ],
    "state": [
        "the 2nd run of line 4 has i = 1: s = 0 + 1 = 1, an int.",
        "line 4 runs only 3 times (i = 0, 1, 2): Nil.",
        "the 3rd run of line 4 has i = 2: s = 1 + 2 = 3, an int.",
        "the 2nd run of line 3 sets i to 1, an int.",
        "line 2 sets s = 0, an int.",
    ],
    "coverage": [
        "the loop body runs for n = 3.",
        "s = 3 is not above 5.",
        "s = 3 is not above 5.",
        "every call reaches the if.",
        "the first line of the body.",
    ],
}


EXAMPLE = PromptExample(source=_SOURCE, entry="demo", args="3", questions=_QUESTIONS, why=_WHY)

_PARSE_ERRORS = (SyntaxError, ValueError, TypeError, MemoryError, RecursionError, OverflowError)


def assertion(call: str, expected: str) -> str:
    """The answer line of an output or input question: ``assert f(1) == 2``."""
    return f"assert {call} == {expected}"


def read_assertion(line: str, entry: str, values: Language) -> Assertion | str:
    """``assert <entry>(<literals>) == <literal>`` read back, or the verdict of a line that is not
    one: ``unparsed`` (not an assert statement), ``wrong`` (a message, another comparison than one
    ``==``, reversed operands, another function, keyword or starred arguments)."""
    try:
        module = threadsafe_ast.parse(line, mode="exec")
    except _PARSE_ERRORS:
        return "unparsed"
    if len(module.body) != 1 or not isinstance(module.body[0], ast.Assert):
        return "unparsed"
    stmt = module.body[0]
    test = stmt.test
    if stmt.msg is not None:
        return "wrong"
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return "wrong"  # `== 5 or True`, `!=`, chained comparisons, bare calls, tuples
    call = test.left
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == entry
        and not call.keywords
        and not any(isinstance(a, ast.Starred) for a in call.args)
    ):
        return "wrong"  # reversed operands, another function, keywords, starred arguments
    args = tuple(_node_value(line, node, values) for node in call.args)
    found = None if any(a is NO_VALUE for a in args) else args
    return Assertion(found, _node_value(line, test.comparators[0], values))


def _node_value(line: str, node: ast.expr, values: Language) -> Any:
    """The value of the literal that ``node`` of ``line`` is written as (``NO_VALUE``: none)."""
    try:
        return values.answer_literal_value(node, line)
    except _PARSE_ERRORS:
        return NO_VALUE
