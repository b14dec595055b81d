"""Small helpers over tree-sitter trees, for any language's tier syntax and for the tier check."""

from __future__ import annotations

from collections.abc import Callable, Iterator

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


def walk(node: Node, *, named: bool = False) -> Iterator[Node]:
    """Every node below ``node`` (itself first), in pre-order; only named nodes below it when
    ``named`` (not the keyword and punctuation tokens, whose types are their text: ``function``)."""
    # A cursor rather than each node's ``children``: those build a list of new nodes at every
    # step (measured: the cursor walks the tier check's trees in half the time).
    cursor = node.walk()
    while True:
        current = cursor.node
        assert current is not None  # a cursor always stands on a node
        if current.is_named or not named or current == node:
            yield current
            if cursor.goto_first_child():
                continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():  # (a cursor never leaves the node it started at)
                return


def ends_with_increment(
    body: list[Node],
    counter: Node,
    bound: Node,
    increments: Callable[[Node], bool],
    assigned_names: Callable[[list[Node]], set[str]],
) -> bool:
    """Whether a loop body is bounded the generator's way: its last statement is an expression
    that ``increments`` the counter, no statement before it assigns the counter or a bound that
    is a name (``assigned_names``), and none ``continue``s (which would skip the increment).
    The node kinds named here are the same in tree-sitter's Python and JavaScript grammars."""
    if not body or body[-1].type != "expression_statement" or not increments(body[-1].named_children[0]):
        return False
    assigned = assigned_names(body[:-1])
    if text(counter) in assigned or (bound.type == "identifier" and text(bound) in assigned):
        return False
    return not any(n.type == "continue_statement" for top in body[:-1] for n in walk(top))
