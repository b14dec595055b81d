"""JavaScript's ``normalize`` facet: the near-duplicate key blind to names, formatting and comments,
not to code or literals."""

from __future__ import annotations

from tree_sitter import Node

from factory import languages
from factory.languages.javascript import normalize

PROGRAM = (
    "function g(x) {\n  return x * 2;\n}\n"
    "function f(xs, n) {\n"
    "  let total = 0;\n"
    "  for (const x of xs) {\n"
    "    if (x > n) {\n"
    "      total += Math.max(g(x), 'ab'.length);\n"
    "    }\n"
    "  }\n"
    "  return total;\n"
    "}\n"
)
RENAMED = (
    "function double(item) { return item * 2 }\n"
    "// the same program: other names, other layout, comments, no semicolons, other quotes\n"
    "function main(items, limit) {\n"
    "  let sum = 0\n"
    '  for (const item of items) { if (item > limit) { sum += Math.max(double(item), "ab".length) } }\n'
    "  return sum /* done */\n"
    "}\n"
)


def _tree(source: str) -> Node:
    tree = normalize.parse(source)
    assert tree is not None
    return tree


def _key(source: str) -> str:
    return normalize.program_key(_tree(source))


def test_programs_that_differ_only_in_names_and_layout_share_the_key() -> None:
    assert languages.language("javascript").facet("normalize") is normalize
    assert _key(PROGRAM) == _key(RENAMED)
    assert normalize.ast_keys(_tree(PROGRAM)) == normalize.ast_keys(_tree(RENAMED))
    assert len(normalize.ast_keys(_tree(PROGRAM))) == 3  # the program, g and f
    assert normalize.token_stream(_tree(PROGRAM)) == normalize.token_stream(_tree(RENAMED))


def test_other_code_or_literals_give_other_keys() -> None:
    others = [
        PROGRAM.replace("x > n", "x >= n"),  # an operator
        PROGRAM.replace("x * 2", "x * 3"),  # a literal
        PROGRAM.replace("'ab'", "'abc'"),  # a string literal
        PROGRAM.replace("Math.max", "Math.min"),  # a property name
        PROGRAM.replace("g(x), 'ab'", "g(n), 'ab'"),  # another variable (the renaming keeps which)
        PROGRAM.replace("let total", "var total"),
    ]
    keys = {_key(source) for source in others}
    assert len(keys) == len(others) and _key(PROGRAM) not in keys
    assert normalize.parse("function f( {\n") is None


def test_globals_are_kept_and_literals_can_be_abstracted() -> None:
    a = "function f(s) {\n  return parseInt(s) + 1;\n}\n"
    b = "function f(s) {\n  return parseFloat(s) + 1;\n}\n"
    assert _key(a) != _key(b)  # a global's name is not renamed
    c = a.replace("+ 1", "+ 2")
    tree_a, tree_c = _tree(a), _tree(c)
    assert normalize.program_key(tree_a, "abstract") == normalize.program_key(tree_c, "abstract")
    assert normalize.token_stream(tree_a) == ["function", "_", "(", "_", ")", "{", "return", "parseInt"] + [
        "(", "_", ")", "+", "1", "}",
    ]  # fmt: skip
