"""JavaScript's value model: Python's canonical text agrees with a real ``node`` (numbers, strings,
key order, Sets and Maps, values from another realm), reads back to an equal value, and refuses
what has no literal."""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factory.inputs.draw import draw_examples
from factory.languages.javascript import values as js
from factory.languages.javascript.values import UNDEFINED, JsMap, JsSet, js_map, js_set

CANONICAL_JS = Path(js.__file__).with_name("canonical.js")
NODE = shutil.which("node")


def _node(script: str, stdin: str) -> str:
    """stdout of ``node -e script`` (Node.js ≥ 20 is a requirement of the project, README)."""
    assert NODE is not None, "node (Node.js >= 20) is not on PATH: the JavaScript language needs it"
    done = subprocess.run(
        [NODE, "-e", script], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _doubles(n: int) -> list[float]:
    """Boundary numbers and ``n`` random finite doubles (random bit patterns, seeded)."""
    rng = random.Random(7)
    picked = [0.5, 1e-7, 1e-6, 1.5e-7, 9.99e-7, 1e20, 1e21, 1e21 - 65536, 123e18, 2.0**53, 2.0**53 + 2]
    picked += [0.1 + 0.2, 1 / 3, 5e-324, 1.7976931348623157e308, 100.0, 1234.5, 0.000123, -42.0]
    while len(picked) < n:
        (x,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if x == x and abs(x) != float("inf") and x != 0:
            picked.append(x)
            picked.append(float(f"{x:.3g}"))  # short decimals, as programs print
    return picked


def test_number_text_is_javascripts_for_every_double_tried() -> None:
    numbers = _doubles(4000)
    bits = [struct.unpack("<Q", struct.pack("<d", x))[0] for x in numbers]
    script = (
        "const bits = JSON.parse(require('fs').readFileSync(0, 'utf8')).map(BigInt);"
        "const xs = new Float64Array(new BigUint64Array(bits).buffer);"
        "process.stdout.write(JSON.stringify(Array.from(xs, String)));"
    )
    expected = json.loads(_node(script, json.dumps([str(b) for b in bits])))
    mismatches = [
        (x, js.number_text(x), e) for x, e in zip(numbers, expected, strict=True) if js.number_text(x) != e
    ]
    assert not mismatches[:5], mismatches[:5]


def _values() -> st.SearchStrategy[Any]:
    number = st.one_of(
        st.integers(-(2**53), 2**53),
        st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != 0),
    )
    text = st.text(st.characters(codec=None, exclude_categories=()), max_size=8)
    keys = st.one_of(
        text, st.sampled_from(["0", "1", "7", "01", "-1", "1.5", "4294967294", "4294967295", "a"])
    )
    scalars = st.one_of(number, text, st.booleans(), st.none(), st.just(UNDEFINED))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(keys, inner, max_size=4),
            st.lists(inner, max_size=4).map(js_set),
            st.lists(st.tuples(inner, inner), max_size=3).map(js_map),
        ),
        max_leaves=10,
    )


@settings(max_examples=300, deadline=None)
@given(_values())
def test_a_value_reads_back_from_its_literal(value: Any) -> None:
    text = js.literal(value)
    again = js.literal_value(text)
    assert js.strict_equal(again, value), text
    assert js.literal(again) == text
    assert js.type_name(again) == js.type_name(value)


def test_node_prints_what_python_prints_also_for_values_of_another_realm() -> None:
    """Each literal Python writes, evaluated by node in a fresh ``vm`` context (as programs will
    run) and in node's own realm, prints back as the same text through canonical.js."""
    texts = [js.literal(v) for v in draw_examples(_values(), 400, seed=11)]
    texts += ['{"b": 1, "2": 2, "a": 3, "1": 4, "01": 5}', 'new Set([1, 1, "1", [], []])', "[-0.5, 1e-7]"]
    script = (
        f"const {{ canonical }} = require({json.dumps(str(CANONICAL_JS))});"
        "const vm = require('vm');"
        "const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = texts.map((t) =>"
        " [canonical(vm.runInNewContext('(' + t + ')')), canonical(eval('(' + t + ')'))]);"
        "process.stdout.write(JSON.stringify(out));"
    )
    printed = json.loads(_node(script, json.dumps(texts)))
    for text, (foreign, own) in zip(texts, printed, strict=True):
        expected = js.literal(js.literal_value(text))
        assert foreign == expected and own == expected, (text, foreign, own)


