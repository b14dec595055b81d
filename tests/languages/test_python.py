"""The Python language: rendering the program tree, filling templates, reading expressions, and the
members the later stages are routed through."""

from __future__ import annotations

import ast

import pytest

from factory.errors import UserError
from factory.languages import nodes as n
from factory.languages.python import PYTHON


def test_render_writes_every_node_kind() -> None:
    helper = n.Function("g", ["arg"], [n.Assign("k", n.Code("arg + 1")), n.Return(n.Name("k"))])
    body: list[n.Stmt] = [
        n.Assign("v", n.Call("g", (n.Name("xs"),))),
        n.Assign("c", n.Int(0)),
        n.While(
            n.LessThan(n.Name("c"), n.Int(3)),
            [n.ExprStatement(n.Code("xs.append(c)")), n.Increment("c")],
        ),
        n.ForEach("x", n.Name("xs"), [n.TemplateStatement("v += x")]),
        n.CountedLoop(
            "i",
            2,
            [n.If(n.And((n.Code("len(xs) > 0"), n.Code("i in xs"))), [n.Assign("v", n.Code("xs.pop()"))])],
        ),
        n.If(
            n.Code("v > 1"),
            [n.Assign("v", n.Int(1))],
            elifs=[(n.Code("v < 0"), [n.Assign("v", n.Int(2))])],
            orelse=[n.Assign("v", n.Int(3))],
        ),
        n.Return(n.Pair(n.Name("v"), n.Name("c"))),
    ]
    source = PYTHON.render(n.Program(("math", "string"), [helper, n.Function("f", ["xs"], body)]))
    assert source == (
        "import math\n"
        "import string\n"
        "def g(arg):\n"
        "    k = arg + 1\n"
        "    return k\n"
        "def f(xs):\n"
        "    v = g(xs)\n"
        "    c = 0\n"
        "    while c < 3:\n"
        "        xs.append(c)\n"
        "        c += 1\n"
        "    for x in xs:\n"
        "        v += x\n"
        "    for i in range(2):\n"
        "        if len(xs) > 0 and i in xs:\n"
        "            v = xs.pop()\n"
        "    if v > 1:\n"
        "        v = 1\n"
        "    elif v < 0:\n"
        "        v = 2\n"
        "    else:\n"
        "        v = 3\n"
        "    return (v, c)\n"
    )


def test_a_conjunction_parenthesises_what_binds_looser_than_and() -> None:
    test = n.And((n.Code("a or b"), n.Code("c and d"), n.Code("x if y else z"), n.Code("not e")))
    program = n.Program((), [n.Function("f", [], [n.If(test, [n.Return(n.Int(0))])])])
    assert "if (a or b) and c and d and (x if y else z) and not e:" in PYTHON.render(program)


@pytest.mark.parametrize(
    ("template", "values", "filled"),
    [
        ("{recv} + {other}", {"recv": "a - b", "other": "c"}, "(a - b) + c"),
        ("{recv} * {other}", {"recv": "-2", "other": "x"}, "(-2) * x"),
        ("len({recv})", {"recv": "a + b"}, "len(a + b)"),
        ("{recv}[{i}:]", {"recv": "xs", "i": "n + 1"}, "xs[n + 1:]"),
        ("{recv}.bit_length()", {"recv": "7"}, "(7).bit_length()"),
        ("{recv}.upper()", {"recv": "s.lower()"}, "s.lower().upper()"),
        ("{recv}", {"recv": "a + b"}, "a + b"),
    ],
)
def test_fill_parenthesises_where_precedence_needs_it(template: str, values: dict, filled: str) -> None:
    assert PYTHON.fill(template, values) == filled


def test_reading_expressions() -> None:
    assert PYTHON.is_signed_number("-7") and PYTHON.is_signed_number("+2.5")
    assert not PYTHON.is_signed_number("-x") and not PYTHON.is_signed_number("7")
    assert PYTHON.constant_condition("x != x") and PYTHON.constant_condition("'a'.isdigit()")
    assert PYTHON.constant_condition("a and b")
    assert not PYTHON.constant_condition("x < 3")


def test_template_checks() -> None:
    assert PYTHON.template_error("_recv.pop(_i)", statement=False) is None
    assert PYTHON.template_error("_recv += _other", statement=True) is None
    assert PYTHON.template_error("_recv += _other", statement=False) is not None
    assert PYTHON.template_error("_recv +", statement=False) is not None


