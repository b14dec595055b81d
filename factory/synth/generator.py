"""Type-directed program generation from a grammar, one program per (seed, index).

A program is a function ``f`` whose parameters are typed by the grammar. Its body is built from
operations of the grammar (templates filled with variables, constants and nested operations),
under the constraints of a curriculum tier (see ``TIERS``). The synthesizer never looks at which
method an operation is: only at its types, value sources, preconditions and length effects.
Statements form a small tree (``factory.synth.render``) printed one statement per line.
"""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

from factory.grammar.model import Grammar, Operation
from factory.grammar.sources import IMPLEMENTATIONS
from factory.grammar.types import Type, parse_type, unify
from factory.literals import literal_eval
from factory.synth.check import template_signatures
from factory.synth.render import For, Function, If, Stmt, While, render
from factory.synth.tiers import ENTRY, HELPER, TIERS

_T = TypeVar("_T")


class GenerationFailed(Exception):
    """This draw cannot make a valid program (the caller retries with the same RNG)."""


@dataclass
class Var:
    name: str
    type: Type
    min_len: int = 0
    frozen: bool = False  # iterated by an enclosing loop or a while counter: never mutated


@dataclass
class Expr:
    code: str
    type: Type
    atomic: bool
    target_uses: int = 0
    other_uses: int = 0
    min_len: int = 0
    guards: list[str] = field(default_factory=list)


@dataclass
class Program:
    source: str
    entry: str
    tier: int
    target: str
    params: list[tuple[str, str]]  # (name, type expression)


@lru_cache(maxsize=16384)
def _is_atomic_code(code: str) -> bool:
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return False
    atomic = (
        ast.Name,
        ast.Call,
        ast.Attribute,
        ast.Subscript,
        ast.List,
        ast.Dict,
        ast.Set,
        ast.Tuple,
    )
    if isinstance(node, ast.Constant):
        return not (isinstance(node.value, (int, float)) and node.value < 0)
    return isinstance(node, atomic)


