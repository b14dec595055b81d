"""Static quality facts of a Python program, read from its syntax tree (``ast``): the statements,
the trivial operations, dead stores, loops that never read their variable, the names it binds and
its ``if`` tests (docs/quality.md says what each one means).

Trivial operations are judged generically, never by an operation's name:

- *constant*: an operation none of whose operands reads a variable (``'A'.partition('.')``,
  ``len([7, -1])``, ``not True``); a signed number literal is no operation, and neither is a
  call with no operands (``set()``) or a call of the program's own function. The iterable of a
  ``for`` header is exempt: ``for i in range(3)`` is the counted-loop idiom.
- *self*: two or more operands, all the same variable or a copy of it (``x != x``, ``min(n, n)``,
  ``xs == xs.copy()``, ``s.count(s)``, ``seen |= seen``). ``s + s``, ``x * x`` (and ``**``,
  ``<<``, ``>>``, ``@``) do not count: they double or square the value, a real computation.
- *identity*: a full slice of a full slice or copy (``xs[:][:]``), a boolean operator with a
  ``True``/``False``/``None`` operand, or an operation with one variable operand and constant
  others that is a no-op or a constant on every sample value it accepts (``x * 1``, ``x + 0``,
  ``.removeprefix('')``, ``s.replace('a', 'a')``, ``'' in s``, ``s.find('')``): ``neutral_verdict``
  evaluates it on sample values of every literal type, with the operation's own constants mixed
  into the samples so that ``s.discard(5)`` or ``min(x, 100)`` is not mistaken for a no-op.
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from factory.languages.python.ablation import is_docstring, is_elif
from factory.literals import is_literal, literal_eval, strict_equal

CONSTANT, SELF, IDENTITY = "constant", "self", "identity"
KINDS = (CONSTANT, SELF, IDENTITY)

# Operators whose result on two equal operands is still a computation (doubling, squaring).
_GROWING = (ast.Add, ast.Mult, ast.Pow, ast.LShift, ast.RShift, ast.MatMult)
# Calls that copy their one argument (``list(xs)``), for "the same variable, possibly copied".
_COPIES = frozenset({"list", "tuple", "set", "frozenset", "dict"})
_SKIPPED_STATEMENTS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Pass,
    ast.Global,
    ast.Nonlocal,
)
# Builtins a neutral-argument check may call on sample values: pure, deterministic ones only.
_PURE_BUILTINS = (
    "abs all any ascii bin bool bytes chr dict divmod float format frozenset hex int len list max min "
    "oct ord pow repr round set sorted str sum tuple"
).split()
_SPACE = {"__builtins__": {name: getattr(builtins, name) for name in _PURE_BUILTINS}}
_MAX_CONSTANT_INT = 10_000
_MAX_CONSTANT_LEN = 100


@dataclass(frozen=True)
class TrivialOp:
    """One trivial operation: its kind (``KINDS``), line and source text."""

    kind: str
    line: int
    text: str


@dataclass(frozen=True)
class IfTest:
    """An ``if``/``elif`` test: its line and the first line of its body (the true outcome)."""

    line: int
    body_line: int


@dataclass(frozen=True)
class StaticFacts:
    """What ``analyse`` reads from one program."""

    statements: tuple[tuple[int, int], ...]  # (first, last) line of each statement in a function
    trivial: tuple[TrivialOp, ...]
    dead_stores: tuple[str, ...]  # variables assigned in a function and never read there
    unread_loops: tuple[int, ...]  # lines of ``for`` loops whose body never reads the loop variable
    identifiers: frozenset[str]  # every name the program binds (functions, parameters, variables)
    if_tests: tuple[IfTest, ...]

    def irrelevant_count(self, removed_lines: list[int]) -> int:
        """How many of ``statements`` a removal of the statements starting at ``removed_lines``
        takes away (a removed compound statement takes the statements inside it)."""
        spans = [s for s in self.statements if s[0] in set(removed_lines)]
        return sum(1 for first, _ in self.statements if any(a <= first <= b for a, b in spans))


def analyse(source: str) -> StaticFacts:
    """The static facts of ``source``; SyntaxError (or ValueError) when it does not parse."""
    tree = ast.parse(source)
    lines = source.splitlines()
    nodes = list(ast.walk(tree))
    bound = _bound_names(nodes)
    loads: dict[int, frozenset[str]] = {}
    _index_loads(tree, loads)
    functions = {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    statements: list[tuple[int, int]] = []
    tests: list[IfTest] = []
    dead: list[str] = []
    for func in (n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        _statements(func.body, lines, statements, tests, top=True)
        dead += _dead_stores(func, loads)
    finder = _TrivialFinder(source, bound, functions, loads)
    finder.visit(tree)
    return StaticFacts(
        statements=tuple(sorted(statements)),
        trivial=tuple(finder.found),
        dead_stores=tuple(dead),
        unread_loops=tuple(_unread_loops(nodes, loads)),
        identifiers=frozenset(bound),
        if_tests=tuple(sorted(tests, key=lambda t: t.line)),
    )


# --- statements and if tests --------------------------------------------------------------------


def _statements(
    block: list[ast.stmt], lines: list[str], out: list[tuple[int, int]], tests: list[IfTest], *, top: bool
) -> None:
    """The statements of a function body, nested ones included; an ``elif`` is part of its ``if``
    (not a statement of its own), its test an ``IfTest`` all the same."""
    for index, node in enumerate(block):
        if top and index == 0 and is_docstring(node):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _statements(node.body, lines, out, tests, top=True)
            continue
        if isinstance(node, ast.ClassDef):
            continue
        if not isinstance(node, _SKIPPED_STATEMENTS):
            out.append((node.lineno, node.end_lineno or node.lineno))
        _children(node, lines, out, tests)


def _children(node: ast.stmt, lines: list[str], out: list[tuple[int, int]], tests: list[IfTest]) -> None:
    if isinstance(node, ast.If):
        tests.append(IfTest(node.lineno, node.body[0].lineno))
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if not block:
            continue
        if name == "orelse" and isinstance(node, ast.If) and is_elif(block, lines):
            _children(block[0], lines, out, tests)
        else:
            _statements(block, lines, out, tests, top=False)
    for clause in getattr(node, "handlers", ()) or getattr(node, "cases", ()):
        _statements(clause.body, lines, out, tests, top=False)


# --- names: bound, dead, loop variables ----------------------------------------------------------


def _bound_names(nodes: list[ast.AST]) -> set[str]:
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


_NO_NAMES: frozenset[str] = frozenset()


def _index_loads(node: ast.AST, loads: dict[int, frozenset[str]]) -> frozenset[str]:
    """Fill ``loads``: every node's id -> the names read in its subtree (one pass over the tree)."""
    found = _NO_NAMES
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        found = frozenset((node.id,))
    for child in ast.iter_child_nodes(node):
        below = _index_loads(child, loads)
        if below:
            found = found | below if found else below
    loads[id(node)] = found
    return found


