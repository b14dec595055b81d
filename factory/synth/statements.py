"""Statements and blocks: assignments and mutating calls, guarded where their operations need it.

A block is a list of language-neutral statement nodes (``factory.languages.nodes``); one of its
statements may open a control-flow construct (``factory.synth.control``) that reaches the tier's
nesting depth. ``counts`` tallies the uses of the target and of other operations as the tier
check will count them.
"""

from __future__ import annotations

import re

from factory.grammar.model import Operation
from factory.grammar.types import Type, unify
from factory.languages import nodes as n
from factory.synth.control import ControlFlow
from factory.synth.expressions import Expr, Expressions
from factory.synth.index import ops_on
from factory.synth.state import BuildState, GenerationFailed, Var


class Statements:
    """Builds statements and blocks over ``state``'s scope."""

    def __init__(self, state: BuildState, exprs: Expressions):
        self.s = state
        self.x = exprs
        self.control = ControlFlow(state, exprs, self)

    def simple_statement(self, want_target: bool) -> tuple[n.Stmt, Expr]:
        """One line: an assignment or a mutating call, preferring the target when asked."""
        for _ in range(4):
            try:
                return self._simple_statement(want_target)
            except GenerationFailed:
                continue
        return self._simple_statement(want_target)

    def _simple_statement(self, want_target: bool) -> tuple[n.Stmt, Expr]:
        s = self.s
        use_target = want_target or not s.tier.other_ops
        receiver = None
        binding: dict[str, Type] = {}
        anchored = [] if use_target else self.other_ops_on_scope()
        if anchored and s.rng.random() < 0.9:
            # Other operations mostly act on the program's own variables, not on constants.
            op, receiver = s.rng.choice(anchored)
            binding = unify(op.receiver, receiver.type) or {}
        else:
            pool = s.target_variants if use_target else s.g.operations
            op = s.rng.choice([o for o in pool if use_target or o.op_id != s.target])
        if receiver is None and (op.mutates or op.statement):
            unified = [(v, unify(op.receiver, v.type)) for v in s.scope if not v.frozen]
            matches = [(v, b) for v, b in unified if b is not None]
            if not matches:
                raise GenerationFailed(f"no variable for {op.op_id} to act on")
            receiver, binding = s.rng.choice(matches)
        if op.statement or (op.mutates and (op.returns is None or s.rng.random() < 0.5)):
            assert receiver is not None  # a statement or a mutation always got one just above
            e = self.x.apply(op, binding, budget=2, receiver=receiver)
            s.note_result(receiver.name)
            stmt: n.Stmt = n.TemplateStatement(e.code) if op.statement else n.ExprStatement(n.Code(e.code))
            return stmt, e
        e = self.x.apply(op, binding, budget=2, receiver=receiver)
        reuse = [
            v for v in s.scope if v.type == e.type and not v.frozen and re.search(rf"\b{v.name}\b", e.code)
        ]
        if reuse and s.rng.random() < 0.5:
            var = s.rng.choice(reuse)
            var.min_len = e.min_len
        else:
            var = Var(s.fresh_name(e.type), e.type, e.min_len)
            s.scope.append(var)
        s.note_result(var.name)
        return n.Assign(var.name, n.Code(e.code)), e

    def other_ops_on_scope(self) -> list[tuple[Operation, Var]]:
        """(operation, variable) pairs: a non-target operation whose receiver can be the variable
        (never a mutation of a variable a loop iterates)."""
        return [
            (op, v)
            for v in self.s.scope
            for op in ops_on(self.s.g, v.type)
            if op.op_id != self.s.target and not (v.frozen and (op.mutates or op.statement))
        ]

    def branch(self, depth: int, reach: int, count: int, counts: dict[str, int]) -> list[n.Stmt]:
        """A block whose new variables do not outlive it (a branch may not run)."""
        scope_before = list(self.s.scope)
        body = self.block(depth, reach, count, counts)
        self.s.forget_since(scope_before)
        return body

    def block(self, depth: int, reach: int, count: int, counts: dict[str, int]) -> list[n.Stmt]:
        """``count`` statements at nesting ``depth``; one of them opens a construct that reaches
        nesting ``reach`` (the tier's depth) when ``reach > depth``."""
        s = self.s
        chain_at = s.rng.randrange(count) if reach > depth else -1
        body: list[n.Stmt] = []
        for i in range(count):
            if i == chain_at:
                body.extend(self.control.compound(depth, reach, counts))
                continue
            want_target = counts["target"] < 2 or s.rng.random() < 0.35
            if s.tier.other_ops and not counts["other"] and i == count - 1 and counts["target"] >= 2:
                want_target = False
            scope_before = list(s.scope)
            stmt, e = self.simple_statement(want_target)
            counts["target"] += e.target_uses
            counts["other"] += e.other_uses
            if e.guards and depth < s.tier.depth and s.rng.random() < 0.8:
                guards = n.And(tuple(n.Code(g) for g in dict.fromkeys(e.guards)))
                stmt = n.If(guards, [stmt])
                counts["other"] += 1
                s.forget_since(scope_before)
            body.append(stmt)
        return body
