"""The inputs stage: k argument lists per program, drawn by Hypothesis, chosen for coverage.

For each program, ``candidates`` argument tuples are sampled (seeded by ``seed`` and the program's
index) from its signature's pool: Hypothesis draws ``pool_size`` values once per run for each
parameter type, combined per signature (``factory/inputs/pools.py``). Each candidate runs once
in the sandbox pool under a line-only trace; the ``per_program`` kept are those that run and add
the most lines not yet covered by the ones already kept (ties: a new output value first, then
the later, less minimal draw). A program none of whose candidates runs is dropped
(``no_candidate_ran``); the stats' ``candidate_status`` says how its candidates failed.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from factory import languages
from factory.contracts import CASES_SCHEMA
from factory.grammar.loader import load_grammar
from factory.inputs.pools import candidates_for, draw_pools, write_pools
from factory.io import count_rows, iter_rows
from factory.params import ExecuteParams, InputsParams
from factory.sandbox.trusted.pool import WorkerPool
from factory.sandbox.trusted.worker import BAD_PROGRAM, CRASH, RESOURCE_LIMIT
from factory.stage import Outcome, Output, Tally, chunks, run_stage
from factory.stats import StageStats


def case_id(program_id: str, args: str) -> str:
    return hashlib.sha256(f"{program_id}\0{args}".encode()).hexdigest()[:16]


def _gain(item: tuple[int, str, dict], covered: set[int], outputs: set[str]) -> tuple[int, bool, int]:
    """New lines covered, then a new output, then the later (less minimal) draw."""
    index, _, result = item
    return (len(set(result.get("lines") or ()) - covered), result["output_repr"] not in outputs, index)


def choose(candidates: list[str], results: list[dict[str, Any]], k: int) -> list[tuple[str, int]]:
    """Greedy coverage: up to ``k`` (args, lines covered) among candidates that ran."""
    ok = [(i, c, r) for i, (c, r) in enumerate(zip(candidates, results, strict=True)) if r["status"] == "ok"]
    chosen: list[tuple[str, int]] = []
    covered: set[int] = set()
    outputs: set[str] = set()
    seen_args: set[str] = set()
    while ok and len(chosen) < k:
        best = max(ok, key=lambda item: _gain(item, covered, outputs))
        ok.remove(best)
        _, args, result = best
        if args in seen_args:
            continue
        seen_args.add(args)
        covered |= set(result.get("lines") or ())
        outputs.add(result["output_repr"])
        chosen.append((args, len(result.get("lines") or ())))
    return chosen


def _run_candidates(
    pool: WorkerPool, batch: list[dict], drawn: list[list[str]]
) -> list[list[dict[str, Any]]]:
    """Line-coverage runs of every candidate, in two passes: the first candidate of each program,
    then the others only for programs whose first run did not time out or exhaust memory (a
    program that is too slow on one input is nearly always too slow on all: this saves the
    stage most of its time)."""

    def payload(program: dict, args: str) -> dict[str, str]:
        return {"source": program["source"], "entry": program["entry"], "args": args}

    firsts = list(pool.map("lines", [payload(p, c[0]) for p, c in zip(batch, drawn, strict=True) if c]))
    runs: list[list[dict[str, Any]]] = []
    it = iter(firsts)
    for candidates in drawn:
        runs.append([next(it)] if candidates else [])
    rest = [
        (i, payload(batch[i], args))
        for i, candidates in enumerate(drawn)
        if runs[i] and runs[i][0]["status"] not in _HOPELESS
        for args in candidates[1:]
    ]
    for (i, _), result in zip(rest, pool.map("lines", [p for _, p in rest]), strict=True):
        runs[i].append(result)
    return runs


_HOPELESS = {RESOURCE_LIMIT, CRASH, BAD_PROGRAM}


def run_inputs_stage(
    seed: int,
    params: InputsParams,
    execute: ExecuteParams,
    grammar_dir: str,
    programs_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    pools_dir: str | Path | None = None,
) -> StageStats:
    """Draw, run and choose the inputs of every program; write ``out_dir`` (cases), the stats and,
    when ``pools_dir`` is given, the drawn pools (the phase2 stage samples its hidden tests there)."""
    grammar = load_grammar(grammar_dir)
    status_counts: Counter = Counter()
    pools = draw_pools(programs_dir, grammar_dir, seed, params.pool_size, execute.workers or None)

    def outcomes(programs: Iterator[dict[str, Any]]) -> Iterator[Outcome]:
        with WorkerPool(
            workers=execute.workers or None,
            hash_seed=execute.hash_seeds[0],
            timeout_s=params.timeout_s,
            memory_mb=execute.memory_mb,
            max_output_repr=execute.max_output_repr,
            kinds=languages.language(grammar.language).facet("runner").KINDS,  # the `lines` runs
        ) as pool:
            for batch in chunks(programs, 256):
                drawn = [candidates_for(program, pools, grammar, seed, params) for program in batch]
                all_runs = _run_candidates(pool, batch, drawn)
                for program, candidates, runs in zip(batch, drawn, all_runs, strict=True):
                    status_counts.update(r["status"] for r in runs)
                    chosen = choose(candidates[: len(runs)], runs, params.per_program)
                    if not chosen:
                        # Why its candidates failed is in candidate_status; running one again in the
                        # execute stage (two seeds, a longer timeout) would only cost time.
                        yield Outcome(drop="no_candidate_ran", tier=program["tier"])
                        continue
                    yield Outcome(
                        [_case(program, args, n_lines) for args, n_lines in chosen], tier=program["tier"]
                    )

    def extra(tally: Tally) -> dict[str, Any]:
        return {
            "cases": tally.rows,
            "signatures": len(pools),
            "candidate_status": dict(sorted(status_counts.items())),
            "programs_with_a_running_input_by_tier": tally.by_tier(tally.tiers_out),
        }

    rows = (row for batch in iter_rows(programs_dir, batch_rows=256) for row in batch)
    output = Output(out_dir, CASES_SCHEMA, params.rows_per_shard)
    stats = run_stage(
        "inputs", rows, outcomes, output, stats_path, total=count_rows(programs_dir), extra=extra,
        label="inputs: run candidates",
    )  # fmt: skip
    if pools_dir is not None:
        write_pools(pools, pools_dir)
    return stats


def _case(program: dict[str, Any], args: str, n_lines: int) -> dict[str, Any]:
    """The cases-table row of one chosen argument list of ``program``."""
    return {
        "case_id": case_id(program["program_id"], args),
        "program_id": program["program_id"],
        "source": program["source"],
        "entry": program["entry"],
        "args": args,
        "tier": program["tier"],
        "target": program["target"],
        "lines_covered": n_lines,
        "grammar_hash": program["grammar_hash"],
    }