def _is_signed_number(code: str) -> bool:
    """Whether ``code`` is a number literal with a sign, such as ``-7`` or ``+2.5``."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return False
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float, complex)
    )


def _fill(template: str, placeholder: str, e: Expr) -> str:
    """The text of ``e`` for ``{placeholder}``, parenthesised where precedence needs it."""
    if not e.atomic and _needs_parens(template, placeholder):
        return f"({e.code})"
    if e.code[:1].isdigit() and template.partition("{" + placeholder + "}")[2].startswith("."):
        return f"({e.code})"  # 7.bit_length() is a syntax error
    return e.code


def _needs_parens(template: str, placeholder: str) -> bool:
    """Whether a non-atomic expression put into ``{placeholder}`` needs parentheses."""
    marker = "{" + placeholder + "}"
    before, _, after = template.partition(marker)
    left, right = before.rstrip(), after.lstrip()
    if not left and not right:
        return False
    return not (left.endswith(("(", "[", ",", ":")) and right.startswith((")", "]", ",", ":")))


class ProgramBuilder:
    """Builds one program for a target operation and tier from a seeded RNG."""

    def __init__(
        self,
        grammar: Grammar,
        target: str,
        tier: int,
        rng: random.Random,
        *,
        max_statements: int = 6,
    ):
        self.g = grammar
        self.target = target
        self.tier = TIERS[tier]
        self.rng = rng
        self.max_statements = max_statements
        self.target_variants = [op for op in grammar.operations if op.op_id == target]
        if not self.target_variants:
            raise KeyError(target)
        first = self.target_variants[0]
        self.target_shapes = template_signatures(first.template, first.statement)[1]
        self.scope: list[Var] = []
        self.imports: set[str] = set()
        self.used_names: set[str] = {ENTRY, HELPER}
        self.results: list[str] = []
        self.loop_depth = 0
        self._placeholder_len: dict[str, int] = {}
        self._placeholder_var: dict[str, str] = {}

    # --- SourceContext for value sources -------------------------------------------------------
    def randint(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: list[_T]) -> _T:
        return self.rng.choice(options)

    def min_len(self, placeholder: str) -> int:
        return self._placeholder_len.get(placeholder, 0)

    def variable_of(self, t: Type) -> str | None:
        options = [v.name for v in self.scope if v.type == t]
        return self.rng.choice(options) if options else None

    def constant(self, t: Type, short: bool = False) -> str:
        spec = self.g.types.get(t.name)
        if spec is None:
            raise GenerationFailed(f"no constants for {t}")
        if spec.constants:
            pool = list(spec.constants)
            if short:
                pool = [c for c in pool if len(c) <= 4] or pool
            return self.rng.choice(pool)
        if spec.literal is None:
            raise GenerationFailed(f"no literal form for {t}")
        low = int(spec.literal.get("min_size", 0))
        n = self.rng.randint(max(low, 1), max(int(spec.literal.get("max_size", 3)), low, 1))
        if low == 0 and self.rng.random() < 0.1:
            return spec.literal["empty"]
        binding = dict(zip(spec.params, t.args, strict=True))
        item_form = spec.literal.get("item")
        items = []
        for _ in range(n):
            if item_form:
                parts = {p: self.constant(binding[p], short=True) for p in spec.params}
                items.append(item_form.format(**parts))
            else:
                elem = binding[spec.params[0]] if spec.params else t
                items.append(self.constant(elem, short=True))
        items = list(dict.fromkeys(items))
        code = spec.literal["form"].format(items=", ".join(items))
        try:
            literal_eval(code)
        except (TypeError, ValueError, SyntaxError):  # e.g. a set of lists: unhashable
            raise GenerationFailed(f"no valid constant of type {t}") from None
        return code

    # --- names and types -----------------------------------------------------------------------
    def fresh_name(self, t: Type) -> str:
        spec = self.g.types.get(t.name)
        pool = list(spec.names) if spec else ["v"]
        free = [n for n in pool if n not in self.used_names]
        name = self.rng.choice(free) if free else f"{pool[0]}{len(self.used_names)}"
        while name in self.used_names:
            name += "_"
        self.used_names.add(name)
        return name

    def random_binding(self, op: Operation, binding: dict[str, Type] | None = None) -> dict[str, Type]:
        binding = dict(binding or {})
        for t in op.all_types():
            for var in sorted(t.variables()):
                if var not in binding:
                    binding[var] = self.rng.choice(self.g.element_types)
        return binding

    def drawable(self, t: Type) -> bool:
        spec = self.g.types.get(t.name)
        return spec is not None and len(spec.params) == len(t.args) and all(self.drawable(a) for a in t.args)

    def iter_element(self, t: Type) -> Type | None:
        spec = self.g.types.get(t.name)
        if spec is None or spec.iterates is None:
            return None
        return parse_type(spec.iterates).substitute(dict(zip(spec.params, t.args, strict=True)))

    # --- expressions ---------------------------------------------------------------------------
    def ops_returning(
        self, want: Type, allow_target: bool, allow_other: bool
    ) -> list[tuple[Operation, dict]]:
        """Operations that can produce ``want``; a mutating one only if it has a variable to act on."""
        found = []
        for op, binding in _producers(self.g, want):
            is_target = op.op_id == self.target
            if (is_target and not allow_target) or (not is_target and not allow_other):
                continue
            if op.mutates and not any(
                unify(op.receiver, v.type, binding) for v in self.scope if not v.frozen
            ):
                continue
            found.append((op, binding))
        return found

    def expr(self, want: Type, budget: int, *, nest_target: bool = False) -> Expr:
        """An expression of type ``want``, built over the program's variables where possible:
        a variable, an operation on a variable, a nested target use, or a constant."""
        allow_other = self.tier.other_ops and budget > 0
        allow_target = budget > 0
        candidates = self.ops_returning(want, allow_target, allow_other)
        roll = self.rng.random()
        if nest_target and budget > 1 and roll < 0.7:
            targets = [c for c in candidates if c[0].op_id == self.target]
            if targets:
                return self.apply(*self.rng.choice(targets), budget - 1)
        variables = [v for v in self.scope if v.type == want]
        if variables and roll < 0.7:
            return self.var_expr(self.rng.choice(variables))
        spec = self.g.types.get(want.name)
        scalar = spec is not None and bool(spec.constants)
        if candidates and (roll < 0.9 or not (variables or scalar)):
            anchored = self.anchored(candidates)
            if anchored:
                op, binding, var = self.rng.choice(anchored)
                return self.apply(op, binding, budget - 1, receiver=var)
        if scalar:
            code = self.constant(want)
            return Expr(code, want, _is_atomic_code(code), min_len=_literal_len(code))
        if variables:
            return self.var_expr(self.rng.choice(variables))
        if spec is not None and spec.literal:
            code = self.constant(want)
            return Expr(code, want, _is_atomic_code(code), min_len=_literal_len(code))
        if candidates:
            return self.apply(*self.rng.choice(candidates), max(budget - 1, 0))
        raise GenerationFailed(f"no expression of type {want}")

    def var_expr(self, var: Var) -> Expr:
        return Expr(var.name, var.type, True, min_len=self.effective_len(var))

    def anchored(self, candidates: list[tuple[Operation, dict]]) -> list[tuple[Operation, dict, Var]]:
        """Some of the candidate operations whose receiver can be a variable in scope."""
        picked = self.rng.sample(candidates, min(len(candidates), 12))
        found = []
        for op, binding in picked:
            for var in self.scope:
                if (op.mutates or op.statement) and var.frozen:
                    continue
                bound = unify(op.receiver, var.type, binding)
                if bound is not None:
                    found.append((op, bound, var))
        return found

    def effective_len(self, var: Var) -> int:
        # Inside a loop a variable may have been shrunk by earlier iterations: assume nothing.
        return 0 if self.loop_depth else var.min_len

    def receiver_var(self, t: Type) -> Var | None:
        options = [v for v in self.scope if v.type == t and not v.frozen]
        return self.rng.choice(options) if options else None

    def apply(
        self, op: Operation, binding: dict[str, Type], budget: int, *, receiver: Var | None = None
    ) -> Expr:
        """Fill an operation's template; the receiver is a variable when the operation mutates."""
        binding = self.random_binding(op, binding)
        recv_type = op.receiver.substitute(binding)
        is_target = op.op_id == self.target
        if op.mutates or op.statement:
            receiver = receiver or self.receiver_var(recv_type)
            if receiver is None and recv_type.variables():
                unified = [(v, unify(op.receiver, v.type, binding)) for v in self.scope if not v.frozen]
                matches = [(v, b) for v, b in unified if b is not None]
                if matches:
                    receiver, binding = self.rng.choice(matches)
                    binding = self.random_binding(op, binding)
                    recv_type = receiver.type
            if receiver is None:
                raise GenerationFailed(f"no variable of type {recv_type} to mutate")
        if receiver is None and not (is_target and self.rng.random() < 0.2):
            # Operations mostly act on the program's variables, not on constants.
            options = [v for v in self.scope if v.type == recv_type]
            receiver = self.rng.choice(options) if options and self.rng.random() < 0.85 else None
        if receiver is not None:
            recv = Expr(receiver.name, recv_type, True, min_len=self.effective_len(receiver))
        else:
            recv = self.expr(recv_type, budget, nest_target=is_target and self.rng.random() < 0.6)
        parts = {"recv": recv}
        self._placeholder_len = {"recv": recv.min_len}
        for arg in op.args:
            arg_type = arg.type.substitute(binding)
            if arg.source is not None:
                impl = IMPLEMENTATIONS[arg.source.name]
                code = impl(self, arg_type, *arg.source.args)
                parts[arg.name] = Expr(code, arg_type, _is_atomic_code(code), min_len=_literal_len(code))
            else:
                parts[arg.name] = self.expr(
                    arg_type, budget, nest_target=is_target and self.rng.random() < 0.3
                )
        code = op.template.format(**{name: _fill(op.template, name, e) for name, e in parts.items()})
        self.imports.update(op.imports)
        guards = [g for e in parts.values() for g in e.guards]
        for req in op.requires:
            pred = self.g.predicates[req.name]
            bound = dict(zip(pred.params, req.args, strict=True))
            if pred.min_len and all(parts[bound[p]].min_len >= n for p, n in pred.min_len.items()):
                continue
            guards.append(
                pred.guard.format(**{p: _fill(pred.guard, p, parts[ref]) for p, ref in bound.items()})
            )
        result_len = {"same": recv.min_len, "grow": recv.min_len}.get(op.length_result, 0)
        # `-7` reads as a negative literal, not as a use of `-` (the static check agrees).
        counts_as_use = not _is_signed_number(code)
        if receiver is not None and op.length_recv != "same" and (op.mutates or op.statement):
            self.apply_length_effect(receiver, op.length_recv)
        return Expr(
            code,
            op.returns.substitute(binding) if op.returns else recv_type,
            _is_atomic_code(code),
            target_uses=sum(e.target_uses for e in parts.values()) + (is_target and counts_as_use),
            other_uses=sum(e.other_uses for e in parts.values()) + (self.is_other(op) and counts_as_use),
            min_len=result_len,
            guards=guards,
        )

    def is_other(self, op: Operation) -> bool:
        """Whether ``op`` reads as another operation than the target (by its shape, as the static
        check sees it: ``len`` of a set and ``len`` of a str look the same)."""
        return template_signatures(op.template, op.statement)[0] not in self.target_shapes

    def apply_length_effect(self, var: Var, effect: str) -> None:
        if effect == "clear":
            var.min_len = 0
        elif effect == "shrink":
            var.min_len = 0 if self.loop_depth else max(0, var.min_len - 1)
        elif effect == "grow" and not self.loop_depth:
            var.min_len += 1

    # --- statements ----------------------------------------------------------------------------
    def simple_statement(self, want_target: bool) -> tuple[str, Expr]:
        """One line: an assignment or a mutating call, preferring the target when asked."""
        for _ in range(4):
            try:
                return self._simple_statement(want_target)
            except GenerationFailed:
                continue
        return self._simple_statement(want_target)

    def _simple_statement(self, want_target: bool) -> tuple[str, Expr]:
        use_target = want_target or not self.tier.other_ops
        receiver = None
        binding: dict[str, Type] = {}
        anchored = [] if use_target else self.other_ops_on_scope()
        if anchored and self.rng.random() < 0.9:
            # Other operations mostly act on the program's own variables, not on constants.
            op, receiver = self.rng.choice(anchored)
            binding = unify(op.receiver, receiver.type) or {}
        else:
            pool = self.target_variants if use_target else self.g.operations
            op = self.rng.choice([o for o in pool if use_target or o.op_id != self.target])
        if receiver is None and (op.mutates or op.statement):
            unified = [(v, unify(op.receiver, v.type)) for v in self.scope if not v.frozen]
            matches = [(v, b) for v, b in unified if b is not None]
            if not matches:
                raise GenerationFailed(f"no variable for {op.op_id} to act on")
            receiver, binding = self.rng.choice(matches)
        if op.statement or (op.mutates and (op.returns is None or self.rng.random() < 0.5)):
            assert receiver is not None  # a statement or a mutation always got one just above
            e = self.apply(op, binding, budget=2, receiver=receiver)
            self.note_result(receiver.name)
            return e.code, e
        e = self.apply(op, binding, budget=2, receiver=receiver)
        reuse = [
            v for v in self.scope if v.type == e.type and not v.frozen and re.search(rf"\b{v.name}\b", e.code)
        ]
        if reuse and self.rng.random() < 0.5:
            var = self.rng.choice(reuse)
            var.min_len = e.min_len
        else:
            var = Var(self.fresh_name(e.type), e.type, e.min_len)
            self.scope.append(var)
        self.note_result(var.name)
        return f"{var.name} = {e.code}", e

    def other_ops_on_scope(self) -> list[tuple[Operation, Var]]:
        """(operation, variable) pairs: a non-target operation whose receiver can be the variable
        (never a mutation of a variable a loop iterates)."""
        return [
            (op, v)
            for v in self.scope
            for op in _ops_on(self.g, v.type)
            if op.op_id != self.target and not (v.frozen and (op.mutates or op.statement))
        ]

    def note_result(self, name: str) -> None:
        if name in self.results:
            self.results.remove(name)
        self.results.append(name)

    def forget_since(self, scope_before: list[Var]) -> None:
        """Drop variables first bound after ``scope_before`` (they may be unbound later)."""
        names = {v.name for v in self.scope} - {v.name for v in scope_before}
        self.scope = [v for v in self.scope if v.name not in names]
        self.results = [r for r in self.results if r not in names]

    def branch(self, depth: int, reach: int, n: int, counts: dict[str, int]) -> list[Stmt]:
        """A block whose new variables do not outlive it (a branch may not run)."""
        scope_before = list(self.scope)
        body = self.block(depth, reach, n, counts)
        self.forget_since(scope_before)
        return body

    def condition(self) -> Expr:
        """A test over a variable in scope: a boolean operation with that variable as receiver."""
        options = [(op, v) for v in self.scope for op in _tests_on(self.g, v.type)]
        on_target = [o for o in options if o[0].op_id == self.target]
        if on_target and self.rng.random() < 0.5:
            options = on_target
        for _ in range(8):
            if not options:
                break
            op, var = self.rng.choice(options)
            binding = unify(op.receiver, var.type) or {}
            try:
                e = self.apply(op, binding, budget=1, receiver=var)
            except GenerationFailed:
                continue
            if not _self_comparison(e.code):
                return e
        raise GenerationFailed("no condition over the variables in scope")

    def block(self, depth: int, reach: int, n: int, counts: dict[str, int]) -> list[Stmt]:
        """``n`` statements at nesting ``depth``; one of them opens a construct that reaches
        nesting ``reach`` (the tier's depth) when ``reach > depth``."""
        chain_at = self.rng.randrange(n) if reach > depth else -1
        body: list[Stmt] = []
        for i in range(n):
            if i == chain_at:
                body.extend(self.compound(depth, reach, counts))
                continue
            want_target = counts["target"] < 2 or self.rng.random() < 0.35
            if self.tier.other_ops and not counts["other"] and i == n - 1 and counts["target"] >= 2:
                want_target = False
            scope_before = list(self.scope)
            text, e = self.simple_statement(want_target)
            counts["target"] += e.target_uses
            counts["other"] += e.other_uses
            stmt: Stmt = text
            if e.guards and depth < self.tier.depth and self.rng.random() < 0.8:
                test = " and ".join(dict.fromkeys(e.guards))
                stmt = If(test, [stmt])
                counts["other"] += 1
                self.forget_since(scope_before)
            body.append(stmt)
        return body

    def compound(self, depth: int, reach: int, counts: dict[str, int]) -> list[Stmt]:
        """A control-flow construct whose body reaches nesting ``reach``."""
        kinds = {k: w for k, w in self.g.control_flow.items() if w > 0}
        iterables = [v for v in self.scope if self.iter_element(v.type) is not None]
        if not iterables:
            kinds.pop("for", None)
        kind = self.rng.choices(list(kinds), weights=list(kinds.values()))[0]
        inner = lambda: self.branch(depth + 1, reach, self.rng.randint(1, 3), counts)  # noqa: E731
        before: list[Stmt] = []
        saved_scope = list(self.scope)
        node: If | For | While
        if kind in ("if", "if_else", "if_elif_else"):
            test = self.condition()
            counts["target"] += test.target_uses
            counts["other"] += test.other_uses
            node = If(test.code, inner())
            if kind == "if_elif_else":
                test2 = self.condition()
                counts["other"] += test2.other_uses
                counts["target"] += test2.target_uses
                node.elifs.append(
                    (test2.code, self.branch(depth + 1, depth + 1, self.rng.randint(1, 2), counts))
                )
            if kind in ("if_else", "if_elif_else"):
                node.orelse = self.branch(depth + 1, depth + 1, 1, counts)
        elif kind == "for":
            source = self.rng.choice(iterables)
            elem = self.iter_element(source.type)
            assert elem is not None  # iterables: the variables whose type iterates
            var = Var(self.fresh_name(elem), elem, 0, frozen=True)
            source_was_frozen, source.frozen = source.frozen, True
            self.scope.append(var)
            self.loop_depth += 1
            body = inner()
            self.loop_depth -= 1
            source.frozen = source_was_frozen
            node = For(var.name, source.name, body)
        elif kind == "for_range":
            var = Var(self.fresh_name(Type("int")), Type("int"), 0, frozen=True)
            self.scope.append(var)
            self.loop_depth += 1
            body = inner()
            self.loop_depth -= 1
            counts["other"] += ("call", "range") not in self.target_shapes  # as the check sees it
            node = For(var.name, f"range({self.rng.randint(2, 5)})", body)
        else:  # while: a counter that only the last statement of the body increments
            counter = Var(self.fresh_name(Type("int")), Type("int"), 0, frozen=True)
            before.append(f"{counter.name} = 0")
            self.scope.append(counter)
            self.loop_depth += 1
            body = inner() + [f"{counter.name} += 1"]
            self.loop_depth -= 1
            counts["other"] += 2
            node = While(f"{counter.name} < {self.rng.randint(2, 4)}", body)
        self.forget_since(saved_scope)
        return [*before, node]

    def parameters(self, count: int) -> list[Var]:
        """Parameters: the target's receiver type first, then types the target's args need."""
        op = self.rng.choice(self.target_variants)
        binding = self.random_binding(op)
        wanted = [op.receiver.substitute(binding)]
        wanted += [a.type.substitute(binding) for a in op.args if a.source is None]
        extra_pool = [t for t in self.g.element_types] + [
            Type("list", (self.rng.choice(self.g.element_types),))
        ]
        while len(wanted) < count:
            wanted.append(self.rng.choice(extra_pool))
        params = []
        for t in wanted[: max(count, 1)]:
            if not self.drawable(t):
                raise GenerationFailed(f"parameter type {t} has no input strategy")
            spec = self.g.types[t.name]
            params.append(Var(self.fresh_name(t), t, int(spec.strategy.get("min_size", 0))))
        return params

    def function(
        self,
        name: str,
        params: list[Var],
        depth: int,
        n: int,
        counts: dict[str, int],
        *,
        prelude: tuple[str, Var] | None = None,
        allow_pair: bool = True,
    ) -> tuple[Function, Type | None]:
        """A function over ``params``; returns it and the type of what it returns (None: a pair)."""
        self.scope = list(params)
        self.results = []
        body: list[Stmt] = []
        if prelude is not None:
            text, var = prelude
            body.append(text)
            self.scope.append(var)
            self.note_result(var.name)
        body += self.block(0, depth, n, counts)
        for _ in range(3):
            if self.results:
                break
            text, e = self.simple_statement(want_target=counts["target"] < 2)
            counts["target"] += e.target_uses
            counts["other"] += e.other_uses
            body.append(text)
        if not self.results:
            raise GenerationFailed("nothing to return")
        ret = self.results[-1]
        ret_type = next((v.type for v in reversed(self.scope) if v.name == ret), None)
        if allow_pair and len(self.results) > 1 and self.rng.random() < 0.3:
            ret, ret_type = f"({self.results[-2]}, {ret})", None
        body.append(f"return {ret}")
        return Function(name, [p.name for p in params], body), ret_type

    def build(self) -> Program:
        counts = {"target": 0, "other": 0}
        params = self.parameters(self.rng.randint(1, 2))
        functions = []
        prelude = None
        if self.tier.helper:
            # The helper takes the entry's first parameter type; the entry calls it first and
            # its result joins the entry's scope.
            helper_params = [Var("arg", params[0].type, params[0].min_len)]
            self.used_names.add("arg")
            helper, helper_type = self.function(
                HELPER, helper_params, 0, self.rng.randint(2, 3), counts, allow_pair=False
            )
            if helper_type is None:
                raise GenerationFailed("helper returns nothing usable")
            functions.append(helper)
            self.used_names = {ENTRY, HELPER, "arg"} | {p.name for p in params}
            var = Var(self.fresh_name(helper_type), helper_type, 0)
            prelude = (f"{var.name} = {HELPER}({params[0].name})", var)
        n = self.rng.randint(2 + self.tier.other_ops, 4) if self.tier.depth == 0 else self.rng.randint(1, 3)
        entry, _ = self.function(ENTRY, params, self.tier.depth, n, counts, prelude=prelude)
        functions.append(entry)
        if counts["target"] < 2:
            raise GenerationFailed("target used fewer than 2 times")
        if self.tier.other_ops and counts["other"] < 1:
            raise GenerationFailed("no other operation")
        return Program(
            source=render(functions, sorted(self.imports)),
            entry=ENTRY,
            tier=self.tier.level,
            target=self.target,
            params=[(p.name, str(p.type)) for p in params],
        )


