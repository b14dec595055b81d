"""Parsed program sources, cached: one ``ast.parse`` per source per process.

The tracer (statement starts), the question builder (statement lines), the item builder (program
features) and the prompts (multi-line statements) all read the same tree; parsing is the largest
single cost of deriving a case's items, so they share it. ``child_nodes`` and ``walk`` are
``ast.iter_child_nodes`` and ``ast.walk`` with the same order, a few times faster.
"""

from __future__ import annotations

import ast
import functools
from collections import deque

PROGRAM_FILENAME = "<program>"
CACHE_SIZE = 1024  # derived per-program facts
TREE_CACHE_SIZE = 16  # parsed trees: a program's cases come together; trees are big and GC-tracked

_AST = ast.AST


@functools.lru_cache(maxsize=TREE_CACHE_SIZE)
def parse_program(source: str) -> ast.Module:
    """``ast.parse(source)`` under the pseudo-filename ``<program>``, cached by source text.

    The tree is shared: callers must not modify it. Raises SyntaxError (ValueError for null
    bytes) as ``ast.parse`` does.
    """
    return ast.parse(source, PROGRAM_FILENAME)


@functools.lru_cache(maxsize=TREE_CACHE_SIZE)
def program_nodes(source: str) -> tuple[ast.AST, ...]:
    """Every node of the program's tree in ``ast.walk`` order, cached by source text."""
    return tuple(walk(parse_program(source)))


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The direct children of ``node``, in the order of ``ast.iter_child_nodes``."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            out.append(value)
        elif type(value) is list:
            out += [item for item in value if isinstance(item, _AST)]
    return out


def walk(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node`` (itself included), in the order of ``ast.walk``."""
    out: list[ast.AST] = []
    todo = deque([node])
    while todo:
        current = todo.popleft()
        out.append(current)
        todo.extend(child_nodes(current))
    return out
