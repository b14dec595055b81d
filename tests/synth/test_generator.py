"""Synthesized programs meet their tier, are reproducible by (seed, index), and parse."""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factory.contracts import program_id
from factory.grammar.loader import load_grammar
from factory.grammar.model import Grammar
from factory.languages.javascript import values as js_values
from factory.languages.tree import text, walk
from factory.synth.check import check_program
from factory.synth.expressions import Expr, trivial
from factory.synth.generator import GenerationFailed, Program, generate_program
from factory.synth.stage import synthesize_one
from factory.synth.tiers import TIERS

GRAMMAR = load_grammar("grammars/python")
TARGETS = GRAMMAR.targets()


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**6), tier=st.sampled_from(sorted(TIERS)), target=st.sampled_from(TARGETS))
def test_every_generated_program_meets_its_tier(seed: int, tier: int, target: str) -> None:
    try:
        program = generate_program(GRAMMAR, target, tier, random.Random(seed))
    except GenerationFailed:
        return  # counted as generation_failed by the stage; the stage test bounds the rate
    assert check_program(program.source, tier, target, GRAMMAR) == []
    tree = ast.parse(program.source)
    functions = [node for node in tree.body if not isinstance(node, ast.Import)]
    assert [fn.name for fn in functions] == (["g", "f"] if tier == 6 else ["f"])
    depth = _depth(tree)
    assert depth == TIERS[tier].depth
    # one statement per line
    lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    assert len(lines) == len(set(lines))


def _depth(node: ast.AST, d: int = 0) -> int:
    best = d
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.If, ast.For, ast.While)):
            inner = [*child.body]
            orelse = child.orelse
            best = max(best, max(_depth_block(inner, d + 1), _depth_orelse(orelse, d + 1)))
        else:
            best = max(best, _depth(child, d))
    return best


def _depth_block(stmts: list[ast.stmt], d: int) -> int:
    return max([d] + [_depth(ast.Module(body=[s], type_ignores=[]), d) for s in stmts])


def _depth_orelse(orelse: list[ast.stmt], d: int) -> int:
    # `elif` is an If alone in orelse: same depth as its `if`.
    if len(orelse) == 1 and isinstance(orelse[0], ast.If):
        return max(_depth_block(orelse[0].body, d), _depth_orelse(orelse[0].orelse, d))
    return _depth_block(orelse, d) if orelse else d


def test_program_is_regenerated_alone_from_seed_and_index() -> None:
    a = synthesize_one(GRAMMAR, 7, 123, TARGETS[5], 4, 30)
    b = synthesize_one(GRAMMAR, 7, 123, TARGETS[5], 4, 30)
    c = synthesize_one(GRAMMAR, 8, 123, TARGETS[5], 4, 30)
    assert a == b
    assert a.source != c.source


def test_program_id_ignores_formatting() -> None:
    assert program_id("def f(x):\n    return x + 1\n") == program_id("def f( x ):\n  return (x+1)  # c\n")
    assert program_id("def f(x):\n    return x + 1\n") != program_id("def f(x):\n    return x + 2\n")


@pytest.mark.parametrize(
    ("source", "tier", "reason"),
    [
        ("def f(s):\n    a = s.upper()\n    return a\n", 1, "target:used_fewer_than_2"),
        (
            "def f(s):\n    a = s.upper().upper()\n    b = len(a)\n    return b\n",
            1,
            "ops:other_operation_in_tier1",
        ),
        ("def f(s):\n    a = s.upper().upper()\n    return a\n", 2, "ops:no_other_operation"),
        (
            "def f(s):\n    a = s.upper().upper(); b = len(a)\n    return b\n",
            2,
            "line:several_statements",
        ),
        (
            "def f(s):\n    i = 0\n    while i < 3:\n        s = s.upper().upper()\n"
            "        i -= 1\n    return s\n",
            3,
            "while:unbounded",
        ),
        (
            "def f(s):\n    i = 0\n    while i < 3:\n        i = 0\n"
            "        s = s.upper().upper()\n        i += 1\n"
            "    return s\n",
            3,
            "while:unbounded",
        ),
        (
            "def f(s):\n    if s:\n        s = s.upper().upper()\n    return len(s)\n",
            4,
            "depth:1_not_2",
        ),
        ("def f(s):\n    s = s.upper().upper()\n    return len(s)\n", 6, "shape:helper_not_called"),
        (  # a body under else (or elif) is one level deeper than the if
            "def f(s):\n    if s:\n        s = s.upper().upper()\n    else:\n"
            "        if s:\n            s = s.upper()\n    return len(s)\n",
            3,
            "depth:2_not_1",
        ),
    ],
)
def test_static_check_rejects_programs_that_break_their_tier(source: str, tier: int, reason: str) -> None:
    assert reason in check_program(source, tier, "str.upper", GRAMMAR)


