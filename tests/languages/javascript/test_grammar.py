"""grammars/javascript: it loads and checks, programs of every tier are synthesized from it and meet
their tier, and the rendered programs run in node with every variable declared in scope."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from factory.grammar.loader import GrammarError, load_grammar
from factory.grammar.model import Grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.strategies import strategy_for
from factory.io import read_table
from factory.languages.javascript.trace_calls import trace_calls_js
from factory.languages.javascript.values import js_value, literal
from factory.params import SynthesizeParams
from factory.synth.check import check_program
from factory.synth.generator import GenerationFailed, Program, generate_program
from factory.synth.stage import run_synthesize_stage
from factory.synth.tiers import TIERS

FOLDER = Path(__file__).resolve().parents[3] / "grammars" / "javascript"
NODE = shutil.which("node")
# Runs each program in a fresh vm context in strict mode (an assignment to an undeclared name
# throws there) and calls f: prints the error name per case, "" when it returned.
STRICT_RUNNER = r"""
const vm = require('vm');
const out = [];
for (const {source, args} of JSON.parse(require('fs').readFileSync(0, 'utf8'))) {
  try {
    vm.runInContext(`"use strict";\n${source}\nf(${args});`, vm.createContext({}), {timeout: 2000});
    out.push('');
  } catch (error) {
    out.push(`${error && error.name}: ${error && error.message}`);
  }
}
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def grammar() -> Grammar:
    return load_grammar(FOLDER)


@pytest.fixture(scope="module")
def sample(grammar: Grammar) -> list[Program]:
    """A program per tier for every fourth target."""
    programs = []
    for tier in TIERS:
        for target in grammar.targets()[tier % 4 :: 4]:
            try:
                programs.append(generate_program(grammar, target, tier, random.Random(f"{tier}:{target}")))
            except GenerationFailed:
                continue
    return programs


def test_the_grammar_loads_with_its_language_and_operations(grammar: Grammar) -> None:
    assert grammar.language == "javascript"
    assert set(grammar.types) == {"string", "number", "boolean", "array", "object", "set", "map", "pair"}
    assert len(grammar.operations) >= 120


def _execverify(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from factory.cli import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


def test_grammar_check_passes() -> None:
    result = _execverify("grammar", "check", str(FOLDER))
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        (
            'template: "{recv}.padStart({width}, {fill})"',
            'template: "{recv}.padStart({width}, {fill}"',
            "template",
        ),
        ('guard: "{x}.length > 0"', 'guard: "{x}.length >"', "guard"),
        ("names: [text, word,", "names: [text, some_word,", "camelCase"),
        ("'\"a\"', '\"e\"'", "'\"a\"', \"'e\", 'e\"'", "constant"),
    ],
)
def test_a_broken_javascript_grammar_is_one_line_and_exit_2(
    tmp_path: Path, old: str, new: str, says: str
) -> None:
    folder = tmp_path / "javascript"
    shutil.copytree(FOLDER, folder)
    for path in folder.glob("*.yaml"):
        text = path.read_text()
        if old in text:
            path.write_text(text.replace(old, new, 1))
            break
    else:
        pytest.fail(f"{old!r} is in no file of the grammar")
    with pytest.raises(GrammarError):
        load_grammar(folder)
    result = _execverify("grammar", "check", str(folder))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and str(path) in lines[0], result.stderr


def test_every_tier_is_synthesized_and_meets_its_promises(grammar: Grammar, sample: list[Program]) -> None:
    per_tier = {tier: [p for p in sample if p.tier == tier] for tier in TIERS}
    for tier, programs in per_tier.items():
        asked = len(grammar.targets()[tier % 4 :: 4])
        assert len(programs) >= 0.9 * asked, (tier, len(programs), asked)
        for program in programs:
            assert check_program(program.source, tier, program.target, grammar) == [], program.source


