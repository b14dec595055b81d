"""JavaScript's value model: the values programs take and give, as Python objects; their canonical
literal text; reading a literal text back; strict equality; type names (docs/languages.md §5).

| JavaScript | in Python | canonical text |
|---|---|---|
| number (finite, not -0) | ``int`` or ``float`` (one type) | ``Number::toString``: ``0.5``, ``1e+21`` |
| string | ``str`` | double-quoted, ``JSON.stringify``'s escapes |
| boolean, null, undefined | ``bool``, ``None``, ``UNDEFINED`` | ``true``, ``null``, ``undefined`` |
| array | ``list`` | ``[1, "a"]`` |
| plain object (string keys) | ``dict`` | ``{"b": 1, "a": [2]}``: keys in JavaScript's own order |
| Set, Map | ``JsSet``, ``JsMap`` (insertion order) | ``new Set([1, 2])``, ``new Map([["a", 1]])`` |

NaN, Infinity and -0 have no literal: they are not values here (a run that gives one is dropped,
as a Python run that gives a value with no literal is). Neither are functions, symbols, bigints,
holes or instances of other classes. ``canonical.js`` prints a JavaScript value as ``literal``
prints its Python form; the tests check the two agree through a real ``node``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser

from factory.languages.tree import text as node_text

if TYPE_CHECKING:
    from factory.grammar.types import Type

#: The largest array index (``2**32 - 2``): such keys come first in an object, in numeric order.
MAX_ARRAY_INDEX = 2**32 - 2
TYPE_NAMES = ("number", "string", "boolean", "null", "undefined", "array", "object", "Set", "Map")


class _Undefined:
    """JavaScript's ``undefined`` (``None`` is ``null``)."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __reduce__(self) -> str:
        return "UNDEFINED"  # pickles as the module's one instance


UNDEFINED = _Undefined()


@dataclass(frozen=True, eq=False)
class JsSet:
    """A ``Set``: its items in insertion order, no two the same value (SameValueZero)."""

    items: tuple[Any, ...]

    def __eq__(self, other: object) -> bool:
        return strict_equal(self, other)

    __hash__ = None  # type: ignore[assignment]  # equal sets may hold their items in any order


@dataclass(frozen=True, eq=False)
class JsMap:
    """A ``Map``: its (key, value) entries in insertion order, no two keys the same value."""

    entries: tuple[tuple[Any, Any], ...]

    def __eq__(self, other: object) -> bool:
        return strict_equal(self, other)

    __hash__ = None  # type: ignore[assignment]


def js_set(items: Iterable[Any]) -> JsSet:
    """``new Set(items)``: a primitive seen before is skipped (objects are all distinct)."""
    kept: list[Any] = []
    for item in items:
        if not (_is_primitive(item) and any(strict_equal(item, k) for k in kept)):
            kept.append(item)
    return JsSet(tuple(kept))


def js_map(entries: Iterable[tuple[Any, Any]]) -> JsMap:
    """``new Map(entries)``: a key seen before keeps its place and takes the later value."""
    kept: list[list[Any]] = []
    for key, value in entries:
        for entry in kept:
            if _is_primitive(key) and strict_equal(key, entry[0]):
                entry[1] = value
                break
        else:
            kept.append([key, value])
    return JsMap(tuple((k, v) for k, v in kept))


def js_value(value: Any, t: Type) -> Any:
    """The JavaScript value of ``value``, drawn by Hypothesis for the grammar type ``t``: the inputs
    stage draws Python values (a set for a grammar's ``set``, a dict for ``map`` and ``object``, a
    tuple for ``pair``), which become the value model's (``JsSet``, ``JsMap``, lists, string keys)
    by the type names of grammars/javascript; a set's items in sorted order (Python's set order
    depends on the hash seed)."""
    if t.name == "set":
        return js_set(js_value(v, t.args[0]) for v in sorted(value, key=repr))
    if t.name == "map":
        return js_map((js_value(k, t.args[0]), js_value(v, t.args[1])) for k, v in value.items())
    if t.name == "object":
        return {str(k): js_value(v, t.args[1]) for k, v in value.items()}
    if t.name == "pair":
        return [js_value(v, a) for v, a in zip(value, t.args, strict=True)]
    if t.name == "array":
        return [js_value(v, t.args[0]) for v in value]
    return value


