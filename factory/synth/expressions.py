"""Expressions: operations' templates filled with variables, constants and nested operations.

An expression stays text in the grammar's language (``Expr.code``); the language fills templates
(``Language.fill``, which parenthesises where its precedence needs it). Guards are the
preconditions of the operations used, written from the grammar's predicates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

from factory.grammar.model import Grammar, Operation
from factory.grammar.sources import FORM_SOURCES, IMPLEMENTATIONS
from factory.grammar.types import Type, unify
from factory.languages import Language, language
from factory.synth.constants import constant, literal_len
from factory.synth.index import producers
from factory.synth.state import BuildState, GenerationFailed, Var

_T = TypeVar("_T")


@dataclass(slots=True)  # slots: an Expr is built for every operand drawn (faster to build and read)
class Expr:
    code: str
    type: Type
    target_uses: int = 0
    other_uses: int = 0
    min_len: int = 0
    guards: list[str] = field(default_factory=list)
    reads: frozenset[str] = frozenset()  # the program's variables it reads
    writes: frozenset[str] = frozenset()  # ... and changes (a mutating operation's receiver)
    op: str = ""  # the outermost operation (a variable: the one that computed it; "": a constant)
    operands: frozenset[str] = frozenset()  # ``op`` idempotent: its operands' code, expanded
    made_with: tuple[str, ...] = ()  # ``op`` stable: its arguments' code
    # The variable whose unchanged value it equals: a variable holding a copy (``Var.copy_of``),
    # or a copy of a variable (``xs.copy()``, ``xs[:]``: ``xs``).
    copy_of: str = ""
    removed: frozenset[str] = frozenset()  # ``op`` removes: the variables its argument read


class Expressions:
    """Builds expressions of a wanted type over the scope of ``state``; the value sources'
    ``SourceContext`` (factory.grammar.sources)."""

    def __init__(self, state: BuildState):
        self.s = state
        self._placeholder_len: dict[str, int] = {}
        self._parts: dict[str, Expr] = {}
        # Variables the statement being built should read (values not read yet, a loop's element),
        # and those an operation's arguments may not read (its receiver's: no ``x != x``).
        self.prefer: frozenset[str] = frozenset()
        self.avoid: frozenset[str] = frozenset()

    # --- SourceContext for value sources -------------------------------------------------------
    def randint(self, lo: int, hi: int) -> int:
        return self.s.rng.randint(lo, hi)

    def choice(self, options: list[_T]) -> _T:
        return self.s.rng.choice(options)

    def min_len(self, placeholder: str) -> int:
        return self._placeholder_len.get(placeholder, 0)

    def text(self, placeholder: str) -> str:
        return self._parts[placeholder].code

    def variable_of(self, t: Type) -> str | None:
        options = [v.name for v in self.s.scope if v.type == t and v.name not in self.avoid]
        options = [name for name in options if name in self.prefer] or options
        return self.s.rng.choice(options) if options else None

    def prefers(self, name: str) -> bool:
        return name in self.prefer

    def constant(self, t: Type, short: bool = False) -> str:
        return constant(self.s, t, short)

    def literal(self, value: object) -> str:
        return self.s.lang.literal(value)

    # --- expressions ---------------------------------------------------------------------------
    def constant_expr(self, t: Type) -> Expr:
        code = self.constant(t)
        return Expr(code, t, min_len=literal_len(self.s.lang, code))

    def ops_returning(self, want: Type, allow_target: bool, allow_other: bool) -> Options:
        """Operations that can produce ``want``; a mutating one only if it has a variable to act on."""
        if not (allow_target or allow_other):
            return ()
        s = self.s
        mutable = frozenset(v.type for v in s.scope if not v.frozen)
        usable = _producers_in_scope(s.g, want, mutable)
        if allow_target and allow_other:
            return usable
        if allow_target:
            return _target_producers(s.g, usable, want, mutable, s.target)
        return tuple(o for o in usable if o[0].op_id != s.target)

    def expr(self, want: Type, budget: int, *, nest_target: bool = False) -> Expr:
        """An expression of type ``want``, built over the program's variables where possible:
        a variable, an operation on a variable, a nested target use, or a constant."""
        s = self.s
        allow_other = s.tier.other_ops and budget > 0
        allow_target = budget > 0
        candidates = self.ops_returning(want, allow_target, allow_other)
        roll = s.rng.random()
        if nest_target and budget > 1 and roll < 0.7:
            targets = [c for c in candidates if c[0].op_id == s.target]
            if targets:
                return self.apply(*s.rng.choice(targets), budget - 1)
        variables = [v for v in s.scope if v.type == want and v.name not in self.avoid]
        preferred = [v for v in variables if v.name in self.prefer]
        if preferred and roll < 0.85:
            return self.var_expr(s.rng.choice(preferred))
        if self.prefer and candidates and roll < 0.85:
            # A value to read has another type: an operation on it gives this one (``len(word)``
            # for an int wanted while ``word`` waits to be read). Measured: a body's last statement,
            # updating a variable while a value of another type waited to be read, read it in 7%
            # of its draws without this (91% where an argument could take the value itself); such
            # statements were a quarter of all statements built.
            on_preferred = [a for a in self.anchored(candidates) if a[2].name in self.prefer]
            if on_preferred:
                op, binding, var = s.rng.choice(on_preferred)
                return self.apply(op, binding, budget - 1, receiver=var)
        if variables and roll < 0.7:
            return self.var_expr(s.rng.choice(variables))
        spec = s.g.types.get(want.name)
        scalar = spec is not None and bool(spec.constants)
        if candidates and (roll < 0.9 or not (variables or scalar)):
            anchored = self.anchored(candidates)
            if anchored:
                op, binding, var = s.rng.choice(anchored)
                return self.apply(op, binding, budget - 1, receiver=var)
        if scalar:
            return self.constant_expr(want)
        if variables:
            return self.var_expr(s.rng.choice(variables))
        if spec is not None and spec.literal:
            return self.constant_expr(want)
        if candidates:
            return self.apply(*s.rng.choice(candidates), max(budget - 1, 0))
        raise GenerationFailed(f"no expression of type {want}")

    def var_expr(self, var: Var) -> Expr:
        return Expr(
            var.name,
            var.type,
            min_len=self.s.effective_len(var),
            reads=frozenset((var.name,)),
            op=var.made_by,
            operands=var.operands,
            made_with=var.made_with,
            copy_of=var.copy_of,
        )

    def anchored(self, candidates: Options) -> list[tuple[Operation, dict, Var]]:
        """Some of the candidate operations whose receiver can be a variable in scope."""
        picked = self.s.rng.sample(candidates, min(len(candidates), 12))
        scope = self.s.scope
        # A receiver unifies only with the variables whose type has its name (any, for a type
        # variable): grouped once, in scope order, rather than tested for each operation picked.
        by_name: dict[str, list[Var]] = {}
        for var in scope:
            by_name.setdefault(var.type.name, []).append(var)
        found = []
        for op, binding in picked:
            acts = op.mutates or op.statement
            recv = op.receiver
            for var in scope if recv.is_var else by_name.get(recv.name, ()):
                if (acts and var.frozen) or (op.subset and var.unread_start):
                    continue
                bound = unify(recv, var.type, binding)
                if bound is not None:
                    found.append((op, bound, var))
        preferred = [f for f in found if f[2].name in self.prefer]
        return preferred if preferred and self.s.rng.random() < 0.85 else found

    def apply(
        self, op: Operation, binding: dict[str, Type], budget: int, *, receiver: Var | None = None
    ) -> Expr:
        """Fill an operation's template; the receiver is a variable when the operation mutates."""
        s = self.s
        binding = s.random_binding(op, binding)
        recv_type = op.receiver.substitute(binding)
        is_target = op.op_id == s.target
        if op.mutates or op.statement:
            receiver = receiver or s.receiver_var(recv_type, allow_start=not op.subset)
            if receiver is None and recv_type.variables():
                unified = [
                    (v, unify(op.receiver, v.type, binding))
                    for v in s.scope
                    if not v.frozen and not (op.subset and v.unread_start)
                ]
                matches = [(v, b) for v, b in unified if b is not None]
                if matches:
                    receiver, binding = s.rng.choice(matches)
                    binding = s.random_binding(op, binding)
                    recv_type = receiver.type
            if receiver is None:
                raise GenerationFailed(f"no variable of type {recv_type} to mutate")
        if receiver is None and not (is_target and s.rng.random() < 0.2):
            # Operations mostly act on the program's variables, not on constants.
            options = [v for v in s.scope if v.type == recv_type and not (op.subset and v.unread_start)]
            options = [v for v in options if v.name in self.prefer] or options
            receiver = s.rng.choice(options) if options and s.rng.random() < 0.85 else None
        if receiver is not None and op.subset and receiver.unread_start:
            # An empty start (``seen = set()``) minus or intersected with anything stays empty.
            raise GenerationFailed(f"{op.op_id} on {receiver.name}, still its empty start (subset)")
        if receiver is not None:
            recv = Expr(
                receiver.name,
                recv_type,
                min_len=s.effective_len(receiver),
                reads=frozenset((receiver.name,)),
                op=receiver.made_by,
                operands=receiver.operands,
                made_with=receiver.made_with,
                copy_of=receiver.copy_of,
            )
        else:
            recv = self.expr(recv_type, budget, nest_target=is_target and s.rng.random() < 0.6)
        parts = {"recv": recv}
        self._placeholder_len = {"recv": recv.min_len}
        self._parts = parts
        avoid, self.avoid = self.avoid, self.avoid | recv.reads
        if recv.copy_of:
            self.avoid |= {recv.copy_of}  # what the receiver copies: ``clone | xs`` is no work
        try:
            self._fill_args(op, binding, budget, is_target, parts)
        finally:
            self.avoid = avoid
        trivial(op, parts, s.g)
        if op.removes and receiver is not None:
            _removed_from_it(op, receiver, parts, s.scope)
        operands = _operands(op, parts) if op.idempotent else frozenset()
        made_with = tuple(parts[a.name].code for a in op.args) if op.stable else ()
        if op.stable and recv.op == op.op_id and recv.made_with == made_with:
            raise GenerationFailed(f"{op.op_id}: applied again with the same arguments (stable)")
        # What the result inherits from its operands, in one pass over them (the operands are few
        # and apply runs for every operation drawn: separate passes cost more than the work).
        codes: list[tuple[str, str]] = []
        guards: list[str] = []
        reads: frozenset[str] = frozenset()
        writes: frozenset[str] = frozenset()
        target_uses = other_uses = 0
        for name, e in parts.items():
            codes.append((name, e.code))
            if e.guards:
                guards += e.guards
            if e.reads:
                reads = reads | e.reads if reads else e.reads
            if e.writes:
                writes = writes | e.writes
            target_uses += e.target_uses
            other_uses += e.other_uses
        code = fill(s.lang, op.template, tuple(codes))
        s.imports.update(op.imports)
        for req in op.requires:
            pred = s.g.predicates[req.name]
            bound = dict(zip(pred.params, req.args, strict=True))
            if pred.min_len and all(parts[bound[p]].min_len >= n for p, n in pred.min_len.items()):
                continue
            guards.append(s.lang.fill(pred.guard, {p: parts[ref].code for p, ref in bound.items()}))
        result_len = recv.min_len if op.length_result in ("same", "grow") else 0
        # `-7` reads as a negative literal, not as a use of `-` (the static check agrees). A literal
        # reads no variable: only an expression that reads none is asked (saves parsing the rest).
        counts_as_use = bool(reads) or not is_signed_number(s.lang, code)
        acts = op.mutates or op.statement
        if receiver is not None and op.length_recv != "same" and acts:
            self.apply_length_effect(receiver, op.length_recv)
        if receiver is not None and acts:
            writes |= {receiver.name}
        return Expr(
            code,
            op.returns.substitute(binding) if op.returns else recv_type,
            target_uses=target_uses + (is_target and counts_as_use),
            other_uses=other_uses + (counts_as_use and s.is_other(op)),
            min_len=result_len,
            guards=guards,
            reads=reads,
            writes=writes,
            op=op.op_id,
            operands=operands,
            made_with=made_with,
            copy_of=(recv.copy_of or recv.code) if op.copies and _is_variable(recv) else "",
            removed=frozenset().union(*(parts[a.name].reads for a in op.args)) if op.removes else frozenset(),
        )

    def _fill_args(
        self,
        op: Operation,
        binding: dict[str, Type],
        budget: int,
        is_target: bool,
        parts: dict[str, Expr],
    ) -> None:
        """The expressions of ``op``'s arguments, into ``parts``."""
        s = self.s
        for arg in op.args:
            arg_type = arg.type.substitute(binding)
            if arg.source is not None:
                impl = IMPLEMENTATIONS[arg.source.name]
                code = impl(self, arg_type, *arg.source.args)
                # A value source's text may be the name of a variable (``element_of``): it carries
                # what the variable holds (an idempotent use's operands, a copy) as a variable does.
                var = next((v for v in s.scope if v.name == code), None)
                if var is not None:
                    parts[arg.name] = self.var_expr(var)
                else:
                    # a form is computed from the receiver
                    reads = parts["recv"].reads if arg.source.name in FORM_SOURCES else frozenset()
                    parts[arg.name] = Expr(code, arg_type, min_len=literal_len(s.lang, code), reads=reads)
            else:
                parts[arg.name] = self.expr(arg_type, budget, nest_target=is_target and s.rng.random() < 0.3)
            if parts[arg.name].code in arg.identity:
                raise GenerationFailed(f"{op.op_id}: an identity argument")

    def apply_length_effect(self, var: Var, effect: str) -> None:
        """What an operation did to its receiver's known minimum length."""
        if effect == "clear":
            var.min_len = 0
        elif effect == "shrink":
            var.min_len = 0 if self.s.loop_depth else max(0, var.min_len - 1)
        elif effect == "grow" and not self.s.loop_depth:
            var.min_len += 1


