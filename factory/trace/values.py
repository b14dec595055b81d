"""Values as the tracer records them: a bounded repr, whether it is a literal, and cheap change
detection (identity for scalars, a ``marshal`` fingerprint for built-in containers, a repr
otherwise: docs/design.md §4, ``semantics.md``)."""

from __future__ import annotations

import itertools
import marshal
import math
import re
from typing import Any

Snapshot = tuple[Any, bytes | str | None]  # (value, memo): see snapshot

# Immutable scalar types: a value of one of these never changes behind a name's back.
ATOMS = frozenset({int, float, complex, bool, str, bytes, type(None)})
# Atoms whose equality (with equal types) implies equal repr; floats need repr (0.0 == -0.0).
EQ_IS_REPR = frozenset({int, bool, str, bytes, type(None)})
UNSIZED = frozenset({int, bool, type(None)})
#: A memory address in a repr (``<object at 0x7f...>``): it differs between runs.
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")

# Containers fingerprinted with marshal (format 2: no back-references, so the bytes depend only on
# the value: exact types, bool apart from int, -0.0 apart from 0.0; nested containers included).
MARSHALLED = frozenset({list, tuple, dict, set, frozenset})
MARSHAL_VERSION = 2


def safe_repr(value: Any) -> str:
    """``repr(value)``, or a placeholder naming the type and the error when that fails."""
    try:
        return repr(value)
    except Exception as exc:  # a huge int (ValueError), a broken __repr__, ...
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


def bounded_repr(value: Any, max_repr: int) -> tuple[str, bool]:
    """``(text, truncated)``: the repr, cut to ``max_repr`` characters when longer.

    Long lists, tuples and dicts are cut without building their whole repr (a string's repr is
    built whole: its quotes depend on all of its characters).
    """
    kind = type(value)
    # Lower bounds of the repr's length: 3 characters per sequence item ("x, "), 6 per dict item.
    if kind in (list, tuple) and 3 * len(value) > max_repr:
        return safe_repr(value[: max_repr // 3 + 1])[:max_repr], True
    if kind is dict and 6 * len(value) > max_repr:
        head = dict(itertools.islice(value.items(), max_repr // 6 + 1))
        return safe_repr(head)[:max_repr], True
    text = safe_repr(value)
    if len(text) > max_repr:
        return text[:max_repr], True
    return text, False


def literal_value(value: Any, depth: int = 0) -> bool:
    """``factory.literals.is_literal`` without building and parsing a repr (same answers).

    Given exact built-in types, finite floats and bounded depth, ``literal_eval(repr(v))``
    rebuilds ``v`` for every literal type except ``frozenset`` (its repr is a call). The tests
    check that both functions agree.
    """
    kind = type(value)
    if depth > 50:
        return False
    if kind in EQ_IS_REPR:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is complex:
        return math.isfinite(value.real) and math.isfinite(value.imag)
    if kind is list or kind is tuple or kind is set:
        if depth < 50 and set(map(type, value)) <= EQ_IS_REPR:
            return True
        return all(literal_value(item, depth + 1) for item in value)
    if kind is dict:
        if depth < 50 and set(map(type, value)) | set(map(type, value.values())) <= EQ_IS_REPR:
            return True
        return all(literal_value(k, depth + 1) and literal_value(v, depth + 1) for k, v in value.items())
    return False


def holds_set(value: Any) -> bool:
    """Whether a literal value is or holds a set (``literal_value`` bounds its depth)."""
    kind = type(value)
    if kind is set:
        return True
    if kind is dict:
        items = [*value, *value.values()]
    elif kind is list or kind is tuple:
        items = value
    else:
        return False
    if set(map(type, items)) <= EQ_IS_REPR:
        return False
    return any(holds_set(item) for item in items)


def recorded_literal(value: Any, text: str, truncated: bool) -> bool:
    """Whether a recorded value is a literal: short enough, representable, literal-shaped."""
    return not truncated and not text.startswith("<unrepresentable") and literal_value(value)


def marshal_fingerprint(value: Any) -> bytes | None:
    """marshal bytes of a built-in container (deep), or None when it holds other objects."""
    try:
        return marshal.dumps(value, MARSHAL_VERSION)
    except ValueError:  # an object marshal does not know, or nested too deep
        return None


def snapshot(value: Any, fingerprint: bytes | None = None, text: str | None = None) -> Snapshot:
    """Remember ``value`` as it is now: ``(value, memo)``.

    ``memo`` is None for immutable scalars (identity says it all), the marshal bytes for built-in
    containers (a mutated list is the same object with new bytes), else the repr.
    """
    kind = type(value)
    if kind in ATOMS:
        return (value, None)
    if kind in MARSHALLED:
        if fingerprint is None:
            fingerprint = marshal_fingerprint(value)
        if fingerprint is not None:
            return (value, fingerprint)
    return (value, safe_repr(value) if text is None else text)