def test_node_refuses_values_with_no_literal() -> None:
    cases = [
        "NaN", "Infinity", "-0", "1n", "() => 1", "Symbol('s')", "new Date(0)", "[1, , 2]",
        "(() => { const a = []; a.push(a); return a; })()", "({ get x() { return 1; } })",
        "new (class A {})()", "Object.assign([1], { extra: 2 })", "({ [Symbol.iterator]: 1 })",
        "new (class S extends Set {})()",
    ]  # fmt: skip
    script = (
        f"const {{ canonical, NotLiteral }} = require({json.dumps(str(CANONICAL_JS))});"
        "const vm = require('vm');"
        "const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = texts.map((t) => { try { return canonical(vm.runInNewContext('(' + t + ')')); }"
        " catch (e) { return e instanceof NotLiteral ? 'refused' : 'other: ' + e; } });"
        "process.stdout.write(JSON.stringify(out));"
    )
    assert json.loads(_node(script, json.dumps(cases))) == ["refused"] * len(cases)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("'it\\'s'", "it's"),
        ('"\\x41\\u0042\\u{1F600}\\t\\0"', "AB\U0001f600\t\0"),
        ('"\\ud83d\\ude00"', "\U0001f600"),
        ("`two\nlines`", "two\nlines"),
        ("0x1F", 31),
        ("1_000", 1000),
        (".5", 0.5),
        ("-2.5e3", -2500),
        ("+7", 7),
        ("[1, 2, ]", [1, 2]),
        ("{a: 1, 'b c': 2, 3: 4, 1.5: 5,}", {"a": 1, "b c": 2, "3": 4, "1.5": 5}),
        ("{a: 1, a: 2}", {"a": 2}),
        ("(  [null, undefined, true]  )", [None, UNDEFINED, True]),
        ("new Set([1, 1.0, '1'])", JsSet((1, "1"))),
        ("new Set()", JsSet(())),
        ("new Map([['k', 1], ['k', 2]])", JsMap((("k", 2),))),
        ("/* a comment */ 5", 5),
    ],
)
def test_literals_in_javascripts_spellings(text: str, value: Any) -> None:
    got = js.literal_value(text)
    assert js.strict_equal(got, value), got


@pytest.mark.parametrize(
    "text",
    ["x", "NaN", "Infinity", "-0", "1n", "010", "[1, , 2]", "[...a]", "{a}", "{[k]: 1}", "f()",
     "`a${b}`", "new Foo()", "new Set(1)", "1, 2", "-'a'", "{a: 1", "", "1; 2", "new Map([[1]])",
     "0x" + "f" * 300, "1e400"],
)  # fmt: skip
def test_what_is_not_a_literal_is_refused(text: str) -> None:
    with pytest.raises((ValueError, SyntaxError)):
        js.literal_value(text)


def test_arguments() -> None:
    assert js.parse_args('[1, 2], "ab", {k: [true]}') == ([1, 2], "ab", {"k": [True]})
    assert js.parse_args("") == ()
    with pytest.raises(ValueError):
        js.parse_args("a, 1")


def test_strict_equality_follows_deep_strict_equal() -> None:
    assert js.strict_equal(1, 1.0)  # one number type
    assert (
        not js.strict_equal(1, True)
        and not js.strict_equal(0, False)
        and not js.strict_equal(None, UNDEFINED)
    )
    assert not js.strict_equal("1", 1)
    assert js.strict_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})  # key order is not compared
    assert not js.strict_equal([1, 2], [2, 1])
    assert js.strict_equal(js_set([1, [2]]), js_set([[2], 1]))
    assert not js.strict_equal(js_set([1, 2]), js_set([1, 3]))
    assert js.strict_equal(js_map([("a", 1), ("b", 2)]), js_map([("b", 2), ("a", 1)]))
    assert not js.strict_equal(js_map([("a", 1)]), js_map([("a", 2)]))
    assert not js.strict_equal([1], {"0": 1})


def test_canonical_text_and_type_names() -> None:
    assert js.literal({"b": 1, "10": 2, "2": 3, "a": None}) == '{"2": 3, "10": 2, "b": 1, "a": null}'
    assert js.literal(["a\n", 2.0, 0.1, UNDEFINED]) == '["a\\n", 2, 0.1, undefined]'
    assert js.literal(js_map([])) == "new Map()" and js.literal(js_set([2, 1])) == "new Set([2, 1])"
    for bad in (float("nan"), float("inf"), -0.0, 2**1100, {1: 2}, (1, 2), {1}):
        with pytest.raises(ValueError):
            js.literal(bad)
    names = [js.type_name(v) for v in (1.5, "s", False, None, UNDEFINED, [], {}, js_set([]), js_map([]))]
    assert names == list(js.TYPE_NAMES)
