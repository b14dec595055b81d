"""JavaScript's ``codegen`` facet: the text of a code-generation item (``factory.phase2.items``
builds the prompt around it; docs/languages.md §6.6).

The signature is ``function f(words, seen)``: JavaScript has no annotations, so the prompt gives
the parameters' grammar types in a rule line of their own, in TypeScript notation
(``words: string[]``, ``seen: Set<number>``), the notation JavaScript programmers and models read
for types; the examples show the values, which tell an object from a Map. A shown example is
``> f(<args>)`` and the output's canonical text, as node's REPL prompt shows a call. A test is the
answer line of an output question, ``assert.deepStrictEqual(f(<args>), <value>);``; the scorer
reads it, never runs it (``untrusted.run_tests``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from factory.grammar.types import Type, parse_type
from factory.languages.javascript import values
from factory.languages.javascript.prompts import assertion

#: The code fence of answers, and the fence tags the scorer prefers when it extracts the code.
FENCE = "javascript"
FENCE_TAGS = frozenset({"javascript", "js"})
PLAIN_RULE = (
    "- Use plain JavaScript (the language's built-ins only: no require, process, Date or "
    "Math.random); do not read input or print."
)
_GENERIC = {"array": "{0}[]", "set": "Set<{0}>", "map": "Map<{0}, {1}>", "object": "Record<{0}, {1}>"}


def example_test(entry: str, args: str, output_repr: str, output_type: str) -> str:
    """A unit test for one executed case: ``assert.deepStrictEqual(f(<args>), <output>);`` (the
    value model's strict equality tells types apart; ``output_type`` adds nothing)."""
    return assertion(f"{entry}({args})", output_repr)


def type_text(t: Type) -> str:
    """A grammar type in TypeScript notation: ``array[T]`` is ``T[]``, ``pair[A, B]`` is
    ``[A, B]``, ``object[K, V]`` is ``Record<K, V>``, ``set``/``map`` are ``Set<T>``/``Map<K, V>``."""
    args = [type_text(a) for a in t.args]
    if t.name == "pair":
        return f"[{', '.join(args)}]"
    if t.name in _GENERIC and len(args) == _GENERIC[t.name].count("{"):
        return _GENERIC[t.name].format(*args)
    return f"{t.name}<{', '.join(args)}>" if args else t.name


def signature(entry: str, param_types: Sequence[Sequence[str]], output_types: Sequence[str]) -> str:
    """``function f(words, seen)``: the parameters' names (their types are ``type_rule``'s)."""
    return f"function {entry}({', '.join(name for name, _ in param_types)})"


def type_rule(param_types: Sequence[Sequence[str]]) -> str | None:
    """The prompt's line of parameter types, or None for a function of no parameters."""
    if not param_types:
        return None
    typed = ", ".join(f"`{name}: {type_text(parse_type(t))}`" for name, t in param_types)
    return f"- The parameters' types (TypeScript notation): {typed}."


def shown_example(entry: str, args: str, output: str) -> str:
    """One example of the prompt, as node's REPL shows a call and its value."""
    return f"> {entry}({args})\n{output}"


_SAME = """function same(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const tag = Object.prototype.toString.call(a);
  if (tag !== Object.prototype.toString.call(b)) return false;
  if (tag === "[object Set]") {
    return a.size === b.size && [...a].every((x) => [...b].some((y) => same(x, y)));
  }
  if (tag === "[object Map]") {
    return a.size === b.size && [...a].every(([k, v]) => [...b].some(([j, w]) => same(k, j) && same(v, w)));
  }
  const keys = Object.keys(a);
  if (Array.isArray(a) && a.length !== b.length) return false;
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
}
"""


def memorizer_source(entry: str, shown: Sequence[tuple[str, str]], default: str) -> str:
    """A program that only memorises the shown examples: it returns the recorded output for a shown
    call (arguments strictly equal, as the value model compares) and, for any other call,
    ``default`` (an output text)."""
    pairs = ",\n".join(f"  [[{args}], {output}]" for args, output in shown)
    return (
        f"const SEEN = [\n{pairs},\n];\n\n{_SAME}\n"
        f"function {entry}(...args) {{\n"
        "  for (const [seenArgs, output] of SEEN) {\n"
        "    if (same(seenArgs, args)) return output;\n"
        "  }\n"
        f"  return {default};\n"
        "}\n"
    )


def same_args(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether ``memorizer_source`` takes two argument lists for the same call."""
    return len(a) == len(b) and all(values.strict_equal(x, y) for x, y in zip(a, b, strict=True))
