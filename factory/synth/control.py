"""Control flow: the constructs a block nests to reach its tier's depth (``control_flow`` weights of
the grammar): ``if`` with its ``elif``/``else`` variants, a loop over a variable, a counted loop,
and a ``while`` loop bounded by a counter that only the body's last statement increments."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from factory.grammar.model import Grammar, Operation
from factory.grammar.types import Type, unify
from factory.languages import Language
from factory.languages import nodes as n
from factory.synth.expressions import Expr, Expressions
from factory.synth.index import iter_element, tests_on
from factory.synth.state import BuildState, GenerationFailed, ScopePairs, Var

if TYPE_CHECKING:
    from factory.synth.statements import Statements


IF_OUTSIDE_LOOPS = 0.4  # the weight of ``if`` kinds outside loops, where a loop can come first


@lru_cache(maxsize=16384)
def constant_condition(lang: Language, code: str) -> bool:
    """``lang.constant_condition``, memoised by code text (saves parsing the same test again)."""
    return lang.constant_condition(code)


def _target_tests(grammar: Grammar, t: Type, target: str) -> tuple[Operation, ...]:
    """The target's operations among ``tests_on(grammar, t)``, in order (memoised on the grammar)."""
    key = ("target_tests", t, target)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = tuple(op for op in tests_on(grammar, t) if op.op_id == target)
    return found


