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
assertion around them is the language's, read by its ``prompts`` facet (``read_assertion``):
Python's ``assert f(...) == ...`` with ``ast``, JavaScript's
``assert.deepStrictEqual(f(...), ...);`` with tree-sitter (docs/languages.md §6.6), with the
same verdicts for the same faults.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from factory.languages import Language
from factory.languages.base import NO_VALUE, Assertion

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


def _assertion(line: str, entry: str, values: Language) -> Assertion | Verdict:
    """The line read by the language's ``prompts`` facet: its ``Assertion``, or a verdict."""
    read = values.facet("prompts").read_assertion(line, entry, values)
    if isinstance(read, Assertion):
        return read
    return UNPARSED if read == UNPARSED else WRONG


def judge_output(line: str, entry: str, args: tuple[Any, ...], gold: Any, values: Language) -> Verdict:
    """Output family: the language's assertion of ``entry(<args>)`` equal to a literal strictly
    equal to gold (Python: ``assert entry(<args>) == <literal>``)."""
    parsed = _assertion(line, entry, values)
    if isinstance(parsed, str):
        return parsed
    given = parsed.args
    if given is None or len(given) != len(args):
        return WRONG
    if not all(values.strict_equal(a, b) for a, b in zip(given, args, strict=True)):
        return WRONG
    value = parsed.expected  # a call, a name or `f(x)` on the right is not a literal
    if value is NO_VALUE or gold is _NO_VALUE:
        return WRONG
    return RIGHT if values.strict_equal(value, gold) else WRONG


def input_arguments(line: str, entry: str, values: Language) -> tuple[Any, ...] | Verdict:
    """Input family: the literal arguments proposed by the language's assertion
    (``assert entry(<args>) == ...``).

    Returns the argument tuple, or a verdict when the line cannot be run (``unparsed`` when it
    is not an assertion at all, ``wrong`` when an argument is not a literal).
    """
    parsed = _assertion(line, entry, values)
    if isinstance(parsed, str):
        return parsed
    return WRONG if parsed.args is None else parsed.args


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