def test_the_value_model() -> None:
    assert PYTHON.literal_value("[1, 'a']") == [1, "a"]
    with pytest.raises(ValueError):
        PYTHON.literal_value("f(x)")
    assert PYTHON.literal({"b", "a"}) == "{'a', 'b'}"  # canonical: sorted, whatever the hash seed
    assert PYTHON.literal(2.0) == "2.0" and PYTHON.literal(-3) == "-3"
    assert PYTHON.parse_args("[1, 2], 'ab'") == ([1, 2], "ab")
    with pytest.raises(UserError):
        PYTHON.parse_args("x")
    assert PYTHON.strict_equal(1, 1) and not PYTHON.strict_equal(True, 1)


def test_the_tier_syntax_recognises_operations_by_shape() -> None:
    syntax = PYTHON.tier_syntax
    assert syntax.template_signatures("{recv}.pop({index})", False)[0] == ("method", "pop")
    assert syntax.template_signatures("list(enumerate({recv}))", False)[0] == ("call", "enumerate")
    assert syntax.template_signatures("{recv}[{i}:]", False)[0] == ("slice", True, False, False)
    loop = PYTHON.render(
        n.Program((), [n.Function("f", [], [n.CountedLoop("i", 2, [n.Return(n.Name("i"))])])])
    )
    assert set(syntax.signatures(syntax.parse(loop), frozenset(), frozenset())) == syntax.counted_loop_shapes


def test_the_facets_for_later_stages_resolve() -> None:
    assert PYTHON.facet("runner").KINDS == {
        "run": "factory.sandbox.trusted.worker:run_job",
        "lines": "factory.sandbox.trusted.worker:lines_job",
    }
    assert set(PYTHON.facet("tracer").KINDS) == {"trace", "trace_row", "trace_digest"}
    assert PYTHON.facet("tracer").KINDS["trace_row"] == "factory.trace.jobs:trace_row_job"
    analysis = PYTHON.facet("analysis")
    source = "def f(x):\n    if x:\n        return x + 1\n    return 0\n"
    assert set(analysis.statement_info(source)) == {2, 3, 4}
    assert analysis.program_features(source)["n_branches"] == 1
    assert not analysis.has_multiline_statement(source)
    normalize = PYTHON.facet("normalize")
    assert callable(normalize.program_key) and callable(normalize.token_stream)
    # A missing facet is one error line for the command line (UserError), not an ImportError.
    with pytest.raises(UserError, match="Python has no 'no_such_facet' facet"):
        PYTHON.facet("no_such_facet")


def test_an_answer_literal_reads_the_same_from_its_node_and_from_its_text() -> None:
    from factory.languages.base import Language

    line = "assert f(1) == {'a': [1, (2, -3.5)], 'b': {1, 2}, 'c': b'x'}"
    node = ast.parse(line).body[0].test.comparators[0]  # type: ignore[attr-defined]
    from_node = PYTHON.answer_literal_value(node, line)
    from_text = Language.answer_literal_value(PYTHON, node, line)  # the default: the text
    assert from_node == from_text == {"a": [1, (2, -3.5)], "b": {1, 2}, "c": b"x"}
    bad = ast.parse("assert f(1) == g(2)").body[0].test.comparators[0]  # type: ignore[attr-defined]
    for read in (PYTHON.answer_literal_value, lambda n, t: Language.answer_literal_value(PYTHON, n, t)):
        with pytest.raises(ValueError):
            read(bad, "assert f(1) == g(2)")


@pytest.mark.parametrize(
    ("a", "b"),
    [("{1: 'a', 2: 'b'}", "{2: 'b', 1: 'a'}"), ("[0.0]", "[-0.0]"), ("{'x', 'y'}", "{'y', 'x'}")],
)
def test_distinct_literals_of_equal_values_are_told_to_be_parsed(a: str, b: str) -> None:
    assert PYTHON.strict_equal(PYTHON.parse_args(a)[0], PYTHON.parse_args(b)[0])
    assert PYTHON.distinct_literals_may_be_equal(a, b)


def test_distinct_literals_without_sets_dicts_or_zeros_are_unequal_values() -> None:
    texts = ["1", "True", "1.5", "'1'", "[1, 2]", "[2, 1]", "(1,)", "[1]", "[1.5]", "None", "b'a'"]
    for a in texts:
        for b in texts:
            if a != b and not PYTHON.distinct_literals_may_be_equal(a, b):
                assert not PYTHON.strict_equal(PYTHON.parse_args(a)[0], PYTHON.parse_args(b)[0]), (a, b)
    assert not PYTHON.distinct_literals_may_be_equal("[1, 2]", "[2, 1]")
