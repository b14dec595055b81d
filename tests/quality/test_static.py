"""Static quality facts: trivial operations judged on the syntax tree, dead stores, unread loop
variables, statements and if tests (factory.quality.static)."""

from __future__ import annotations

import copy

import pytest

from factory.quality import static
from factory.quality.static import CONSTANT, IDENTITY, SELF, analyse, neutral_verdict

ISSUE_TIER_1 = """def f(data):
    n = len(data)
    count = len([7, -1])
    return count
"""

ISSUE_TIER_3 = """def f(group, tags):
    if group == group.copy():
        ok = tags.issuperset(tags)
        flag = {-1, 3}.issuperset({1, 0})
        done = tags.issubset(tags)
    elif tags.issuperset(tags):
        found = tags.issuperset(tags)
    else:
        flag8 = {1}.issuperset({10})
    flag9 = 'ab' not in group
    return flag9
"""


def kinds_of(body: str, params: str = "x, s, xs, n, flag, bag, seen") -> list[tuple[str, str]]:
    """(kind, text) of the trivial operations of a function with ``body`` (one statement)."""
    facts = analyse(f"def f({params}):\n    {body}\n    return 0\n")
    return [(t.kind, t.text) for t in facts.trivial]


def test_the_issues_two_programs() -> None:
    one = analyse(ISSUE_TIER_1)
    assert [(t.kind, t.line, t.text) for t in one.trivial] == [(CONSTANT, 3, "len([7, -1])")]
    assert one.dead_stores == ("n",)
    three = analyse(ISSUE_TIER_3)
    found = [(t.kind, t.text) for t in three.trivial]
    assert (SELF, "group == group.copy()") in found and (SELF, "tags.issubset(tags)") in found
    assert (CONSTANT, "{-1, 3}.issuperset({1, 0})") in found and (CONSTANT, "{1}.issuperset({10})") in found
    assert {t.kind for t in three.trivial} == {SELF, CONSTANT}  # 'ab' not in group is no trivial op
    assert set(three.dead_stores) == {"ok", "flag", "done", "found", "flag8"}
    # the elif is part of its if (one statement), its test an if test of its own
    assert [(t.line, t.body_line) for t in three.if_tests] == [(2, 3), (6, 7)]
    assert len(three.statements) == 8 and (2, 9) in three.statements


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("y = not True", [(CONSTANT, "not True")]),
        ("y = 'A'.partition('.')", [(CONSTANT, "'A'.partition('.')")]),
        ("y = len([7, -1]) + 1", [(CONSTANT, "len([7, -1]) + 1")]),  # one operation, not two
        ("y = x != x", [(SELF, "x != x")]),
        ("y = min(n, n)", [(SELF, "min(n, n)")]),
        ("y = xs == xs.copy()", [(SELF, "xs == xs.copy()")]),
        ("y = s.count(s)", [(SELF, "s.count(s)")]),
        ("seen |= seen", [(SELF, "seen |= seen")]),
        ("y = x * 1", [(IDENTITY, "x * 1")]),
        ("y = x + 0", [(IDENTITY, "x + 0")]),
        ("x += 0", [(IDENTITY, "x += 0")]),
        ("y = s.removeprefix('')", [(IDENTITY, "s.removeprefix('')")]),
        ("y = s.replace('a', 'a')", [(IDENTITY, "s.replace('a', 'a')")]),
        ("y = xs[:][:]", [(IDENTITY, "xs[:][:]")]),
        ("y = flag and True", [(IDENTITY, "flag and True")]),
        ("y = s.find('')", [(IDENTITY, "s.find('')")]),  # always 0: a constant through a neutral argument
    ],
)
def test_trivial_operations_are_found(body: str, expected: list[tuple[str, str]]) -> None:
    assert kinds_of(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "y = -1",  # a negative number literal is no operation
        "y = s + s",  # doubling is a computation
        "y = x * x",
        "y = set()",  # a call with no operands
        "y = xs[:]",  # the copy idiom
        "y = xs.copy()",
        "bag.discard(5)",  # a no-op only on sets without 5
        "y = min(x, 100)",  # an identity only below 100
        "y = s.replace('a', 'b')",
        "y = round(x, 2)",  # an identity on ints only
        "y = x // 1",  # ... and this one too
        "y = s.strip()",
        "y = sorted(xs, reverse=True)",
        "y = xs.sort(reverse=True)",  # mutates: not a no-op
        "y = '-'.join(xs)",
        "y = s.split(',')",
        "y = x is None",
        "y = xs == []",
        "for i in range(3):\n        y = i",  # the counted-loop idiom
        "raise ValueError('no')",  # building the exception raised
        "y = str.format('<{}>', s)",  # a type's method: str is no operand
    ],
)
def test_near_misses_are_not_trivial(body: str) -> None:
    assert kinds_of(body) == []


def test_helper_calls_are_not_operations() -> None:
    source = "def g(a):\n    return a\ndef f(x):\n    y = g(3)\n    return y + x\n"
    assert analyse(source).trivial == ()


def test_the_neutral_check_leaves_its_samples_alone() -> None:
    before = copy.deepcopy(static._BASE_SAMPLES)
    assert neutral_verdict("x.sort(reverse=True)") is False
    assert neutral_verdict("x.append(1)") is False
    assert neutral_verdict("x.extend([])") is True
    assert static._BASE_SAMPLES == before
    assert neutral_verdict("x + ' ' * 100000") is False  # too large a constant: not evaluated


def test_dead_stores_unread_loops_and_identifiers() -> None:
    source = (
        "def f(xs, n):\n"
        "    total = 0\n"
        "    count = 0\n"
        "    count += 1\n"
        "    for x in xs:\n"
        "        total += x\n"
        "    for _ in range(n):\n"
        "        total += 1\n"
        "    for y in xs:\n"
        "        unused = n\n"
        "    return total\n"
    )
    facts = analyse(source)
    assert facts.dead_stores == ("count", "unused")  # assigned (count also augmented), never read
    assert facts.unread_loops == (7, 9)
    assert facts.identifiers == {"f", "xs", "n", "total", "count", "x", "_", "y", "unused"}
    assert facts.if_tests == ()


def test_irrelevant_count_takes_the_statements_inside_a_removed_compound() -> None:
    source = (
        "def f(xs):\n"
        "    out = []\n"
        "    for x in xs:\n"
        "        if x:\n"
        "            out.append(x)\n"
        "    junk = 1\n"
        "    return out\n"
    )
    facts = analyse(source)
    assert len(facts.statements) == 6
    assert facts.irrelevant_count([3]) == 3  # the loop, its if and the append
    assert facts.irrelevant_count([3, 6]) == 4
    assert facts.irrelevant_count([]) == 0


def test_a_docstring_and_pass_are_no_statements() -> None:
    facts = analyse('def f(x):\n    """Doc."""\n    pass\n    return x\n')
    assert facts.statements == ((4, 4),)


def test_a_program_that_does_not_parse_is_an_error() -> None:
    with pytest.raises(SyntaxError):
        analyse("def f(:\n")
