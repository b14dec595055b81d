"""Hypothesis strategies built from the grammar's type specs (no type is special-cased here).

A strategy spec is ``{kind: K, **arguments}``. ``K`` is a public function of
``hypothesis.strategies`` (``integers``, ``text``, ``lists``...) or a kind this project defines
(``PROJECT_KINDS``: ``words``, ``readable_floats``), or ``mixture``: ``{kind: mixture, of: [...]}``
draws from one of the strategy specs in ``of``, each chosen with its ``weight``. The grammar loader
builds every spec with ``build_spec`` once at load time, so a bad argument is a ``file:line`` error
there, never a traceback here.
"""

from __future__ import annotations

import builtins
import inspect
import random
import typing
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, NewType

from hypothesis import strategies as st

from factory.errors import UserError
from factory.grammar.model import Grammar
from factory.grammar.types import Type

# Strategy arguments whose string value names a type parameter (that type's strategy is passed);
# ``tuples`` takes one strategy per type parameter instead of named arguments.
TYPE_PARAM_KEYS = ("elements", "keys", "values")
MIXTURE = "mixture"  # {kind: mixture, of: [{weight: W, kind: ..., ...}, ...]}
WEIGHT = "weight"  # a mixture branch's share (relative to the other branches)

# A word list file of the grammar folder; the loader reads it and passes its words.
WordList = NewType("WordList", tuple)
CASES = ("lower", "upper", "title", "capitalize", "mixed")
_WORD_CASES = ("lower", "upper", "title")  # what "mixed" picks from, word by word


def _one_or_more(value: str | Sequence[str], what: str) -> tuple[str, ...]:
    options = (value,) if isinstance(value, str) else tuple(value)
    if not options or not all(isinstance(o, str) for o in options):
        raise ValueError(f"{what} must be a string or a non-empty list of strings, got {value!r}")
    return options


def words(
    words: WordList,
    min_words: int = 1,
    max_words: int = 1,
    sep: str | list[str] = " ",
    case: str | list[str] = "lower",
    end: str | list[str] = "",
    pad: str | list[str] = "",
    max_length: int | None = None,
) -> st.SearchStrategy[str]:
    """Strings of ``min_words``..``max_words`` words of a word list joined by ``sep``.

    ``sep``, ``case``, ``end`` (appended: ``'.'``) and ``pad`` (whitespace before and after,
    drawn for each side) are one string or a list to draw one from per value (repeat an option
    to make it likelier); ``case`` is one of lower, upper, title, capitalize (the first letter)
    or mixed (each word lower, upper or title); ``max_length`` keeps only the words of at most
    that many letters.

    Hypothesis draws a seed and a seeded ``random.Random`` renders the value: its engine builds
    later examples by mutating earlier ones, which would repeat words ("ball ball ball").
    """
    vocabulary = tuple(w for w in words if max_length is None or len(w) <= max_length)
    if not vocabulary:
        raise ValueError(f"no word of at most max_length={max_length} letters in the word list")
    if not 0 <= min_words <= max_words:
        raise ValueError(f"min_words={min_words} and max_words={max_words} need 0 <= min_words <= max_words")
    options = [_one_or_more(v, n) for v, n in ((sep, "sep"), (case, "case"), (end, "end"), (pad, "pad"))]
    unknown = [c for c in options[1] if c not in CASES]
    if unknown:
        raise ValueError(f"case {unknown[0]!r} is not one of {', '.join(CASES)}")
    render = _Words(vocabulary, min_words, max_words, *options)
    return st.integers(0, 2**64 - 1).map(render)


