"""Statements and blocks, built so that every value computed is read later (def-use by construction).

The rules, which ``factory.synth.liveness`` checks on the finished tree:

- a variable whose value no statement has read yet is *pending* (parameters start pending); each
  statement reads at least one pending value when there is one, and never overwrites a pending
  variable without reading it;
- the body of a branch or loop ends by updating one variable from outside it (``update``): an
  accumulator (``total = total + len(word)``, ``seen.append(word)``), so what the body computes
  outlives it; a loop's body reads its element or index;
- a function returns what is still pending (``factory.synth.generator``).

A block is a list of language-neutral statement nodes (``factory.languages.nodes``); one of its
statements may open a control-flow construct (``factory.synth.control``) that reaches the tier's
nesting depth. ``counts`` tallies the uses of the target and of other operations as the tier
check will count them.
"""

from __future__ import annotations

import re
import weakref

from factory.grammar.model import Grammar, Operation
from factory.grammar.sources import VARIABLE_SOURCES
from factory.grammar.types import Type, unify
from factory.languages import nodes as n
from factory.synth.control import ControlFlow
from factory.synth.expressions import Expr, Expressions, fill
from factory.synth.index import ops_on
from factory.synth.state import BuildState, GenerationFailed, ScopePairs, Var, variants

GUARD_SHARE = 0.1  # guarded statements (``if len(xs) > 0: ...``) where the tier has room
COMPOUND_TRIES = 3  # draws of a control-flow construct before the program's draw fails


