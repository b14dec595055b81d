"""Statement removal for Python (part of the ``analysis`` facet): the variants of a program with
one statement replaced by ``pass``, for the ablation checks of ``factory.quality.ablation``.

A variant replaces the statement's text (a simple statement, or a compound one with all its
clauses and blocks) by ``pass`` and leaves every other line where it was: the text after the
statement on its last line moves up to its first, and the lines it spanned stay as blank lines.
So line numbers never move, a block never becomes empty, and a variant of a variant is made the
same way (``pass`` statements are never removed again). Never removed: ``return``, definitions,
``pass``, docstrings, ``global``/``nonlocal``, module-level statements, and an ``elif`` clause on
its own (it goes with its ``if``).

Two other kinds of variant leave every statement in place. ``once_variants`` set a loop's
literal count to 1: a loop whose repetitions change nothing (the same ``seen.add(word)`` again)
keeps every outcome. ``passthrough_variants`` replace an assignment's value by one of the
variables it reads (``trimmed = word.strip()`` → ``trimmed = word``): when that keeps every
outcome, the operation did nothing that reaches the output on those inputs (no whitespace to
strip, a copy nothing mutates).

Positions come from the standard ``ast`` and the text is spliced directly: 0.08 ms a program on
the default release's programs, where libcst took 9 ms (parse, ``deep_replace``, code generation;
0.6 ms for the parse alone), more than the inputs stage's whole budget for its checks.
"""

from __future__ import annotations

import ast
import builtins
import functools
from typing import NamedTuple

from factory.trace.source import TREE_CACHE_SIZE

_KEPT = (ast.Return, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass, ast.Global, ast.Nonlocal)
_BLOCKS = ("body", "orelse", "finalbody")


class Removal(NamedTuple):
    """One statement removed: its first line (1-based) and the program without it."""

    line: int
    source: str


def negated_tests(source: str) -> list[Removal]:
    """One variant per ``if``/``elif`` test on one line: the program with that test negated
    (``if not (x > 0):``), every line where it was. A test whose every outcome can be flipped
    with no change to any output decides nothing (an ``if`` and an ``else`` doing the same work)."""
    flips = []
    encoded: list[bytes] | None = None
    for node, _ in _statements(source):
        if not isinstance(node, ast.If) or node.test.lineno != node.test.end_lineno:
            continue
        encoded = encoded or [line.encode() for line in source.splitlines(keepends=True)]
        test, row = node.test, node.test.lineno - 1
        line = encoded[row]
        flipped = line[: test.col_offset] + b"not (" + line[test.col_offset : test.end_col_offset] + b")"
        text = b"".join([*encoded[:row], flipped + line[test.end_col_offset :], *encoded[row + 1 :]])
        flips.append(Removal(node.lineno, text.decode()))
    return flips


def branch_tests(source: str) -> list[int]:
    """The lines of the ``if`` and ``elif`` tests in the program's functions, in source order."""
    return [node.lineno for node, _ in _statements(source) if isinstance(node, ast.If)]


def removable_statements(source: str) -> list[ast.stmt]:
    """The statements ``removal_variants`` removes, in source order (a compound statement before
    the statements in it). SyntaxError (or ValueError) when the source does not parse."""
    return [node for node, removable in _statements(source) if removable]


def passthrough_variants(source: str) -> list[Removal]:
    """One variant per (assignment, variable its value reads): the value replaced by the
    variable's name, every other line where it was. Assignments: ``name = value`` (one plain
    target, an annotated one too) in the program's functions, in source order, whose value is
    neither a name nor a literal; variables: the names the value reads, in order of first
    appearance, but the assigned name (that variant would be the statement's removal), names that
    are called (``len``, ``g``), modules, builtins, and names bound inside the value
    (comprehension variables, lambda parameters). SyntaxError when the source does not parse."""
    variants = []
    encoded: list[bytes] | None = None
    modules = _module_names(source)
    for node, _ in _statements(source):
        target, value = _assignment(node)
        if target is None or value is None or isinstance(value, (ast.Name, ast.Constant)):
            continue
        if _is_literal(value):
            continue
        encoded = encoded or [line.encode() for line in source.splitlines(keepends=True)]
        for name in _read_names(value):
            if name != target and name not in modules and not hasattr(builtins, name):
                variants.append(Removal(node.lineno, _replaced(encoded, value, name)))
    return variants


def once_variants(source: str) -> list[Removal]:
    """One variant per loop bounded by a literal count above 1 (``for i in range(3):``, ``while
    count < 3:``) in the program's functions, in source order: the program with that count set
    to 1, so that the body runs at most once (every line where it was). A loop whose repetitions
    change nothing (its body does the same work again: ``seen.add(word)``) then keeps every
    outcome."""
    variants = []
    encoded: list[bytes] | None = None
    for node, _ in _statements(source):
        bound = _literal_bound(node)
        if bound is None:
            continue
        encoded = encoded or [line.encode() for line in source.splitlines(keepends=True)]
        variants.append(Removal(node.lineno, _replaced(encoded, bound, "1")))
    return variants


