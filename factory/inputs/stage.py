"""The inputs stage: k argument lists per program, drawn by Hypothesis, chosen for coverage.

For each program, ``candidates`` argument tuples are sampled (seeded by ``seed`` and the program's
index) from a pool that Hypothesis draws, once per run, from the strategies of the program's
parameter types (``pool_size`` examples per distinct signature). Each candidate runs once
in the sandbox pool under a line-only trace; the ``per_program`` kept are those that run and add
the most lines not yet covered by the ones already kept (ties: a new output value first, then
the later, less minimal draw). A program none of whose candidates runs keeps its first candidate,
so that the execute stage records why it fails.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from factory.grammar.loader import load_grammar
from factory.grammar.model import Grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.strategies import strategy_for
from factory.io import ShardWriter, count_rows, iter_rows
from factory.literals import canonical_repr
from factory.params import ExecuteParams, InputsParams
from factory.progress import progress
from factory.sandbox.pool import WorkerPool
from factory.sandbox.worker import BAD_PROGRAM, CRASH, RESOURCE_LIMIT
from factory.stats import StageStats

# The ignore: mypy joins these columns' different types (pyarrow-stubs) to object.
CASES_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        ("case_id", pa.string()),
        ("program_id", pa.string()),
        ("source", pa.string()),
        ("entry", pa.string()),
        ("args", pa.string()),
        ("tier", pa.int8()),
        ("target", pa.string()),
        ("lines_covered", pa.int32()),
        ("grammar_hash", pa.string()),
    ]
)


def args_text(values: tuple[Any, ...]) -> str:
    """Literal argument-list text, CRUXEval style: ``"[1, 2], 'ab'"`` (the same in every process)."""
    return ", ".join(canonical_repr(v) for v in values)


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


POOLS_SCHEMA = pa.schema([("signature", pa.string()), ("args", pa.list_(pa.string()))])


def write_pools(pools: dict[str, list[str]], out_dir: str | Path) -> None:
    """Save the drawn pools (signature → argument lists) so later stages sample them, not redraw."""
    with ShardWriter(out_dir, POOLS_SCHEMA) as out:
        for key in sorted(pools):
            out.write({"signature": key, "args": pools[key]})


def read_pools(in_dir: str | Path) -> dict[str, list[str]]:
    """The pools that ``write_pools`` saved."""
    return {row["signature"]: row["args"] for batch in iter_rows(in_dir) for row in batch}


def signature_key(program: dict[str, Any]) -> str:
    """The pool key of a program: its tuple of parameter types, as JSON."""
    return json.dumps(tuple(t for _, t in json.loads(program["param_types"])))


def draw_pool(grammar: Grammar, key: str, seed: int, pool_size: int) -> list[str]:
    """The argument lists of one signature: the pools of its parameter types combined (see
    ``combine_pools``); the same whichever process draws it."""
    types = json.loads(key)
    type_pools = {t: draw_type_pool(grammar, t, seed, pool_size) for t in types}
    return combine_pools(key, type_pools, seed, pool_size)


def draw_type_pool(grammar: Grammar, type_text: str, seed: int, pool_size: int) -> list[str]:
    """The literal texts of up to ``pool_size`` values that Hypothesis draws for one type
    (distinct, in draw order), seeded by (seed, type) alone.

    Drawing is what costs (about 1-3 ms a value for collections in Hypothesis' engine), and the
    default programs have 89 signatures over 18 types: a pool per type, shared by every signature
    that has the type, draws 9 times less than a pool per signature did (bench/README.md).
    """
    strategy = strategy_for(grammar, parse_type(type_text))
    type_seed = int(hashlib.sha256(f"{seed}:{type_text}".encode()).hexdigest()[:12], 16)
    return list(dict.fromkeys(canonical_repr(v) for v in draw_examples(strategy, pool_size, type_seed)))


def combine_pools(key: str, type_pools: dict[str, list[str]], seed: int, pool_size: int) -> list[str]:
    """A signature's argument lists from its types' pools, seeded by (seed, signature): the j-th
    takes the j-th value of a permutation of each parameter's pool, and a random one of it past
    the pool's end (a type with few values, such as bool, still meets every value of the
    others); two parameters of one type get different permutations. Distinct, at most
    ``pool_size``."""
    types = json.loads(key)
    if not types:
        return [""]
    rng = random.Random(f"{seed}:{key}")
    columns = [rng.sample(type_pools[t], len(type_pools[t])) for t in types]
    rows = []
    for j in range(pool_size):
        picks = (column[j] if j < len(column) else column[rng.randrange(len(column))] for column in columns)
        rows.append(", ".join(picks))
    return list(dict.fromkeys(rows))


_grammars: dict[str, Grammar] = {}  # loaded once per process and grammar folder


def _draw_in_worker(job: tuple[str, str, int, int]) -> list[str]:
    grammar_dir, type_text, seed, pool_size = job
    grammar = _grammars.get(grammar_dir)
    if grammar is None:
        grammar = _grammars[grammar_dir] = load_grammar(grammar_dir)
    return draw_type_pool(grammar, type_text, seed, pool_size)


def draw_pools(
    programs_dir: str | Path, grammar_dir: str, seed: int, pool_size: int, workers: int | None = None
) -> dict[str, list[str]]:
    """Every signature's pool for the programs of ``programs_dir``: the type pools drawn in
    parallel processes (they depend only on (seed, type), so this changes no output), then
    combined per signature."""
    batches = iter_rows(programs_dir, columns=["param_types"])
    keys = sorted({signature_key(row) for batch in batches for row in batch})
    types = sorted({t for key in keys for t in json.loads(key)})
    jobs = [(str(grammar_dir), t, seed, pool_size) for t in types]
    workers = min(workers or os.cpu_count() or 1, len(types))
    type_pools: dict[str, list[str]] = {}
    with progress("draw argument pools, one per type", len(types)) as advance:
        if workers <= 1:
            for t, job in zip(types, jobs, strict=True):
                type_pools[t] = _draw_in_worker(job)
                advance(1)
        else:
            # fork: the workers inherit the imported modules (Hypothesis, the grammar code) for free.
            with multiprocessing.get_context("fork").Pool(workers) as procs:
                for t, pool in zip(types, procs.imap(_draw_in_worker, jobs, chunksize=1), strict=True):
                    type_pools[t] = pool
                    advance(1)
    return {key: combine_pools(key, type_pools, seed, pool_size) for key in keys}


def candidates_for(
    program: dict[str, Any], pools: dict[str, list[str]], grammar: Grammar, seed: int, params: InputsParams
) -> list[str]:
    """The candidate argument lists of one program: a sample, seeded by the program's index, of the
    pool that Hypothesis drew for its signature (the tuple of its parameter types).

    Many programs share a signature, so each signature's pool is drawn once per run (up front by
    ``draw_pools``, or here on first use); a program's own sample still depends only on
    (seed, index), so it can be regenerated alone.
    """
    key = signature_key(program)
    pool = pools.get(key)
    if pool is None:
        pool = pools[key] = draw_pool(grammar, key, seed, params.pool_size)
    rng = random.Random(f"{seed}:{program['index']}")
    return rng.sample(pool, min(params.candidates, len(pool)))


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
    stats = StageStats("inputs")
    status_counts: Counter = Counter()
    kept_per_tier: Counter = Counter()
    total = count_rows(programs_dir)
    pools = draw_pools(programs_dir, grammar_dir, seed, params.pool_size, execute.workers or None)
    with (
        WorkerPool(
            workers=execute.workers or None,
            hash_seed=execute.hash_seeds[0],
            timeout_s=params.timeout_s,
            memory_mb=execute.memory_mb,
            max_output_repr=execute.max_output_repr,
        ) as pool,
        ShardWriter(out_dir, CASES_SCHEMA, params.rows_per_shard) as out,
        progress("inputs: run candidates", total) as advance,
    ):
        for batch in iter_rows(programs_dir, batch_rows=256):
            drawn = [candidates_for(program, pools, grammar, seed, params) for program in batch]
            all_runs = _run_candidates(pool, batch, drawn)
            for program, candidates, runs in zip(batch, drawn, all_runs, strict=True):
                stats.items_in += 1
                status_counts.update(r["status"] for r in runs)
                candidates = candidates[: len(runs)]
                chosen = choose(candidates, runs, params.per_program)
                if not chosen:
                    # Why its candidates failed is in candidate_status; running one again in the
                    # execute stage (two seeds, a longer timeout) would only cost time.
                    stats.drop("no_candidate_ran")
                    continue
                kept_per_tier[program["tier"]] += 1
                for args, n_lines in chosen:
                    out.write(
                        {
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
                    )
                stats.items_out += 1
            advance(len(batch))
    if pools_dir is not None:
        write_pools(pools, pools_dir)
    stats.extra["cases"] = out.rows
    stats.extra["signatures"] = len(pools)
    stats.extra["candidate_status"] = dict(sorted(status_counts.items()))
    stats.extra["programs_with_a_running_input_by_tier"] = {
        str(t): kept_per_tier[t] for t in sorted(kept_per_tier)
    }
    stats.write(stats_path)
    return stats