def test_static_check_accepts_a_handwritten_tier3_program() -> None:
    source = (
        "def f(s):\n"
        "    n = 0\n"
        "    while n < 3:\n"
        "        s = s.upper().upper()\n"
        "        n += 1\n"
        "    return s\n"
    )
    assert check_program(source, 3, "str.upper", GRAMMAR) == []


def _is_container_literal(node: ast.expr) -> bool:
    """A list, tuple, set or dict display that reads no variable."""
    displays = (ast.List, ast.Tuple, ast.Set, ast.Dict)
    return isinstance(node, displays) and not any(isinstance(n, ast.Name) for n in ast.walk(node))


def _copy_of(node: ast.expr) -> str:
    """The code a copy (``x.copy()``, ``x[:]``) copies, else the node's own code."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "copy"
        and not node.args
    ):
        return ast.unparse(node.func.value)
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is node.slice.upper is node.slice.step is None
    ):
        return ast.unparse(node.value)
    return ast.unparse(node)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**6), tier=st.sampled_from(sorted(TIERS)), target=st.sampled_from(TARGETS))
def test_no_test_against_a_container_literal_no_constant_twice_no_comparison_with_itself(
    seed: int, tier: int, target: str
) -> None:
    try:
        program = generate_program(GRAMMAR, target, tier, random.Random(seed))
    except GenerationFailed:
        return
    for node in ast.walk(ast.parse(program.source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            assert not any(_is_container_literal(s) for s in sides), program.source
            assert len({_copy_of(s) for s in sides}) == len(sides), program.source
        if isinstance(node, ast.Call):
            constants = [ast.unparse(a) for a in node.args if isinstance(a, ast.Constant)]
            assert len(constants) == len(set(constants)), program.source
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            bounds = [b for b in (node.slice.lower, node.slice.upper) if isinstance(b, ast.Constant)]
            assert len(bounds) < 2 or bounds[0].value != bounds[1].value, program.source


RESET_TARGETS = [t for t in TARGETS if all(op.resets for op in GRAMMAR.operations if op.op_id == t)]


def test_a_reset_follows_a_read_and_is_refilled_at_once() -> None:
    """``xs.clear()`` (``resets: true``) is used once, on a variable read before, and the next
    statement puts values back into it without reading it; never in tier 1 (no other operation
    may refill it) and never as a function's last statement."""
    assert RESET_TARGETS
    built = 0
    for target in RESET_TARGETS:
        with pytest.raises(GenerationFailed):
            generate_program(GRAMMAR, target, 1, random.Random(0), attempts=5)
        for seed in range(12):
            try:
                program = generate_program(GRAMMAR, target, 2 + seed % 5, random.Random(seed))
            except GenerationFailed:
                continue
            built += 1
            assert check_program(program.source, program.tier, target, GRAMMAR) == []
            for node in ast.walk(ast.parse(program.source)):
                body = getattr(node, "body", None)
                if not isinstance(body, list):
                    continue
                for i, stmt in enumerate(body):
                    call = stmt.value if isinstance(stmt, ast.Expr) else None
                    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                        continue
                    if call.func.attr != "clear" or not isinstance(call.func.value, ast.Name):
                        continue
                    name = call.func.value.id
                    assert i + 1 < len(body), program.source
                    names = [n.id for n in ast.walk(body[i + 1]) if isinstance(n, ast.Name)]
                    assert names.count(name) == 1, program.source  # the refill's receiver only
    assert built >= len(RESET_TARGETS) * 6