def test_the_tier_check_refuses_what_a_tier_does_not_promise(grammar: Grammar) -> None:
    one_line = "function f(xs) {\n  const a = xs.pop(); const b = xs.pop();\n  return [a, b];\n}\n"
    assert "line:several_statements" in check_program(one_line, 1, "array.pop", grammar)
    nested = (
        "function f(xs) {\n  for (const x of xs) {\n    if (x > 1) {\n      xs.pop();\n"
        "    } else if (x > 2) {\n      if (x > 3) {\n        xs.pop();\n      }\n    }\n  }\n"
        "  return xs;\n}\n"
    )
    assert check_program(nested, 3, "array.pop", grammar)[0] == "depth:3_not_1"  # else if: its if's depth
    unbounded = "function f(xs) {\n  let c = 0;\n  while (c < 3) {\n    xs.pop();\n  }\n  return xs;\n}\n"
    assert "while:unbounded" in check_program(unbounded, 3, "array.pop", grammar)


def _cases(grammar: Grammar, sample: list[Program], per_program: int) -> list[tuple[str, str]]:
    """(source, argument text) of ``per_program`` drawn argument lists per program."""
    cases = []
    for i, program in enumerate(sample):
        columns = []
        for j, (_, type_text) in enumerate(program.params):
            t = parse_type(type_text)
            drawn = draw_examples(strategy_for(grammar, t), per_program, i * 7 + j)
            columns.append([literal(js_value(v, t)) for v in drawn])
        cases += [(program.source, ", ".join(row)) for row in zip(*columns, strict=False)]
    return cases


@pytest.mark.skipif(NODE is None, reason="node (Node.js >= 20) is not on PATH")
def test_rendered_programs_run_in_strict_mode_with_every_variable_in_scope(
    grammar: Grammar, sample: list[Program]
) -> None:
    cases = [{"source": source, "args": args} for source, args in _cases(grammar, sample, 2)]
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", STRICT_RUNNER], input=json.dumps(cases), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    errors = json.loads(done.stdout)
    for case, error in zip(cases, errors, strict=True):
        # Scope mistakes: a name read before (or outside) its declaration, an undeclared
        # assignment (strict mode), a declaration twice (a SyntaxError before anything runs).
        assert not error.startswith(("ReferenceError", "SyntaxError")), (error, case["source"])
    # Most cases run: a thrown error on drawn inputs is the inputs stage's to drop, and rare.
    assert sum(error == "" for error in errors) >= 0.85 * len(errors), [e for e in errors if e]


def test_the_synthesize_stage_runs_on_the_javascript_grammar(grammar: Grammar, tmp_path: Path) -> None:
    params = SynthesizeParams(grammars=[str(FOLDER)], tiers=[1, 4, 6], programs_per_target_tier=1, workers=1)
    stats = run_synthesize_stage(3, params, tmp_path / "programs", tmp_path / "s.json").to_dict()
    rows = read_table(tmp_path / "programs").to_pylist()
    assert stats["out"] == len(rows) >= 0.9 * stats["in"]
    assert {r["tier"] for r in rows} == {1, 4, 6}
    assert len({r["program_id"] for r in rows}) == len(rows)
    assert all(
        r["source"].startswith("function ") and r["grammar_hash"] == grammar.grammar_hash for r in rows
    )


@pytest.mark.skipif(NODE is None, reason="node (Node.js >= 20) is not on PATH")
def test_the_tracer_takes_every_synthesized_program(grammar: Grammar, sample: list[Program]) -> None:
    cases = [(source, "f", args) for source, args in _cases(grammar, sample[::3], 1)]
    results = trace_calls_js(cases, max_steps=2000)
    assert len(results) == len(cases)
    refused = [(r["status"], r.get("error"), c[0]) for c, r in zip(cases, results, strict=True)]
    assert not [x for x in refused if x[0] in ("bad_program", "tracer_error")]
    assert sum(r["status"] == "ok" for r in results) >= 0.85 * len(results)