class Statements:
    """Builds statements and blocks over ``state``'s scope."""

    def __init__(self, state: BuildState, exprs: Expressions):
        self.s = state
        self.x = exprs
        # A proxy: a reference back to the statements would make each program's builder a cycle,
        # freed only by the cyclic GC (measured: 1.5% of the time).
        self.control = ControlFlow(state, exprs, weakref.proxy(self))
        # The statement that refills what the last statement reset (``xs.clear()``), for the
        # caller to add right after it.
        self.refill: tuple[n.Stmt, Expr] | None = None

    def simple_statement(
        self,
        want_target: bool,
        *,
        must: frozenset[str] = frozenset(),
        need: int = 1,
        update: Var | None = None,
        final: bool = False,
        relax: bool = False,
    ) -> tuple[n.Stmt, Expr]:
        """One line: an assignment or a mutating call, preferring the target when asked. It reads
        at least ``need`` of the variables in ``must`` (as many as there are, if fewer; ``relax``:
        any, when none does), writes ``update`` when given, and, when ``final``, leans toward the
        grammar's output types. A reset (``xs.clear()``) leaves its refill in ``self.refill``."""
        # The last failure's reason, not the exception: this frame holding an exception whose
        # traceback holds this frame is a cycle, which only the cyclic GC frees (with every failed
        # attempt's frames); measured: 3% of the time.
        last = "no statement"
        snap = self.s.snapshot()
        for attempt in range(8):
            if relax and attempt == 5:
                must = frozenset()  # the unread values are returned together instead
            self.refill = None
            try:
                stmt, e, reset = self._simple_statement(want_target, must, update, final)
                reads = e.reads
                if reset is not None:
                    self.refill = self._refill(reset)
                    reads |= self.refill[1].reads  # the reset and its refill read as one
                if len(reads & must) < min(need, len(must)):
                    raise GenerationFailed("reads too few of the values it should")
            except GenerationFailed as exc:
                last = str(exc)
                self.refill = None
                self.s.restore(snap)
                continue
            return stmt, e
        raise GenerationFailed(last)

    def _simple_statement(
        self, want_target: bool, must: frozenset[str], update: Var | None, final: bool
    ) -> tuple[n.Stmt, Expr, Var | None]:
        """One statement, and the variable it reset (if it did)."""
        s = self.s
        use_target = want_target or not s.tier.other_ops
        self.x.prefer = must
        receiver: Var | None
        try:
            if update is not None:
                op, receiver, binding = self._updating_op(update, use_target, must)
            else:
                op, receiver, binding = self._op(use_target, must, final)
            e = self.x.apply(op, binding, budget=2, receiver=receiver)
        finally:
            self.x.prefer = frozenset()
        if e.code in s.computed:
            raise GenerationFailed("the same value computed twice")  # or the same change twice
        if op.resets and (final or receiver is None or receiver.pending or receiver.unread_start):
            raise GenerationFailed(f"{op.op_id}: a reset must follow a read and precede a refill")
        s.computed[e.code] = e.reads
        stmt: n.Stmt
        if op.statement or (
            receiver is not None and op.mutates and (op.returns is None or update is not None)
        ):
            assert receiver is not None  # a statement or a mutation always has one
            code = n.Code(e.code, e.reads, e.writes)
            if op.statement:
                stmt = n.TemplateStatement(e.code, e.reads, e.writes)
            else:
                stmt = n.ExprStatement(code)
            written = receiver.name
        elif update is not None:
            if _copy_of_itself(e, update):
                raise GenerationFailed(f"{update.name} set to a copy of its own value")
            stmt, written = n.Assign(update.name, n.Code(e.code, e.reads, e.writes)), update.name
            update.min_len = e.min_len
        else:
            var = self._result_var(e, op)
            stmt, written = n.Assign(var.name, n.Code(e.code, e.reads, e.writes)), var.name
        s.settle(e.reads, e.writes | {written})
        if isinstance(stmt, (n.ExprStatement, n.TemplateStatement)):
            # The same change again while nothing it reads has changed is no work (``xs.sort()``
            # twice) or busywork (``xs.append(1)`` twice).
            s.computed[e.code] = e.reads | e.writes
        for v in s.scope:
            if v.name == written:
                v.made_by = "" if op.mutates or op.statement else op.op_id
                v.operands = frozenset() if op.mutates or op.statement else e.operands
                v.made_with = () if op.mutates or op.statement else e.made_with
                v.copy_of = "" if op.mutates or op.statement else e.copy_of
                v.removed = (op.op_id, e.removed) if e.removed else None
        s.note_result(written)
        return stmt, e, receiver if op.resets else None

    def _refill(self, var: Var) -> tuple[n.Stmt, Expr]:
        """The statement right after a reset of ``var``: an operation that puts a value of its
        type or element type into it (an unread one first; never one read from ``var``)."""
        s = self.s
        options = _refills(s.g, var.type) if s.tier.other_ops else ()
        if not options:
            raise GenerationFailed(f"nothing refills {var.name}")
        snap = s.snapshot()
        for _ in range(3):
            try:
                return self._refill_with(var, options)
            except GenerationFailed:
                s.restore(snap)
        return self._refill_with(var, options)

    def _refill_with(self, var: Var, options: UpdateOptions) -> tuple[n.Stmt, Expr]:
        """One try of ``_refill`` with one of the ``options``."""
        s = self.s
        # Elements first (``xs.append(n)``): refilled with a whole other value (``xs += ys``), the
        # variable equals it and tests of the two are constant.
        elements = [(op, b) for op, b in options if any(a.type.substitute(b) != var.type for a in op.args)]
        unread = [v for v in s.scope if v.pending and v is not var]
        pool = elements if elements and s.rng.random() < 0.8 else list(options)
        fitting = [(op, b) for op, b in pool if any(_fills(op, b, v.type) for v in unread)]
        op, binding = s.rng.choice(fitting or pool)
        self.x.prefer = frozenset(v.name for v in unread)
        try:
            e = self.x.apply(op, binding, budget=1, receiver=var)
        finally:
            self.x.prefer = frozenset()
        if e.code in s.computed:
            raise GenerationFailed("the same change twice")
        if not e.reads - {var.name}:
            raise GenerationFailed(f"a refill of {var.name} with constants")  # its output is fixed
        if len(op.args) == 1 and any(
            e.code == fill(s.lang, op.template, (("recv", var.name), (op.args[0].name, w.name)))
            for w in s.scope
            if w.type == var.type
        ):
            raise GenerationFailed(f"{var.name} refilled as a copy")  # tests of the two are constant
        if len(re.findall(rf"\b{re.escape(var.name)}\b", e.code)) > 1:
            raise GenerationFailed(f"a refill of {var.name} reads what was just emptied")
        code = n.Code(e.code, e.reads, e.writes)
        stmt: n.Stmt = (
            n.TemplateStatement(e.code, e.reads, e.writes) if op.statement else n.ExprStatement(code)
        )
        s.settle(e.reads, e.writes | {var.name})
        s.computed[e.code] = e.reads | e.writes
        var.made_by, var.operands = "", frozenset()
        s.note_result(var.name)
        return stmt, e

    def _op(self, use_target: bool, must: frozenset[str], final: bool) -> tuple[Operation, Var | None, dict]:
        """An operation for a new value, mostly acting on a variable that should be read."""
        s = self.s
        # (operation, variable) pairs as segments (``ScopePairs``), filtered by their variable:
        # building every pair of the other operations over the scope, to draw one, cost 1.4% of
        # the instructions of the stage's work (measured with valgrind).
        anchored = ScopePairs([])
        if use_target:
            acting = [(v, _variants_acting_on(s.g, s.target, v.type, v.frozen)) for v in s.scope]
            anchored = ScopePairs(
                [
                    (v, (op,))
                    for i, op in enumerate(s.target_variants)
                    for v, can in acting
                    if can[i]
                    and not (op.resets and (v.pending or v.unread_start or final))
                    and not (op.subset and v.unread_start)
                    and not self._repeats(op, v)
                ]
            )
            if (
                must
                and s.tier.other_ops
                and not any(v.name in must for v, _ in anchored.segments)
                and s.rng.random() < 0.5
            ):
                # The target cannot read what must be read: later.
                use_target, anchored = False, ScopePairs([])
        if not use_target:
            anchored = self.other_ops_on_scope()
        preferred = ScopePairs([seg for seg in anchored.segments if seg[0].name in must])
        if final and len(must) > 1:
            # Combining the values left into one: an operation on one of them that can take
            # another as an argument (else the function returns them as a pair).
            kinds = {w.name: w.type for w in s.scope if w.name in must}
            others = {
                v.name: frozenset(t for w, t in kinds.items() if w != v.name) for v, _ in preferred.segments
            }
            combining = ScopePairs(
                [
                    (v, tuple(op for op in ops if _takes_another(s.g, op, v.type, others[v.name])))
                    for v, ops in preferred.segments
                ]
            )
            preferred = combining or preferred
        if preferred and s.rng.random() < 0.9:
            anchored = preferred
        if anchored and (s.rng.random() < 0.9 or not use_target):
            if final:
                weights = self._weights(anchored)
                op, receiver = s.rng.choices(anchored, weights=weights)[0]
            else:
                op, receiver = s.rng.choice(anchored)
            return op, receiver, unify(op.receiver, receiver.type) or {}
        pool = s.target_variants if use_target else [o for o in s.g.operations if o.op_id != s.target]
        op = s.rng.choice(pool)
        if op.mutates or op.statement:
            matches = [(v, unify(op.receiver, v.type)) for v in s.scope if self._can_act(op, v)]
            if not matches:
                raise GenerationFailed(f"no variable for {op.op_id} to act on")
            receiver, binding = s.rng.choice(matches)
            return op, receiver, binding or {}
        return op, None, {}

    def _repeats(self, op: Operation, v: Var) -> bool:
        """Whether ``op``, which takes no argument, on ``v`` is known to fail: applied to its own
        result (``s.upper()`` of an upper-cased ``s``) or a change already made (``xs.sort()``)."""
        if op.args:
            return False
        s = self.s
        return v.made_by == op.op_id or fill(s.lang, op.template, (("recv", v.name),)) in s.computed

    def _weights(self, pairs: ScopePairs) -> list[float]:
        """The weight of each pair's operation for a function's last statement: its result type's
        output weight (0.3 for a mutation or a statement; in one pass, for the whole list)."""
        weights = self.s.g.cache.get("op_weights")
        if weights is None:
            g = self.s.g
            weights = g.cache["op_weights"] = {id(op): _op_weight(g, op) for op in g.operations}
        return [weights[id(op)] for _, ops in pairs.segments for op in ops]

    def _can_act(self, op: Operation, v: Var) -> bool:
        return _acts_on(op, v.type, v.frozen)

    def _updating_op(self, var: Var, use_target: bool, must: frozenset[str]) -> tuple[Operation, Var, dict]:
        """An operation that computes ``var``'s new value from its old one (or changes it),
        preferring one with an argument that a variable of ``must`` can fill."""
        s = self.s
        if var.frozen:
            raise GenerationFailed(f"{var.name} may not change")
        target, others = updaters(s.g, var.type, s.target)
        wanted = [v.type for v in s.scope if v.name in must and v is not var]
        if use_target and wanted and s.tier.other_ops and not _fitting(s.g, var.type, s.target, True, wanted):
            use_target = False  # the target is used elsewhere; here the body must read ``must``
        of_target = use_target
        if not (target if of_target else others) and s.tier.other_ops:
            of_target = not others  # the others, or the target's when there are none
        options = target if of_target else others
        if not options:
            raise GenerationFailed(f"no operation updates a {var.type}")
        if wanted:
            free = _free(s.g, var.type, s.target, of_target)
            fitting = _fitting(s.g, var.type, s.target, of_target, wanted)
            options = (fitting if fitting and s.rng.random() < 0.85 else free) or options
        if var.unread_start:
            # Its empty start: an operation that keeps only its items would leave it empty.
            options = tuple((op, binding) for op, binding in options if not op.subset)
            if not options:
                raise GenerationFailed(f"only subset operations would update {var.name}, still empty")
        op, binding = s.rng.choice(options)
        return op, var, binding

    def _result_var(self, e: Expr, op: Operation) -> Var:
        """The variable an assignment binds: one it read, of the same type (``text = text.strip()``),
        or a new one named by the operation's role."""
        s = self.s
        reuse = [
            v
            for v in s.scope
            if v.type == e.type and not v.frozen and v.name in e.reads
            and not _copy_of_itself(e, v)
        ]  # fmt: skip
        if reuse and s.rng.random() < 0.35:
            var = s.rng.choice(reuse)
            var.min_len = e.min_len
            return var
        var = Var(s.fresh_name(e.type, op), e.type, e.min_len)
        s.scope.append(var)
        return var

    def other_ops_on_scope(self) -> ScopePairs:
        """(operation, variable) pairs: a non-target operation whose receiver can be the variable
        (never a mutation of a variable a loop iterates, a reset only of a value read, a ``subset``
        operation on a variable that still holds its empty start)."""
        s = self.s
        return ScopePairs(
            [
                (
                    v,
                    _other_ops_on(
                        s.g,
                        v.type,
                        s.target,
                        v.frozen,
                        unread=v.pending or v.unread_start,
                        start=v.unread_start,
                    ),
                )
                for v in s.scope
            ]
        )

    def branch(
        self,
        depth: int,
        reach: int,
        count: int,
        counts: dict[str, int],
        update: Var,
        loop_var: Var | None = None,
    ) -> list[n.Stmt]:
        """A block that ends by updating ``update``; its new variables do not outlive it."""
        scope_before = list(self.s.scope)
        body = self.block(depth, reach, count, counts, update=update, loop_var=loop_var)
        self.s.forget_since(scope_before)
        return body

    def block(
        self,
        depth: int,
        reach: int,
        count: int,
        counts: dict[str, int],
        *,
        update: Var | None = None,
        loop_var: Var | None = None,
    ) -> list[n.Stmt]:
        """``count`` statements at nesting ``depth``; one of them opens a construct that reaches
        nesting ``reach`` (the tier's depth) when ``reach > depth``. Inside a construct
        (``update`` given) the last statement updates ``update``, and ``loop_var`` is read."""
        s = self.s
        chain_at = s.rng.randrange(count) if reach > depth else -1
        body: list[n.Stmt] = []
        outer = {v.name for v in s.scope}
        for i in range(count):
            last = i == count - 1
            if i == chain_at:
                body.extend(self._compound(depth, reach, counts, update if last else None))
                continue
            want_target = counts["target"] < s.uses_needed or s.rng.random() < 0.35
            if s.tier.other_ops and not counts["other"] and last and counts["target"] >= s.uses_needed:
                want_target = False
            local = frozenset(v.name for v in s.scope if v.pending and v.name not in outer)
            loops = frozenset(v.name for v in s.scope if v.frozen and v.pending)  # unread loop variables
            must, need = s.pending_names(), 1
            if update is not None and last:
                # The body's last word: it reads what the body computed and the loops' variables,
                # or at least something besides the variable it updates.
                others = frozenset(v.name for v in s.scope if v is not update)
                must = (local | loops) or (must - {update.name}) or others
                need = max(1, min(2, len(local | loops)))
            elif loops:
                must = loops | local
            scope_before = list(s.scope)
            stmt, e = self.simple_statement(
                want_target, must=must, need=need,
                update=update if last else None, final=last and depth == 0 and update is None,
                relax=update is None and loop_var is None,
            )  # fmt: skip
            counts["target"] += e.target_uses
            counts["other"] += e.other_uses
            refill, self.refill = self.refill, None
            writes_outer = isinstance(stmt, (n.ExprStatement, n.TemplateStatement)) or (
                isinstance(stmt, n.Assign) and stmt.target in {v.name for v in scope_before}
            )
            if refill is not None:
                body.append(stmt)
                body.append(refill[0])
                counts["other"] += refill[1].other_uses
                counts["target"] += refill[1].target_uses
                continue
            if e.guards and depth < s.tier.depth and writes_outer and s.rng.random() < GUARD_SHARE:
                guards = n.And(tuple(n.Code(g, e.reads) for g in dict.fromkeys(e.guards)))
                stmt = n.If(guards, [stmt])
                counts["other"] += 1
                s.forget_since(scope_before)
            body.append(stmt)
        return body

    def _compound(self, depth: int, reach: int, counts: dict[str, int], update: Var | None) -> list[n.Stmt]:
        """``control.compound``, drawn again (up to ``COMPOUND_TRIES`` times) when its body cannot
        be built: a construct fails far more often than the statements before it, which a failed
        draw of the whole program would build again (measured: a third of the generator's time)."""
        s = self.s
        snap = s.snapshot()
        marks = [(v, v.frozen, v.made_by, v.operands, v.made_with) for v in s.scope]
        tallies, loop_depth = dict(counts), s.loop_depth
        for _ in range(COMPOUND_TRIES - 1):
            try:
                return self.control.compound(depth, reach, counts, update=update)
            except GenerationFailed:
                s.restore(snap)
                for v, frozen, made_by, operands, made_with in marks:
                    v.frozen, v.made_by, v.operands, v.made_with = frozen, made_by, operands, made_with
                counts.update(tallies)
                s.loop_depth = loop_depth
                self.refill = None
        return self.control.compound(depth, reach, counts, update=update)  # its failure: the draw's

    def accumulator(self, elem: Type | None, source: Var | None = None) -> tuple[list[n.Stmt], Var]:
        """A variable for a construct's body to update (never ``source``, what a loop iterates):
        an existing one that some operation can update (a value not read yet first), or a new one
        set to a constant before it."""
        s = self.s
        wanted = [elem] if elem is not None else [v.type for v in s.scope if v.pending]
        existing = [
            v
            for v in s.scope
            if not v.frozen and v is not source and self._updatable(v.type)
            and _fitting(s.g, v.type, s.target, False, wanted)
        ]  # fmt: skip
        pending = [v for v in existing if v.pending]
        if pending and s.rng.random() < 0.6:
            return [], s.rng.choice(pending)
        if existing and s.rng.random() < 0.4:
            return [], s.rng.choice(existing)
        candidates = frozenset(
            t for t in {elem, *s.g.element_types, *(v.type for v in s.scope)} if t is not None
        )
        # Memoised on the grammar by everything the filter reads (saves re-filtering and sorting
        # the same few types for most constructs).
        key = ("accumulator_types", candidates, s.target, s.tier.other_ops, frozenset(wanted))
        types = s.g.cache.get(key)
        if types is None:
            types = s.g.cache[key] = sorted(
                (
                    t
                    for t in candidates
                    if self._updatable(t) and self._init_text(t) and _fitting(s.g, t, s.target, False, wanted)
                ),
                key=str,
            )
        if not types:
            if existing:
                return [], s.rng.choice(existing)
            raise GenerationFailed("nothing for a construct to update")
        t = s.rng.choice(types)
        init = self._init_text(t)
        assert init is not None
        var = Var(s.fresh_name(t), t, 0, pending=False, unread_start=True)
        s.scope.append(var)
        return [n.Assign(var.name, n.Code(init))], var

    def _updatable(self, t: Type) -> bool:
        target, others = updaters(self.s.g, t, self.s.target)
        return bool(target or (others and self.s.tier.other_ops))

    def _init_text(self, t: Type) -> str | None:
        """A starting value of type ``t``: its empty form, or its first constant."""
        spec = self.s.g.types.get(t.name)
        if spec is None:
            return None
        if spec.literal and spec.literal.get("empty"):
            return str(spec.literal["empty"])
        return min(spec.constants, key=len) if spec.constants else None


