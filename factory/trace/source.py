"""Parsed program sources, cached: one ``ast.parse`` per program while its cases are handled.

The tracer (statement starts) and the item builder (``factory.tasks.analysis``: statement lines,
features, multi-line statements) read the tree; what they derive from it is cached for many
programs, the trees only for the last few (a program's cases come together; trees are large and
every node is an object the cyclic collector would scan again and again). ``child_nodes`` and
``walk`` are ``ast.iter_child_nodes`` and ``ast.walk`` with the same order, a few times faster.
"""

from __future__ import annotations

import ast
import functools
from collections import deque

from factory.program_code import PROGRAM_FILENAME

CACHE_SIZE = 1024  # derived per-program facts
TREE_CACHE_SIZE = 16  # parsed trees: a program's cases come together; trees are big and GC-tracked

_AST = ast.AST
#: The fields of a statement (or except handler, or match case) that hold statements.
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
# What the blocks of BLOCK_FIELDS hold.
Statement = ast.stmt | ast.excepthandler | ast.match_case


@functools.lru_cache(maxsize=TREE_CACHE_SIZE)
def parse_program(source: str) -> ast.Module:
    """``ast.parse(source)`` under the pseudo-filename ``<program>``, cached by source text.

    The tree is shared: callers must not modify it. Raises SyntaxError (ValueError for null
    bytes) as ``ast.parse`` does.
    """
    return ast.parse(source, PROGRAM_FILENAME)


def first_line(node: Statement) -> int:
    """The line a statement starts on: its first decorator's for a decorated definition, its
    pattern's for a match case."""
    if isinstance(node, ast.match_case):
        return node.pattern.lineno
    decorators = getattr(node, "decorator_list", None)
    if not decorators:
        return node.lineno
    return min([node.lineno] + [d.lineno for d in decorators])


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