def _idempotent_leaves(node: ast.expr, bound: dict[str, tuple[str, list[str]]]) -> tuple[str, list[str]]:
    """(the idempotent operation ``node`` uses or "", its operands expanded through nested uses
    and through variables bound to a use: ``a & (a & b)`` gives ("&", [a, a, b]))."""
    kind, parts = "", [node]
    if isinstance(node, ast.BoolOp):
        kind, parts = type(node.op).__name__, node.values
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
        kind, parts = type(node.op).__name__, [node.left, node.right]
    elif isinstance(node, ast.Call) and len(node.args) in (1, 2):
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("min", "max") and len(node.args) == 2:
            kind, parts = func.id, node.args
        elif (
            isinstance(func, ast.Attribute) and func.attr in ("intersection", "union") and len(node.args) == 1
        ):
            kind, parts = func.attr, [func.value, node.args[0]]
    if not kind:
        code = ast.unparse(node)
        return bound.get(code, ("", [code]))
    leaves: list[str] = []
    for part in parts:
        inner, found = _idempotent_leaves(part, bound)
        leaves += found if inner == kind else [ast.unparse(part)]
    return kind, leaves


@pytest.mark.parametrize(
    "target", ["bool.and", "bool.or", "set.and", "set.or", "set.intersection", "set.union", "builtins.max2"]
)
def test_an_idempotent_operation_never_takes_one_operand_twice(target: str) -> None:
    """``p and (p and q)``, ``both = p and q`` then ``both and p``, ``a & (b & a)``: refused."""
    for seed in range(40):
        try:
            program = generate_program(GRAMMAR, target, 2, random.Random(seed))
        except GenerationFailed:
            continue
        bound: dict[str, tuple[str, list[str]]] = {}
        for stmt in ast.parse(program.source).body[-1].body:  # tier 2: straight-line code
            values = [n for n in ast.walk(stmt) if isinstance(n, ast.expr)]
            for value in values:
                kind, leaves = _idempotent_leaves(value, bound)
                if kind:
                    assert len(leaves) == len(set(leaves)), program.source
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                kind, leaves = _idempotent_leaves(stmt.value, bound)
                bound[stmt.targets[0].id] = (kind, leaves) if kind else ("", [stmt.targets[0].id])
            else:  # a change (``n %= 2``, ``s.add(x)``): what the variable held is gone
                for name in ast.walk(stmt):
                    if isinstance(name, ast.Name):
                        bound.pop(name.id, None)


def _value_test(node: ast.expr, others: list[str]) -> bool:
    """An equality of a variable with an idempotent use of it and constants (``others``): a test
    of the value (``n != min(n, 10)`` is ``n > 10``, ``tags == tags | {'x'}`` is ``'x' in tags``),
    not a law (``a <= a | b`` is)."""
    if not (isinstance(node, ast.Compare) and all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops)):
        return False
    try:
        for leaf in others:
            ast.literal_eval(leaf)
    except ValueError:
        return False
    return True


def _operands(node: ast.expr) -> list[ast.expr]:
    """The operands of a binary use: both sides of an operator or a comparison, a method's
    receiver and its one argument, a two-argument builtin's arguments."""
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) == 1:
        return [node.func.value, node.args[0]]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 2:
        return list(node.args)
    return []


@pytest.mark.parametrize(
    "target",
    ["set.and", "set.or", "set.sub", "set.lt", "set.intersection", "builtins.min2", "bool.or"],
)
def test_a_variable_never_meets_an_idempotent_use_of_itself(target: str) -> None:
    """Absorption: ``a & (a | b)``, ``a - (a | b)``, ``both = a | b`` then ``a <= both``,
    ``max(n, min(n, m))``: the law decides the value, so the generator refuses them."""
    built = 0
    for seed in range(40):
        try:
            program = generate_program(GRAMMAR, target, 2, random.Random(seed))
        except GenerationFailed:
            continue
        built += 1
        bound: dict[str, tuple[str, list[str]]] = {}
        for stmt in ast.parse(program.source).body[-1].body:  # tier 2: straight-line code
            for node in ast.walk(stmt):
                parts = _operands(node) if isinstance(node, ast.expr) else []
                names = {p.id for p in parts if isinstance(p, ast.Name)}
                for part in parts:
                    kind, leaves = _idempotent_leaves(part, bound)
                    own = part.id if isinstance(part, ast.Name) else None
                    if _value_test(node, [leaf for leaf in leaves if leaf not in names]):
                        continue
                    assert not (kind and (names - {own}) & set(leaves)), program.source
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                kind, leaves = _idempotent_leaves(stmt.value, bound)
                bound[stmt.targets[0].id] = (kind, leaves) if kind else ("", [stmt.targets[0].id])
            else:
                for name in ast.walk(stmt):
                    if isinstance(name, ast.Name):
                        bound.pop(name.id, None)
    assert built >= 10


