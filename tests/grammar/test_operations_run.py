"""Every operation of the Python grammar runs on the inputs the grammar itself draws.

For each operation variant and each binding of its type variables to the element types, the test
draws receivers and typed arguments from the grammar's Hypothesis strategies (``strategy_for``),
builds the arguments that have a ``from:`` value source with the real source function and a small
fake synthesizer context, checks the preconditions by evaluating each predicate's guard, and, when
they hold, runs the template. It asserts that

- an operation whose preconditions hold never raises (a failure means a missing ``requires``);
- the result has the type ``returns`` names (container elements checked too) and statement-like
  operations give None;
- an operation that does not declare ``mutates`` leaves its receiver as it was;
- the ``length`` effects are sound lower bounds (what the synthesizer's minimum-length tracking
  relies on);
- most draws satisfy the preconditions, so that generated programs mostly run.
"""

from __future__ import annotations

import builtins
import copy
import importlib
import itertools
import random
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from factory.grammar.loader import load_grammar
from factory.grammar.model import Operation
from factory.grammar.sources import IMPLEMENTATIONS
from factory.grammar.types import Type, parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.strategies import MIXTURE, TYPE_PARAM_KEYS, branch_spec, strategy_for
from factory.languages import language

GRAMMAR = load_grammar("grammars/python")
LANGUAGE = language(GRAMMAR.language)
CANDIDATES = 12  # examples per seeded run, as the inputs stage draws per program
POOL_RUNS = 4  # seeded runs per concrete type
DRAWS = 30  # draws per operation variant and type binding

# Share of draws whose preconditions must hold. Operations whose preconditions depend on values
# (a substring or element that must be present, a digit string) get a lower floor: in the
# synthesizer their guards are emitted and their branches taken less often.
MIN_YIELD = 0.8
# Elements and keys of type str are mostly short words, so a constant such as 'a' is seldom one
# of them: mostly a variable bound to an element finds one (see FakeContext). A short constant is
# in a drawn str about one time in five ('e': 58%, ',': 11%, '\n': never).
LOW_YIELD = {
    "str.index": 0.15, "str.rindex": 0.15,
    "list.index": 0.1, "list.remove": 0.1,
    "tuple.index": 0.1,
    "set.remove": 0.2,
    "dict.getitem": 0.15, "dict.pop_key": 0.15, "dict.delitem": 0.15,
    "builtins.int": 0.05,  # a digit string: mostly Hypothesis' simplest draw ('11111')
}  # fmt: skip

_KIND_CLASS = {
    "integers": int, "floats": float, "booleans": bool, "text": str, "characters": str,
    "binary": bytes, "lists": list, "sets": set, "frozensets": frozenset, "dictionaries": dict,
    "tuples": tuple, "words": str, "readable_floats": float,
}  # fmt: skip


