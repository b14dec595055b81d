"""What every part of the program builder shares: the draw, the target and tier, and the scope."""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from factory.grammar.model import Grammar, Operation
from factory.grammar.sources import FORM_SOURCES
from factory.grammar.types import Type
from factory.languages import Language, language
from factory.synth.tiers import ENTRY, HELPER, TIERS


class GenerationFailed(Exception):
    """This draw cannot make a valid program (the caller retries with the same RNG)."""


@dataclass(slots=True)  # slots: variables are read in every scan of the scope
class Var:
    name: str
    type: Type
    min_len: int = 0
    frozen: bool = False  # iterated by an enclosing loop or a while counter: never mutated
    pending: bool = True  # holds a value no statement has read yet (it must be read later)
    made_by: str = ""  # the operation that computed its value (``not`` twice is no work)
    # When ``made_by`` is idempotent: the operands it combined, expanded (``both = p and q``: p, q).
    operands: frozenset[str] = frozenset()
    made_with: tuple[str, ...] = ()  # the arguments ``made_by`` took, when it is ``stable``
    unread_start: bool = False  # holds the starting constant it was set to (a reset of it is no work)
    # One element of a value whose elements have its own type (a character of a string, bound by a
    # loop over it): a loop over it would run once.
    one_element: bool = False
    # The variable whose value it holds a copy of (``clone = xs.copy()``: ``xs``) while neither
    # has changed since: ``clone | xs`` is ``xs | xs``.
    copy_of: str = ""
    touched: bool = False  # a statement read or wrote it (an input nothing touched is left out)
    # Made by a ``removes`` operation (``unique -= pool``): its id and the variables its argument
    # read, while none of them has changed (``pool`` loses nothing to ``unique`` then).
    removed: tuple[str, frozenset[str]] | None = None


class ScopePairs:
    """(item, variable) pairs, variable by variable, without building each pair: the draws
    (``rng.choice``, ``rng.choices``) only ask for the length and the item drawn (saves building
    the pairs of every test over the scope to draw one, for each condition, and of every
    operation on the scope for each statement)."""

    def __init__(self, segments: list[tuple[Var, Sequence[Operation]]]):
        self.segments = [seg for seg in segments if seg[1]]
        self.ends = list(accumulate(len(ops) for _, ops in self.segments))

    def __len__(self) -> int:
        return self.ends[-1] if self.ends else 0

    def __getitem__(self, i: int) -> tuple[Operation, Var]:
        k = bisect_right(self.ends, i)
        v, ops = self.segments[k]
        start = self.ends[k - 1] if k else 0
        return ops[i - start], v


def variants(grammar: Grammar, target: str) -> tuple[Operation, ...]:
    """The operations with id ``target``, in grammar order (memoised on the grammar: saves a scan of
    every operation for each program drawn)."""
    key = ("variants", target)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = tuple(op for op in grammar.operations if op.op_id == target)
    return found


def uses_needed(grammar: Grammar, target: str) -> int:
    """How many uses of ``target`` a program needs: two, or one when every variant resets its
    receiver (a reset twice is the same work twice)."""
    return 1 if all(op.resets for op in variants(grammar, target)) else 2


def target_shapes(grammar: Grammar, op: Operation) -> tuple[Any, frozenset[Any]]:
    """The shape that counts as a use of the target ``op`` and every shape its uses may hold:
    its template's, and those of its value sources' forms (``xs.index(max(xs))``: ``max`` is part
    of the target's use, also in tier 1). Memoised on the grammar."""
    key = ("target_shapes", op.op_id)
    found = grammar.cache.get(key)
    if found is None:
        syntax = language(grammar.language).tier_syntax
        use, allowed = syntax.template_signatures(op.template, op.statement)
        for arg in op.args:
            if arg.source is not None and arg.source.name in FORM_SOURCES:
                for form in arg.source.args[1:]:
                    allowed = allowed | syntax.template_signatures(form, False)[1]
        found = grammar.cache[key] = (use, frozenset(allowed))
    return found


