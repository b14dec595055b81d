"""Small helpers over tree-sitter trees, for any language's tier syntax and for the tier check."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node


def text(node: Node) -> str:
    """The source text of ``node``."""
    raw = node.text
    assert raw is not None  # the tree was parsed from the source text, which it keeps
    return raw.decode()


def field(node: Node, name: str) -> Node:
    """``node``'s child in field ``name``, one that the grammar gives every node of its kind."""
    child = node.child_by_field_name(name)
    assert child is not None, (node.type, name)
    return child


def walk(node: Node) -> Iterator[Node]:
    """Every node below ``node`` (itself first), in pre-order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))