@pytest.mark.parametrize("recv_first", [True, False])
def test_trivial_refuses_a_use_of_the_same_operation_on_either_operand(recv_first: bool) -> None:
    """The rule itself, on the operands the generator would give it: ``xs - (xs - ys)`` and
    ``(xs - ys) - xs`` are refused, ``xs - (zs - ys)`` is not."""
    op = GRAMMAR.op("set.sub")
    sets = op.receiver.substitute({"T": GRAMMAR.element_types[0]})
    var = Expr("xs", sets, reads=frozenset({"xs"}))
    nested = Expr("xs - ys", sets, reads=frozenset({"xs", "ys"}), op="set.sub")
    parts = {"recv": var, "other": nested} if recv_first else {"recv": nested, "other": var}
    with pytest.raises(GenerationFailed, match="its own operand"):
        trivial(op, parts, GRAMMAR)
    unrelated = Expr("zs - ys", sets, reads=frozenset({"zs", "ys"}), op="set.sub")
    trivial(
        op, {"recv": var, "other": unrelated} if recv_first else {"recv": unrelated, "other": var}, GRAMMAR
    )


def _set_difference(stmt: ast.stmt) -> tuple[str, type, ast.expr, ast.expr] | None:
    """(variable written, form, left, right) of ``a -= b`` or ``a = b - c``, else None."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Sub) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, ast.AugAssign, stmt.target, stmt.value
    if (
        isinstance(stmt, ast.Assign)
        and isinstance(stmt.value, ast.BinOp)
        and isinstance(stmt.value.op, ast.Sub)
    ):
        return ast.unparse(stmt.targets[0]), ast.BinOp, stmt.value.left, stmt.value.right
    return None


def test_a_removing_operation_is_never_applied_to_what_it_removed_from() -> None:
    """``pool -= unique`` after ``unique -= pool`` and ``ys - d`` after ``d = xs - ys`` change
    nothing (``removes: true``): in straight-line code, the generator never writes them."""
    built = 0
    for seed in range(60):
        target = ("set.isub", "set.sub")[seed % 2]
        try:
            program = generate_program(GRAMMAR, target, 1 + seed // 2 % 2, random.Random(seed))
        except GenerationFailed:
            continue
        built += 1
        removed: dict[str, tuple[type, str]] = {}  # variable: (the form that made it, what it removed)
        for stmt in ast.parse(program.source).body[-1].body:  # tiers 1 and 2: straight-line code
            made = _set_difference(stmt)
            if made is not None and isinstance(made[2], ast.Name) and isinstance(made[3], ast.Name):
                assert removed.get(made[3].id) != (made[1], made[2].id), program.source
            written = {
                n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            removed = {k: v for k, v in removed.items() if k not in written and v[1] not in written}
            if made is not None and isinstance(made[3], ast.Name):
                removed[made[0]] = (made[1], made[3].id)
    assert built >= 20


def _round_digits(node: ast.AST) -> tuple[ast.expr, str] | None:
    """(what ``round(x, d)`` rounds, ``d``'s code) when ``node`` is such a call."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "round":
        if len(node.args) == 2:
            return node.args[0], ast.unparse(node.args[1])
    return None


def test_a_stable_operation_is_never_applied_again_with_the_same_arguments() -> None:
    """``round(round(n, -1), -1)`` and ``r = round(n, -1)`` then ``round(r, -1)``: refused."""
    for seed in range(40):
        try:
            program = generate_program(GRAMMAR, "builtins.round", 1 + seed % 2, random.Random(seed))
        except GenerationFailed:
            continue
        made: dict[str, str] = {}  # variable: the digits of the round that computed it
        for stmt in ast.parse(program.source).body[-1].body:  # tiers 1 and 2: straight-line code
            for node in ast.walk(stmt):
                found = _round_digits(node)
                if found is None:
                    continue
                inner, digits = found
                nested = _round_digits(inner)
                assert nested is None or nested[1] != digits, program.source
                if isinstance(inner, ast.Name):
                    assert made.get(inner.id) != digits, program.source
            written = [
                n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            ]
            for name in written:
                made.pop(name, None)
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                found = _round_digits(stmt.value)
                if found is not None:
                    made[stmt.targets[0].id] = found[1]


def test_a_failed_construct_is_drawn_again_from_the_state_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first draw of each program's first construct fails half-way (variables frozen and
    read, a loop entered, target uses counted, a variable added): the retry starts from the state
    before it, so the programs still meet their tier (the target's uses counted again) and read
    every value they compute (the generator's liveness check)."""
    from factory.synth import control

    real = control.ControlFlow.compound
    failed: set[int] = set()

    def first_fails(self, depth, reach, counts, update=None):  # type: ignore[no-untyped-def]
        if id(self.s) not in failed:
            failed.add(id(self.s))
            for v in self.s.scope:
                v.frozen, v.pending = True, False
            self.s.loop_depth += 1
            counts["target"] += 5
            self.s.scope.append(self.s.scope[0].__class__("junk", self.s.scope[0].type))
            raise GenerationFailed("a construct that fails half-way")
        return real(self, depth, reach, counts, update)

    monkeypatch.setattr(control.ControlFlow, "compound", first_fails)
    built = 0
    for index, target in enumerate(TARGETS[:40]):
        try:
            program = synthesize_one(GRAMMAR, 7, index, target, 4, 30)
        except GenerationFailed:
            continue
        built += 1
        assert check_program(program.source, 4, target, GRAMMAR) == []
        assert "junk" not in program.source
    # (without the retry every draw fails at its first construct: none would build)
    assert failed and built >= 20


def test_a_set_update_takes_its_operand_from_outside_the_set() -> None:
    """``another(recv)``: ``s.update(sorted(s))`` adds nothing, so set.update's operand never reads
    the set it updates, and is a list input of the program two times in three."""
    updates = from_inputs = 0
    for seed in range(40):
        try:
            program = generate_program(GRAMMAR, "set.update", 1 + seed % 2, random.Random(seed))
        except GenerationFailed:
            continue
        entry = ast.parse(program.source).body[-1]
        assert isinstance(entry, ast.FunctionDef)
        params = {a.arg for a in entry.args.args}
        for node in ast.walk(entry):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "update" or not isinstance(node.func.value, ast.Name):
                continue
            operand = node.args[0]
            read = {n.id for n in ast.walk(operand) if isinstance(n, ast.Name)}
            assert node.func.value.id not in read, program.source
            updates += 1
            from_inputs += isinstance(operand, ast.Name) and operand.id in params
    assert updates >= 40
    assert 0.4 < from_inputs / updates < 0.9


def _generated(grammar: Grammar, target: str, tiers: Callable[[int], int], seeds: int) -> Iterator[Program]:
    """The programs ``generate_program`` makes for ``target`` with seeds ``0..seeds-1`` (tier
    ``tiers(seed)``), those it fails to make left out."""
    for seed in range(seeds):
        try:
            yield generate_program(grammar, target, tiers(seed), random.Random(seed))
        except GenerationFailed:
            continue


def _branch_reads_python(source: str) -> list[str]:
    """The conditional expressions of ``source`` whose test is a variable that a branch reads."""
    return [
        ast.unparse(node)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.IfExp)
        and isinstance(node.test, ast.Name)
        and any(
            isinstance(n, ast.Name) and n.id == node.test.id
            for branch in (node.body, node.orelse)
            for n in ast.walk(branch)
        )
    ]


def _branch_reads_javascript(source: str) -> list[str]:
    """The same for JavaScript's ``test ? a : b`` (tree-sitter's ``ternary_expression``)."""
    tree = js_values.parser().parse(source.encode())
    found = []
    for node in walk(tree.root_node):
        if node.type != "ternary_expression":
            continue
        test = node.child_by_field_name("condition")
        if test is None or test.type != "identifier":
            continue
        branches = [node.child_by_field_name("consequence"), node.child_by_field_name("alternative")]
        if any(n.type == "identifier" and n.text == test.text for b in branches if b for n in walk(b)):
            found.append(text(node))
    return found


@pytest.mark.parametrize(
    ("folder", "reads"),
    [("grammars/python", _branch_reads_python), ("grammars/javascript", _branch_reads_javascript)],
)
def test_a_branch_never_reads_its_tests_variable(folder: str, reads: Callable[[str], list[str]]) -> None:
    """``(a if ok else b) if ok else c`` and ``ok ? String(ok) : s``: the branch knows ``ok``."""
    grammar = load_grammar(folder)
    target = next(t for t in grammar.targets() if t.endswith(".choose"))
    made = 0
    for program in _generated(grammar, target, lambda seed: 1 + seed % 6, 60):
        made += 1
        assert reads(program.source) == [], program.source
    assert made >= 30


def _character_loops(source: str, strings: set[str]) -> tuple[set[str], list[str]]:
    """(the variables of loops over the strings ``strings``, the loops over one of those
    variables: one character, one step)."""
    loops = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.For)]
    characters = {
        node.target.id
        for node in loops
        if isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Name) and node.iter.id in strings
    }
    inner = [
        ast.unparse(node).splitlines()[0]
        for node in loops
        if isinstance(node.iter, ast.Name) and node.iter.id in characters
    ]
    return characters, inner