def _variants_acting_on(grammar: Grammar, target: str, t: Type, frozen: bool) -> tuple[bool, ...]:
    """For each variant of the target (``BuildState.target_variants``), whether it can act on a
    variable of type ``t`` (``frozen``: one that may not change; memoised on the grammar: saves
    unifying every variant with every variable on every call)."""
    key = ("variants_acting_on", target, t, frozen)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = tuple(_acts_on(op, t, frozen) for op in variants(grammar, target))
    return found


def _acts_on(op: Operation, t: Type, frozen: bool) -> bool:
    """Whether ``op`` can act on a variable of type ``t`` (never changing a ``frozen`` one)."""
    if (op.mutates or op.statement) and frozen:
        return False
    return unify(op.receiver, t) is not None


def _other_ops_on(
    grammar: Grammar, t: Type, target: str, frozen: bool, *, unread: bool, start: bool = False
) -> tuple[Operation, ...]:
    """The non-target operations whose receiver can be a variable of type ``t``, without the
    mutations when the variable is ``frozen``, the resets when it holds a value not read yet
    (``unread``) and the ``subset`` ones when it holds its empty starting value (``start``;
    memoised on the grammar: saves filtering ``ops_on`` for every variable on every call)."""
    key = ("other_ops_on", t, target, frozen, unread, start)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = tuple(
            op
            for op in ops_on(grammar, t)
            if op.op_id != target
            and not (frozen and (op.mutates or op.statement))
            and not (unread and op.resets)
            and not (start and op.subset)
        )
    return found


