"""Which statement each physical line of a program belongs to (the tracer folds a statement's
continuation lines into one step: docs/design.md §4, ``semantics.md``)."""

from __future__ import annotations

import ast
import re
from typing import Any

from factory.trace.source import BLOCK_FIELDS, Statement, first_line, parse_program


def statement_starts(source: str) -> dict[int, int]:
    """Map each line that belongs to a statement to the first line of its innermost statement.

    Compound statements own only their header lines (``if``/``while``/``for``/``with``/``def``
    headers, ``try:``, ``except ...:``, ``case ...:``, decorators); their bodies' lines belong to
    the body statements. Lines outside any statement (blank, comments, ``else:``) are absent.
    Raises SyntaxError when the source does not parse.
    """
    return starts_of(parse_program(source))


def starts_of(tree: ast.Module) -> dict[int, int]:
    """``statement_starts`` of a parsed program."""
    starts: dict[int, int] = {}
    for stmt in tree.body:
        _map_statement(stmt, starts)
    return starts


# String literals (triple-quoted first) and comments, as the tokenizer reads them.
_STRINGS_AND_COMMENTS = re.compile(
    r"'''(?:[^\\]|\\.)*?'''|\"\"\"(?:[^\\]|\\.)*?\"\"\"|'(?:[^'\\\n]|\\.)*'"
    r'|"(?:[^"\\\n]|\\.)*"|#[^\n]*',
    re.S,
)


def one_line_statements(source: str) -> bool:
    """True when no statement of ``source`` can span two lines: no string literal holds a line
    break, no line ends inside brackets or with a backslash, and no decorator (whose statement
    starts on the decorator's line). A lexical check, conservative: False when unsure."""
    for match in _STRINGS_AND_COMMENTS.finditer(source):
        if "\n" in match.group():
            return False
    depth = 0
    for line in _STRINGS_AND_COMMENTS.sub("0", source).split("\n"):
        if line.lstrip().startswith("@") or line.rstrip().endswith("\\"):
            return False
        depth += line.count("(") + line.count("[") + line.count("{")
        depth -= line.count(")") + line.count("]") + line.count("}")
        if depth:
            return False
    return True


def _map_statement(node: Statement, starts: dict[int, int]) -> None:
    """Fill ``starts`` for one statement (or except handler, or match case) and its children."""
    first = first_line(node)
    if isinstance(node, ast.match_case):
        # Any: nodes that have positions (see hasattr below), a thing ast.AST does not declare.
        header_nodes: list[Any] = [node.pattern] + ([node.guard] if node.guard else [])
    else:
        header_nodes = [
            child
            for field, value in ast.iter_fields(node)
            if field not in BLOCK_FIELDS
            for child in (value if isinstance(value, list) else [value])
            if isinstance(child, ast.AST) and hasattr(child, "end_lineno")
        ]
    blocks = [getattr(node, field) for field in BLOCK_FIELDS if getattr(node, field, None)]
    if not blocks:
        # A simple statement (every compound one, except handlers and cases too, has a block).
        assert isinstance(node, ast.stmt) and node.end_lineno is not None
        for line in range(first, node.end_lineno + 1):
            starts[line] = first
        return
    for block in blocks:
        for child in block:
            _map_statement(child, starts)
    # The header: up to the line before the first child, and at least to the end of the header's
    # expressions. Children are mapped first so that a header line shared with a one-line body
    # (`if (a and\n b): x = 1`) goes to the header, whose condition is what runs there first.
    body_first = min(first_line(block[0]) for block in blocks)
    header_end = max([first, body_first - 1] + [n.end_lineno for n in header_nodes])
    for line in range(first, header_end + 1):
        starts[line] = first
