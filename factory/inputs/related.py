"""Related arguments: a parameter's value made from another parameter's value of the same type.

Drawn independently, two collections almost never overlap: a program that asks whether one set
is a subset of another, or whether a word of one list is in another, answers ``False`` on every
drawn input and is dropped as ``constant_output``, and the operations it was built for never
reach the release (``set.issubset`` and ``set.intersection`` had fewer than 20 items). A person
writing test inputs relates them: a part of the other value, the other value with more, or the
two sharing some elements. A share of every signature's argument lists (``inputs.related_share``)
does so, on the values Hypothesis drew, by what they are, never by an operation's name:

- ``part``: some of the other's elements in their order (a set's, a list's, a tuple's, a dict's
  items), a run of its words or characters (a string, bytes);
- ``more``: the other's whole value with one or two of its own elements added (a superset);
- ``overlap``: part of the other's value and part of its own.

Numbers and booleans are never related (their pools already meet every order), nor tuples of
mixed types (``pair[int, str]``: a part of one would change the type).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from factory.grammar.types import Type, parse_type
from factory.literals import canonical_repr

RELATIONS = ("part", "more", "overlap")


class Relations:
    """How a signature's pool relates its parameters: ``share`` of its argument lists get one
    parameter made from another of its type; ``values`` maps each type to the drawn value of
    each of its pool's literal texts, and ``literal`` writes a made value back as the pool does
    (``Language.drawn_literal``)."""

    def __init__(
        self,
        share: float,
        values: Mapping[str, Mapping[str, Any]],
        literal: Callable[[Any, Type], str],
    ) -> None:
        self.share = share
        # type -> literal text -> value: the drawn ones, then those made (a later parameter may
        # be made from a made one)
        self._values = {t: dict(by_text) for t, by_text in values.items()}
        self._literal = literal
        self._types: dict[str, Type] = {}

    def _type(self, type_text: str) -> Type:
        t = self._types.get(type_text)
        if t is None:
            t = self._types[type_text] = parse_type(type_text)
        return t

    def relatable(self, type_text: str) -> bool:
        """Whether values of this type can be related (collections of one element type, strings)."""
        values = self._values.get(type_text) or {}
        sample = next(iter(values.values()), None)
        if isinstance(sample, dict):
            return True
        one_kind = len(self._type(type_text).args) <= 1  # not ``pair[int, str]``
        return isinstance(sample, (str, bytes, set, frozenset, list, tuple)) and one_kind

    def relate(self, type_text: str, other: str, own: str, rng: random.Random) -> str | None:
        """The literal of a value of ``type_text`` related to ``other`` (another parameter's
        literal), made with ``own`` (the value this parameter was drawn); None when no new value
        comes of it."""
        values = self._values[type_text]
        made = related_value(values[other], values[own], rng.choice(RELATIONS), rng)
        if made is None:
            return None
        text = self._literal(made, self._type(type_text))
        if text in (other, own):
            return None
        values.setdefault(text, made)
        return text


def related_value(other: Any, own: Any, relation: str, rng: random.Random) -> Any:
    """A value of ``other``'s kind related to it by ``relation``, using ``own`` where it adds
    elements; None where the kinds differ or there is nothing to relate (an empty value)."""
    if type(other) is not type(own) or not other:
        return None
    if isinstance(other, (str, bytes)):
        return _related_text(other, own, relation, rng)
    if isinstance(other, dict):
        items = _related_items(list(other.items()), list(own.items()), relation, rng)
        return dict(items)
    if isinstance(other, (set, frozenset)):
        # in a fixed order: a set's own order is the process's hash seed's (strings)
        return type(other)(_related_items(_ordered(other), _ordered(own), relation, rng))
    return type(other)(_related_items(list(other), list(own), relation, rng))


def _ordered(values: set[Any] | frozenset[Any]) -> list[Any]:
    """The elements in an order no hash seed changes: sorted, or by their canonical text when
    they do not compare (mixed types)."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=canonical_repr)


def _part(items: list[Any], rng: random.Random) -> list[Any]:
    """Some of ``items`` (at least one, not all when there are several), in their order."""
    if len(items) == 1:
        return items
    keep = rng.sample(range(len(items)), rng.randint(1, len(items) - 1))
    return [items[i] for i in sorted(keep)]


def _related_items(other: list[Any], own: list[Any], relation: str, rng: random.Random) -> list[Any]:
    extra = [x for x in own if x not in other]
    if relation == "part":
        return _part(other, rng)
    if relation == "more":
        return other + extra[: rng.randint(1, 2)]
    return _part(other, rng) + (_part(extra, rng) if extra else [])


def _related_text(other: Any, own: Any, relation: str, rng: random.Random) -> Any:
    """Strings and bytes: runs of words where the text has several, else of characters."""
    space = " " if isinstance(other, str) else b" "
    words = other.split(space)
    if len(words) > 1 and all(words):
        own_words = [w for w in own.split(space) if w]
        if relation == "part":  # a run of words from the start or the end
            n = rng.randint(1, len(words) - 1)
            return space.join(words[:n] if rng.random() < 0.5 else words[-n:])
        return space.join(_related_items(words, own_words, relation, rng))
    if relation == "part":
        if len(other) == 1:
            return other
        start = rng.randrange(len(other))
        stop = rng.randint(start + 1, len(other))
        return other[start:stop] if stop - start < len(other) else other[1:]
    if relation == "more":
        return other + own[: rng.randint(1, 3)] if rng.random() < 0.5 else own[: rng.randint(1, 3)] + other
    half = rng.randint(1, len(other))
    return other[:half] + own[half:]