UpdateOptions = tuple[tuple[Operation, dict[str, Type]], ...]  # operations with their bindings


def updaters(grammar: Grammar, t: Type, target: str) -> tuple[UpdateOptions, UpdateOptions]:
    """The operations that can give a variable of type ``t`` a new value computed from its old
    one (changing it, or returning a value of its type): the target's, then the others
    (memoised on the grammar, split by target: saves re-splitting the table on every call)."""
    key = ("updaters", t, target)
    split = grammar.cache.get(key)
    if split is None:
        table = _update_table(grammar, t)
        split = grammar.cache[key] = (
            tuple(o for o in table if o[0].op_id == target),
            tuple(o for o in table if o[0].op_id != target),
        )
    return split


def _update_table(grammar: Grammar, t: Type) -> list[tuple[Operation, dict[str, Type]]]:
    """Every operation that can update a variable of type ``t``, in grammar order (memoised)."""
    key = ("updaters", t)
    table = grammar.cache.get(key)
    if table is None:
        table = []
        for op in ops_on(grammar, t):
            binding = unify(op.receiver, t)
            if binding is None:
                continue
            if op.mutates or op.statement:
                table.append((op, binding))
            elif op.returns is not None and op.returns.variables() <= op.receiver.variables():
                # (A result typed by the arguments alone, ``a if flag else b``, is a new value, not
                # the receiver's next one: ``flag = False if flag else found`` reads badly.)
                if unify(op.returns, t, binding) is not None:
                    table.append((op, binding))
        grammar.cache[key] = table
    return table


