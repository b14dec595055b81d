"""JavaScript text of the program tree: each node kind, written out by hand, and where each
variable is declared (docs/languages.md §6.4)."""

from __future__ import annotations

from factory.languages import language
from factory.languages import nodes as n

JS = language("javascript")


def code(text: str, reads: str = "", writes: str = "") -> n.Code:
    return n.Code(text, frozenset(reads.split()), frozenset(writes.split()))


def render(body: list[n.Stmt], params: tuple[str, ...] = ("xs",)) -> str:
    return JS.render(n.Program((), [n.Function("f", list(params), body)]))


def test_expressions_statements_and_the_frame() -> None:
    program = n.Program(
        ("math",),  # a grammar's imports write nothing: JavaScript's Math is a global
        [
            n.Function("g", ["arg"], [n.Return(n.Name("arg"))]),
            n.Function(
                "f",
                ["xs", "limit"],
                [
                    n.Assign("first", n.Call("g", (n.Name("xs"),))),
                    n.ExprStatement(code("xs.push(3)", "xs", "xs")),
                    n.TemplateStatement("xs[0] = limit", frozenset({"xs", "limit"}), frozenset({"xs"})),
                    n.Assign("total", n.Int(0)),
                    n.Increment("total", 2),
                    n.Return(n.Pair(n.Name("first"), n.Name("total"))),
                ],
            ),
        ],
    )
    assert JS.render(program) == (
        "function g(arg) {\n"
        "  return arg;\n"
        "}\n"
        "function f(xs, limit) {\n"
        "  const first = g(xs);\n"
        "  xs.push(3);\n"
        "  xs[0] = limit;\n"
        "  let total = 0;\n"
        "  total += 2;\n"
        "  return [first, total];\n"
        "}\n"
    )


def test_if_else_if_else_with_a_conjunction_of_guards() -> None:
    body: list[n.Stmt] = [
        n.If(
            n.And((code("xs.length > 0", "xs"), code("xs[0] || xs[1]", "xs"), code("xs.at(-1) ?? 0", "xs"))),
            [n.ExprStatement(code("xs.pop()", "xs", "xs"))],
            elifs=[
                (n.And((code("xs.includes(2)", "xs"),)), [n.ExprStatement(code("xs.shift()", "xs", "xs"))])
            ],
            orelse=[n.ExprStatement(code("xs.push(1)", "xs", "xs"))],
        ),
        n.Return(n.Name("xs")),
    ]
    assert render(body) == (
        "function f(xs) {\n"
        "  if (xs.length > 0 && (xs[0] || xs[1]) && (xs.at(-1) ?? 0)) {\n"
        "    xs.pop();\n"
        "  } else if (xs.includes(2)) {\n"
        "    xs.shift();\n"
        "  } else {\n"
        "    xs.push(1);\n"
        "  }\n"
        "  return xs;\n"
        "}\n"
    )


def test_loops_declare_their_own_variables() -> None:
    body: list[n.Stmt] = [
        n.Assign("out", code("[]")),
        n.ForEach("item", n.Name("xs"), [n.ExprStatement(code("out.push(item)", "out item", "out"))]),
        n.CountedLoop("step", 3, [n.ExprStatement(code("out.push(step)", "out step", "out"))]),
        n.Assign("count", n.Int(0)),
        n.While(
            n.LessThan(n.Name("count"), n.Int(2)),
            [n.ExprStatement(code("out.pop()", "out", "out")), n.Increment("count")],
        ),
        n.Return(n.Name("out")),
    ]
    assert render(body) == (
        "function f(xs) {\n"
        "  const out = [];\n"
        "  for (const item of xs) {\n"
        "    out.push(item);\n"
        "  }\n"
        "  for (let step = 0; step < 3; step++) {\n"
        "    out.push(step);\n"
        "  }\n"
        "  let count = 0;\n"
        "  while (count < 2) {\n"
        "    out.pop();\n"
        "    count += 1;\n"
        "  }\n"
        "  return out;\n"
        "}\n"
    )


def test_a_variable_lives_in_the_innermost_block_that_names_it() -> None:
    body: list[n.Stmt] = [
        n.ForEach(
            "item",
            n.Name("xs"),
            [
                n.Assign("doubled", code("item * 2", "item")),  # only in the loop body: declared there
                n.If(code("doubled > 3", "doubled"), [n.Assign("seen", code("doubled", "doubled"))]),
                n.Assign("kept", code("doubled + 1", "doubled")),
                n.Assign("kept", code("kept * 2", "kept")),  # assigned again: let, not const
            ],
        ),
        # first assigned inside an if, read after it: declared before the if
        n.If(
            code("xs.length > 2", "xs"),
            [n.Assign("last", code("xs.at(-1)", "xs"))],
            orelse=[n.Assign("last", n.Int(0))],
        ),
        n.Return(n.Name("last")),
    ]
    assert render(body) == (
        "function f(xs) {\n"
        "  for (const item of xs) {\n"
        "    const doubled = item * 2;\n"
        "    if (doubled > 3) {\n"
        "      const seen = doubled;\n"
        "    }\n"
        "    let kept = doubled + 1;\n"
        "    kept = kept * 2;\n"
        "  }\n"
        "  let last;\n"
        "  if (xs.length > 2) {\n"
        "    last = xs.at(-1);\n"
        "  } else {\n"
        "    last = 0;\n"
        "  }\n"
        "  return last;\n"
        "}\n"
    )


def test_a_rebinding_statement_template_makes_a_let_and_a_mutation_keeps_const() -> None:
    body: list[n.Stmt] = [
        n.Assign("text", code('"a"')),
        n.Assign("parts", code("[]")),
        n.TemplateStatement("parts[0] = text", frozenset({"parts", "text"}), frozenset({"parts"})),
        n.TemplateStatement('text += "b"', frozenset({"text"}), frozenset({"text"})),
        n.Return(n.Pair(n.Name("text"), n.Name("parts"))),
    ]
    assert render(body, ()) == (
        "function f() {\n"
        '  let text = "a";\n'
        "  const parts = [];\n"
        "  parts[0] = text;\n"
        '  text += "b";\n'
        "  return [text, parts];\n"
        "}\n"
    )


def test_fill_parenthesises_by_javascript_precedence() -> None:
    assert JS.fill("{recv}.length > {n}", {"recv": "a + b", "n": "c"}) == "(a + b).length > c"
    assert JS.fill("{recv}.toFixed({d})", {"recv": "7", "d": "1"}) == "(7).toFixed(1)"
    assert (
        JS.fill("Math.max({recv}, {other})", {"recv": "a ? b : c", "other": "-1"})
        == "Math.max(a ? b : c, -1)"
    )
    assert JS.fill("`<${{{recv}}}>`", {"recv": "a + b"}) == "`<${a + b}>`"
    assert JS.fill("{recv} === {other}", {"recv": "a", "other": "b || c"}) == "a === (b || c)"
    assert JS.fill("{recv}[{i}] = {v}", {"recv": "xs", "i": "0", "v": "-1"}) == "xs[0] = -1"
    assert JS.fill("{recv} ** {e}", {"recv": "-2", "e": "2"}) == "(-2) ** 2"  # -2 ** 2 is a SyntaxError
    assert JS.fill("[...{recv}]", {"recv": "a ? b : c"}) == "[...(a ? b : c)]"
