"""Parameter types read from argument values, to draw random well-typed inputs for a program
whose signature is not stored (a released row has its arguments, not its parameter types).

A *shape* is a value's type as a tuple: ``("int",)``, ``("list", ("str",))``, ``("dict", K, V)``,
``("tuple*", T, n)`` (a tuple of one element type; ``n`` its length, None once two lengths were
seen), ``("tuple", A, B)`` (a fixed tuple of mixed types) and ``("?",)`` for an unknown element
type (an empty container). A value with no
shape (``[1, 'a']``, ``None``) gives None. No type name is special-cased beyond Python's own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from factory.errors import UserError
from factory.grammar.model import Grammar
from factory.literals import canonical_repr, parse_args

Shape = tuple[Any, ...]
UNKNOWN: Shape = ("?",)
_SCALARS = (bool, int, float, str, bytes)
#: An argument text's values as ``shape_of`` reads them (a language's ``measure`` facet's
#: ``shape_args``: Python's own values, another language's stand-ins); UserError when not literals.
ArgsParser = Callable[[str], tuple[Any, ...]]
#: How many of a pool's argument lists show its shapes.
SHAPE_SAMPLE = 16


def parsed_once(parse: ArgsParser) -> ArgsParser:
    """``parse`` that reads each text once and gives its values (or raises its UserError) again
    when asked again. The quality figures read a program's arguments for its strings, its pool
    (twice) and its ablation: on the default data 20,871 parses (two compiles each) of 8,082
    texts, 5.1 of the 7.8 s the figures took in the stage's process (profiled). The values are
    shared between the callers: they only read them."""
    answers: dict[str, tuple[Any, ...] | str] = {}

    def parse_once(text: str) -> tuple[Any, ...]:
        answer = answers.get(text)
        if answer is None:
            try:
                answer = parse(text)
            except UserError as exc:
                answer = str(exc)
            answers[text] = answer
        if isinstance(answer, str):
            raise UserError(answer)
        return answer

    return parse_once


def shape_of(value: Any) -> Shape | None:
    """The shape of a literal value, None when it has none (mixed element types, None, ...)."""
    if type(value) in _SCALARS:
        return (type(value).__name__,)
    if isinstance(value, (list, set, frozenset)):
        # A set's elements in a fixed order: merging shapes is not commutative, and a set of
        # strings iterates in the order of the process's hash seed.
        items = value if isinstance(value, list) else sorted(value, key=canonical_repr)
        element = _merged(shape_of(v) for v in items)
        return (
            None if element is None else ("set" if isinstance(value, (set, frozenset)) else "list", element)
        )
    if isinstance(value, dict):
        keys, values = _merged(shape_of(k) for k in value), _merged(shape_of(v) for v in value.values())
        return None if keys is None or values is None else ("dict", keys, values)
    if isinstance(value, tuple):
        parts = [shape_of(v) for v in value]
        if any(p is None for p in parts):
            return None
        element = _merged(iter(parts))
        if element is not None:
            return ("tuple*", element, len(value))
        return ("tuple", *parts)
    return None


def merge(a: Shape | None, b: Shape | None) -> Shape | None:
    """The one shape that both shapes are (unknown parts filled in), None when they differ."""
    if a is None or b is None:
        return None
    if a == UNKNOWN:
        return b
    if b == UNKNOWN:
        return a
    if a[0] != b[0] or len(a) != len(b):
        return None
    if len(a) == 1:
        return a
    if a[0] == "tuple*":
        element = merge(a[1], b[1])
        return None if element is None else ("tuple*", element, a[2] if a[2] == b[2] else None)
    parts = [merge(x, y) for x, y in zip(a[1:], b[1:], strict=True)]
    return None if any(p is None for p in parts) else (a[0], *parts)


def fits(wanted: Shape | None, have: Shape | None) -> bool:
    """Whether values of shape ``wanted`` could have been drawn from a pool of shape ``have`` (a
    pool whose tuples all have one length only holds tuples of that length)."""
    if wanted is None or have is None:
        return False
    if UNKNOWN in (wanted, have):
        return True
    if wanted[0] != have[0] or len(wanted) != len(have):
        return False
    if wanted[0] == "tuple*":
        return fits(wanted[1], have[1]) and have[2] in (None, wanted[2])
    return all(fits(w, h) for w, h in zip(wanted[1:], have[1:], strict=True))


def _merged(shapes: Any) -> Shape | None:
    out: Shape | None = UNKNOWN
    for shape in shapes:
        out = merge(out, shape)
        if out is None:
            return None
    return out


def args_shapes(texts: Sequence[str], parse: ArgsParser = parse_args) -> list[Shape | None] | None:
    """Per parameter, the merged shape of the argument lists ``texts`` (one call each, read by
    ``parse``); None when they are not literals or do not agree on the number of arguments."""
    merged: list[Shape | None] | None = None
    for text in texts:
        try:
            values = parse(text)
        except UserError:
            return None
        shapes = [shape_of(v) for v in values]
        if merged is None:
            merged = shapes
        elif len(merged) != len(shapes):
            return None
        else:
            merged = [merge(a, b) for a, b in zip(merged, shapes, strict=True)]
    return merged


class PoolIndex:
    """The shapes of each pool's arguments (signature -> argument lists, ``factory.inputs.pools``),
    worked out once, to find a program's pool from its own arguments (both read by ``parse``)."""

    def __init__(self, pools: Mapping[str, Sequence[str]], parse: ArgsParser = parse_args) -> None:
        self.pools = pools
        self.parse = parse
        self.shapes: list[tuple[str, list[Shape | None]]] = []
        for key in sorted(pools):
            have = args_shapes(list(pools[key][:SHAPE_SAMPLE]), parse)
            if have is not None:
                self.shapes.append((key, have))

    def signature(self, inputs: Sequence[str]) -> str | None:
        """The key of the pool whose arguments have the shapes of ``inputs``; the first in sorted
        order when several do (``pair[int, int]`` and ``tuple[int]`` look alike), None when none
        does."""
        wanted = args_shapes(inputs, self.parse)
        if wanted is None or any(s is None for s in wanted):
            return None
        for key, have in self.shapes:
            if len(have) == len(wanted) and all(fits(w, h) for w, h in zip(wanted, have, strict=True)):
                return key
        return None