# --- canonical text -----------------------------------------------------------------------------


def literal(value: Any) -> str:
    """The canonical literal text of a value; ValueError for a value with none (NaN, a function)."""
    if value is None:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number_text(value)
    if isinstance(value, str):
        return string_text(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(literal, value)) + "]"
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError("an object's keys are strings")
        items = (f"{string_text(k)}: {literal(value[k])}" for k in object_keys(value))
        return "{" + ", ".join(items) + "}"
    if isinstance(value, JsSet):
        return f"new Set([{', '.join(map(literal, value.items))}])" if value.items else "new Set()"
    if isinstance(value, JsMap):
        if not value.entries:
            return "new Map()"
        return "new Map([" + ", ".join(f"[{literal(k)}, {literal(v)}]" for k, v in value.entries) + "])"
    raise ValueError(f"a {type(value).__name__} is not a JavaScript value")


def number_text(value: int | float) -> str:
    """ECMAScript's ``Number::toString(x)`` (radix 10) of a finite number other than -0: the
    shortest digits that read back as the same double (Python's ``repr`` finds the same digits),
    written in plain notation from 1e-6 up to below 1e21, in exponent notation beyond."""
    try:
        x = float(value)
    except OverflowError:
        raise ValueError(f"{value} is beyond a JavaScript number") from None
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"{x} has no JavaScript literal")
    if x == 0:
        if math.copysign(1.0, x) < 0:
            raise ValueError("-0 has no JavaScript literal")
        return "0"
    sign = "-" if x < 0 else ""
    shortest = Decimal(repr(abs(x))).normalize().as_tuple()  # the shortest digits that read back
    digits = "".join(map(str, shortest.digits))
    k = len(digits)
    n = k + int(shortest.exponent)  # the value is 0.DIGITS × 10**n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        text = (
            (digits if k == 1 else digits[0] + "." + digits[1:])
            + "e"
            + ("+" if e >= 0 else "-")
            + str(abs(e))
        )
    return sign + text


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def string_text(value: str) -> str:
    """A string's canonical literal: ``JSON.stringify``'s text (double quotes; ``\\n``, ``\\t``,
    ``\\u001b`` ...; a lone surrogate as ``\\udXXX``)."""
    text = json.dumps(value, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def object_keys(obj: dict[str, Any]) -> list[str]:
    """An object's keys in JavaScript's order: array indices ascending, then the rest as inserted."""
    indices = sorted((k for k in obj if _array_index(k) is not None), key=lambda k: int(k))
    return indices + [k for k in obj if _array_index(k) is None]


def _array_index(key: str) -> int | None:
    if key.isdigit() and key.isascii() and (key == "0" or key[0] != "0"):
        number = int(key)
        if number <= MAX_ARRAY_INDEX:
            return number
    return None


# --- equality and types -------------------------------------------------------------------------


def strict_equal(a: Any, b: Any) -> bool:
    """Whether ``assert.deepStrictEqual(a, b)`` passes: numbers by value (one type), no coercion
    between types, arrays in order, objects, Sets and Maps whatever their order."""
    kind = type_name(a)
    if kind != type_name(b):
        return False
    if kind == "array":
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if kind == "object":
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if kind == "Set":
        return len(a.items) == len(b.items) and _matched(a.items, b.items, strict_equal)
    if kind == "Map":
        same = lambda x, y: strict_equal(x[0], y[0]) and strict_equal(x[1], y[1])  # noqa: E731
        return len(a.entries) == len(b.entries) and _matched(a.entries, b.entries, same)
    return bool(a == b)


def _matched(left: tuple[Any, ...], right: tuple[Any, ...], equal: Any) -> bool:
    """Whether every item of ``left`` has its own equal in ``right`` (both the same length)."""
    free = list(right)
    for item in left:
        for i, other in enumerate(free):
            if equal(item, other):
                del free[i]
                break
        else:
            return False
    return True


def type_name(value: Any) -> str:
    """The type a state answer names: number, string, boolean, null, undefined, array, object,
    Set or Map (``typeof`` where it says enough: it calls arrays and null ``object``)."""
    if value is None:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, JsSet):
        return "Set"
    if isinstance(value, JsMap):
        return "Map"
    raise ValueError(f"a {type(value).__name__} is not a JavaScript value")