class _Words:
    """Renders one ``words`` value from a seed (a class, so that each strategy keeps its own)."""

    def __init__(
        self,
        vocabulary: tuple[str, ...],
        min_words: int,
        max_words: int,
        seps: tuple[str, ...],
        cases: tuple[str, ...],
        ends: tuple[str, ...],
        pads: tuple[str, ...],
    ):
        self.vocabulary, self.min_words, self.max_words = vocabulary, min_words, max_words
        self.seps, self.cases, self.ends, self.pads = seps, cases, ends, pads

    def __call__(self, seed: int) -> str:
        rng = random.Random(seed)
        n = rng.randint(self.min_words, self.max_words)
        parts = [rng.choice(self.vocabulary) for _ in range(n)]
        case = rng.choice(self.cases)
        if case == "mixed":
            parts = [_cased(w, rng.choice(_WORD_CASES)) for w in parts]
        elif case != "capitalize":
            parts = [_cased(w, case) for w in parts]
        text = rng.choice(self.seps).join(parts)
        if case == "capitalize":
            text = text[:1].upper() + text[1:]
        text += rng.choice(self.ends)
        return rng.choice(self.pads) + text + rng.choice(self.pads)


def _cased(word: str, case: str) -> str:
    return {"upper": word.upper(), "title": word.title()}.get(case, word)


def readable_floats(
    min_value: float, max_value: float, denominators: list[int] | None = None
) -> st.SearchStrategy[float]:
    """Floats a person would write: an integer divided by one of ``denominators`` (default 1,
    2, 4, 10, 100: ``3.0``, ``2.5``, ``-0.75``, ``19.99``), within the bounds."""
    dens = tuple(denominators or (1, 2, 4, 10, 100))
    if not all(isinstance(d, int) and d > 0 for d in dens):
        raise ValueError(f"denominators must be positive integers, got {list(dens)}")
    if min_value > max_value:
        raise ValueError(f"min_value={min_value} > max_value={max_value}")
    parts = [
        st.integers(_ceil(min_value * d), _floor(max_value * d)).map(_Divide(d))
        for d in dens
        if _ceil(min_value * d) <= _floor(max_value * d)
    ]
    if not parts:
        raise ValueError(f"no value k/d of the denominators lies in [{min_value}, {max_value}]")
    return st.one_of(parts)


