"""The grammar as data: types with their input strategies, operations, predicates."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from factory.grammar.types import Type


@dataclass(frozen=True)
class Call:
    """A named use with arguments, as written in YAML: ``valid_index(recv)``, ``choice('a', 'b')``.

    ``args`` holds placeholder names (str) for ``Name`` arguments and Python values for literals;
    ``literal_args`` tells which is which.
    """

    name: str
    args: tuple[Any, ...] = ()
    literal_args: tuple[bool, ...] = ()

    def refs(self) -> list[str]:
        return [a for a, lit in zip(self.args, self.literal_args, strict=True) if not lit]


@dataclass(frozen=True)
class ArgSpec:
    name: str
    type: Type
    source: Call | None  # where a value comes from; None means "any expression of the type"
    # Literal texts of values that make the operation a no-op or an identity (``''`` for
    # ``s.removeprefix({prefix})``, ``1`` for ``x * {n}``): the synthesizer never writes them.
    identity: tuple[str, ...] = ()


@dataclass(frozen=True)
class Operation:
    """One way of using a type: how it is written, what it takes and gives, when it is valid."""

    op_id: str  # "<file type>.<name>", e.g. "list.pop"
    name: str
    template: str
    receiver: Type
    args: tuple[ArgSpec, ...]
    returns: Type | None  # None: a statement-only operation (returns None)
    mutates: bool
    requires: tuple[Call, ...]
    statement: bool  # the template is a whole statement (``{recv} += {other}``)
    length_result: str  # "unknown" | "same" | "grow": minimum length of the result
    length_recv: str  # "same" | "shrink" | "grow" | "clear": effect on the receiver
    imports: tuple[str, ...]  # modules the template needs (``import math`` for ``math.ceil(x)``)
    file: str
    line: int
    # Names by role for a variable holding the result (``count``, ``length`` for ``len``).
    names: tuple[str, ...] = ()
    # The result equals the receiver (``xs.copy()``, ``s[:]``): comparing the two is no work.
    copies: bool = False
    # The receiver's new value does not depend on its old one (``xs.clear()``): the synthesizer
    # only resets a variable whose value was read, and refills it at once.
    resets: bool = False
    # ``op(x, op(x, y)) == op(x, y)`` in any order and grouping (``a & (a & b)``, ``p and (p and q)``):
    # the synthesizer never gives one use the same operand twice.
    idempotent: bool = False
    # ``op(op(x, a), a) == op(x, a)`` (``round(round(n, -1), -1)``): the synthesizer never applies
    # it again, with the same arguments, to its own result.
    stable: bool = False
    # ``op(x, y)`` keeps nothing of ``y`` (``x - y``, ``x -= y``): ``op(y, op(x, y)) == y``, so the
    # synthesizer never applies it to ``y`` and what it made of ``y`` (``pool -= unique`` after
    # ``unique -= pool`` changes nothing).
    removes: bool = False
    # What it leaves (its result, or the receiver it changes) holds only items the receiver had
    # (``x - y``, ``x &= y``, ``d.pop(k, v)``): on an empty receiver it is no work, so the
    # synthesizer never applies it to a variable that still holds its empty starting value.
    subset: bool = False
    # The receiver, a test, picks which argument is the result (``a if flag else b``): inside an
    # argument the test's variable holds a known value (``(x if flag else y) if flag else z``,
    # ``str(flag) if flag else s``), so the synthesizer never lets an argument read it.
    branches: bool = False

    def all_types(self) -> list[Type]:
        types = [self.receiver, *(a.type for a in self.args)]
        return types + ([self.returns] if self.returns else [])

    @cached_property
    def type_variables(self) -> tuple[str, ...]:
        """The type variables of ``all_types()``, each type's in sorted order, first appearance
        first (computed once: the synthesizer binds them for every use of the operation)."""
        return tuple(dict.fromkeys(v for t in self.all_types() for v in sorted(t.variables())))


@dataclass(frozen=True)
class TypeSpec:
    """A type the synthesizer can hold in a variable and Hypothesis can draw as an input."""

    name: str
    params: tuple[str, ...]
    names: tuple[str, ...]
    strategy: dict[str, Any]  # {"kind": <hypothesis.strategies function>, **kwargs}
    element_strategy: dict[str, Any] | None  # used instead inside containers (short strings)
    convert: str | None  # builtin applied to a drawn value (``tuple`` for tuples)
    constants: tuple[str, ...]  # literal texts for scalar types
    literal: dict[str, Any] | None  # display form for container constants
    iterates: str | None  # element type of ``for x in value`` (a type expression over params)
    file: str
    line: int
    # names of what ``for x in value`` gives when not the element type's (a string's characters)
    element_names: tuple[str, ...] = ()

    @property
    def container(self) -> bool:
        """Written as literals but without constants of its own: a list, a set, a dict."""
        return bool(self.literal) and not self.constants


@dataclass(frozen=True)
class Predicate:
    name: str
    params: tuple[str, ...]
    guard: str  # a Python condition template over the params
    min_len: dict[str, int]  # statically known when these minimum lengths hold
    file: str
    line: int


@dataclass(eq=False)
class Grammar:
    """Everything loaded from one language folder."""

    language: str  # the name of its Language (factory.languages), from the statements file
    types: dict[str, TypeSpec] = field(default_factory=dict)
    operations: list[Operation] = field(default_factory=list)
    predicates: dict[str, Predicate] = field(default_factory=dict)
    element_types: tuple[Type, ...] = ()
    control_flow: dict[str, float] = field(default_factory=dict)
    # Type name -> weight for choosing what a program returns (a type not listed weighs 1.0).
    output_weights: dict[str, float] = field(default_factory=dict)
    grammar_hash: str = ""
    # Indexes the synthesizer derives from the operations (built once, kept with the grammar).
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        # A copy (pickled for another process) leaves the derived indexes behind: that process
        # builds its own, with its own hash seed.
        return {**self.__dict__, "cache": {}}

    def op(self, op_id: str) -> Operation:
        for op in self.operations:
            if op.op_id == op_id:
                return op
        raise KeyError(op_id)

    def output_weight(self, type_name: str) -> float:
        """The weight of returning a value of this type (``output_weights``; 1.0 when unlisted)."""
        return self.output_weights.get(type_name, 1.0)

    def targets(self) -> list[str]:
        """Distinct operation ids in grammar order (variants of one op share an id)."""
        return list(dict.fromkeys(op.op_id for op in self.operations))