def leaves(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The strategy specs a spec draws from: a mixture's branches (recursively), else itself."""
    if spec["kind"] == MIXTURE:
        return [leaf for branch in spec["of"] for leaf in leaves(branch_spec(branch))]
    return [spec]


def leaf_class(spec: dict[str, Any]) -> type | None:
    if spec["kind"] == "sampled_from":
        classes = {type(e) for e in spec["elements"]}
        return classes.pop() if len(classes) == 1 else None
    return type(spec["value"]) if spec["kind"] == "just" else _KIND_CLASS.get(spec["kind"])


@cache
def pool(t: Type) -> tuple[Any, ...]:
    """Values of type ``t`` drawn as the inputs stage draws them: seeded runs of the grammar's own
    strategy, CANDIDATES examples per run (each run starts with Hypothesis' simplest example)."""
    strategy = strategy_for(GRAMMAR, t)
    runs = [draw_examples(strategy, CANDIDATES, seed) for seed in range(POOL_RUNS)]
    return tuple(value for run in runs for value in run)


def python_class(t: Type) -> type | None:
    """The Python class of a grammar type's values, from its strategy (never from its name)."""
    spec = GRAMMAR.types[t.name]
    if spec.convert:
        return getattr(builtins, spec.convert)
    classes = {leaf_class(leaf) for leaf in leaves(spec.strategy)}
    assert len(classes) == 1, f"{t}: its strategy's branches draw {classes}"
    return classes.pop()


def type_problem(value: Any, t: Type) -> str | None:
    """Why ``value`` is not of grammar type ``t`` (None when it is); containers recursively."""
    cls = python_class(t)
    if cls is not None and type(value) is not cls:
        return f"{value!r} is a {type(value).__name__}, expected {t} ({cls.__name__})"
    spec = GRAMMAR.types[t.name]
    binding = dict(zip(spec.params, t.args, strict=True))
    # The branches of one type's mixture name the same parameters (the loader checks each).
    strategy = next(
        (
            leaf
            for leaf in leaves(spec.strategy)
            if any(isinstance(leaf.get(k), str) for k in TYPE_PARAM_KEYS)
        ),
        leaves(spec.strategy)[0],
    )  # (a parameter is named by a string; ``sampled_from``'s elements are a list of values)
    parts: list[tuple[Any, Type]] = []
    if strategy["kind"] == "tuples":
        if len(value) != len(t.args):
            return f"{value!r} does not have {len(t.args)} parts ({t})"
        parts = list(zip(value, t.args, strict=True))
    elif "keys" in strategy:
        parts = [(k, binding[strategy["keys"]]) for k in value]
        parts += [(v, binding[strategy["values"]]) for v in value.values()]
    elif isinstance(strategy.get("elements"), str):
        parts = [(v, binding[strategy["elements"]]) for v in value]
    for part, part_type in parts:
        problem = type_problem(part, part_type)
        if problem:
            return f"in {value!r}: {problem}"
    return None


def element_type(t: Type) -> Type | None:
    """What ``for x in value`` gives for a value of type ``t`` (the type's ``iterates``)."""
    spec = GRAMMAR.types.get(t.name)
    if spec is None or spec.iterates is None:
        return None
    return parse_type(spec.iterates).substitute(dict(zip(spec.params, t.args, strict=True)))


class FakeContext:
    """The synthesizer's side of a value source (see SourceContext), for one draw.

    ``variable_of`` models the common case of the synthesizer: an element-typed variable in
    scope is a loop variable over the receiver (``for x in xs: xs.index(x)``), so half of the
    time it names an element of the receiver; otherwise the source falls back to a constant.
    """

    def __init__(self, rng: random.Random, ns: dict[str, Any], lens: dict[str, int], recv_type: Type) -> None:
        self.rng = rng
        self.ns = ns
        self.lens = lens
        self.recv_type = recv_type

    def randint(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: list) -> object:
        return self.rng.choice(options)

    def min_len(self, placeholder: str) -> int:
        return self.lens.get(placeholder, 0)

    def constant(self, t: Type, short: bool = False) -> str:
        spec = GRAMMAR.types[t.name]
        if spec.constants:
            options = list(spec.constants)
            if short:
                options = [c for c in options if len(c) <= 4] or options
            return self.rng.choice(options)
        return repr(self.rng.choice(pool(t)))

    def literal(self, value: object) -> str:
        return LANGUAGE.literal(value)

    def text(self, placeholder: str) -> str:
        return placeholder  # the names in ``ns`` are the placeholders themselves

    def variable_of(self, t: Type) -> str | None:
        recv = self.ns["recv"]
        if element_type(self.recv_type) != t or not recv or self.rng.random() < 0.5:
            return None
        elements = sorted(recv, key=repr) if isinstance(recv, (set, frozenset)) else list(recv)
        self.ns["_elem"] = copy.deepcopy(self.rng.choice(elements))
        return "_elem"

    def prefers(self, name: str) -> bool:
        return False  # no statement around the operation


def bindings(op: Operation) -> list[dict[str, Type]]:
    names = sorted(set().union(*(t.variables() for t in op.all_types())))
    combos = itertools.product(GRAMMAR.element_types, repeat=len(names))
    return [dict(zip(names, combo, strict=True)) for combo in combos]


def law_draws(law: str) -> Iterator[tuple[Operation, dict[str, Type], random.Random]]:
    """Each operation that declares the grammar law ``law`` (there is one at least), with each
    binding of its type variables and the RNG seeded by both that its law test draws from."""
    marked = [op for op in GRAMMAR.operations if getattr(op, law)]
    assert marked, law
    for op in marked:
        for binding in bindings(op):
            yield op, binding, random.Random(f"{op.op_id}:{sorted(binding.items())}")


def sized_len(value: Any) -> int | None:
    try:
        return len(value)
    except TypeError:
        return None


def run_variant(op: Operation, binding: dict[str, Type], stats: dict[str, Any]) -> None:
    rng = random.Random(f"{op.op_id}:{op.receiver}:{sorted(binding.items())}")
    recv_type = op.receiver.substitute(binding)
    returns = op.returns.substitute(binding) if op.returns else None
    for _ in range(DRAWS):
        stats["draws"] += 1
        ns: dict[str, Any] = {"recv": copy.deepcopy(rng.choice(pool(recv_type)))}
        ns.update({module: importlib.import_module(module) for module in op.imports})
        texts = {"recv": "recv"}
        lens = {"recv": sized_len(ns["recv"]) or 0}
        ctx = FakeContext(rng, ns, lens, recv_type)
        for arg in op.args:
            arg_type = arg.type.substitute(binding)
            if arg.source is None:
                ns[arg.name] = copy.deepcopy(rng.choice(pool(arg_type)))
                texts[arg.name] = arg.name
                lens[arg.name] = sized_len(ns[arg.name]) or 0
            else:
                texts[arg.name] = IMPLEMENTATIONS[arg.source.name](ctx, arg_type, *arg.source.args)
        guards = []
        for req in op.requires:
            pred = GRAMMAR.predicates[req.name]
            values = {
                p: repr(a) if literal else texts[a]
                for p, a, literal in zip(pred.params, req.args, req.literal_args, strict=True)
            }
            guards.append(pred.guard.format(**values))
        code = op.template.format(**texts)
        where = f"{code!r} with {', '.join(f'{k}={v!r}' for k, v in ns.items())}"
        if not all(eval(g, {}, dict(ns)) for g in guards):  # noqa: S307 - our own grammar
            continue
        stats["ran"] += 1
        before = copy.deepcopy(ns["recv"])
        len_before = sized_len(before)
        try:
            if op.statement:
                exec(code, {}, ns)  # noqa: S102
                result = None
            else:
                result = eval(code, {}, ns)  # noqa: S307
        except Exception as exc:  # noqa: BLE001 - any exception is a grammar bug
            stats["problems"].append(f"raised {type(exc).__name__}: {exc} for {where}")
            continue
        problem = check_result(op, returns, result, before, ns["recv"], len_before)
        if problem:
            stats["problems"].append(f"{problem} for {where}")


def check_result(
    op: Operation,
    returns: Type | None,
    result: Any,
    before: Any,
    after: Any,
    len_before: int | None,
) -> str | None:
    if returns is None:
        if result is not None:
            return f"returns none but gave {result!r}"
    else:
        problem = type_problem(result, returns)
        if problem:
            return f"wrong result type: {problem}"
    if not (op.mutates or op.statement) and after != before:
        return f"mutated its receiver ({before!r} -> {after!r}) without 'mutates: true'"
    if len_before is None:
        return None
    len_result = sized_len(result)
    if op.length_result == "same" and len_result != len_before:
        return f"length.result same, but len {len_before} -> {len_result}"
    if op.length_result == "grow" and (len_result is None or len_result < len_before):
        return f"length.result grow, but len {len_before} -> {len_result}"
    len_after = sized_len(after)
    floors = {"same": len_before, "grow": len_before + 1, "shrink": len_before - 1}
    floor = floors.get(op.length_recv)
    if floor is not None and (len_after is None or len_after < floor):
        return f"length.recv {op.length_recv}, but len {len_before} -> {len_after}"
    return None


@pytest.mark.parametrize("op_id", GRAMMAR.targets())
def test_operation_runs(op_id: str) -> None:
    stats: dict[str, Any] = {"draws": 0, "ran": 0, "problems": []}
    for op in (o for o in GRAMMAR.operations if o.op_id == op_id):
        for binding in bindings(op):
            run_variant(op, binding, stats)
    problems = stats["problems"]
    assert not problems, f"{op_id}: {len(problems)} problem(s), e.g.\n" + "\n".join(problems[:5])
    floor = LOW_YIELD.get(op_id, MIN_YIELD)
    rate = stats["ran"] / stats["draws"]
    assert rate >= floor, f"{op_id}: preconditions hold in {rate:.0%} of draws (< {floor:.0%})"


def test_every_predicate_is_used() -> None:
    used = {req.name for op in GRAMMAR.operations for req in op.requires}
    assert set(GRAMMAR.predicates) - used <= {"not_contains", "nonzero"}  # kept for the synthesizer


@pytest.mark.parametrize("type_name", sorted(GRAMMAR.types))
def test_iterating_gives_the_iterates_type(type_name: str) -> None:
    spec = GRAMMAR.types[type_name]
    for binding in itertools.product(GRAMMAR.element_types, repeat=len(spec.params)):
        t = Type(type_name, tuple(binding))
        elem = element_type(t)
        for value in pool(t):
            if elem is None:
                continue
            for x in value:
                assert type_problem(x, elem) is None, f"iterating {value!r} ({t}) gave {x!r}"


def test_pools_are_varied() -> None:
    """The strategies give varied inputs within the grammar's bounds, empty ones included."""
    for text in ("int", "str", "list[int]", "set[str]", "dict[str, int]", "tuple[int]", "float"):
        values = pool(parse_type(text))
        assert len({repr(v) for v in values}) >= 10, text
    assert all(len(s) <= 60 and "\n" not in s and "\t" not in s for s in pool(parse_type("str")))
    assert all(len(x) <= 8 for x in pool(parse_type("list[str]")))
    assert all(-1000 <= n <= 10000 for n in pool(parse_type("int")))
    assert any(n < 0 for n in pool(parse_type("int")))
    assert all(-100 <= x <= 100 and len(repr(x)) <= 6 for x in pool(parse_type("float")))


def test_member_forms_are_in_the_receiver() -> None:
    """The ``member`` source's forms give an element (a key) of every non-empty receiver, so an
    operation that takes its value from it needs no ``contains`` guard."""
    forms = {
        "list[int]": ["max({recv})", "min({recv})", "{recv}[-1]"],
        "list[str]": ["max({recv})", "min({recv})", "{recv}[-1]"],
        "tuple[str]": ["max({recv})", "{recv}[-1]"],
        "dict[str, int]": ["max({recv})", "min({recv})", "list({recv})[-1]"],
        "set[int]": ["max({recv})", "min({recv})"],
    }
    for text, options in forms.items():
        rng = random.Random(text)
        receivers = [v for v in pool(parse_type(text)) if v]
        assert receivers, text
        for recv in receivers:
            ctx = FakeContext(rng, {"recv": recv}, {"recv": len(recv)}, parse_type(text))
            code = IMPLEMENTATIONS["member"](ctx, parse_type("int"), "recv", *options)
            assert eval(code, {}, {"recv": recv}) in recv, (code, recv)  # noqa: S307


def test_idempotent_operations_absorb_a_repeated_operand() -> None:
    """``idempotent: true`` holds on drawn inputs: ``op(x, op(x, y)) == op(x, y)``, in any order
    and grouping, and ``op(x, x) == x`` (the synthesizer refuses such uses as no work)."""
    for op, binding, rng in law_draws("idempotent"):
        (arg,) = op.args

        def apply(a: str, b: str, ns: dict[str, Any], op: Operation = op, arg: Any = arg) -> Any:
            return eval(op.template.format(recv=a, **{arg.name: b}), {}, ns)  # noqa: S307

        values = pool(op.receiver.substitute(binding))
        for _ in range(DRAWS):
            ns: dict[str, Any] = {"x": rng.choice(values), "y": rng.choice(values)}
            ns["z"] = apply("x", "y", ns)
            for a, b in (("x", "z"), ("z", "x"), ("y", "z"), ("z", "y")):
                assert apply(a, b, ns) == ns["z"], (op.op_id, a, b, ns)
            assert apply("x", "x", ns) == ns["x"], (op.op_id, ns)


def _argument_texts(
    op: Operation, binding: dict[str, Type], rng: random.Random, ns: dict[str, Any], recv_type: Type
) -> dict[str, str]:
    """The template's texts for ``ns["recv"]`` and ``op``'s arguments: a drawn value bound in
    ``ns`` under the argument's name, or the code its value source writes."""
    ctx = FakeContext(rng, ns, {"recv": sized_len(ns["recv"]) or 0}, recv_type)
    texts = {"recv": "recv"}
    for arg in op.args:
        arg_type = arg.type.substitute(binding)
        if arg.source is None:
            ns[arg.name] = rng.choice(pool(arg_type))
            texts[arg.name] = arg.name
        else:
            texts[arg.name] = IMPLEMENTATIONS[arg.source.name](ctx, arg_type, *arg.source.args)
    return texts


def test_stable_operations_change_nothing_when_applied_again() -> None:
    """``stable: true`` holds on drawn inputs: ``op(op(x, a), a) == op(x, a)`` with the arguments
    its value sources write (the synthesizer refuses the second use as no work)."""
    for op, binding, rng in law_draws("stable"):
        recv_type = op.receiver.substitute(binding)
        for _ in range(DRAWS):
            ns: dict[str, Any] = {"recv": rng.choice(pool(recv_type))}
            texts = _argument_texts(op, binding, rng, ns, recv_type)
            once = eval(op.template.format(**texts), {}, dict(ns))  # noqa: S307
            again = eval(op.template.format(**{**texts, "recv": "once"}), {}, {**ns, "once": once})  # noqa: S307
            assert again == once, (op.op_id, texts, ns)


def test_removing_operations_keep_nothing_of_their_argument() -> None:
    """``removes: true`` holds on drawn inputs: ``op(y, op(x, y)) == y`` (``y - (x - y)``; for a
    mutation, ``x -= y`` then ``y -= x`` leaves ``y`` as it was)."""
    for op, binding, rng in law_draws("removes"):
        (arg,) = op.args
        values = pool(op.receiver.substitute(binding))
        for _ in range(DRAWS):
            x, y = copy.deepcopy(rng.choice(values)), copy.deepcopy(rng.choice(values))
            ns: dict[str, Any] = {"x": x, "y": y, "before": copy.deepcopy(y)}
            first = op.template.format(recv="x", **{arg.name: "y"})
            second = op.template.format(recv="y", **{arg.name: "x"})
            if op.mutates:
                exec(f"{first}\n{second}", {}, ns)  # noqa: S102
                assert ns["y"] == ns["before"], (op.op_id, ns)
            else:
                ns["x"] = eval(first, {}, ns)  # noqa: S307
                assert eval(second, {}, ns) == ns["before"], (op.op_id, ns)  # noqa: S307


def _within(left: Any, before: Any) -> bool:
    """Whether ``left`` holds only items of ``before`` (a dict's items, a set's elements)."""
    if isinstance(before, dict):
        return all(key in before and before[key] == value for key, value in left.items())
    return set(left) <= set(before)


def test_subset_operations_keep_only_the_receivers_items() -> None:
    """``subset: true`` holds on drawn inputs: what the operation leaves (its result, or its
    receiver when it changes it) holds only items the receiver had, so an empty receiver stays
    empty (the synthesizer never applies it to a variable that still holds its empty start)."""
    for op, binding, rng in law_draws("subset"):
        recv_type = op.receiver.substitute(binding)
        receivers = pool(recv_type)
        empty = type(receivers[0])()
        for recv in [empty, *(rng.choice(receivers) for _ in range(DRAWS))]:
            ns: dict[str, Any] = {"recv": copy.deepcopy(recv)}
            code = op.template.format(**_argument_texts(op, binding, rng, ns, recv_type))
            if op.mutates or op.statement:
                exec(code, {}, ns)  # noqa: S102
                left = ns["recv"]
            else:
                left = eval(code, {}, ns)  # noqa: S307
            assert _within(left, recv), (op.op_id, code, recv, left)
            assert recv or not left, (op.op_id, code, left)


def test_member_forms_do_not_fix_the_position_found() -> None:
    """A position found with a ``member`` form is not the same end of the receiver on every draw:
    ``s.index(s[0])`` is always 0 and ``s.rindex(s[-1])`` always ``len(s) - 1``, a value known
    without running the program."""
    int_type = parse_type("int")
    checked = 0
    for op in GRAMMAR.operations:
        sourced = [a for a in op.args if a.source is not None and a.source.name == "member"]
        if op.returns != int_type or len(op.args) != 1 or not sourced:
            continue
        (arg,) = sourced
        for binding in bindings(op):
            recv_type = op.receiver.substitute(binding)
            receivers = [r for r in pool(recv_type) if r]
            for form in arg.source.args[1:]:
                code = op.template.format(recv="recv", **{arg.name: form.replace("{recv}", "recv")})
                found = [(eval(code, {}, {"recv": r}), len(r)) for r in receivers[:DRAWS]]  # noqa: S307
                checked += 1
                assert not all(at == 0 for at, _ in found), (op.op_id, form, "always the first")
                assert not all(at == n - 1 for at, n in found), (op.op_id, form, "always the last")
    assert checked
