"""The quality figures of a release side by side with CRUXEval's, measured the same way, in one run
(docs/quality.md defines each figure).

Usage: python bench/quality.py [--release data/release] [--pools data/pools]
       [--cruxeval data/benchmarks/cruxeval/cruxeval.jsonl] [--grammar grammars/python]
       [--ablation-per-tier N] [--language python|javascript]

Ours: the phase-1 programs of the release (configs white_box, output, input, coverage), run on
their own inputs and on random argument lists from the inputs stage's pools, one table per
language the release holds (``--language``: that one only); the CRUXEval column is Python's. CRUXEval: its 800
programs on their one input each, and random inputs drawn with the grammar's strategies for the
parameter types read from that input (unknown element types of an empty container: ``int``).
Every program's irrelevant statements are measured here (the assemble stage ablates a sample).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from factory.grammar.loader import load_grammar
from factory.inputs.pool_table import pools_by_language
from factory.inputs.pools import combine_pools, draw_type_pool
from factory.io import shard_paths
from factory.literals import literal_eval
from factory.quality.measure import (
    RANDOM_INPUTS,
    RELEASE_COLUMNS,
    Measured,
    Program,
    ablation_sample,
    measure,
    pool_finder,
    programs_from_rows,
    summarize,
)
from factory.quality.signature import grammar_signature
from factory.release.card import QUALITY_ROWS, quality_value

PHASE1_CONFIGS = ("white_box", "output", "input", "coverage")
SEED = 42
EXTRA_ROWS = (
    ("… constant-only", "trivial_constant", "share"),
    ("… self", "trivial_self", "share"),
    ("… identity", "trivial_identity", "share"),
    ("programs judged for constant output (≥ 2 random runs)", "constant_output_judged", "count"),
    ("programs ablated", "ablated_programs", "count"),
)


def release_rows(release: Path) -> list[dict[str, Any]]:
    """The rows of the phase-1 configs, ``RELEASE_COLUMNS`` (and ``language``) only."""
    rows: list[dict[str, Any]] = []
    for config in PHASE1_CONFIGS:
        for path in shard_paths(release / config / "train") + shard_paths(release / config / "test"):
            names = pq.read_schema(path).names
            columns = [*RELEASE_COLUMNS, *(["language"] if "language" in names else [])]
            rows += pq.read_table(path, columns=columns).to_pylist()
    return rows


def cruxeval_programs(path: Path) -> list[Program]:
    programs = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        try:
            output_type = type(literal_eval(record["output"])).__name__
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            output_type = None
        programs.append(
            Program(
                key=record["id"],
                tier=None,
                source=record["code"],
                entry="f",
                inputs=(record["input"],),
                output_types=(output_type,) if output_type else (),
                output_chars=(len(record["output"]),),
                eval_args=True,
            )
        )
    return programs


def cruxeval_pools(programs: list[Program], grammar_dir: str, size: int) -> dict[str, list[str]]:
    """Per CRUXEval program, ``size`` argument lists drawn for the types of its input."""
    grammar = load_grammar(grammar_dir)
    type_pools: dict[str, list[str]] = {}
    out = {}
    for program in programs:
        key = grammar_signature(program.inputs, grammar)
        if key is None:
            continue
        for t in json.loads(key):
            if t not in type_pools:
                type_pools[t] = draw_type_pool(grammar, t, SEED, size)
        out[program.key] = combine_pools(key, type_pools, SEED, size)
    return out


def print_table(figures: dict[str, dict[str, Any]]) -> None:
    """The figures of each group (a column each) as a text table, then the output types."""
    groups = list(figures)
    head = ["figure (share of programs unless said)", *(f"t{g}" if g.isdigit() else g for g in groups)]
    rows = [
        [label.format(n=RANDOM_INPUTS).replace("¹", ""), key, what]
        for label, key, what in (*QUALITY_ROWS, *EXTRA_ROWS)
    ]
    body = [[label, *(quality_value(figures[g][key], what) for g in groups)] for label, key, what in rows]
    width = max(len(r[0]) for r in body)
    print(f"{head[0]:<{width}}" + "".join(f"{h:>10}" for h in head[1:]))
    for row in body:
        print(f"{row[0]:<{width}}" + "".join(f"{c:>10}" for c in row[1:]))
    types = sorted({t for g in groups for t in figures[g]["output_types"]})
    print("\noutput types (share of cases)")
    for t in types:
        print(
            f"{t:<{width}}"
            + "".join(f"{quality_value(figures[g]['output_types'].get(t, 0.0), 'share'):>10}" for g in groups)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, default=Path("data/release"))
    parser.add_argument("--pools", type=Path, default=Path("data/pools"))
    parser.add_argument("--cruxeval", type=Path, default=Path("data/benchmarks/cruxeval/cruxeval.jsonl"))
    parser.add_argument("--grammar", default="grammars/python")
    parser.add_argument("--ablation-per-tier", type=int, default=None, help="default: every program")
    parser.add_argument("--language", default=None, help="measure this language's rows only")
    args = parser.parse_args()

    start = time.perf_counter()
    ours = programs_from_rows(release_rows(args.release))
    if args.language:
        ours = [p for p in ours if p.language == args.language]
    our_pool = pool_finder(ours, pools_by_language(args.pools))
    measured = measure(ours, our_pool, ablate=ablation_sample(ours, args.ablation_per_tier))
    ours_s = time.perf_counter() - start
    names = sorted({p.language for p in ours}, key=lambda name: (name != "python", name))

    crux_s = 0.0
    crux: list[Program] = []
    crux_draws: dict[str, list[str]] = {}
    crux_measured: list[Measured] = []
    if "python" in names:
        start = time.perf_counter()
        crux = cruxeval_programs(args.cruxeval)
        crux_draws = cruxeval_pools(crux, args.grammar, RANDOM_INPUTS)
        crux_measured = measure(
            crux, lambda p: crux_draws.get(p.key), ablate=ablation_sample(crux, args.ablation_per_tier)
        )
        crux_s = time.perf_counter() - start

    for name in names:
        figures = summarize([m for m in measured if m.program.language == name])
        if name == "python":
            figures["CRUXEval"] = summarize(crux_measured)["all"]
        print(f"\n## {name}\n")
        print_table(figures)
    if crux:
        print(
            f"\nCRUXEval programs with random inputs: {len(crux_draws)} of {len(crux)} (the others' input "
            "has no grammar type or is not literals)"
        )
    without = {name: sum(1 for p in ours if p.language == name and our_pool(p) is None) for name in names}
    print(f"ours without a pool: {without}")
    counts = {name: sum(1 for p in ours if p.language == name) for name in names}
    print(f"seconds: ours {ours_s:.1f} ({counts} programs), CRUXEval {crux_s:.1f} (drawing included)")


if __name__ == "__main__":
    main()
