"""What a program's source says, once per program: its statement lines and its features (Python's
statement ``Analysis``, ``factory.languages.base``: the tasks stage reads it through the language).

``statement_lines(source)``: the lines that start a statement inside a function body (the ones a
trace can reach), each with what the statement is, binds, reads and calls; the question builder
tags questions with them. ``program_features(source)``: static features that the items carry
(lines, loops, branches, helpers, nesting depth). Both come from one parse and one walk of the
tree per program (``_analysis``), cached by source text; the tree itself is not kept.
"""

from __future__ import annotations

import ast
import functools
from collections import deque
from dataclasses import dataclass
from typing import Any, NamedTuple

from factory.languages.base import StatementLine
from factory.languages.text import line_count
from factory.literals import literal_eval
from factory.trace.source import BLOCK_FIELDS, CACHE_SIZE, first_line, parse_program, walk

_KINDS = {
    ast.If: "if",
    ast.While: "while",
    ast.For: "for",
    ast.AsyncFor: "for",
    ast.Try: "try",
    ast.With: "with",
    ast.AsyncWith: "with",
    ast.Match: "match",
    ast.Return: "return",
    ast.Break: "break",
    ast.Continue: "continue",
    ast.Raise: "raise",
    ast.FunctionDef: "def",
    ast.AsyncFunctionDef: "def",
    ast.ClassDef: "class",
}
# Statements that compile to no instruction, hence never have a line event.
_SILENT = (ast.Global, ast.Nonlocal)

_LOOP_TYPES = frozenset({ast.For, ast.AsyncFor, ast.While})
_BRANCH_TYPES = frozenset({ast.If, ast.match_case, ast.ExceptHandler})  # and IfExp, in expressions
_FUNCTION_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # definitions: their own frames
_SCOPE_TYPES = frozenset(_SCOPES)
_COMPOUND: tuple[type[ast.stmt], ...] = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    ast.With,
    ast.AsyncWith,
    ast.Match,
)
if hasattr(ast, "TryStar"):
    _COMPOUND = (*_COMPOUND, ast.TryStar)


# StatementLine's fields after ``line`` up to ``constant``: what ``_collect`` finds of a statement.
_Pending = tuple[str, str, bool, bool, tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]


def statement_lines(source: str) -> dict[int, StatementLine]:
    """The lines that start a statement inside a function body, which a trace can reach.

    Module-level statements (they run untraced, when the program is loaded), docstrings and
    ``global``/``nonlocal`` (no instruction, hence no line event) are left out. ``except`` and
    ``case`` headers count as statements: Python reports line events on them.
    """
    return dict(statement_info(source))


def statement_info(source: str) -> dict[int, StatementLine]:
    """``statement_lines`` without the copy: the cached dict, which callers must not modify."""
    return _analysis(source).lines


def program_features(source: str) -> dict[str, Any]:
    """Static features of a program: ``n_lines`` (up to the last non-blank line), ``n_loops``
    (for/while), ``n_branches`` (if/elif, conditional expressions, match cases, except
    handlers), ``has_helper`` (more than one function), ``max_depth`` (deepest nesting of
    compound statements in a function body; a flat body is 0, an ``elif`` sits at its ``if``'s
    depth). A fresh dict each call."""
    return dict(_analysis(source).features)


def has_multiline_statement(source: str) -> bool:
    """Whether a statement (other than a definition) has a header spanning several lines: the
    prompt then says how such statements are numbered. False when the source does not parse."""
    try:
        return _analysis(source).multiline
    except (SyntaxError, ValueError):  # ValueError: null bytes
        return False


@dataclass(frozen=True)
class _Analysis:
    lines: dict[int, StatementLine]
    features: tuple[tuple[str, Any], ...]
    multiline: bool