def test_a_loop_never_iterates_one_character() -> None:
    """``for word in line: for ch in word:``, ``word`` one character of the string ``line``."""
    outer = 0
    for program in _generated(GRAMMAR, "str.upper", lambda seed: 3 + seed % 4, 150):
        characters, inner = _character_loops(program.source, {n for n, t in program.params if t == "str"})
        outer += bool(characters)
        assert inner == [], program.source
    assert outer >= 50  # programs that loop over a string (80 of 150 when written)


def test_a_loop_over_a_string_names_a_character() -> None:
    """``for char in word``, not ``for sentence in word``: the type's ``element_names``."""
    names = GRAMMAR.types["str"].element_names
    seen = 0
    for program in _generated(GRAMMAR, "str.upper", lambda seed: 3 + seed % 4, 150):
        characters, _ = _character_loops(program.source, {n for n, t in program.params if t == "str"})
        seen += len(characters)
        assert all(name.rstrip("_").split("_")[0] in names for name in characters), program.source
    assert seen >= 50


@pytest.mark.parametrize("target", ["dict.fromkeys", "int.ifloordiv", "str.slice_to", "list.remove"])
def test_no_input_is_returned_untouched(target: str) -> None:
    """``return (width, initial)`` with ``width`` read by nothing else: the input is left out."""
    made = 0
    for program in _generated(GRAMMAR, target, lambda seed: 1 + seed % 2, 40):
        made += 1
        entry = next(
            d for d in ast.parse(program.source).body if isinstance(d, ast.FunctionDef) and d.name == "f"
        )
        body = [n.id for stmt in entry.body[:-1] for n in ast.walk(stmt) if isinstance(n, ast.Name)]
        assert all(a.arg in body for a in entry.args.args), program.source
    assert made >= 20


