"""Value sources: where an operation's argument values come from (the ``from:`` key).

Each source is generic (it never looks at which method asked) and returns the argument's source
text, its literals written by the grammar's language (``SourceContext.literal``). ``SOURCES`` maps
a source name to its arity (-1: any number of literal arguments).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Protocol, TypeVar

from factory.grammar.types import Type

_T = TypeVar("_T")


class SourceContext(Protocol):
    """What a value source may ask of the synthesizer."""

    def randint(self, lo: int, hi: int) -> int: ...
    def choice(self, options: list[_T]) -> _T: ...
    def min_len(self, placeholder: str) -> int: ...
    def constant(self, t: Type, short: bool = False) -> str: ...
    def variable_of(self, t: Type) -> str | None: ...  # never one the receiver reads
    def prefers(self, name: str) -> bool: ...  # whether the statement should read variable ``name``
    def literal(self, value: object) -> str: ...
    def text(self, placeholder: str) -> str: ...  # the code written for a placeholder (``recv``)


def valid_index(ctx: SourceContext, t: Type, recv: str) -> str:
    """An index that is in range for the receiver's known minimum length (guards make it ≥ 1)."""
    m = max(1, ctx.min_len(recv))
    return ctx.literal(ctx.randint(-m, m - 1))


def any_index(ctx: SourceContext, t: Type, recv: str) -> str:
    """Any index around the receiver's length (slices never fail)."""
    m = ctx.min_len(recv)
    return ctx.literal(ctx.randint(-m - 2, m + 2))


def element_of(ctx: SourceContext, t: Type, recv: str) -> str:
    """A value likely to be in the receiver: a variable of the element type (a loop variable,
    say) or a constant drawn from the same range as the inputs."""
    var = ctx.variable_of(t)
    if var is not None and (ctx.prefers(var) or ctx.randint(0, 2) == 0):
        return var
    return ctx.constant(t, short=True)


def member(ctx: SourceContext, t: Type, recv: str, *forms: str) -> str:
    """One of the grammar's ``forms``, each a template over ``{recv}`` filled with the receiver's
    code. As ``member``: a value in the receiver whenever it is non-empty (``'max({recv})'``,
    ``'{recv}[-1]'``; pair it with ``requires: [non_empty(recv)]``). As ``derived``: a value
    computed from the receiver that equals it on some inputs (``'sorted({recv})'``,
    ``'abs({recv})'``), for equality tests: two inputs of one type are nearly never equal."""
    return ctx.choice(list(forms)).replace("{recv}", ctx.text(recv))


def overlapping(ctx: SourceContext, t: Type, recv: str, *forms: str) -> str:
    """A value that shares some elements with the receiver and misses others: another variable of
    the argument's type two times in three (inputs of one type are drawn over one small range),
    else one of the ``forms`` over the receiver (``'set(sorted({recv})[::2])'``)."""
    return _other_variable(ctx, t) or member(ctx, t, recv, *forms)


def another(ctx: SourceContext, t: Type, recv: str) -> str:
    """A value from outside the receiver: another variable of the argument's type two times in
    three, else a constant of the type. For an operation that no value made from the receiver
    can change (``s.update(sorted(s))`` adds nothing), where ``overlapping`` would need forms."""
    return _other_variable(ctx, t) or ctx.constant(t)


def _other_variable(ctx: SourceContext, t: Type) -> str | None:
    """Another variable of type ``t`` two times in three when the scope has one (always when the
    statement should read it), else None."""
    var = ctx.variable_of(t)
    return var if var is not None and (ctx.prefers(var) or ctx.randint(0, 2) > 0) else None


def part_of(ctx: SourceContext, t: Type, recv: str) -> str:
    """A short piece of the receiver's kind (a one- or two-character substring)."""
    return ctx.constant(t, short=True)


def width(ctx: SourceContext, t: Type, recv: str) -> str:
    """A width around the receiver's length (padding, centring, zero-filling)."""
    m = ctx.min_len(recv)
    return ctx.literal(m + ctx.randint(0, 8))


def small_int(ctx: SourceContext, t: Type) -> str:
    return ctx.literal(ctx.randint(0, 3))


def positive(ctx: SourceContext, t: Type) -> str:
    return ctx.literal(ctx.randint(1, 5))


def nonzero(ctx: SourceContext, t: Type) -> str:
    value = ctx.choice([1, 2, 3, 4, -2, -3])
    return ctx.literal(float(value) if t.name == "float" else value)


def choice(ctx: SourceContext, t: Type, *options: object) -> str:
    """One of the literal options written in the grammar."""
    return ctx.literal(ctx.choice(list(options)))


IMPLEMENTATIONS: dict[str, Callable[..., str]] = {
    "valid_index": valid_index,
    "any_index": any_index,
    "element_of": element_of,
    "member": member,
    "derived": member,  # the same forms, another purpose (see ``member``)
    "overlapping": overlapping,
    "another": another,
    "key_of": element_of,
    "part_of": part_of,
    "width": width,
    "small_int": small_int,
    "positive": positive,
    "nonzero": nonzero,
    "choice": choice,
}
# Sources whose literal arguments are forms: templates over the placeholders they name.
FORM_SOURCES = frozenset({"member", "derived", "overlapping"})
# Sources that may write another variable of the argument's type: a program for an operation
# with one starts with a parameter of that type.
SCOPE_SOURCES = frozenset({"overlapping", "another"})
# Sources that may write a variable of the argument's type (one the statement should read, when
# the scope has one: ``seen.add(word)`` reads the loop's ``word``).
VARIABLE_SOURCES = frozenset({"element_of", "key_of", "overlapping", "another"})
# A source's arity (its arguments after the context and the type); -1: any number, at least the
# named ones (``choice``'s options, ``member``'s forms).
SOURCES: dict[str, int] = {
    name: -1 if fn.__code__.co_flags & inspect.CO_VARARGS else fn.__code__.co_argcount - 2
    for name, fn in IMPLEMENTATIONS.items()
}
