"""The JavaScript grammar measured: synthesis speed, the tier check, and how many programs run
cleanly in node on drawn arguments.

Draws one program per (target, tier) of grammars/javascript (every ``--stride``-th target), times
the generator and the tier check, then runs each kept program on ``--cases`` argument lists drawn
from the grammar's strategies (the Python values the inputs stage would draw, turned into
JavaScript values: a drawn set into a ``Set``, a dict into a ``Map`` or a plain object, as the
parameter's type says) with the JavaScript ``Executor`` (two ``node`` pools, a fresh ``vm`` context
per run). A program "runs cleanly" when at least one of its cases returns (status ``ok``); the
share of cases that throw is printed too.

    .venv/bin/python bench/js_grammar.py [--stride 1] [--cases 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from factory.execute.runner import Executor
from factory.grammar.loader import load_grammar
from factory.grammar.model import Grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.strategies import strategy_for
from factory.languages import language
from factory.languages.javascript.values import js_value, literal
from factory.synth.check import check_program
from factory.synth.generator import GenerationFailed, Program, generate_program
from factory.synth.tiers import TIERS

GRAMMAR = "grammars/javascript"


def args_texts(grammar: Grammar, program: Program, n: int, seed: int) -> list[str]:
    """``n`` argument lists for ``program``, as JavaScript text."""
    columns = []
    for i, (_, type_text) in enumerate(program.params):
        t = parse_type(type_text)
        drawn = draw_examples(strategy_for(grammar, t), n, seed + i)
        columns.append([literal(js_value(v, t)) for v in drawn])
    return [", ".join(row) for row in zip(*columns, strict=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stride", type=int, default=1, help="every n-th target")
    parser.add_argument("--cases", type=int, default=3, help="argument lists per program")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=0, help="print this many cases that did not return")
    args = parser.parse_args()
    grammar = load_grammar(GRAMMAR)
    targets = grammar.targets()[:: args.stride]
    print(f"{GRAMMAR}: {len(grammar.targets())} targets ({len(grammar.operations)} operations)")

    programs: list[Program] = []
    kept, failed, rejected = Counter[int](), Counter[int](), Counter[str]()
    start = time.perf_counter()
    for tier in TIERS:
        for target in targets:
            try:
                rng = random.Random(f"{args.seed}:{tier}:{target}")
                program = generate_program(grammar, target, tier, rng)
            except GenerationFailed:
                failed[tier] += 1
                continue
            reasons = check_program(program.source, tier, target, grammar)
            if reasons:
                rejected[reasons[0]] += 1
                continue
            kept[tier] += 1
            programs.append(program)
    elapsed = time.perf_counter() - start
    asked = len(TIERS) * len(targets)
    print(f"synthesized {len(programs)} of {asked} in {elapsed:.1f} s: {asked / elapsed:.0f} jobs/s")
    print(f"kept per tier {dict(sorted(kept.items()))}; generation failed {dict(sorted(failed.items()))}")
    print(f"tier check rejected {dict(rejected)}")

    cases = []
    for i, program in enumerate(programs):
        for text in args_texts(grammar, program, args.cases, args.seed * 100_003 + i):
            cases.append({"source": program.source, "entry": program.entry, "args": text, "program": i})
    statuses: Counter[str] = Counter()
    clean: set[int] = set()
    start = time.perf_counter()
    with Executor(language=language("javascript"), timeout_s=2.0, memory_mb=256) as executor:
        for case, result in zip(cases, executor.run(cases), strict=True):
            statuses[result["status"]] += 1
            if result["status"] == "ok":
                clean.add(case["program"])
            elif args.show > 0:
                args.show -= 1
                detail = result.get("detail") or ""
                print(f"--- {result['status']} {detail}\nf({case['args']})\n{case['source']}")
    elapsed = time.perf_counter() - start
    print(f"ran {len(cases)} cases in {elapsed:.1f} s; statuses {dict(statuses.most_common())}")
    share = len(clean) / max(1, len(programs))
    print(f"programs with a clean run: {len(clean)} of {len(programs)} ({share:.1%})")
    print(f"cases that ran cleanly: {statuses['ok'] / max(1, len(cases)):.1%}")


if __name__ == "__main__":
    main()
