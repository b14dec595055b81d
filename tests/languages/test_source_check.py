"""The ``source_check`` facet of each language: the line and message of a program's first syntax
error, None for a program that parses."""

from __future__ import annotations

import pytest

from factory.languages import language


@pytest.mark.parametrize(
    ("name", "source", "expected"),
    [
        ("python", "def f(x):\n    return x\n", None),
        ("python", "def f(x):\n    return x +\n", (2, "invalid syntax")),
        ("python", "x = 1\0", (1, "source code string cannot contain null bytes")),
        ("javascript", "function f(x) {\n  return [x, 'a'];\n}\n", None),
        ("javascript", "function f(x) {\n  return x +;\n}\n", (2, "missing 'identifier'")),
        ("javascript", "function f(x) {\n  return x;\n", (2, "missing '}'")),
        ("javascript", "function f(x) {\n  let y = @;\n}\n", (2, "unexpected '= @'")),
        ("javascript", "function f(x) {\n  return x;\n}\n}\n", (4, "unexpected '}'")),
        # What tree-sitter skipped to recover is long: not quoted.
        ("javascript", "function f(first, second, {\n  return 1;\n}\n", (1, "unexpected code")),
    ],
)
def test_the_first_syntax_error(name: str, source: str, expected: tuple[int, str] | None) -> None:
    assert language(name).facet("source_check").syntax_error(source) == expected
