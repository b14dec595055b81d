"""Constants the generator writes: a grammar type's constant texts, or a container literal built
from its ``literal`` form, checked by the language's value model."""

from __future__ import annotations

from functools import lru_cache

from factory.grammar.types import Type
from factory.languages import Language
from factory.synth.state import BuildState, GenerationFailed


def constant(state: BuildState, t: Type, short: bool = False) -> str:
    """The text of a constant of type ``t`` (``short``: constants of at most 4 characters, for
    the items of containers and for value sources)."""
    spec = state.g.types.get(t.name)
    rng = state.rng
    if spec is None:
        raise GenerationFailed(f"no constants for {t}")
    if spec.constants:
        pool = list(spec.constants)
        if short:
            pool = [c for c in pool if len(c) <= 4] or pool
        return rng.choice(pool)
    if spec.literal is None:
        raise GenerationFailed(f"no literal form for {t}")
    low = int(spec.literal.get("min_size", 0))
    n = rng.randint(max(low, 1), max(int(spec.literal.get("max_size", 3)), low, 1))
    if low == 0 and rng.random() < 0.1:
        return spec.literal["empty"]
    binding = dict(zip(spec.params, t.args, strict=True))
    item_form = spec.literal.get("item")
    items = []
    for _ in range(n):
        if item_form:
            parts = {p: constant(state, binding[p], short=True) for p in spec.params}
            items.append(item_form.format(**parts))
        else:
            elem = binding[spec.params[0]] if spec.params else t
            items.append(constant(state, elem, short=True))
    items = list(dict.fromkeys(items))
    code = spec.literal["form"].format(items=", ".join(items))
    if not is_valid_literal(state.lang, code):  # e.g. a set of lists: unhashable
        raise GenerationFailed(f"no valid constant of type {t}")
    return code


@lru_cache(maxsize=16384)
def is_valid_literal(lang: Language, code: str) -> bool:
    """Whether the language's value model accepts ``code`` as a literal (memoised: saves parsing
    the container constants the generator writes again and again)."""
    try:
        lang.literal_value(code)
    except (TypeError, ValueError, SyntaxError):
        return False
    return True


@lru_cache(maxsize=16384)
def literal_len(lang: Language, code: str) -> int:
    """The length of the value a literal text denotes (0: not a literal, or no length)."""
    try:
        value = lang.literal_value(code)
    except (ValueError, SyntaxError, TypeError):
        return 0
    try:
        return len(value)
    except TypeError:
        return 0