def _is_primitive(value: Any) -> bool:
    return value is None or value is UNDEFINED or isinstance(value, bool | int | float | str)


# --- reading literals ---------------------------------------------------------------------------


@cache
def parser() -> Parser:
    """The tree-sitter-javascript parser (one per process; the instrumenter and the statement
    analysis and the language's code checks parse with it too)."""
    return Parser(Language(tree_sitter_javascript.language()))


def literal_value(text: str) -> Any:
    """The value a literal text denotes, in any of JavaScript's spellings (single quotes, escapes,
    template strings without substitutions, ``0x1F``, ``1_000``, unquoted and numeric keys,
    trailing commas, ``new Set([...])``); SyntaxError when the text is not one expression,
    ValueError when it is not a literal (a name, a call, NaN, -0, a hole, a computed key)."""
    node = expression(text)
    return _value(node)


def parse_args(text: str) -> tuple[Any, ...]:
    """The values of a call's argument text (``[1, 2], "ab"``): ``literal_value`` of each."""
    node = expression(f"[{text}]") if text.strip() else None
    if node is None:
        return ()
    if node.type != "array":
        raise ValueError("the arguments are not a list of literals")
    return tuple(_value(child) for child in _elements(node))


def expression(text: str) -> Node:
    """The one expression of ``text``, parentheses around it unwrapped (SyntaxError when the text is
    not one expression, ValueError for a parenthesised sequence ``(a, b)``)."""
    source = f"({text}\n);"
    tree = parser().parse(source.encode())
    root = tree.root_node
    statements = [c for c in root.named_children if c.type != "comment"]
    if root.has_error or len(statements) != 1 or statements[0].type != "expression_statement":
        raise SyntaxError(f"not a JavaScript expression: {text[:80]!r}")
    wrapper = statements[0].named_children[0]
    if wrapper.type != "parenthesized_expression" or wrapper.text != source[:-1].encode():
        raise SyntaxError(f"not one JavaScript expression: {text[:80]!r}")
    return _unwrap(wrapper)


def _unwrap(node: Node) -> Node:
    while node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            raise ValueError("a sequence expression is not a literal")
        node = inner[0]
    return node


def _elements(node: Node) -> Iterator[Node]:
    """The elements of an array node; ValueError for a hole or a spread."""
    expect_value = True
    for child in node.children:
        if child.type in ("[", "]", "comment"):
            continue
        if child.type == ",":
            if expect_value:
                raise ValueError("an array with a hole is not a literal")
            expect_value = True
            continue
        if child.type == "spread_element":
            raise ValueError("a spread is not a literal")
        yield child
        expect_value = False


def _value(node: Node) -> Any:
    node = _unwrap(node)
    kind = node.type
    if kind == "number":
        return _number(node_text(node))
    if kind == "string":
        return _string(node)
    if kind == "template_string":
        if any(c.type == "template_substitution" for c in node.named_children):
            raise ValueError("a template with substitutions is not a literal")
        return _string(node)
    if kind in ("true", "false"):
        return kind == "true"
    if kind == "null":
        return None
    if kind == "undefined":
        return UNDEFINED
    if kind == "unary_expression":
        return _signed(node)
    if kind == "array":
        return [_value(child) for child in _elements(node)]
    if kind == "object":
        return _object(node)
    if kind == "new_expression":
        return _collection(node)
    raise ValueError(f"{node_text(node)[:40]!r} is not a literal")