def _ceil(x: float) -> int:
    return -int(-x // 1)


def _floor(x: float) -> int:
    return int(x // 1)


class _Divide:
    """``k -> k / d`` (a class, not a lambda: each denominator keeps its own value)."""

    def __init__(self, d: int):
        self.d = d

    def __call__(self, k: int) -> float:
        return k / self.d


def weighted(branches: Sequence[tuple[float, st.SearchStrategy]]) -> st.SearchStrategy:
    """One of the branch strategies, chosen in proportion to its weight.

    The choice is a ``sampled_from`` over branch indices repeated by weight (100 slots):
    Hypothesis draws those near-uniformly, unlike ``integers``, which favours small values.
    """
    total = sum(w for w, _ in branches)
    slots = [i for i, (w, _) in enumerate(branches) for _ in range(max(1, round(100 * w / total)))]
    strategies = [s for _, s in branches]
    return st.sampled_from(slots).flatmap(strategies.__getitem__)


PROJECT_KINDS: dict[str, Callable[..., st.SearchStrategy]] = {
    "words": words,
    "readable_floats": readable_floats,
}


def _returns_strategy(func: Any) -> bool:
    """False for the helpers of hypothesis.strategies that make no strategy (composite, register_...)."""
    try:
        returns = inspect.signature(func).return_annotation
    except (TypeError, ValueError):
        return False
    if returns is inspect.Signature.empty:
        return True  # unannotated (functions): what it builds is checked at load time
    text = (
        returns
        if isinstance(returns, str)
        else getattr(typing.get_origin(returns) or returns, "__name__", "")
    )
    return str(text).split("[")[0].rsplit(".", 1)[-1] == "SearchStrategy"


HYPOTHESIS_KINDS = {
    name
    for name in dir(st)
    if not name.startswith("_")
    and name.islower()
    and callable(getattr(st, name))
    and _returns_strategy(getattr(st, name))
}
# The project's kinds never shadow a Hypothesis function (a grammar reads the same either way).
assert not (set(PROJECT_KINDS) | {MIXTURE}) & HYPOTHESIS_KINDS
STRATEGY_KINDS = HYPOTHESIS_KINDS | set(PROJECT_KINDS) | {MIXTURE}


def kind_function(kind: str) -> Callable[..., st.SearchStrategy]:
    """The function a spec's ``kind`` names (not ``mixture``, which ``build_spec`` assembles)."""
    return PROJECT_KINDS[kind] if kind in PROJECT_KINDS else getattr(st, kind)


def word_list_params(kind: str) -> list[str]:
    """The arguments of a kind that name a word list file (the loader reads them)."""
    if kind not in PROJECT_KINDS:
        return []
    hints = typing.get_type_hints(PROJECT_KINDS[kind])
    return [name for name, hint in hints.items() if hint is WordList]


def build_spec(
    spec: dict[str, Any], resolve: Callable[[str], st.SearchStrategy], n_params: int
) -> st.SearchStrategy:
    """The strategy of one spec. ``resolve`` gives the strategy of a type parameter named by
    ``elements``/``keys``/``values``; ``tuples`` takes ``n_params`` of them, in order."""
    kind = spec["kind"]
    if kind == MIXTURE:
        return weighted(
            [(b.get(WEIGHT, 1.0), build_spec(branch_spec(b), resolve, n_params)) for b in spec["of"]]
        )
    kwargs = {k: v for k, v in spec.items() if k != "kind"}
    for key in TYPE_PARAM_KEYS:
        if isinstance(kwargs.get(key), str):
            kwargs[key] = resolve(kwargs[key])
    if kind == "tuples":
        return st.tuples(*(resolve(i) for i in _positions(n_params)), **kwargs)
    return kind_function(kind)(**kwargs)


def branch_spec(branch: dict[str, Any]) -> dict[str, Any]:
    """A mixture branch without its weight: the strategy spec it draws from."""
    return {k: v for k, v in branch.items() if k != WEIGHT}


def _positions(n: int) -> list[str]:
    return [f"#{i}" for i in range(n)]


def strategy_for(grammar: Grammar, t: Type) -> st.SearchStrategy:
    """The strategy that draws an input value of concrete type ``t``.

    The values of ``elements``/``keys``/``values`` name type parameters and become those types'
    strategies (their ``element_strategy`` when they declare one: short words inside a list,
    say); ``convert`` names a builtin applied to each drawn value (``tuple`` turns a list into a
    tuple).
    """
    return _cached(grammar, t, False)


def weighted_branches(grammar: Grammar, t: Type) -> list[tuple[float, st.SearchStrategy]]:
    """The top-level branches of ``t``'s strategy with their weights: one per ``mixture``
    branch, else the whole strategy with weight 1. Drawing each branch on its own gives exact
    shares (``factory.inputs.pools``)."""
    spec, binding = _spec(grammar, t)
    if spec.strategy["kind"] != MIXTURE:
        return [(1.0, strategy_for(grammar, t))]
    resolve = _resolver(grammar, t, binding)
    return [
        (
            float(b.get(WEIGHT, 1.0)),
            _converted(spec.convert, build_spec(branch_spec(b), resolve, len(t.args))),
        )
        for b in spec.strategy["of"]
    ]


def _spec(grammar: Grammar, t: Type) -> tuple[Any, dict[str, Type]]:
    spec = grammar.types.get(t.name)
    if spec is None:
        raise UserError(f"no grammar type '{t.name}' to draw inputs of type {t}")
    if len(t.args) != len(spec.params):
        raise UserError(f"type {t} needs {len(spec.params)} type argument(s) ({spec.file}:{spec.line})")
    return spec, dict(zip(spec.params, t.args, strict=True))


def _resolver(grammar: Grammar, t: Type, binding: dict[str, Type]) -> Callable[[str], st.SearchStrategy]:
    positional = dict(zip(_positions(len(t.args)), t.args, strict=True))

    def resolve(name: str) -> st.SearchStrategy:
        return _cached(grammar, binding.get(name) or positional[name], True)

    return resolve


def _converted(convert: str | None, strategy: st.SearchStrategy) -> st.SearchStrategy:
    return strategy.map(getattr(builtins, convert)) if convert else strategy


@lru_cache(maxsize=1024)
def _cached(grammar: Grammar, t: Type, as_element: bool) -> st.SearchStrategy:
    spec, binding = _spec(grammar, t)
    chosen = spec.element_strategy if as_element and spec.element_strategy else spec.strategy
    return _converted(spec.convert, build_spec(chosen, _resolver(grammar, t, binding), len(t.args)))
