"""JavaScript's static quality facts (``factory.languages.javascript.static``): trivial operations,
dead stores, unread loop variables, identifiers, statements and ``if`` tests, exactly."""

from __future__ import annotations

import pytest

from factory.languages.javascript.static import analyse
from factory.quality.static import IfTest


def trivial(body: str) -> list[tuple[str, str]]:
    """(kind, text) of the trivial operations of ``body`` inside ``f(x, s, xs, n)``."""
    source = "function f(x, s, xs, n) {\n" + body + "\n  return x;\n}\n"
    return [(t.kind, t.text) for t in analyse(source).trivial]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('  const a = "A".indexOf("x");', [("constant", '"A".indexOf("x")')]),
        ("  const a = [7, -1].length;", [("constant", "[7, -1].length")]),
        ("  const a = Math.max(3, 4) + 1;", [("constant", "Math.max(3, 4) + 1")]),
        ("  const a = !true;", [("constant", "!true")]),
        ("  const a = x === x;", [("self", "x === x")]),
        ("  const a = Math.min(n, n);", [("self", "Math.min(n, n)")]),
        ("  const a = s.includes(s);", [("self", "s.includes(s)")]),
        ("  const a = xs === xs.slice();", [("self", "xs === xs.slice()")]),
        ("  const a = x * 1;", [("identity", "x * 1")]),
        ("  const a = 1 * x;", [("identity", "1 * x")]),
        ("  const a = x + 0;", [("identity", "x + 0")]),
        ("  x += 0;", [("identity", "x += 0")]),
        ("  const a = s.slice(0);", [("identity", "s.slice(0)")]),
        ("  const a = xs.slice();", []),  # one copy is no identity: a copy is a real value
        ("  const a = xs.slice().slice();", [("identity", "xs.slice().slice()")]),
        ("  const a = [...[...xs]];", [("identity", "[...[...xs]]")]),
        ('  const a = s.concat("");', [("identity", 's.concat("")')]),
        ('  const a = s.replace("a", "a");', [("identity", 's.replace("a", "a")')]),
        ('  const a = s.includes("");', [("identity", 's.includes("")')]),
        ("  const a = x && true;", [("identity", "x && true")]),
    ],
)
def test_trivial_operations_are_found(body: str, expected: list[tuple[str, str]]) -> None:
    assert trivial(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "  const a = s.concat(s);",  # doubles s, as s + s
        "  const a = x + x;",
        "  const a = x * x;",
        '  const a = s.replace("", "x");',  # inserts "x"
        "  const a = s.slice(1);",
        "  const a = x * 2;",
        "  const a = x - 1;",
        "  const a = -5;",  # a signed number
        "  const a = new Set([1, 2]);",  # a literal
        "  const a = Math.max(x, n);",
        "  for (const v of [1, 2, 3]) {\n    x += v;\n  }",  # a for-of iterable is exempt
    ],
)
def test_near_misses_are_not_trivial(body: str) -> None:
    assert trivial(body) == []


def test_calls_of_the_programs_own_functions_are_no_operations() -> None:
    source = "function g() {\n  return 1;\n}\nfunction f(x) {\n  return g() + x;\n}\n"
    assert analyse(source).trivial == ()


SOURCE = """function f(xs, n) {
  let unused = 5;
  let count = 0;
  count++;
  let total = 0;
  for (const v of xs) {
    total += 1;
  }
  for (let i = 0; i < n; i++) {
    total += i;
  }
  for (let j = 0; j < 2; j++) {
    total += 2;
  }
  if (n > 1) {
    total = total * 2;
  } else if (n < 0) {
    total = 0;
  } else {
    total = 1;
  }
  return total;
}
"""


def test_dead_stores_unread_loops_and_identifiers() -> None:
    facts = analyse(SOURCE)
    assert facts.dead_stores == ("unused", "count")  # count is only stored (count++), as Python's +=
    assert facts.unread_loops == (6, 12)  # the for-of and the counted loop that never read theirs
    assert facts.identifiers == {"f", "xs", "n", "unused", "count", "total", "v", "i", "j"}


def test_statements_and_if_tests_as_the_tracer_numbers_lines() -> None:
    facts = analyse(SOURCE)
    assert facts.if_tests == (IfTest(15, 16), IfTest(17, 18))  # the else if is a test of its own
    # ... but no statement of its own: it goes with its if (lines 15-21)
    assert (15, 21) in facts.statements and not any(first == 17 for first, _ in facts.statements)
    assert [first for first, _ in facts.statements] == [2, 3, 4, 5, 6, 7, 9, 10, 12, 13, 15, 16, 18, 20, 22]
    assert facts.irrelevant_count([15]) == 4  # the if and the three statements in its branches


def test_a_program_that_does_not_parse_is_an_error() -> None:
    with pytest.raises(SyntaxError):
        analyse("function f( {\n")