Options = tuple[tuple[Operation, dict[str, Type]], ...]  # operations with their bindings


def _producers_in_scope(grammar: Grammar, want: Type, mutable: frozenset[Type]) -> Options:
    """The producers of ``want`` without the mutating ones that no variable of a ``mutable`` type
    can be the receiver of (memoised on the grammar: saves unifying every mutating producer with
    the scope on every call; the scope's types repeat far more than the scope does)."""
    key = ("producers_in_scope", want, mutable)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = tuple(
            (op, binding)
            for op, binding in producers(grammar, want)
            if not op.mutates or any(unify(op.receiver, t, binding) for t in mutable)
        )
    return found


def _target_producers(
    grammar: Grammar, usable: Options, want: Type, mutable: frozenset[Type], target: str
) -> Options:
    """The target's operations among ``usable``, the producers in scope of ``want`` for the
    ``mutable`` types (memoised alike: saves filtering them for each expression of tier 1)."""
    key = ("target_producers_in_scope", want, mutable, target)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = tuple(o for o in usable if o[0].op_id == target)
    return found


@lru_cache(maxsize=1 << 16)
def fill(lang: Language, template: str, values: tuple[tuple[str, str], ...]) -> str:
    """``lang.fill`` of ``template`` with the (placeholder, code) pairs ``values``, memoised (saves
    re-filling the same operation with the same operands, which retried statements do often; a
    worker's share of a run fills some 50,000 different ones, and 16,384 kept only half the hits)."""
    return lang.fill(template, dict(values))


