"""JavaScript's ``source_check`` facet: where a program's source does not parse, the first syntax
error tree-sitter finds (the one-program commands check a file with it)."""

from __future__ import annotations

from tree_sitter import Node

from factory.languages.javascript.values import parser

MAX_QUOTED = 20  # characters of unexpected code quoted in the message (longer: not quoted)


def syntax_error(source: str) -> tuple[int, str] | None:
    """(line, message) of the first syntax error of ``source`` (an unexpected token, or one that is
    missing); None when it parses. Node may still refuse what tree-sitter accepts (a name declared
    twice): the runner reports that as ``bad_program``."""
    root = parser().parse(source.encode("utf-8")).root_node
    if not root.has_error:
        return None
    node = _first_error(root)
    if node is None:
        return 1, "does not parse"
    line = node.start_point[0] + 1
    if node.is_missing:
        return line, f"missing {node.type!r}"
    # An ERROR node spans the code tree-sitter skipped to recover, which may be long.
    text = (node.text or b"").decode("utf-8", "replace").strip()
    if not text:
        return line, "unexpected end of input"
    if "\n" in text or len(text) > MAX_QUOTED:
        return line, "unexpected code"
    return line, f"unexpected {text!r}"


def _first_error(node: Node) -> Node | None:
    """The first ERROR or missing node under ``node`` in source order."""
    if node.is_error or node.is_missing:
        return node
    for child in node.children:
        if child.has_error or child.is_missing:
            found = _first_error(child)
            if found is not None:
                return found
    return None
