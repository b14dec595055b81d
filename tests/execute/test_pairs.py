"""The Executor's pairs (factory.execute.batch): JavaScript cases of one program run two per job and
get exactly the verdicts they get one per job."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from factory.execute.runner import Executor
from factory.grammar.loader import load_grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.strategies import strategy_for
from factory.languages import language
from factory.languages.javascript.values import js_value, literal
from factory.synth.generator import GenerationFailed, generate_program

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js >= 20) is not on PATH")

GRAMMAR = Path(__file__).resolve().parents[2] / "grammars" / "javascript"
PER_PROGRAM = 4

ONE_TO_FOUR = ["1", "2", "3", "4"]
PRINTED = ["2e4", "3e4", "1"]  # with the top level's 40,001 characters: under, over, under the limit

#: (program, its argument lists): programs whose cases stop, or depend on each other.
SPECIAL: list[tuple[str, list[str]]] = [
    ("function f(n) { if (n === 2) { throw new TypeError('two'); } return n * 10; }", ONE_TO_FOUR),
    ("function f(n) { if (n === 3) { for (;;) {} } return n; }", ONE_TO_FOUR),
    (
        "function f(n) { if (n > 2) { const a = []; for (;;) a.push(new Array(1e6).fill(1.5)); } return n; }",
        ONE_TO_FOUR,
    ),
    # State one case leaves for the next: run alone, every case sees a fresh program.
    ("let calls = 0;\nfunction f(n) { calls += 1; return n + calls; }", ONE_TO_FOUR),
    ("let seen = false;\nfunction f(n) { const r = seen ? -n : n; seen = true; return r; }", ONE_TO_FOUR),
    ("let x = 0;\nfunction f(n) { Promise.resolve().then(() => { x += 1; }); return n + x; }", ["1", "2"]),
    ("function f(a) { a.push(1); return Array.prototype.push.length + a.length; }", ["[]", "[1]"]),
    # Printed output counts from where the top-level code left it, in every case.
    ("console.log('x'.repeat(40000));\nfunction f(n) { console.log('y'.repeat(n)); return n; }", PRINTED),
    ("throw new RangeError('top');\nfunction f(n) { return n; }", ["1", "(", "2"]),
    ("function g(n) { return n; }", ["1", "2"]),
    ("function f(n) { return n; }", ["1"]),
]


def _generated(n_programs: int) -> list[tuple[str, list[str]]]:
    """Programs of the JavaScript grammar, each with ``PER_PROGRAM`` drawn argument lists."""
    grammar = load_grammar(GRAMMAR)
    rng = random.Random(0)
    programs: list[tuple[str, list[str]]] = []
    targets = grammar.targets()
    while len(programs) < n_programs:
        tier, target = rng.choice([1, 2, 3, 4]), rng.choice(targets)
        try:
            program = generate_program(grammar, target, tier, rng)
        except GenerationFailed:
            continue
        columns = []
        for j, (_, type_text) in enumerate(program.params):
            t = parse_type(type_text)
            drawn = draw_examples(strategy_for(grammar, t), PER_PROGRAM, len(programs) * 7 + j)
            columns.append([literal(js_value(v, t)) for v in drawn])
        programs.append((program.source, [", ".join(row) for row in zip(*columns, strict=False)]))
    return programs


def _run(cases: list[dict[str, Any]], *, pairs: bool) -> list[dict[str, Any]]:
    with Executor(
        language=language("javascript"), workers=1, timeout_s=0.5, memory_mb=64, pairs=pairs
    ) as executor:
        return list(executor.run(cases))


def test_pairs_give_every_case_the_verdict_it_gets_alone() -> None:
    programs = _generated(24)
    programs[3:3] = SPECIAL
    cases = [{"source": s, "entry": "f", "args": a} for s, args in programs for a in args]
    paired = _run(cases, pairs=True)
    assert paired == _run(cases, pairs=False)
    statuses = {r["status"] for r in paired}
    assert {"ok", "error:TypeError", "resource_limit", "output_too_long", "bad_program"} <= statuses
    by_source = {}
    for case, result in zip(cases, paired, strict=True):
        by_source.setdefault(case["source"], []).append(result)
    # Each case of a program with state sees a fresh program, as it does alone.
    assert [r["output_repr"] for r in by_source[SPECIAL[3][0]]] == ["2", "3", "4", "5"]
    assert [r["output_repr"] for r in by_source[SPECIAL[4][0]]] == ONE_TO_FOUR
    assert [r["output_repr"] for r in by_source[SPECIAL[5][0]]] == ["1", "2"]
    assert [r.get("detail") for r in by_source[SPECIAL[1][0]]] == [None, None, "timeout", None]
    assert [r.get("detail") for r in by_source[SPECIAL[2][0]]] == [None, None, "memory", "memory"]
    assert [r["status"] for r in by_source[SPECIAL[7][0]]] == ["ok", "output_too_long", "ok"]


def test_a_pair_runs_in_the_given_order_on_the_first_seed_and_reversed_on_the_other() -> None:
    source = "let calls = [];\nfunction f(n) { calls.push(n); return calls; }"
    with Executor(language=language("javascript"), workers=1, timeout_s=1.0, memory_mb=64) as executor:
        kinds = executor._pair_kinds
        assert kinds is not None
        job = {"source": source, "entry": "f", "args_list": ["1", "2"]}
        forward, reverse = (
            next(pool.map(kind, [job])) for pool, kind in zip(executor.pools, kinds, strict=True)
        )
    assert [r["output_repr"] for r in forward["results"]] == ["[1]", "[1, 2]"]
    assert [r["output_repr"] for r in reverse["results"]] == ["[2, 1]", "[2]"]