@lru_cache(maxsize=16384)
def is_signed_number(lang: Language, code: str) -> bool:
    """``lang.is_signed_number``, memoised by code text (saves parsing the same expression again)."""
    return lang.is_signed_number(code)


def _copying_ops(grammar: Grammar) -> frozenset[str]:
    """The ids of the operations whose result equals their receiver (memoised on the grammar)."""
    found = grammar.cache.get("copying_ops")
    if found is None:
        found = grammar.cache["copying_ops"] = frozenset(o.op_id for o in grammar.operations if o.copies)
    return found


def _removed_from_it(op: Operation, receiver: Var, parts: dict[str, Expr], scope: list[Var]) -> None:
    """Refuse a ``removes`` operation on ``receiver`` and a variable the same operation made by
    removing ``receiver`` from something (``pool -= unique`` after ``unique -= pool``, ``ys - d``
    after ``d = xs - ys``): it has nothing of ``receiver`` left to remove."""
    names = {e.code for name, e in parts.items() if name != "recv" and _is_variable(e)}
    for v in scope:
        if v.name in names and v.removed is not None and v.removed[0] == op.op_id:
            if receiver.name in v.removed[1]:
                raise GenerationFailed(f"{op.op_id}: applied to what it removed from its receiver")


def _is_variable(e: Expr) -> bool:
    """Whether ``e`` is a bare variable."""
    return len(e.reads) == 1 and e.code in e.reads


