"""What a grammar offers for a type: operations producing it, acting on it, testing it (memoised on
the grammar), whether inputs of it can be drawn and what looping over it gives."""

from __future__ import annotations

from factory.grammar.model import Grammar, Operation
from factory.grammar.types import Type, parse_type, unify
from factory.languages import language


def _returning_index(grammar: Grammar) -> dict[str, tuple[Operation, ...]]:
    """Expression operations by the name of the type they return ("" for a type variable)."""
    index = grammar.cache.get("returning")
    if index is None:
        table: dict[str, list[Operation]] = {}
        for op in grammar.operations:
            if op.returns is not None and not op.statement:
                table.setdefault("" if op.returns.is_var else op.returns.name, []).append(op)
        index = grammar.cache["returning"] = {k: tuple(v) for k, v in table.items()}
    return index


def producers(grammar: Grammar, want: Type) -> list[tuple[Operation, dict[str, Type]]]:
    """Expression operations that can return ``want``, with the binding that makes them (memoised)."""
    key = ("producers", want)
    found = grammar.cache.get(key)
    if found is None:
        index = _returning_index(grammar)
        found = []
        for op in index.get(want.name, ()) + index.get("", ()):
            assert op.returns is not None  # _returning_index holds only operations that return
            binding = unify(op.returns, want)
            if binding is not None:
                found.append((op, binding))
        grammar.cache[key] = found
    return found


def ops_on(grammar: Grammar, t: Type) -> list[Operation]:
    """Operations whose receiver can be a value of type ``t`` (memoised on the grammar)."""
    key = ("ops_on", t)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = [op for op in grammar.operations if unify(op.receiver, t) is not None]
    return found


def tests_on(grammar: Grammar, t: Type) -> list[Operation]:
    """Non-mutating operations returning the boolean type (``Language.core_types``) whose receiver
    can be a value of type ``t``."""
    key = ("tests", t)
    found = grammar.cache.get(key)
    if found is None:
        found = [
            op
            for op in _returning_index(grammar).get(language(grammar.language).core_types.boolean, ())
            if not op.mutates and unify(op.receiver, t) is not None
        ]
        grammar.cache[key] = found
    return found


def drawable(grammar: Grammar, t: Type) -> bool:
    """Whether inputs of type ``t`` can be drawn (every type in it has a strategy)."""
    spec = grammar.types.get(t.name)
    return spec is not None and len(spec.params) == len(t.args) and all(drawable(grammar, a) for a in t.args)


def iter_element(grammar: Grammar, t: Type) -> Type | None:
    """The type a loop over a value of type ``t`` binds (None: ``t`` is not looped over; memoised
    on the grammar: saves parsing the type's ``iterates`` expression on every call)."""
    key = ("iter_element", t)
    if key in grammar.cache:
        found: Type | None = grammar.cache[key]
        return found
    spec = grammar.types.get(t.name)
    if spec is None or spec.iterates is None:
        found = None
    else:
        found = parse_type(spec.iterates).substitute(dict(zip(spec.params, t.args, strict=True)))
    grammar.cache[key] = found
    return found
