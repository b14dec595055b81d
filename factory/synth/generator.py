"""Type-directed program generation from a grammar, one program per (seed, index).

A program is a function ``f`` whose parameters are typed by the grammar. Its body is built from
operations of the grammar (templates filled with variables, constants and nested operations),
under the constraints of a curriculum tier (see ``TIERS``). The synthesizer never looks at which
method an operation is: only at its types, value sources, preconditions and length effects. It
builds a language-neutral program tree (``factory.languages.nodes``) that the grammar's language
renders. The parts: ``state`` (scope and names), ``expressions`` and ``constants``, ``statements``
(blocks and guards), ``control`` (control-flow constructs); this module is the program's frame
(parameters, functions, the helper, what is returned).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from factory.grammar.model import Grammar
from factory.grammar.sources import SCOPE_SOURCES
from factory.grammar.types import Type, unify
from factory.languages import nodes as n
from factory.synth.expressions import Expressions
from factory.synth.index import drawable
from factory.synth.liveness import dead_statements, reads_of
from factory.synth.state import BuildState, GenerationFailed, Var
from factory.synth.statements import Statements
from factory.synth.tiers import ENTRY, HELPER

__all__ = ["GenerationFailed", "Program", "ProgramBuilder", "generate_program"]

TOP_UP_TRIES = 3  # draws of a statement that uses the target once more, before the entry returns


@dataclass
class Program:
    source: str
    entry: str
    tier: int
    target: str
    params: list[tuple[str, str]]  # (name, type expression)


class ProgramBuilder:
    """Builds one program for a target operation and tier from a seeded RNG."""

    def __init__(self, grammar: Grammar, target: str, tier: int, rng: random.Random):
        self.s = BuildState(grammar, target, tier, rng)
        self.statements = Statements(self.s, Expressions(self.s))
        # Whether the target can be used again on what its first use made (its own result, or the
        # variable it mutated): set by ``parameters``; tier 1 without it needs one input per use.
        self.acts_again = True

    def parameters(self, count: int) -> list[Var]:
        """Parameters: the target's receiver type first, then types the target's args need."""
        s = self.s
        op = s.rng.choice(s.target_variants)
        binding = s.random_binding(op)
        wanted = [op.receiver.substitute(binding)]
        wanted += [
            a.type.substitute(binding) for a in op.args if a.source is None or a.source.name in SCOPE_SOURCES
        ]
        free_args = [a for a in op.args if a.source is None]
        returns = op.returns.substitute(binding) if op.returns is not None else None
        chains = bool(free_args) and returns is not None and unify(op.receiver, returns) is not None
        if not chains:
            # The target cannot act on its own result (or doing so is no work): two inputs instead.
            wanted.append(wanted[0])
        # What the target's two uses need is kept (a test of two sets needs two sets, not a literal).
        is_test = op.returns is not None and op.returns.name == s.lang.core_types.boolean
        needed = len(wanted) if is_test else 1
        # A mutation acts on its variable again (``pool -= {'x'}`` twice); else, in tier 1, the
        # second use needs the second input: nothing else can be made of the first (one input
        # failed every such tier-1 draw, measured: a fifth of the failed draws).
        self.acts_again = chains or op.mutates or op.statement
        if not self.acts_again and not s.tier.other_ops:
            needed = max(needed, 2)
        if any(a.source is not None and a.source.name in SCOPE_SOURCES for a in op.args):
            needed = max(needed, 2)  # a value to overlap with
        if s.uses_needed == 1:
            needed = max(needed, 2)  # a reset: another input for its refill to draw on
        receiver = s.g.types.get(wanted[0].name)
        if (
            receiver is not None
            and receiver.container
            and wanted[0] in [a.type.substitute(binding) for a in free_args]
        ):
            # Two containers of one type (``seen & tags``, ``xs + ys``): both are inputs. With one,
            # the other operand was made of it again (``seen & (seen ^ {'x'})``) or a literal.
            needed = max(needed, 2)
        extra_pool = [t for t in s.g.element_types] + [
            Type(s.lang.core_types.sequence, (s.rng.choice(s.g.element_types),))
        ]
        if s.tier.other_ops and len(wanted) < count:
            wanted.append(s.rng.choice(extra_pool))
        params = []
        for t in wanted[: max(count, needed, 1)]:
            if not drawable(s.g, t):
                raise GenerationFailed(f"parameter type {t} has no input strategy")
            spec = s.g.types[t.name]
            params.append(Var(s.fresh_name(t), t, int(spec.strategy.get("min_size", 0))))
        return params

    def function(
        self,
        name: str,
        params: list[Var],
        depth: int,
        count: int,
        counts: dict[str, int],
        *,
        prelude: tuple[n.Stmt, Var] | None = None,
        allow_pair: bool = True,
    ) -> tuple[n.Function, Type | None]:
        """A function over ``params``; returns it and the type of what it returns (None: a pair)."""
        s = self.s
        s.scope = list(params)
        s.results = []
        s.computed = {}
        body: list[n.Stmt] = []
        if prelude is not None:
            stmt, var = prelude
            body.append(stmt)
            assert isinstance(stmt, n.Assign)  # the entry's call of its helper
            s.settle(reads_of(stmt.value), frozenset())
            s.scope.append(var)
            s.note_result(var.name)
        body += self.statements.block(0, depth, count, counts)
        pending = [v for v in s.scope if v.pending]
        for _ in range(3):
            if len(pending) <= 1:
                break
            # Combine what is still unread into one value (``words + [name]``, ``text.count(sep)``).
            try:
                stmt, e = self.statements.simple_statement(
                    want_target=counts["target"] < self.s.uses_needed,
                    must=frozenset(v.name for v in pending),
                    need=2,
                    final=True,
                )
            except GenerationFailed:
                break
            counts["target"] += e.target_uses
            counts["other"] += e.other_uses
            body.append(stmt)
            pending = [v for v in s.scope if v.pending]
        if name == ENTRY and len(pending) == 1:
            body += self._top_up_target(pending[0], counts)
            pending = [v for v in s.scope if v.pending]
        if (
            len(pending) == 1
            and s.tier.other_ops
            and self._weight(pending[0].type) < 1
            and s.rng.random() < 0.85
        ):
            # Turn a value of a type the outputs have too much of (bool) into another.
            try:
                stmt, e = self.statements.simple_statement(
                    want_target=False, must=frozenset((pending[0].name,)), final=True
                )
                counts["target"] += e.target_uses
                counts["other"] += e.other_uses
                body.append(stmt)
                pending = [v for v in s.scope if v.pending]
            except GenerationFailed:
                pass
        # An input that nothing read is left out of the signature, not returned as it came
        # (``return (width, initial)``, ``width`` untouched: 39 of the 480 kept tier-1 programs).
        untouched = [p for p in params if not p.touched]  # (still pending: nothing read them)
        if name == ENTRY and untouched and len(untouched) < len(pending):
            params[:] = [p for p in params if p.touched]
            pending = [v for v in pending if all(v is not p for p in untouched)]
        if not pending:
            raise GenerationFailed("nothing to return")
        value: n.Expr
        if len(pending) == 1:
            value, ret_type = n.Name(pending[0].name), pending[0].type
        elif len(pending) == 2 and allow_pair:
            value, ret_type = n.Pair(n.Name(pending[0].name), n.Name(pending[1].name)), None
        else:
            raise GenerationFailed("values left unread")
        body.append(n.Return(value))
        function = n.Function(name, [p.name for p in params], body)
        if dead_statements(function):
            raise GenerationFailed("a statement does not reach the result")
        return function, ret_type

    def _top_up_target(self, result: Var, counts: dict[str, int]) -> list[n.Stmt]:
        """Statements that use the target on ``result``, the value the entry would return, while
        the program uses it fewer times than it needs (else the whole draw would fail: measured,
        a quarter of the failed draws)."""
        s = self.s
        added: list[n.Stmt] = []
        for _ in range(TOP_UP_TRIES):
            if counts["target"] >= s.uses_needed:
                break
            snap = s.snapshot()
            try:
                stmt, e = self.statements.simple_statement(
                    want_target=True, must=frozenset((result.name,)), final=True
                )
            except GenerationFailed:
                s.restore(snap)
                continue
            if not e.target_uses or self.statements.refill is not None:
                s.restore(snap)  # (a reset needs its refill: left to the draws that build one)
                self.statements.refill = None
                continue
            counts["target"] += e.target_uses
            counts["other"] += e.other_uses
            added.append(stmt)
            result = next((v for v in s.scope if v.pending), result)
        return added

    def _weight(self, t: Type) -> float:
        return float(self.s.g.output_weights.get(t.name, 1.0))

    def build(self) -> Program:
        s = self.s
        counts = {"target": 0, "other": 0}
        params = self.parameters(s.rng.randint(1, 2))
        functions = []
        prelude = None
        if s.tier.helper:
            # The helper takes the entry's first parameter type; the entry calls it first and
            # its result joins the entry's scope.
            helper_params = [Var("arg", params[0].type, params[0].min_len)]
            s.used_names.add("arg")
            helper, helper_type = self.function(
                HELPER, helper_params, 0, s.rng.randint(2, 3), counts, allow_pair=False
            )
            if helper_type is None:
                raise GenerationFailed("helper returns nothing usable")
            functions.append(helper)
            s.used_names = {ENTRY, HELPER, "arg"} | {p.name for p in params}
            var = Var(s.fresh_name(helper_type), helper_type, 0)
            prelude = (n.Assign(var.name, n.Call(HELPER, (n.Name(params[0].name),))), var)
        if s.tier.depth == 0:
            count = s.rng.randint(2 + s.tier.other_ops, 4)
            if not (s.tier.other_ops or self.acts_again):
                count = min(count, len(params))  # one use of the target per input: no more to make
        else:
            count = s.rng.randint(1, 3)
        entry, _ = self.function(ENTRY, params, s.tier.depth, count, counts, prelude=prelude)
        functions.append(entry)
        if counts["target"] < s.uses_needed:
            raise GenerationFailed(f"target used fewer than {s.uses_needed} times")
        if s.tier.other_ops and counts["other"] < 1:
            raise GenerationFailed("no other operation")
        return Program(
            source=s.lang.render(n.Program(tuple(sorted(s.imports)), functions)),
            entry=ENTRY,
            tier=s.tier.level,
            target=s.target,
            params=[(p.name, str(p.type)) for p in params],
        )


def generate_program(
    grammar: Grammar, target: str, tier: int, rng: random.Random, attempts: int = 30
) -> Program:
    """Draw programs until one builds; the same RNG state gives the same program."""
    last: Exception | None = None
    for _ in range(attempts):
        try:
            return ProgramBuilder(grammar, target, tier, rng).build()
        except GenerationFailed as exc:
            last = exc.with_traceback(None)  # (its traceback would keep the failed attempt alive)
    raise GenerationFailed(str(last))
