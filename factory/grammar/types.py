"""Type expressions of the grammar: ``int``, ``list[T]``, ``dict[K, V]``, ``tuple[int, T]``.

A type is a name plus arguments. Single upper-case names (``T``, ``K``, ``V``, ``U``) are type
variables, bound per operation use by unification.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|\[|\]|,)")


@dataclass(frozen=True)
class Type:
    """A (possibly generic) type: ``Type("list", (Type("int"),))`` is ``list[int]``."""

    name: str
    args: tuple[Type, ...] = ()

    @property
    def is_var(self) -> bool:
        return len(self.name) == 1 and self.name.isupper() and not self.args

    def __str__(self) -> str:
        if not self.args:
            return self.name
        return f"{self.name}[{', '.join(str(a) for a in self.args)}]"

    def variables(self) -> set[str]:
        if self.is_var:
            return {self.name}
        return set().union(*(a.variables() for a in self.args)) if self.args else set()

    def substitute(self, binding: dict[str, Type]) -> Type:
        if self.is_var:
            return binding.get(self.name, self)
        if not self.args:
            return self
        return Type(self.name, tuple(a.substitute(binding) for a in self.args))

    @property
    def is_concrete(self) -> bool:
        return not self.variables()


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
        binding = unify(p, c, binding)
        if binding is None:
            return None
    return binding