@functools.lru_cache(maxsize=CACHE_SIZE)
def _analysis(source: str) -> _Analysis:
    """One walk of the program's tree: statement by statement (breadth first, as ``ast.walk``
    goes), each statement's own expressions walked once; both results are built from it."""
    tree = parse_program(source)
    headers: dict[int, _Names] = {}  # id of a statement -> the names of its own expressions
    loops = branches = 0
    multiline = False
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    todo: deque[ast.AST] = deque(tree.body)
    while todo:  # statements, except handlers and match cases: expressions hold none of them
        node = todo.popleft()
        kind = type(node)  # parsed trees hold no subclasses of the node types
        if kind in _LOOP_TYPES:
            loops += 1
        elif kind in _BRANCH_TYPES:
            branches += 1
        elif kind in _FUNCTION_TYPES:
            assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))  # for mypy: kind says so
            functions.append(node)
        header = _header_nodes(node)
        names = headers[id(node)] = _expr_names(header)
        branches += names.conditionals
        if not multiline and isinstance(node, ast.stmt) and kind not in _SCOPE_TYPES:
            line = node.lineno
            multiline = any(getattr(child, "end_lineno", line) > line for child in header)
        for name in node._fields:
            if name in BLOCK_FIELDS:
                todo.extend(getattr(node, name))

    found: dict[int, StatementLine] = {}
    for function in functions:
        pending: dict[int, _Pending] = {}  # line -> the fields after ``line``, up to ``constant``
        local_names = _parameter_names(function)
        _collect(function.body, function.name, False, found, pending, local_names, headers, first=True)
        frozen = frozenset(local_names)
        for line, fields in pending.items():
            found[line] = StatementLine(line, *fields, frozen)

    features = {
        "n_lines": line_count(source),
        "n_loops": loops,
        "n_branches": branches,
        "has_helper": len(functions) > 1,
        "max_depth": max((_depth(f.body, 0) for f in functions), default=0),
    }
    return _Analysis(found, tuple(features.items()), multiline)


