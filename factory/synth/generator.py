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
from factory.grammar.types import Type
from factory.languages import nodes as n
from factory.synth.expressions import Expressions
from factory.synth.index import drawable
from factory.synth.state import BuildState, GenerationFailed, Var
from factory.synth.statements import Statements
from factory.synth.tiers import ENTRY, HELPER

__all__ = ["GenerationFailed", "Program", "ProgramBuilder", "generate_program"]


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

    def parameters(self, count: int) -> list[Var]:
        """Parameters: the target's receiver type first, then types the target's args need."""
        s = self.s
        op = s.rng.choice(s.target_variants)
        binding = s.random_binding(op)
        wanted = [op.receiver.substitute(binding)]
        wanted += [a.type.substitute(binding) for a in op.args if a.source is None]
        extra_pool = [t for t in s.g.element_types] + [Type("list", (s.rng.choice(s.g.element_types),))]
        while len(wanted) < count:
            wanted.append(s.rng.choice(extra_pool))
        params = []
        for t in wanted[: max(count, 1)]:
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
        body: list[n.Stmt] = []
        if prelude is not None:
            stmt, var = prelude
            body.append(stmt)
            s.scope.append(var)
            s.note_result(var.name)
        body += self.statements.block(0, depth, count, counts)
        for _ in range(3):
            if s.results:
                break
            stmt, e = self.statements.simple_statement(want_target=counts["target"] < 2)
            counts["target"] += e.target_uses
            counts["other"] += e.other_uses
            body.append(stmt)
        if not s.results:
            raise GenerationFailed("nothing to return")
        ret = s.results[-1]
        ret_type = next((v.type for v in reversed(s.scope) if v.name == ret), None)
        value: n.Expr = n.Name(ret)
        if allow_pair and len(s.results) > 1 and s.rng.random() < 0.3:
            value, ret_type = n.Pair(n.Name(s.results[-2]), n.Name(ret)), None
        body.append(n.Return(value))
        return n.Function(name, [p.name for p in params], body), ret_type

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
        else:
            count = s.rng.randint(1, 3)
        entry, _ = self.function(ENTRY, params, s.tier.depth, count, counts, prelude=prelude)
        functions.append(entry)
        if counts["target"] < 2:
            raise GenerationFailed("target used fewer than 2 times")
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
            last = exc
    raise GenerationFailed(str(last))