def _dead_stores(func: ast.FunctionDef | ast.AsyncFunctionDef, loads: dict[int, frozenset[str]]) -> list[str]:
    """Variables the function assigns (not its loop variables) and never reads, in order of first
    assignment; ``_`` and names declared global or nonlocal aside."""
    read = loads[id(func)]
    declared: set[str] = set()
    loop_targets: set[int] = set()
    stored: dict[str, None] = {}
    names: list[ast.Name] = []
    for node in ast.walk(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            loop_targets.update(id(n) for n in ast.walk(node.target))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node)
    for node in names:
        if id(node) not in loop_targets and node.id != "_" and node.id not in declared:
            stored.setdefault(node.id)
    return [name for name in stored if name not in read]


def _unread_loops(nodes: list[ast.AST], loads: dict[int, frozenset[str]]) -> Iterator[int]:
    for node in nodes:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
            if not any(targets & loads[id(b)] for b in node.body):
                yield node.lineno


# --- trivial operations --------------------------------------------------------------------------


class _TrivialFinder(ast.NodeVisitor):
    """Collects the trivial operations of a tree; a constant operation's own operands are not
    looked at again (``len([7, -1]) + 1`` is one constant operation)."""

    def __init__(
        self, source: str, bound: set[str], functions: set[str], loads: dict[int, frozenset[str]]
    ) -> None:
        self.bound, self.functions, self.loads = bound, functions, loads
        self.lines = [line.encode() for line in source.splitlines(keepends=True)]  # ast offsets: bytes
        self.found: list[TrivialOp] = []
        self.exempt: set[int] = set()  # for iterables, raised exceptions

    def visit_For(self, node: ast.For) -> None:
        self.exempt.add(id(node.iter))
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        if node.exc is not None:
            self.exempt.add(id(node.exc))  # building the exception, not computing a value
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            # judged as the operation it performs: ``x += 0`` is ``x + 0``
            target = ast.Name(node.target.id, ast.Load())
            operation = ast.copy_location(ast.BinOp(target, node.op, node.value), node)
            self._judge(node, [target, node.value], node.op, operation)
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.expr) and id(node) not in self.exempt:
            operands = self._operands(node)
            if operands is not None and self._judge(node, operands, getattr(node, "op", None)) == CONSTANT:
                return
        super().generic_visit(node)

    def _operands(self, node: ast.expr) -> list[ast.expr] | None:
        """The operands of an operation, None when ``node`` is no operation."""
        if isinstance(node, ast.BinOp):
            return [node.left, node.right]
        if isinstance(node, ast.UnaryOp):
            signed_number = isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(
                node.operand, ast.Constant
            )
            return None if signed_number else [node.operand]
        if isinstance(node, ast.BoolOp):
            return list(node.values)
        if isinstance(node, ast.Compare):
            return [node.left, *node.comparators]
        if isinstance(node, ast.Subscript):
            index = node.slice
            parts = (
                [p for p in (index.lower, index.upper, index.step) if p]
                if isinstance(index, ast.Slice)
                else [index]
            )
            return [node.value, *parts]
        if isinstance(node, ast.Call):
            args = [a.value if isinstance(a, ast.Starred) else a for a in node.args]
            args += [k.value for k in node.keywords]
            func = node.func
            if isinstance(func, ast.Name) and func.id in self.functions:
                return None  # the program's own function: a call, not an operation
            if isinstance(func, ast.Attribute) and not self._is_namespace(func.value):
                args.insert(0, func.value)
            return args or None
        return None

    def _is_namespace(self, node: ast.expr) -> bool:
        """A receiver that is a builtin type or module name (``str.format``), not a value."""
        return isinstance(node, ast.Name) and node.id not in self.bound

    def _reads(self, node: ast.AST) -> bool:
        names = self.loads.get(id(node))
        if names is None:  # a node made here (an augmented assignment's target)
            names = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
        return not names.isdisjoint(self.bound)

    def _judge(
        self, node: ast.AST, operands: list[ast.expr], op: Any, operation: ast.expr | None = None
    ) -> str | None:
        kind = self._kind(operation or node, operands, op)
        if kind is not None:
            text = self._segment(node) or ast.unparse(node)
            self.found.append(TrivialOp(kind, getattr(node, "lineno", 0), text))
        return kind

    def _with_subject(self, node: ast.expr, subject: ast.expr) -> str:
        """The operation's text with its variable operand replaced by the name ``x`` (spliced in
        the source text when both lie on one line, else unparsed)."""
        line = node.lineno
        if node.end_lineno == line and getattr(subject, "lineno", None) == line == subject.end_lineno:
            text = self.lines[line - 1]
            start, end = subject.col_offset, subject.end_col_offset or 0
            return (text[node.col_offset : start] + b"(x)" + text[end : node.end_col_offset]).decode()
        return ast.unparse(_clone(node, subject))

    def _segment(self, node: ast.AST) -> str | None:
        """The source text of ``node`` (``ast.get_source_segment``, with the lines split once)."""
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        start, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if first is None or last is None or start is None or end is None:
            return None
        if first == last:
            return self.lines[first - 1][start:end].decode()
        parts = [self.lines[first - 1][start:], *self.lines[first : last - 1], self.lines[last - 1][:end]]
        return b"".join(parts).decode()

    def _kind(self, node: ast.AST, operands: list[ast.expr], op: Any) -> str | None:
        reading = [o for o in operands if self._reads(o)]
        if not reading:
            return CONSTANT
        if len(operands) >= 2 and not isinstance(op, _GROWING):
            same = {_copied_variable(o) for o in operands}
            if len(same) == 1 and None not in same:
                return SELF
        if isinstance(node, ast.Subscript) and _full_slice(node.slice) and _is_copy(node.value):
            return IDENTITY
        if isinstance(node, ast.BoolOp) and any(_bool_constant(o) for o in operands):
            return IDENTITY
        if len(reading) == 1 and len(operands) >= 2 and isinstance(node, ast.expr):
            subject = reading[0]
            if all(_constant(o) for o in operands if o is not subject):
                return IDENTITY if neutral_verdict(self._with_subject(node, subject)) else None
        return None