def _number(text: str) -> int | float:
    """A number literal's value: an int when it is a whole number a double holds exactly."""
    plain = text.replace("_", "")
    if plain.endswith("n"):
        raise ValueError(f"a BigInt ({text}) is not a number")
    if plain[:2].lower() in ("0x", "0o", "0b"):
        value: float = int(plain, 0)
    elif len(plain) > 1 and plain[0] == "0" and plain[1].isdigit():
        raise ValueError(f"a legacy octal literal ({text}) is not allowed")
    else:
        value = float(plain)
    try:
        number = float(value)
    except OverflowError:  # a hexadecimal, octal or binary integer past the doubles
        number = math.inf
    if math.isinf(number):
        raise ValueError(f"{text} is beyond a JavaScript number")
    return _normal_number(number)


def _normal_number(x: float) -> int | float:
    return int(x) if x.is_integer() and abs(x) <= 2**53 else x


def _signed(node: Node) -> int | float:
    operator = node.child_by_field_name("operator")
    argument = node.child_by_field_name("argument")
    if operator is None or argument is None or operator.type not in ("-", "+"):
        raise ValueError(f"{node_text(node)[:40]!r} is not a literal")
    argument = _unwrap(argument)
    if argument.type != "number":
        raise ValueError(f"{node_text(node)[:40]!r} is not a literal")
    value = _number(node_text(argument))
    if operator.type == "+":
        return value
    if value == 0:
        raise ValueError("-0 has no JavaScript literal")
    return -value


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _string(node: Node) -> str:
    """The value of a string or template node: its fragments, escapes decoded."""
    units: list[str] = []
    for child in node.named_children:
        text = node_text(child)
        if child.type == "escape_sequence":
            units.append(_escape(text))
        elif child.type == "string_fragment":
            units.append(text)
        elif child.type != "comment":
            raise ValueError(f"{text[:40]!r} in a string is not a literal")
    return _join_surrogates("".join(units))


def _escape(text: str) -> str:
    body = text[1:]
    if body[:1] == "u":
        code = body[2:-1] if body[1:2] == "{" else body[1:]
        return chr(int(code, 16))
    if body[:1] == "x":
        return chr(int(body[1:], 16))
    if body in _ESCAPES:
        return _ESCAPES[body]
    if body[:1] in "\r\n\u2028\u2029":
        return ""  # a line continuation
    if body[:1].isdigit():
        raise ValueError(f"an octal escape ({text}) is not allowed")
    return body


def _join_surrogates(text: str) -> str:
    """``\\ud83d\\ude00`` written as two escapes is one character (JavaScript strings are UTF-16)."""
    if not _LONE_SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def _object(node: Node) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for child in node.named_children:
        if child.type == "comment":
            continue
        if child.type != "pair":
            raise ValueError(f"{node_text(child)[:40]!r} in an object is not a literal")
        key_node = child.child_by_field_name("key")
        value_node = child.child_by_field_name("value")
        if key_node is None or value_node is None:
            raise ValueError("an object entry without a key or a value")
        result[_key(key_node)] = _value(value_node)
    return result


def _key(node: Node) -> str:
    if node.type == "property_identifier":
        return node_text(node)
    if node.type == "string":
        return _string(node)
    if node.type == "number":
        return number_text(_number(node_text(node)))
    raise ValueError(f"a computed key ({node_text(node)[:40]}) is not a literal")


def _collection(node: Node) -> JsSet | JsMap:
    """``new Set([...])`` or ``new Map([[k, v], ...])`` (no argument: empty)."""
    constructor = node.child_by_field_name("constructor")
    arguments = node.child_by_field_name("arguments")
    name = node_text(constructor) if constructor is not None else ""
    if name not in ("Set", "Map") or constructor is None or constructor.type != "identifier":
        raise ValueError(f"{node_text(node)[:40]!r} is not a literal")
    args = [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []
    if len(args) > 1 or (args and _unwrap(args[0]).type != "array"):
        raise ValueError(f"new {name}(...) takes one array literal")
    items = list(_elements(_unwrap(args[0]))) if args else []
    if name == "Set":
        return js_set(_value(item) for item in items)
    entries = []
    for item in items:
        pair = _value(item)
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ValueError("a Map entry is a [key, value] array")
        entries.append((pair[0], pair[1]))
    return js_map(entries)