def _returning_index(grammar: Grammar) -> dict[str, tuple[Operation, ...]]:
    """Expression operations by the name of the type they return ("" for a type variable)."""
    index = grammar.cache.get("returning")
    if index is None:
        table: dict[str, list[Operation]] = {}
        for op in grammar.operations:
            if op.returns is not None and not op.statement:
                table.setdefault("" if op.returns.is_var else op.returns.name, []).append(op)
        index = grammar.cache["returning"] = {k: tuple(v) for k, v in table.items()}
    return index


def _producers(grammar: Grammar, want: Type) -> list[tuple[Operation, dict[str, Type]]]:
    """Expression operations that can return ``want``, with the binding that makes them (memoised)."""
    key = ("producers", want)
    found = grammar.cache.get(key)
    if found is None:
        index = _returning_index(grammar)
        found = []
        for op in index.get(want.name, ()) + index.get("", ()):
            assert op.returns is not None  # _returning_index holds only operations that return
            binding = unify(op.returns, want)
            if binding is not None:
                found.append((op, binding))
        grammar.cache[key] = found
    return found


def _ops_on(grammar: Grammar, t: Type) -> list[Operation]:
    """Operations whose receiver can be a value of type ``t`` (memoised on the grammar)."""
    key = ("ops_on", t)
    found = grammar.cache.get(key)
    if found is None:
        found = grammar.cache[key] = [op for op in grammar.operations if unify(op.receiver, t) is not None]
    return found


def _tests_on(grammar: Grammar, t: Type) -> list[Operation]:
    """Non-mutating operations returning bool whose receiver can be a value of type ``t``."""
    key = ("tests", t)
    found = grammar.cache.get(key)
    if found is None:
        found = [
            op
            for op in _returning_index(grammar).get("bool", ())
            if not op.mutates and unify(op.receiver, t) is not None
        ]
        grammar.cache[key] = found
    return found


def _self_comparison(code: str) -> bool:
    """``x != x``-style conditions are constant: reject them."""
    node = ast.parse(code, mode="eval").body
    if isinstance(node, ast.Compare) and len(node.comparators) == 1:
        return ast.dump(node.left) == ast.dump(node.comparators[0])
    return isinstance(node, ast.BoolOp) or not any(isinstance(n, ast.Name) for n in ast.walk(node))


@lru_cache(maxsize=16384)
def _literal_len(code: str) -> int:
    try:
        value = literal_eval(code)
    except (ValueError, SyntaxError, TypeError):
        return 0
    try:
        return len(value)
    except TypeError:
        return 0


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