class ControlFlow:
    """Builds the control-flow constructs of ``state``'s program (their bodies by ``statements``)."""

    def __init__(self, state: BuildState, exprs: Expressions, statements: Statements):
        self.s = state
        self.x = exprs
        self.statements = statements

    def condition(self) -> Expr:
        """A test over a variable in scope: a boolean operation with that variable as receiver,
        mostly one whose value no statement has read yet (a loop's element, a fresh result)."""
        s = self.s
        options = ScopePairs([(v, tests_on(s.g, v.type)) for v in s.scope])
        on_target = ScopePairs([(v, _target_tests(s.g, v.type, s.target)) for v in s.scope])
        if on_target and s.rng.random() < 0.5:
            options = on_target
        pending = ScopePairs([seg for seg in options.segments if seg[0].pending])
        if pending and s.rng.random() < 0.8:
            options = pending
        for _ in range(8):
            if not options:
                break
            op, var = s.rng.choice(options)
            binding = unify(op.receiver, var.type) or {}
            try:
                e = self.x.apply(op, binding, budget=1, receiver=var)
            except GenerationFailed:
                continue
            if not constant_condition(s.lang, e.code) and e.code not in s.computed:
                s.computed[e.code] = e.reads
                s.settle(e.reads, frozenset())
                return e
        raise GenerationFailed("no condition over the variables in scope")

    def compound(
        self, depth: int, reach: int, counts: dict[str, int], update: Var | None = None
    ) -> list[n.Stmt]:
        """A control-flow construct whose body reaches nesting ``reach`` and ends by updating
        ``update`` (or an accumulator it picks or sets up before the construct)."""
        s = self.s
        kinds = {k: w for k, w in s.g.control_flow.items() if w > 0}
        iterables = [
            v
            for v in s.scope
            if iter_element(s.g, v.type) is not None and v is not update and not v.one_element
        ]
        if not iterables:
            kinds.pop("for", None)
        elif s.loop_depth == 0:
            # A test on a loop's element goes both ways far more often than one on the inputs.
            kinds = {k: w * (IF_OUTSIDE_LOOPS if k.startswith("if") else 1.0) for k, w in kinds.items()}
        kind = s.rng.choices(list(kinds), weights=list(kinds.values()))[0]
        before: list[n.Stmt] = []
        source = None
        elem = None
        if kind == "for":
            pending = [v for v in iterables if v.pending]
            source = s.rng.choice(pending if pending and s.rng.random() < 0.8 else iterables)
            elem = iter_element(s.g, source.type)
        if update is None:
            before, update = self.statements.accumulator(elem, source)
        if update is source:
            raise GenerationFailed("a loop may not change what it iterates")
        target = update
        inner = lambda loop_var=None: self.statements.branch(  # noqa: E731
            depth + 1, reach, s.rng.randint(1, 2), counts, target, loop_var
        )
        saved_scope = list(s.scope)
        node: n.Stmt
        if kind in ("if", "if_else", "if_elif_else"):
            node = self._if(kind, depth, inner, counts, target)
        elif kind == "for":
            assert source is not None and elem is not None  # iterables: the variables whose type iterates
            # A loop over a string gives characters: named as such (`char`), not as the string (`word`).
            spec = s.g.types.get(source.type.name)
            names = spec.element_names if spec is not None else ()
            var = Var(s.fresh_name(elem, names=names), elem, 0, frozen=True, one_element=elem == source.type)
            source_was_frozen, source.frozen = source.frozen, True
            s.settle(frozenset((source.name,)), frozenset())
            s.scope.append(var)
            s.loop_depth += 1
            body = inner(var)
            s.loop_depth -= 1
            source.frozen = source_was_frozen
            node = n.ForEach(var.name, n.Name(source.name), body)
        elif kind == "for_range":
            counter_type = Type(s.lang.core_types.integer)
            var = Var(s.fresh_name(counter_type), counter_type, 0, frozen=True)
            s.scope.append(var)
            s.loop_depth += 1
            body = inner(var)
            s.loop_depth -= 1
            # The loop's header is another operation unless the target shows the same shapes.
            counts["other"] += not (s.lang.tier_syntax.counted_loop_shapes <= s.target_shapes)
            node = n.CountedLoop(var.name, s.rng.randint(2, 5), body)
        else:  # while: a counter that only the last statement of the body increments
            counter_type = Type(s.lang.core_types.integer)
            counter = Var(s.fresh_name(counter_type), counter_type, 0, frozen=True, pending=False)
            before.append(n.Assign(counter.name, n.Int(0)))
            s.scope.append(counter)
            s.loop_depth += 1
            body = inner() + [n.Increment(counter.name)]
            s.loop_depth -= 1
            counts["other"] += 2
            node = n.While(n.LessThan(n.Name(counter.name), n.Int(s.rng.randint(2, 4))), body)
        s.forget_since(saved_scope)
        target.pending = True
        return [*before, node]

    def _if(
        self, kind: str, depth: int, inner: Callable[[], list[n.Stmt]], counts: dict[str, int], target: Var
    ) -> n.If:
        """``if``, ``if_else`` or ``if_elif_else``: the first body reaches the construct's nesting,
        the ``elif`` and ``else`` bodies are one level deep; each ends by updating ``target``."""
        s = self.s
        # A branch runs instead of the ones before it: it sees the copies they changed unchanged
        # (``clone | xs`` in an ``else`` is ``xs | xs`` there); after the ``if``, none is known.
        copies = {v.name: v.copy_of for v in s.scope if v.copy_of}
        changed: set[str] = set()

        def alternative() -> None:
            for v in s.scope:
                if v.name in copies and v.copy_of != copies[v.name]:
                    changed.add(v.name)
                    v.copy_of = copies[v.name]

        test = self.condition()
        counts["target"] += test.target_uses
        counts["other"] += test.other_uses
        node = n.If(n.Code(test.code, test.reads), inner())
        alternative()
        if kind == "if_elif_else":
            test2 = self.condition()
            counts["other"] += test2.other_uses
            counts["target"] += test2.target_uses
            elif_body = self.statements.branch(depth + 1, depth + 1, self.s.rng.randint(1, 2), counts, target)
            node.elifs.append((n.Code(test2.code, test2.reads), elif_body))
            alternative()
        if kind in ("if_else", "if_elif_else"):
            node.orelse = self.statements.branch(depth + 1, depth + 1, 1, counts, target)
            alternative()
        for v in s.scope:
            if v.name in changed:
                v.copy_of = ""
        bodies = [node.body, *(body for _, body in node.elifs), *([node.orelse] if node.orelse else [])]
        if any(a == b for i, a in enumerate(bodies) for b in bodies[i + 1 :]):
            raise GenerationFailed("two branches do the same")  # the test decides nothing
        return node