def _copy_misuses(source: str) -> list[str]:
    """A copy assigned back to what it copies (``xs = xs.copy()``, anywhere), and, in each
    function's top-level simple statements, an operation whose two operands are a variable and
    its unchanged copy (``clone = xs.copy()`` then ``clone | xs`` before either is written)."""

    def copied(node: ast.expr) -> str | None:  # ``xs.copy()`` or ``xs[:]``: "xs"
        inner: ast.expr | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "copy":
            inner = node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            whole = not (node.slice.lower or node.slice.upper or node.slice.step)
            inner = node.value if whole else None
        return inner.id if isinstance(inner, ast.Name) else None

    def operand_names(node: ast.AST) -> list[set[str]]:
        pairs = []
        for sub in ast.walk(node):
            if isinstance(sub, ast.BinOp):
                pairs.append([sub.left, sub.right])
            elif isinstance(sub, ast.Compare):
                pairs.append([sub.left, *sub.comparators])
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
                pairs.append([sub.func.value, *sub.args])
        return [{e.id for e in pair if isinstance(e, ast.Name)} for pair in pairs if len(pair) == 2]

    def written(stmt: ast.stmt) -> set[str]:  # assigned, or the receiver of a method (``xs.pop()``)
        names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr != "copy":
                if isinstance(sub.func.value, ast.Name):
                    names.add(sub.func.value.id)
        return names

    tree = ast.parse(source)
    found = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and copied(node.value) == node.targets[0].id
    ]
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue  # an import
        copies: dict[str, str] = {}  # copy -> what it copies
        for stmt in fn.body:
            simple = not isinstance(stmt, (ast.If, ast.For, ast.While))
            if simple and any(
                copies.get(a) == b for names in operand_names(stmt) for a in names for b in names
            ):
                found.append(ast.unparse(stmt))
            changed = written(stmt)
            copies = {c: x for c, x in copies.items() if not {c, x} & changed}
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                what = copied(stmt.value)
                if what is not None and what != stmt.targets[0].id:
                    copies[stmt.targets[0].id] = copies.get(what, what)
    return found