def _collect(
    block: list[Any],
    func: str,
    conditional: bool,
    found: dict[int, StatementLine],
    pending: dict[int, _Pending],
    local_names: list[str],
    headers: dict[int, _Names],
    *,
    first: bool = False,
) -> None:
    """Describe the statements of ``block`` (and of its nested blocks) into ``pending``, unless
    their line is described already; add the names they bind to ``local_names``."""
    for index, node in enumerate(block):
        if isinstance(node, _SILENT):
            continue
        if (
            first
            and index == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            continue  # a docstring
        line = first_line(node)
        if isinstance(node, ast.ExceptHandler):
            kind = "except"
        elif isinstance(node, ast.match_case):
            kind = "case"
        else:
            kind = _KINDS.get(type(node), "simple")
        scope = isinstance(node, _SCOPES)
        new = line not in found and line not in pending
        stored, read, called, walrus, _ = headers[id(node)]
        if not scope:
            # The function's locals are the names stored by its own statements (nested
            # functions and classes keep theirs).
            local_names += stored
        if new:
            if type(node) is ast.AugAssign and type(node.target) is ast.Name:
                read = [node.target.id, *read]  # ``n += 1`` reads ``n`` (its target is a Store)
            pending[line] = (
                kind,
                func,
                conditional,
                first,
                _assigned(node, walrus),
                tuple(dict.fromkeys(read)),
                tuple(dict.fromkeys(called)),
                _constant_assignment(node),
            )
        first = False
        if scope:
            continue  # their bodies run in other frames; FunctionDefs are walked on their own
        for name in BLOCK_FIELDS:
            inner = getattr(node, name, None)
            if inner:
                # The body of `with` is no branch; everything else may be skipped or repeated.
                inner_conditional = conditional or not isinstance(node, (ast.With, ast.AsyncWith))
                _collect(inner, func, inner_conditional, found, pending, local_names, headers)


def _header_nodes(node: Any) -> list[ast.AST]:
    """The parts of a statement that run on its own line event (not its body)."""
    if isinstance(node, ast.match_case):
        return [node.pattern] + ([node.guard] if node.guard else [])
    out: list[ast.AST] = []
    for name in node._fields:
        if name in BLOCK_FIELDS:
            continue
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out += [child for child in value if isinstance(child, ast.AST)]
    return out


class _Names(NamedTuple):
    """What a statement's own expressions hold, in the order of a depth-first walk."""

    stored: list[str]  # names stored
    read: list[str]  # names loaded
    called: list[str]  # functions called by simple name
    walrus: list[str]  # walrus targets
    conditionals: int  # conditional expressions (``a if c else b``)


# Fields that hold no node, or only leaves without interest (ctx, operators, import aliases).
_NO_CHILD_FIELDS = frozenset(
    {"ctx", "op", "ops", "names", "id", "attr", "arg", "name", "asname", "module", "level", "kind"}
    | {"conversion", "is_async", "simple", "type_comment", "tag", "kwd_attrs", "rest"}
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Name: ()}


def _expr_names(nodes: list[ast.AST]) -> _Names:
    """The names in the expressions ``nodes`` (a statement's header), one depth-first walk that
    does not descend into nested scopes (lambdas are walked)."""
    stored: list[str] = []
    read: list[str] = []
    called: list[str] = []
    walrus: list[str] = []
    conditionals = 0
    # Any: the walk dispatches on ``kind = type(node)`` (one call per node), which mypy does not
    # narrow ``node`` through.
    stack: list[Any] = list(nodes)
    pop, push, extend = stack.pop, stack.append, stack.extend
    child_fields = _CHILD_FIELDS
    while stack:
        node = pop()
        kind = type(node)
        if kind is ast.Name:
            ctx = type(node.ctx)
            if ctx is ast.Store:
                stored.append(node.id)
            elif ctx is ast.Load:
                read.append(node.id)
            continue
        if kind is ast.Call:
            if type(node.func) is ast.Name:
                called.append(node.func.id)
        elif kind is ast.NamedExpr:
            walrus.append(node.target.id)
        elif kind is ast.IfExp:
            conditionals += 1
        elif kind in _SCOPE_TYPES:
            continue
        fields = child_fields.get(kind)
        if fields is None:
            fields = child_fields[kind] = tuple(f for f in node._fields if f not in _NO_CHILD_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend([item for item in value if isinstance(item, ast.AST)])
            elif isinstance(value, ast.AST):
                push(value)
    return _Names(stored, read, called, walrus, conditionals)


def _target_names(target: ast.AST) -> list[str]:
    if type(target) is ast.Name:  # the usual target, walked at once
        return [target.id]
    return [n.id for n in walk(target) if type(n) is ast.Name]


def _assigned(node: Any, walrus: list[str]) -> tuple[str, ...]:
    """Names bound by ``node``; ``walrus``: the walrus targets in its header (``_expr_names``)."""
    names: list[str] = []
    if isinstance(node, ast.Assign):
        for target in node.targets:
            names += _target_names(target)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        names += _target_names(node.target)
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                names += _target_names(item.optional_vars)
    elif isinstance(node, _SCOPES):
        names.append(node.name)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        names.append(node.name)
    if not isinstance(node, (_SCOPES, ast.match_case)):
        names += walrus  # walrus targets anywhere in the statement's own expressions
    return tuple(dict.fromkeys(names))


def _constant_assignment(node: Any) -> bool:
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        kind = type(node.value)
        if kind is ast.Constant:
            return True
        if kind not in _MAYBE_LITERAL:  # literal_eval refuses every other node
            return False
        try:
            literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
        return True
    return False


# The nodes that ast.literal_eval may accept besides a constant (``set()`` is a call).
_MAYBE_LITERAL = frozenset({ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp, ast.BinOp, ast.Call})


def _parameter_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = func.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def _depth(block: list[ast.stmt], depth: int) -> int:
    deepest = depth
    for node in block:
        if isinstance(node, _SCOPES):
            continue  # measured on their own
        if not isinstance(node, _COMPOUND):
            continue
        inner = [getattr(node, "body", [])]  # a match statement has only its cases
        if isinstance(node, ast.If):
            orelse = node.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If):  # elif: same depth
                deepest = max(deepest, _depth(orelse, depth))
            else:
                inner.append(orelse)
        else:
            inner += [getattr(node, "orelse", []), getattr(node, "finalbody", [])]
            inner += [h.body for h in getattr(node, "handlers", [])]
            inner += [c.body for c in getattr(node, "cases", [])]
        for body in inner:
            if body:
                deepest = max(deepest, _depth(body, depth + 1))
    return deepest