def _operands(op: Operation, parts: dict[str, Expr]) -> frozenset[str]:
    """The operands of a use of the idempotent ``op``, each expanded when it is itself a use of
    ``op`` (also through a variable); refuses a use where two share one (``a & (a & b)``)."""
    seen: frozenset[str] = frozenset()
    for e in parts.values():
        leaves = e.operands if e.op == op.op_id and e.operands else frozenset((e.code,))
        if leaves & seen:
            raise GenerationFailed(f"{op.op_id}: the same operand twice (idempotent)")
        seen |= leaves
    return seen


def trivial(op: Operation, parts: dict[str, Expr], grammar: Grammar) -> None:
    """Refuse an operation a reader would call busywork, judged on its operands alone (never on
    which operation it is): every operand a constant (``len([7, -1])``), two operands reading
    the same variables in the same code or through a copy (``x != x``, ``xs == xs.copy()``,
    ``min(n, n)``; ``s == s.lower()`` is a test), an argument-free operation applied to its own
    result (``xs[:][:]``, ``s.upper().upper()``), two arguments that are the same constant
    (``s[1:1]``), or a test of a value against a container literal (``scores == {'o': 'A'}``,
    ``seen.issubset({-1, 10})``: nearly always one answer on drawn inputs), a variable beside an
    idempotent operation's use of it (``a & (a | b)``: absorption), a variable and a use of the
    same operation on it (``xs - (xs - ys)``), or a branch of a ``branches`` operation that reads
    its test's variable (``str(ok) if ok else s``: a known value)."""
    if len(parts) == 1:  # the receiver alone (most operations): only two of the rules apply
        if not parts["recv"].reads:
            raise GenerationFailed(f"{op.op_id}: only constants")
        if not op.args and parts["recv"].op == op.op_id:
            raise GenerationFailed(f"{op.op_id}: applied to its own result")
        return
    constants = [e for e in parts.values() if not e.reads]  # in one pass: what reads no variable
    # A variable holding an unchanged copy reads as what it copies (``clone | xs`` is ``xs | xs``).
    read_sets = [frozenset((e.copy_of,)) if e.copy_of else e.reads for e in parts.values() if e.reads]
    if not read_sets:
        raise GenerationFailed(f"{op.op_id}: only constants")
    if op.returns is not None and op.returns.name == language(grammar.language).core_types.boolean:
        for e in constants:
            spec = grammar.types.get(e.type.name)
            if spec is not None and spec.container:
                raise GenerationFailed(f"{op.op_id}: a test against a container literal")
    if len(constants) != len({e.code for e in constants}):
        raise GenerationFailed(f"{op.op_id}: the same constant twice")  # ``s[1:1]``, ``replace('a', 'a')``
    if len(read_sets) != len(set(read_sets)):
        # Two operands over the same variables: no work when they are the same code or one is a
        # copy (``x != x``, ``xs == xs.copy()``); a real test otherwise (``s == s.lower()``).
        codes = [e.copy_of or e.code for e in parts.values() if e.reads]
        if len(codes) != len(set(codes)) or any(e.op in _copying_ops(grammar) for e in parts.values()):
            raise GenerationFailed(f"{op.op_id}: the same variable twice")
    if not op.args and parts["recv"].op == op.op_id:
        raise GenerationFailed(f"{op.op_id}: applied to its own result")
    # Absorption: a variable beside a use of an idempotent operation that has it as an operand
    # (``a & (a | b)`` is ``a``, ``a - (a | b)`` is empty, ``a <= (a | b)`` is true,
    # ``max(n, min(n, m))`` is ``n``): the law decides the result, not the values.
    variables = {name for e in parts.values() if _is_variable(e) for name in (e.code, e.copy_of) if name}
    for e in parts.values():
        if e.operands and not e.operands.isdisjoint(variables - {e.code}):
            raise GenerationFailed(f"{op.op_id}: a variable beside an idempotent use of it (absorption)")
    # A variable and a use of the same operation on it (``xs - (xs - (xs - ys))`` is
    # ``xs - ys``, ``(xs - ys) - xs`` is empty, ``rate + (rate + 2.0)``): a chain a person writes
    # as one step, or not at all.
    if variables and any(
        e.op == op.op_id and not _is_variable(e) and not e.reads.isdisjoint(variables) for e in parts.values()
    ):
        raise GenerationFailed(f"{op.op_id}: applied again to its own operand")
    test = parts["recv"]
    if (
        op.branches
        and test.code in test.reads
        and any(test.code in e.reads for e in parts.values() if e is not test)
    ):
        raise GenerationFailed(f"{op.op_id}: a branch reads its test's variable")
