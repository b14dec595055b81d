"""Drawn inputs as JavaScript values: the inputs stage draws Python values with Hypothesis (a set
for a grammar's ``set``, a dict for ``map`` and ``object``, a tuple for ``pair``); a JavaScript run
needs them in the value model's form (``values.py``: ``JsSet``, ``JsMap``, lists, string keys).

The conversion reads the type names of grammars/javascript. The inputs stage does not call it yet
(docs/languages.md §6.5): the measurements (bench/js_grammar.py) and the tests do.
"""

from __future__ import annotations

from typing import Any

from factory.grammar.types import Type
from factory.languages.javascript.values import js_map, js_set


def js_value(value: Any, t: Type) -> Any:
    """The JavaScript value of ``value``, drawn for the grammar type ``t`` (a set's items in
    sorted order: Python's set order depends on the hash seed)."""
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
