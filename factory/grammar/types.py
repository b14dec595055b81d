"""Type expressions of the grammar: ``int``, ``list[T]``, ``dict[K, V]``, ``tuple[int, T]``.

A type is a name plus arguments. Single upper-case names (``T``, ``K``, ``V``, ``U``) are type
variables, bound per operation use by unification.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|\[|\]|,)")


@dataclass(frozen=True, eq=False)
class Type:
    """A (possibly generic) type: ``Type("list", (Type("int"),))`` is ``list[int]``.

    Equality and hashing go through the text form, computed once (the synthesizer compares and
    hashes types millions of times).
    """

    name: str
    args: tuple[Type, ...] = ()
    # Derived in __post_init__, not arguments: the text form, whether this is a type variable, and
    # whether any type variable occurs in it (a concrete type substitutes to itself).
    _text: str = field(init=False, repr=False, compare=False)
    is_var: bool = field(init=False, repr=False, compare=False)
    _has_vars: bool = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)  # of the text: types key many caches
    _vars: tuple[str, ...] = field(init=False, repr=False, compare=False)  # variables(), sorted

    def __post_init__(self) -> None:
        text = self.name if not self.args else f"{self.name}[{', '.join(a._text for a in self.args)}]"
        is_var = len(self.name) == 1 and self.name.isupper() and not self.args
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "is_var", is_var)
        object.__setattr__(self, "_has_vars", is_var or any(a._has_vars for a in self.args))
        object.__setattr__(self, "_hash", hash(text))
        names = {self.name} if is_var else set().union(*(a._vars for a in self.args))
        object.__setattr__(self, "_vars", tuple(sorted(names)))

    def __eq__(self, other: object) -> bool:
        # The same object first: most comparisons are of a type with itself (cached bindings).
        return self is other or (isinstance(other, Type) and self._text == other._text)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Type], tuple[str, tuple[Type, ...]]]:
        # Rebuilt from its name and arguments: the stored hash is of this process's hash seed,
        # and a copy in another process (a Ray actor's) must hash as that process's types do.
        return Type, (self.name, self.args)

    def __str__(self) -> str:
        return self._text

    def variables(self) -> set[str]:
        if self.is_var:
            return {self.name}
        return set().union(*(a.variables() for a in self.args)) if self._has_vars else set()

    def substitute(self, binding: dict[str, Type]) -> Type:
        if self.is_var:
            return binding.get(self.name, self)
        if not self._has_vars:
            return self  # an equal copy otherwise: types are immutable and equal by their text
        # Keyed by the texts its own variables are bound to ("": unbound), not by every binding.
        key = (self._text, *[t._text if (t := binding.get(name)) is not None else "" for name in self._vars])
        found = _SUBSTITUTED.get(key)
        if found is None:
            found = _SUBSTITUTED[key] = Type(self.name, tuple(a.substitute(binding) for a in self.args))
        return found


# Substitutions into generic types by the texts of the type and of what its variables are bound
# to: the same few are made again and again (``list[T]`` with ``T=int``), and building a Type is
# the costly part.
_SUBSTITUTED: dict[tuple[str, ...], Type] = {}


def parse_type(text: str) -> Type:
    """Parse a type expression; raises ValueError with a short message when malformed."""
    tokens = _TOKEN.findall(text)
    if "".join(tokens) != re.sub(r"\s+", "", text):
        raise ValueError(f"bad type expression {text!r}")
    pos = 0

    def parse() -> Type:
        nonlocal pos
        if pos >= len(tokens) or tokens[pos] in "[],":
            raise ValueError(f"bad type expression {text!r}")
        name = tokens[pos]
        pos += 1
        args: list[Type] = []
        if pos < len(tokens) and tokens[pos] == "[":
            pos += 1
            args.append(parse())
            while pos < len(tokens) and tokens[pos] == ",":
                pos += 1
                args.append(parse())
            if pos >= len(tokens) or tokens[pos] != "]":
                raise ValueError(f"bad type expression {text!r}: missing ']'")
            pos += 1
        return Type(name, tuple(args))

    result = parse()
    if pos != len(tokens):
        raise ValueError(f"bad type expression {text!r}: trailing {tokens[pos]!r}")
    return result


def unify(pattern: Type, concrete: Type, binding: dict[str, Type] | None = None) -> dict[str, Type] | None:
    """Bind the variables of ``pattern`` so that it equals ``concrete``; None when impossible."""
    key = (pattern._text, concrete._text)
    try:
        fresh = _FRESH_UNIFIERS[key]
    except KeyError:
        fresh = _FRESH_UNIFIERS[key] = _unify_fresh(pattern, concrete)
    if fresh is None:
        return None
    merged = dict(binding) if binding else {}
    for name, t in fresh:
        bound = merged.setdefault(name, t)
        if bound is not t and bound != t:
            return None
    return merged


# Unification from an empty binding by the texts of (pattern, concrete): types equal by their text,
# so this saves re-unifying (and hashing Type objects) for the pairs the synthesizer asks again
# and again. It holds at most one entry per pair of type texts the grammar's types can form.
_FRESH_UNIFIERS: dict[tuple[str, str], tuple[tuple[str, Type], ...] | None] = {}


def _unify_fresh(pattern: Type, concrete: Type) -> tuple[tuple[str, Type], ...] | None:
    """Unification from an empty binding, as (variable, type) pairs; None when impossible."""
    binding = _unify(pattern, concrete, {})
    return None if binding is None else tuple(binding.items())


def _unify(pattern: Type, concrete: Type, binding: dict[str, Type] | None) -> dict[str, Type] | None:
    binding = dict(binding or {})
    if pattern.is_var:
        bound = binding.get(pattern.name)
        if bound is None:
            binding[pattern.name] = concrete
            return binding
        return binding if bound == concrete else None
    if pattern.name != concrete.name or len(pattern.args) != len(concrete.args):
        return None
    for p, c in zip(pattern.args, concrete.args, strict=True):
        binding = _unify(p, c, binding)
        if binding is None:
            return None
    return binding
