"""The JavaScript language object: registered, its grammar checks, value model and expression
helpers, and its tier syntax over tree-sitter-javascript (docs/languages.md §6.4)."""

from __future__ import annotations

import pytest

from factory.contracts import program_id
from factory.errors import UserError
from factory.languages import language
from factory.languages.javascript import JavaScriptLanguage
from factory.languages.javascript.values import JsSet
from factory.languages.tree import walk

JS = language("javascript")
SYNTAX = JS.tier_syntax


def test_registered_under_its_name() -> None:
    assert isinstance(JS, JavaScriptLanguage)
    assert (JS.name, JS.display_name) == ("javascript", "JavaScript")
    assert (JS.core_types.boolean, JS.core_types.integer, JS.core_types.sequence) == (
        "boolean",
        "number",
        "array",
    )


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("_recv.slice(", False),
        ("_recv +", False),
        ("_a, _b", False),  # a sequence, not one expression
        ("_recv[0] = ;", True),
        ("_recv.filter((x) => x >", False),
        ("_recv ? _a", False),
    ],
)
def test_template_error_catches_a_broken_template(text: str, statement: bool) -> None:
    assert JS.template_error(text, statement=statement) is not None


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("_recv.filter((x) => x > _n)", False),
        ("`${_recv}: ${_other}`", False),
        ("{ ..._recv, ..._other }", False),
        ("_recv[_key] = _value", True),
        ("delete _recv[_key]", True),
        ("_recv.length = 0", True),
    ],
)
def test_template_error_accepts_javascript(text: str, statement: bool) -> None:
    assert JS.template_error(text, statement=statement) is None


def test_the_value_model_is_values_py() -> None:
    assert JS.literal_value("new Set([1, 2])") == JsSet((1, 2))
    assert JS.literal([1, "a", None]) == '[1, "a", null]'
    assert JS.parse_args('[1, 2], "ab"') == ([1, 2], "ab")
    with pytest.raises(UserError):
        JS.parse_args("foo(1)")
    assert JS.strict_equal(1, 1.0) and not JS.strict_equal(1, True)


def test_expression_questions() -> None:
    assert JS.is_signed_number("-7") and JS.is_signed_number("+2.5")
    assert not JS.is_signed_number("-x") and not JS.is_signed_number("7")
    assert JS.constant_condition("xs === xs")
    assert JS.constant_condition("a.length > 0 && b.length > 0")
    assert JS.constant_condition("[1, 2].some((x) => x > 1)")  # reads no variable: x is the arrow's
    assert JS.constant_condition("Math.max(1, 2) > 1")
    assert not JS.constant_condition("xs.some((x) => x > limit)")
    assert not JS.constant_condition('text.includes("a")')


def test_names_are_camel_case_and_never_reserved() -> None:
    assert JS.name_error("itemCount") is None
    assert JS.name_error("item_count") is not None  # snake_case is Python's
    assert JS.name_error("x") is not None  # one letter: the grammar's arrow parameters
    assert JS.name_error("delete") is not None and JS.name_error("arguments") is not None


def test_program_id_ignores_formatting_and_comments() -> None:
    one = "function f(a) {\n  return a + 1;\n}\n"
    assert program_id(one, "javascript") == program_id("function f( a ){ return a+1; } // c\n", "javascript")
    assert program_id(one, "javascript") != program_id(one.replace("1", "2"), "javascript")


@pytest.mark.parametrize(
    ("template", "statement", "key"),
    [
        ("{recv}.push({value})", False, ("method", "push")),
        ("[...{recv}.keys()]", False, ("method", "keys")),  # the spread wraps what counts
        ("[...{recv}]", False, ("spread",)),
        ("Object.keys({recv})", False, ("call", "Object.keys")),
        ("Math.max({recv}, {other})", False, ("call", "Math.max")),
        ("{recv}.length", False, ("prop", "length")),
        ("{recv} === {other}", False, ("binop", "===")),
        ("!{recv}", False, ("unary", "!")),
        ("{recv} ? {then} : {other}", False, ("ifexp",)),
        ("{recv}[{key}] = {value}", True, ("setitem",)),
        ("{recv} += {other}", True, ("augassign", "+=")),
        ("{recv}++", True, ("update", "++")),
        ("new Set({recv})", False, ("new", "Set")),
        ("`<${{{recv}}}>`", False, ("template",)),
    ],
)
def test_operation_shapes(template: str, statement: bool, key: tuple[str, ...]) -> None:
    assert SYNTAX.template_signatures(template, statement)[0] == key


def test_constants_and_local_calls_are_not_operations() -> None:
    root = SYNTAX.parse("function f(a) { const s = new Set([1, 2]); const m = new Map(); return g(-1); }")
    assert SYNTAX.signatures(root, frozenset({"g"}), frozenset({"new Map()"})) == []


def test_while_bounded() -> None:
    def loop(source: str) -> bool:
        root = SYNTAX.parse(f"function f(n) {{ let c = 0; {source} }}")
        found = [x for x in walk(root) if x.type == "while_statement"]
        return SYNTAX.while_bounded(found[0])

    assert loop("while (c < 3) { n += 1; c += 1; }")
    assert not loop("while (c < 3) { c += 1; n += 1; }")  # the increment is not last
    assert not loop("while (c < n) { n -= 1; c += 1; }")  # the bound changes
    assert not loop("while (c < 3) { if (n) { continue; } c += 1; }")
    assert not loop("while (c <= 3) { c += 1; }")