def _literal_bound(node: ast.stmt) -> ast.Constant | None:
    """The literal count above 1 of ``for _ in range(N):`` or ``while name < N:``, else None."""
    count: ast.expr | None = None
    if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
        call = node.iter
        if (
            isinstance(call.func, ast.Name)
            and call.func.id == "range"
            and len(call.args) == 1
            and not call.keywords
        ):
            count = call.args[0]
    elif isinstance(node, ast.While) and isinstance(node.test, ast.Compare):
        test = node.test
        if isinstance(test.left, ast.Name) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt):
            count = test.comparators[0]
    if isinstance(count, ast.Constant) and type(count.value) is int and count.value > 1:
        return count
    return None


def removal_variants(source: str) -> list[Removal]:
    """One ``Removal`` per statement of ``removable_statements``, in that order."""
    statements = removable_statements(source)
    if not statements:
        return []
    encoded = [line.encode() for line in source.splitlines(keepends=True)]
    return [Removal(s.lineno, _without(encoded, s)) for s in statements]


@functools.lru_cache(maxsize=TREE_CACHE_SIZE)  # the variants of one program: one parse
def _parsed(source: str) -> ast.Module:
    return ast.parse(source)


@functools.lru_cache(maxsize=TREE_CACHE_SIZE)  # every kind of variant of one program
def _statements(source: str) -> tuple[tuple[ast.stmt, bool], ...]:
    """Every statement in the program's functions (an ``elif`` too), in source order, and whether
    it may be removed. Only statements are walked, never expressions: a tenth of ``ast.walk``."""
    tree = _parsed(source)
    lines = source.splitlines()
    found: list[tuple[ast.stmt, bool]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _collect(node.body, lines, found, top=True)
    return tuple(found)


def _collect(
    block: list[ast.stmt], lines: list[str], found: list[tuple[ast.stmt, bool]], *, top: bool = False
) -> None:
    for index, node in enumerate(block):
        if top and index == 0 and is_docstring(node):
            continue
        found.append((node, not isinstance(node, _KEPT)))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _collect(node.body, lines, found, top=True)
        elif not isinstance(node, ast.ClassDef):
            _collect_children(node, lines, found)


def _collect_children(node: ast.stmt, lines: list[str], found: list[tuple[ast.stmt, bool]]) -> None:
    """The statements in the blocks of a compound statement (an ``elif`` is listed, not removable)."""
    for name in _BLOCKS:
        block = getattr(node, name, None)
        if not block:
            continue
        if name == "orelse" and isinstance(node, ast.If) and is_elif(block, lines):
            found.append((block[0], False))
            _collect_children(block[0], lines, found)
        else:
            _collect(block, lines, found)
    for clause in getattr(node, "handlers", ()) or getattr(node, "cases", ()):
        _collect(clause.body, lines, found)


def is_elif(orelse: list[ast.stmt], lines: list[str]) -> bool:
    """Whether an ``if``'s ``orelse`` is an ``elif`` clause (read from the source line)."""
    first = orelse[0]
    return (
        len(orelse) == 1
        and isinstance(first, ast.If)
        and lines[first.lineno - 1][first.col_offset :].startswith("elif")
    )


def is_docstring(node: ast.stmt) -> bool:
    """Whether ``node`` is a string-constant statement (a docstring)."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """(target name, value) of ``name = value`` or ``name: T = value``; (None, None) otherwise."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id, node.value
    return None, None


def _is_literal(node: ast.expr) -> bool:
    """A constant, or a container display of constants (``[1, 2]``, ``{'a': 0}``, ``-3``)."""
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _read_names(value: ast.expr) -> list[str]:
    """The names ``value`` reads, in order of first appearance, but called ones and those bound
    inside it (comprehension targets, lambda parameters)."""
    bound: set[str] = set()
    called: set[int] = set()
    for node in ast.walk(value):
        if isinstance(node, ast.comprehension):
            bound.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Lambda):
            bound.update(a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(id(node.func))
    names = sorted(
        (n for n in ast.walk(value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    found: list[str] = []
    for n in names:
        if id(n) not in called and n.id not in bound and n.id not in found:
            found.append(n.id)
    return found


def _module_names(source: str) -> frozenset[str]:
    """The names module-level ``import`` statements bind."""
    return frozenset(
        (alias.asname or alias.name).split(".")[0]
        for node in _parsed(source).body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    )


def _replaced(encoded: list[bytes], value: ast.expr, name: str) -> str:
    """The source with the expression ``value`` replaced by the text ``name``, every other line
    where it was."""
    first, last = value.lineno - 1, (value.end_lineno or value.lineno) - 1
    rest = encoded[last][value.end_col_offset or 0 :]
    joined = encoded[first][: value.col_offset] + name.encode() + rest
    blanks = [b"\n"] * (last - first)
    return b"".join([*encoded[:first], joined, *blanks, *encoded[last + 1 :]]).decode()


def _without(encoded: list[bytes], node: ast.stmt) -> str:
    """The source (lines as UTF-8 bytes: ``ast`` offsets count bytes) with ``node`` replaced by ``pass``."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    start, end = node.col_offset, node.end_col_offset or 0
    rest = encoded[last][end:]
    joined = encoded[first][:start] + b"pass" + rest
    blanks = [b"\n"] * (last - first)
    return b"".join([*encoded[:first], joined, *blanks, *encoded[last + 1 :]]).decode()
