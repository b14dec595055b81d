"""Synthesized programs meet their tier, are reproducible by (seed, index), and parse."""

from __future__ import annotations

import ast
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factory.contracts import program_id
from factory.grammar.loader import load_grammar
from factory.synth.check import check_program
from factory.synth.generator import GenerationFailed, generate_program
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
