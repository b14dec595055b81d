"""Judging one answer line per question family (docs/design.md §5). Execution-free except ``input``.

Verdicts: ``right``; ``wrong`` (the line has the family's form but is incorrect, or breaks a
rule such as a non-literal right-hand side); ``unparsed`` (the line does not have the family's
form at all, e.g. not an ``assert`` statement). Only ``right`` earns credit.

Decisions the starting design left open (docs/design.md §5):
- output: the assertion form ``assert f(<the given args>) == <literal>`` is required; a bare
  literal line is ``unparsed``. The call's arguments must equal the given ones *as values*
  (formatting is free). Reversed operands (``assert <literal> == f(...)``), an assertion message,
  chained or boolean comparisons are ``wrong``.
- floats: compared by value, exactly (``strict_equal``): the gold is the interpreter's own value,
  so ``0.30000000000000004`` is right and ``0.3`` is wrong; ``1e3`` equals ``1000.0``.
- input: ``assert f(<literal args>) == <any expression>``; the right-hand side must parse but is
  not judged (running the original program is); names, calls (``set()`` excepted, it is a
  literal), starred and keyword arguments are ``wrong``.
- next_line: the answer is the line's source text (or ``-1``), never a line number; one trailing
  period is forgiven when the text without it matches.
- state: ``<value>; <type>`` split on the last ``;``; one trailing period after the type name is
  forgiven; ``Nil`` is case-insensitive. A line without ``;`` (and not Nil) is ``unparsed``.
- coverage: ``YES``/``NO``, case-insensitive, one trailing period forgiven; anything else is
  ``unparsed``.

Values (the gold answers, the literals of an answer) are read and compared with the value model
of the item's language (``values``: ``Language.literal_value`` and ``strict_equal``); the
assertion around them is Python's ``assert f(...) == ...``, read with ``ast``.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Any, Literal

from factory import threadsafe_ast
from factory.languages import Language

Verdict = Literal["right", "wrong", "unparsed"]
RIGHT: Verdict = "right"
WRONG: Verdict = "wrong"
UNPARSED: Verdict = "unparsed"

_PARSE_ERRORS = (SyntaxError, ValueError, TypeError, MemoryError, RecursionError, OverflowError)
_NO_VALUE = object()


def literal_value(text: str, values: Language) -> Any:
    """The value of a literal text (``values.literal_value``); ``_NO_VALUE`` instead of raising."""
    try:
        return values.literal_value(text)
    except _PARSE_ERRORS:
        return _NO_VALUE


@lru_cache(maxsize=65536)
def gold_literal(text: str, values: Language) -> Any:
    """A gold answer's literal value (cached: the same gold is judged many times)."""
    return literal_value(text, values)


def _node_value(line: str, node: ast.expr, values: Language) -> Any:
    """The value of the literal that ``node`` of ``line`` is written as (``_NO_VALUE``: none)."""
    try:
        return values.answer_literal_value(node, line)
    except _PARSE_ERRORS:
        return _NO_VALUE


def _parse_assert(line: str, entry: str) -> tuple[ast.Call, ast.expr] | Verdict:
    """``assert <entry>(...) == <rhs>`` as (call, rhs), or the verdict for a line that is not."""
    try:
        module = threadsafe_ast.parse(line, mode="exec")
    except _PARSE_ERRORS:
        return UNPARSED
    if len(module.body) != 1 or not isinstance(module.body[0], ast.Assert):
        return UNPARSED
    stmt = module.body[0]
    test = stmt.test
    if stmt.msg is not None:
        return WRONG
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return WRONG  # `== 5 or True`, `!=`, chained comparisons, bare calls, tuples
    call = test.left
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == entry
        and not call.keywords
        and not any(isinstance(a, ast.Starred) for a in call.args)
    ):
        return WRONG  # reversed operands, another function, keywords, starred arguments
    return call, test.comparators[0]


def _literal_args(line: str, call: ast.Call, values: Language) -> tuple[Any, ...] | None:
    found = []
    for node in call.args:
        value = _node_value(line, node, values)
        if value is _NO_VALUE:
            return None
        found.append(value)
    return tuple(found)


def judge_output(line: str, entry: str, args: tuple[Any, ...], gold: Any, values: Language) -> Verdict:
    """Output family: ``assert entry(<args>) == <literal strictly equal to gold>``."""
    parsed = _parse_assert(line, entry)
    if isinstance(parsed, str):
        return parsed
    call, rhs = parsed
    given = _literal_args(line, call, values)
    if given is None or len(given) != len(args):
        return WRONG
    if not all(values.strict_equal(a, b) for a, b in zip(given, args, strict=True)):
        return WRONG
    value = _node_value(line, rhs, values)  # a call, a name or `f(x)` on the right is not a literal
    if value is _NO_VALUE or gold is _NO_VALUE:
        return WRONG
    return RIGHT if values.strict_equal(value, gold) else WRONG


def input_arguments(line: str, entry: str, values: Language) -> tuple[Any, ...] | Verdict:
    """Input family: the literal arguments proposed by ``assert entry(<args>) == ...``.

    Returns the argument tuple, or a verdict when the line cannot be run (``unparsed`` when it
    is not an assertion at all, ``wrong`` when an argument is not a literal).
    """
    parsed = _parse_assert(line, entry)
    if isinstance(parsed, str):
        return parsed
    found = _literal_args(line, parsed[0], values)
    return WRONG if found is None else found


def judge_next_line(line: str, source_lines: list[str], gold: int) -> Verdict:
    """next_line family: the source text of line ``gold`` (any identical line), or -1."""
    answer = line.strip()
    candidates = [answer]
    if answer.endswith("."):
        candidates.append(answer[:-1].rstrip())
    if gold == -1:
        return RIGHT if "-1" in candidates else WRONG
    if not 1 <= gold <= len(source_lines):
        return WRONG
    target = source_lines[gold - 1].strip()
    return RIGHT if target and target in candidates else WRONG


def judge_state(line: str, gold: str, values: Language) -> Verdict:
    """state family: ``value; type`` (split on the last ``;``) or ``Nil``."""
    answer = line.strip()
    gold = gold.strip()
    answer_nil = _strip_period(answer).lower() == "nil"
    if gold.lower() == "nil":
        return RIGHT if answer_nil else WRONG
    if answer_nil:
        return WRONG
    if ";" not in answer:
        return UNPARSED
    value_text, type_text = answer.rsplit(";", 1)
    if ";" not in gold:
        return WRONG
    gold_value_text, gold_type = gold.rsplit(";", 1)
    if _strip_period(type_text.strip()) != gold_type.strip():
        return WRONG
    value = literal_value(value_text.strip(), values)
    gold_value = gold_literal(gold_value_text.strip(), values)
    if value is _NO_VALUE or gold_value is _NO_VALUE:
        return WRONG
    return RIGHT if values.strict_equal(value, gold_value) else WRONG


def judge_coverage(line: str, gold: str) -> Verdict:
    """coverage family: YES or NO, case-insensitive."""
    answer = _strip_period(line.strip()).upper()
    if answer not in ("YES", "NO"):
        return UNPARSED
    return RIGHT if answer == str(gold).strip().upper() else WRONG


def _strip_period(text: str) -> str:
    return text[:-1].rstrip() if text.endswith(".") else text