def _fitting(grammar: Grammar, t: Type, target: str, of_target: bool, wanted: list[Type]) -> UpdateOptions:
    """The updaters of ``t`` (the target's when ``of_target``, else the others) with a free
    argument (no value source) that a value of a ``wanted`` type can fill (memoised on the grammar:
    saves unifying every updater's arguments with the wanted types on every call)."""
    kinds = frozenset(wanted)
    key = ("fitting", t, target, of_target, kinds)
    found = grammar.cache.get(key)
    if found is None:
        fills = _filled_by_any(grammar, t, kinds)
        found = grammar.cache[key] = tuple(
            o
            for o, ok in zip(_update_table(grammar, t), fills, strict=True)
            if ok and (o[0].op_id == target) == of_target
        )
    return found


def _filled_by_any(grammar: Grammar, t: Type, kinds: frozenset[Type]) -> tuple[bool, ...]:
    """For each updater of ``t``, whether a value of one of the types ``kinds`` can fill one of its
    free arguments (memoised on the grammar for every target at once: ``_fitting`` is memoised
    per target, and each target is drawn for a few programs only)."""
    key = ("filled_by_any", t, kinds)
    found = grammar.cache.get(key)
    if found is None:
        flags = [_filled_by(grammar, t, k) for k in kinds]
        found = grammar.cache[key] = tuple(
            any(f[i] for f in flags) for i in range(len(_update_table(grammar, t)))
        )
    return found


