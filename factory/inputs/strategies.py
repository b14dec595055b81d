"""Hypothesis strategies built from the grammar's type specs (no type is special-cased here)."""

from __future__ import annotations

import builtins
from functools import lru_cache

from hypothesis import strategies as st

from factory.errors import UserError
from factory.grammar.loader import TYPE_PARAM_KEYS
from factory.grammar.model import Grammar
from factory.grammar.types import Type


def strategy_for(grammar: Grammar, t: Type) -> st.SearchStrategy:
    """The strategy that draws an input value of concrete type ``t``.

    A type's ``strategy`` is ``{kind: <hypothesis.strategies function>, **kwargs}``; the values of
    ``elements``/``keys``/``values`` name type parameters and become those types' strategies
    (their ``element_strategy`` when they declare one: short strings inside a list, say);
    ``convert`` names a builtin applied to each drawn value (``tuple`` turns a list into a tuple).
    The grammar loader builds each spec the same way once (``_check_strategy_call``), so a bad
    strategy argument is a ``file:line`` error at load time, not a failure here.
    """
    return _cached(grammar, t, False)


@lru_cache(maxsize=1024)
def _cached(grammar: Grammar, t: Type, as_element: bool) -> st.SearchStrategy:
    spec = grammar.types.get(t.name)
    if spec is None:
        raise UserError(f"no grammar type '{t.name}' to draw inputs of type {t}")
    if len(t.args) != len(spec.params):
        raise UserError(f"type {t} needs {len(spec.params)} type argument(s) ({spec.file}:{spec.line})")
    binding = dict(zip(spec.params, t.args, strict=True))
    chosen = spec.element_strategy if as_element and spec.element_strategy else spec.strategy
    kwargs = {k: v for k, v in chosen.items() if k != "kind"}
    for key in TYPE_PARAM_KEYS:
        if isinstance(kwargs.get(key), str):
            kwargs[key] = _cached(grammar, binding[kwargs[key]], True)
    if chosen["kind"] == "tuples":
        strategy = st.tuples(*(_cached(grammar, a, True) for a in t.args))
    else:
        strategy = getattr(st, chosen["kind"])(**kwargs)
    if spec.convert:
        strategy = strategy.map(getattr(builtins, spec.convert))
    return strategy
