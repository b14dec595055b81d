"""The shared parse: ``walk`` and ``child_nodes`` visit nodes in ``ast.walk`` order, and the
tree is parsed once per source."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from factory.trace import source as src


def test_walk_matches_ast_walk_on_cruxeval(cruxeval_records: list[dict[str, Any]]) -> None:
    for record in cruxeval_records:
        tree = ast.parse(record["code"])
        assert src.walk(tree) == list(ast.walk(tree))
        for node in src.walk(tree)[:50]:
            assert src.child_nodes(node) == list(ast.iter_child_nodes(node))


def test_parsed_once_and_errors_like_ast_parse() -> None:
    text = "def f(x):\n    return (x +\n            1)\n"
    assert src.parse_program(text) is src.parse_program(text)
    with pytest.raises(SyntaxError, match="<program>"):
        src.parse_program("def f(:\n")