def _filled_by(grammar: Grammar, t: Type, k: Type) -> tuple[bool, ...]:
    """For each updater of ``t`` (``_update_table`` order), whether a value of type ``k`` can fill
    one of its free arguments (memoised on the grammar, for every target at once)."""
    key = ("filled_by", t, k)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = tuple(_fills(op, b, k) for op, b in _update_table(grammar, t))
    return found


def _free(grammar: Grammar, t: Type, target: str, of_target: bool) -> UpdateOptions:
    """The updaters of ``t`` (the target's when ``of_target``, else the others) with a free
    argument (no value source; memoised on the grammar: saves scanning their arguments per call)."""
    key = ("free", t, target, of_target)
    found = grammar.cache.get(key)
    if found is None:
        options = updaters(grammar, t, target)[0 if of_target else 1]
        found = grammar.cache[key] = tuple(
            (op, b) for op, b in options if any(a.source is None for a in op.args)
        )
    return found


def _refills(grammar: Grammar, t: Type) -> UpdateOptions:
    """The mutations of a variable of type ``t`` that put a value of its type or element type
    into it, with no precondition and never shrinking it (memoised on the grammar)."""
    key = ("refills", t)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = tuple(
            (op, b)
            for op, b in _update_table(grammar, t)
            if (op.mutates or op.statement)
            and not (op.resets or op.requires or op.length_recv in ("shrink", "clear"))
            and any(a.type.substitute(b) in (t, *b.values()) for a in op.args)
        )
    return found