def grammar_signature(inputs: Sequence[str], grammar: Grammar) -> str | None:
    """A signature of the grammar's types (the JSON list ``pools`` keys are) for ``inputs``:
    unknown element types become ``int``; None when a shape has no grammar type."""
    wanted = args_shapes(inputs)
    if wanted is None:
        return None
    types = [grammar_type(s, grammar) for s in wanted]
    if any(t is None for t in types):
        return None
    return json.dumps(types)


def grammar_type(shape: Shape | None, grammar: Grammar) -> str | None:
    """The grammar type text of a shape: a type named as the Python type, a fixed tuple the type
    whose strategy draws ``tuples`` of that many parameters; None when the grammar has none."""
    if shape is None:
        return None
    if shape == UNKNOWN:
        return "int"
    head, parts = shape[0], shape[1:]
    if head == "tuple*":
        head, parts = "tuple", parts[:1]
    elif head == "tuple":
        fixed = [
            name
            for name, spec in sorted(grammar.types.items())
            if spec.strategy.get("kind") == "tuples" and len(spec.params) == len(parts)
        ]
        if not fixed:
            return None
        head = fixed[0]
    spec = grammar.types.get(head)
    if spec is None or len(spec.params) != len(parts):
        return None
    inner = [grammar_type(p, grammar) for p in parts]
    if any(t is None for t in inner):
        return None
    return head if not inner else f"{head}[{', '.join(t for t in inner if t)}]"