def _copied_variable(node: ast.expr) -> str | None:
    """The variable ``node`` is or copies (``x``, ``x.copy()``, ``x[:]``, ``list(x)``), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and _full_slice(node.slice):
        return _copied_variable(node.value)
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "copy" and not node.args:
            return _copied_variable(func.value)
        if isinstance(func, ast.Name) and func.id in _COPIES and len(node.args) == 1:
            return _copied_variable(node.args[0])
        if isinstance(func, ast.Attribute) and func.attr in ("copy", "deepcopy") and len(node.args) == 1:
            return _copied_variable(node.args[0])  # copy.copy(x)
    return None


def _full_slice(index: ast.expr) -> bool:
    if not isinstance(index, ast.Slice):
        return False
    lower = index.lower is None or _value_is(index.lower, 0)
    step = index.step is None or _value_is(index.step, 1)
    return lower and index.upper is None and step


def _is_copy(node: ast.expr) -> bool:
    if isinstance(node, ast.Subscript):
        return _full_slice(node.slice)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "copy"


def _value_is(node: ast.expr, value: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


def _bool_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool))


def _constant(node: ast.expr) -> bool:
    try:
        literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _clone(node: ast.AST, subject: ast.expr) -> ast.AST:
    """A copy of ``node`` whose ``subject`` subtree is the name ``x`` (the original is untouched)."""
    if node is subject:
        return ast.Name("x", ast.Load())
    fields: dict[str, Any] = {}
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            fields[name] = [_clone(v, subject) if isinstance(v, ast.AST) else v for v in value]
        elif isinstance(value, ast.AST):
            fields[name] = _clone(value, subject)
        else:
            fields[name] = value
    return type(node)(**fields)


# --- the neutral-argument check ------------------------------------------------------------------

_BASE_SAMPLES: dict[str, list[Any]] = {
    "int": [3, -7, 12, 1, 0, 1234, -98765],
    "float": [2.5, -0.75, 3.14159, 12345.678, 0.0],
    "str": ["abc", "Hello World", "a, b-c", "  padded  ", "x", "MiXeD 42", "tab\there\nline"],
    "bytes": [b"abc", b"a b", b"xyz"],
    "list": [[3, 1, 2], ["b", "a"], [1, 1], [[1], 2]],
    "tuple": [(3, 1, 2), ("b", "a"), (1, 1)],
    "set": [{3, 1, 2}, {"a", "b"}],
    "dict": [{"a": 1, "b": 2}, {1: "x", 2: "y"}],
}


@lru_cache(maxsize=4096)
def neutral_verdict(expression: str) -> bool:
    """Whether ``expression`` (an operation on the name ``x`` and constants) leaves ``x`` as it was
    or gives one constant, on every sample value of every type it accepts (at least one type, two
    samples each). Deterministic: results are compared with ``strict_equal``."""
    tree = ast.parse(expression, mode="eval")
    constants = [literal_eval(n) for n in ast.walk(tree.body) if isinstance(n, ast.expr) and _constant(n)]
    if any(_too_large(c) for c in constants):
        return False
    code = compile(tree, "<neutral>", "eval")
    accepted = False
    for samples in _samples(constants).values():
        first: tuple[str, Any] | None = None
        seen = 0
        for sample in samples:
            outcome = _outcome(code, sample)
            if outcome is None:
                continue
            seen += 1
            if first is None:
                first = outcome
            elif outcome[0] != first[0] or outcome[0] == "changed" or not strict_equal(outcome[1], first[1]):
                return False  # the operation does something on this type
        accepted = accepted or seen >= 2
    return accepted


def _too_large(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) > _MAX_CONSTANT_INT
    if isinstance(value, float):
        return abs(value) > _MAX_CONSTANT_INT
    if isinstance(value, (str, bytes, list, tuple, set, frozenset, dict)):
        return len(value) > _MAX_CONSTANT_LEN
    return False


def _samples(constants: list[Any]) -> dict[str, list[Any]]:
    """Sample values per type, with the operation's constants mixed in (as values, inside strings
    and containers, and as neighbours of numbers)."""
    samples = {name: list(values) for name, values in _BASE_SAMPLES.items()}
    for c in constants:
        if isinstance(c, bool):
            samples["bool"] = [True, False]  # only then: a bool in arithmetic becomes an int
            continue
        if c is None:
            samples["none"] = [None, 0, ""]  # ``x is None`` must meet a None
            continue
        if isinstance(c, (int, float)):
            samples[type(c).__name__] += [c, c - 1, c + 1, -c]
            samples["list"] += [[c, 1], [1, c]]
            samples["set"].append({c, 1})
            samples["dict"].append({c: 1})
        elif isinstance(c, (str, bytes)):
            pad: Any = "ab" if isinstance(c, str) else b"ab"
            other: Any = "xyz" if isinstance(c, str) else b"xyz"
            text: Any = c
            samples[type(c).__name__] += [text, pad + text + pad, text + pad, other + text, text + text]
            samples["list"] += [[c, pad], [other, c, pad]]
            samples["set"].append({c, pad})
            samples["dict"].append({c: 1, pad: 2})
        elif isinstance(c, (list, tuple)):
            longer: Any = c + type(c)([9])  # type: ignore[operator]  # a list + a list, a tuple + a tuple
            samples[type(c).__name__] += [c, longer, c[::-1]]
        elif isinstance(c, (set, frozenset, dict)):
            samples["set" if isinstance(c, (set, frozenset)) else "dict"] += [c, copy.copy(c)]
    return samples


def _outcome(code: Any, sample: Any) -> tuple[str, Any] | None:
    """``("same", None)`` when the operation left the sample as it was (returned it, or returned
    None and did not change it), ``("value", v)`` for another literal result, ``("changed", None)``
    when it changed the sample; None when it raised or gave a non-literal."""
    # The samples are shared: a mutating method gets a copy.
    value = copy.deepcopy(sample) if isinstance(sample, (list, set, dict)) else sample
    try:
        result = eval(code, _SPACE, {"x": value})
    except Exception:
        return None
    if not strict_equal(value, sample):
        return ("changed", None)
    if result is None or strict_equal(result, sample):
        return ("same", None)
    if not is_literal(result, max_repr=10_000):
        return None
    return ("value", result)