def _copy_of_itself(e: Expr, var: Var) -> bool:
    """Whether ``e`` copies the value ``var`` holds (``xs.copy()`` for ``xs`` or for a copy of
    it): assigned to ``var``, no work."""
    return bool(e.copy_of) and e.copy_of == (var.copy_of or var.name)


def _fills(op: Operation, binding: dict[str, Type], t: Type) -> bool:
    """Whether a value of type ``t`` can fill one of ``op``'s free arguments (or one whose value
    source may write a variable: ``VARIABLE_SOURCES``) under ``binding``."""
    return any(
        (a.source is None or a.source.name in VARIABLE_SOURCES) and unify(a.type, t, binding) is not None
        for a in op.args
    )


def _takes_another(grammar: Grammar, op: Operation, t: Type, kinds: frozenset[Type]) -> bool:
    """Whether ``op`` acting on a variable of type ``t`` has a free argument that a value of one of
    the types ``kinds`` can fill (memoised on the grammar: saves unifying them for every pair of
    every function's last statements, measured 6% of the generator's time)."""
    key = ("takes_another", id(op), t, kinds)  # (the grammar holds its operations: ids are stable)
    found = grammar.cache.get(key)
    if found is None:
        binding = unify(op.receiver, t) or {}
        found = grammar.cache[key] = any(_fills(op, binding, k) for k in kinds)
    return found


def _op_weight(grammar: Grammar, op: Operation) -> float:
    weights = grammar.output_weights
    return float(weights.get(op.returns.name, 1.0)) if op.returns is not None and not op.mutates else 0.3