class BuildState:
    """One program being built for a target operation and tier from a seeded RNG: the grammar and
    its language, the variables in scope, the names taken and the results a function may return."""

    def __init__(self, grammar: Grammar, target: str, tier: int, rng: random.Random):
        self.g = grammar
        self.lang: Language = language(grammar.language)
        self.target = target
        self.tier = TIERS[tier]
        self.rng = rng
        self.target_variants = list(variants(grammar, target))
        if not self.target_variants:
            raise KeyError(target)
        self.target_shapes = target_shapes(grammar, self.target_variants[0])[1]
        self.uses_needed = uses_needed(grammar, target)
        self.scope: list[Var] = []
        self.imports: set[str] = set()
        self.used_names: set[str] = {ENTRY, HELPER}
        self.results: list[str] = []
        self.computed: dict[str, frozenset[str]] = {}  # expressions computed, with what they read
        self.loop_depth = 0

    def fresh_name(self, t: Type, op: Operation | None = None, names: Sequence[str] = ()) -> str:
        """A name the program does not use yet for a value of type ``t``: from ``names`` or by the
        role of the operation that computes it (its ``names``) when they have free ones, else by
        its type."""
        spec = self.g.types.get(t.name)
        pools = [list(names)] if names else []
        pools += [list(op.names)] if op is not None else []
        pools.append(list(spec.names) if spec else ["value"])
        for pool in pools:
            free = [n for n in pool if n not in self.used_names]
            if free:
                name = self.rng.choice(free)
                break
        else:
            base = self.rng.choice(pools[0] or pools[-1])
            taken = [self.lang.derived_name(base, suffix) for suffix in ("new", "next", "last", "out")]
            name = next((t for t in taken if t not in self.used_names), base)
            while name in self.used_names:
                name += "_"
        self.used_names.add(name)
        return name

    def snapshot(self) -> tuple:
        """What a failed statement must not leave behind (``restore``)."""
        flags = [
            (v, v.pending, v.min_len, v.unread_start, v.copy_of, v.touched, v.removed) for v in self.scope
        ]
        return (
            list(self.scope),
            flags,
            set(self.used_names),
            list(self.results),
            set(self.imports),
            dict(self.computed),
        )

    def restore(self, snap: tuple) -> None:
        scope, flags, used, results, imports, computed = snap
        self.scope, self.used_names, self.results, self.imports = (
            list(scope),
            set(used),
            list(results),
            set(imports),
        )
        self.computed = dict(computed)
        for v, *state in flags:
            v.pending, v.min_len, v.unread_start, v.copy_of, v.touched, v.removed = state

    def pending_names(self) -> frozenset[str]:
        """Variables in scope whose value no statement has read yet."""
        return frozenset(v.name for v in self.scope if v.pending)

    def settle(self, reads: frozenset[str], writes: frozenset[str]) -> None:
        """A statement read ``reads`` and then wrote ``writes``."""
        for v in self.scope:
            if v.name in reads or v.name in writes:
                v.touched = True
            if v.name in reads:
                v.pending = False
            if v.name in writes:
                v.pending, v.unread_start, v.copy_of, v.removed = True, False, "", None
            else:
                if v.copy_of in writes:
                    v.copy_of = ""  # what it copied has changed
                if v.removed is not None and not v.removed[1].isdisjoint(writes):
                    v.removed = None  # what was removed from it has changed
        if writes:  # what was computed from a changed variable is new again
            self.computed = {code: r for code, r in self.computed.items() if not r & writes}

    def random_binding(self, op: Operation, binding: dict[str, Type] | None = None) -> dict[str, Type]:
        """``binding`` extended with an element type for each of ``op``'s unbound type variables."""
        binding = dict(binding) if binding else {}
        for var in op.type_variables:
            if var not in binding:
                binding[var] = self.rng.choice(self.g.element_types)
        return binding

    def is_other(self, op: Operation) -> bool:
        """Whether ``op`` reads as another operation than the target (by its shape, as the static
        check sees it: ``len`` of a set and ``len`` of a str look the same)."""
        key = self.lang.tier_syntax.template_signatures(op.template, op.statement)[0]
        return key not in self.target_shapes

    def effective_len(self, var: Var) -> int:
        # Inside a loop a variable may have been shrunk by earlier iterations: assume nothing.
        return 0 if self.loop_depth else var.min_len

    def receiver_var(self, t: Type, *, allow_start: bool = True) -> Var | None:
        """A variable of type ``t`` that may be mutated (not iterated by a loop), if any;
        ``allow_start`` False: not one that still holds its empty starting value."""
        options = [
            v for v in self.scope if v.type == t and not v.frozen and (allow_start or not v.unread_start)
        ]
        return self.rng.choice(options) if options else None

    def note_result(self, name: str) -> None:
        """``name`` was just bound: the most recent candidate for the function's result."""
        if name in self.results:
            self.results.remove(name)
        self.results.append(name)

    def forget_since(self, scope_before: list[Var]) -> None:
        """Drop variables first bound after ``scope_before`` (they may be unbound later)."""
        names = {v.name for v in self.scope} - {v.name for v in scope_before}
        self.scope = [v for v in self.scope if v.name not in names]
        self.results = [r for r in self.results if r not in names]