@pytest.mark.parametrize("target", ["dict.copy", "list.copy", "set.copy", "list.slice_copy"])
def test_a_copy_is_never_assigned_back_nor_combined_with_what_it_copies(target: str) -> None:
    """``table = table.copy()`` and ``clone = xs.copy(); xs | clone`` are no work (issue 16)."""
    made = 0
    for program in _generated(GRAMMAR, target, lambda seed: 1 + seed % 6, 90):
        made += 1
        assert _copy_misuses(program.source) == [], program.source
    assert made >= 60


def test_the_branches_of_an_if_never_do_the_same() -> None:
    """``if a >= b: nums = nums + b`` / ``else: nums = nums + b``: the test decides nothing."""
    made = 0
    for target in ("list.ge", "builtins.min2", "str.isupper"):
        for program in _generated(GRAMMAR, target, lambda seed: 3 + seed % 4, 80):
            made += 1
            for node in ast.walk(ast.parse(program.source)):
                if isinstance(node, ast.If) and node.orelse:
                    body = [ast.dump(s) for s in node.body]
                    assert body != [ast.dump(s) for s in node.orelse], program.source
    assert made >= 150


_SUBSET_METHODS = {"difference", "intersection", "difference_update", "intersection_update", "pop"}


def _subset_receiver(node: ast.AST, parent: ast.AST) -> bool:
    """Whether the name ``node`` is the receiver of a ``subset`` operation of the set and dict
    grammar (``x - y``, ``x &= y``, ``x.difference(y)``, ``d.pop(k, v)``)."""
    if isinstance(parent, ast.AugAssign) and parent.target is node:
        return isinstance(parent.op, (ast.Sub, ast.BitAnd))
    if isinstance(parent, ast.BinOp) and parent.left is node:
        return isinstance(parent.op, (ast.Sub, ast.BitAnd))
    return isinstance(parent, ast.Attribute) and parent.attr in _SUBSET_METHODS


@pytest.mark.parametrize(
    "target", ["set.isub", "set.iand", "set.difference_update", "set.intersection_update", "dict.pop"]
)
def test_an_empty_start_is_never_the_receiver_of_a_subset_operation(target: str) -> None:
    """``seen = set()`` then ``seen -= tags`` leaves ``seen`` empty (``subset: true``): the first
    use of a variable after its empty start is never the receiver of such an operation."""
    built = 0
    for seed in range(40):
        try:
            program = generate_program(GRAMMAR, target, 3 + seed % 3, random.Random(seed))
        except GenerationFailed:
            continue
        built += 1
        tree = ast.parse(program.source)
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for start in ast.walk(tree):
            if not (
                isinstance(start, ast.Assign)
                and isinstance(start.targets[0], ast.Name)
                and ast.unparse(start.value) in ("set()", "{}")
            ):
                continue
            name = start.targets[0].id
            uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name]
            later = sorted(
                (n for n in uses if n.lineno > start.lineno), key=lambda n: (n.lineno, n.col_offset)
            )
            if later:
                assert not _subset_receiver(later[0], parents[later[0]]), program.source
    assert built >= 10
