"""The synthesize stage: targets × tiers → programs (checked against their tier, deduplicated)."""

from __future__ import annotations

import contextlib
import itertools
import json
import multiprocessing
import os
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from factory.backend import Backend, Shards, run_shards
from factory.contracts import PROGRAMS_SCHEMA, program_id
from factory.grammar.loader import load_grammars
from factory.grammar.model import Grammar
from factory.params import SynthesizeParams
from factory.stage import Outcome, Output, Tally, run_stage
from factory.stats import StageStats
from factory.synth.check import check_program
from factory.synth.generator import GenerationFailed, Program, generate_program


def plan(grammar: Grammar, params: SynthesizeParams) -> Iterator[tuple[int, str, int]]:
    """(index, target, tier) for every program to draw: each target evenly in each tier, then
    the reserves (``reserve_programs``)."""
    targets = grammar.targets()
    index = 0
    for _ in range(params.programs_per_target_tier):
        for tier in params.tiers:
            for target in targets:
                yield index, target, tier
                index += 1
    yield from reserve_programs(targets, params, index)


def reserve_programs(
    targets: list[str], params: SynthesizeParams, start: int
) -> Iterator[tuple[int, str, int]]:
    """(index, target, tier) of the reserve programs, numbered from ``start``: ``reserve_per_target``
    a target, the first two in the second of ``tiers``, then one in each tier up (tiers 2, 2, 3, 4
    of 1-6). Not tier 1: a target's tier-1 programs often differ only in names and count once in
    the release; low tiers, as most of their programs pass the inputs stage's checks (tier 2 about
    70%, tier 6 20%): the second tier-2 reserve took the operations with 20 items from 181 to 184
    (bench/README.md). The inputs stage runs a target's reserves only when its main programs left
    it short (``inputs.min_programs_per_target``): some operations lose most of their programs to
    the semantic checks or to decontamination."""
    n = params.reserve_per_target
    tiers = sorted(params.tiers)
    index = start
    for j in range(n):
        for target in targets:
            yield index, target, tiers[max(1, j) % len(tiers)]
            index += 1


def synthesize_one(grammar: Grammar, seed: int, index: int, target: str, tier: int, attempts: int) -> Program:
    """Program number ``index``, regenerable alone: its RNG depends only on (seed, index)."""
    return generate_program(grammar, target, tier, random.Random(f"{seed}:{index}"), attempts=attempts)


_Config = tuple[Grammar, int, SynthesizeParams]  # the shard job's config: grammar, seed, params
_Drawn = tuple[int, str, int, Program | None, str | None, str]


def _draw(job: tuple[int, str, int]) -> _Drawn:
    """Worker side: generate, check and hash one program (the grammar comes from the forked
    parent). Returns (index, target, tier, program, drop reason, program_id)."""
    index, target, tier = job
    assert _WORKER_STATE is not None  # set by _drawn before any job is drawn
    grammar, seed, attempts = _WORKER_STATE
    try:
        program = synthesize_one(grammar, seed, index, target, tier, attempts)
    except GenerationFailed:
        return index, target, tier, None, "generation_failed", ""
    reasons = check_program(program.source, tier, target, grammar)
    if reasons:
        return index, target, tier, program, f"tier_check:{reasons[0]}", ""
    return index, target, tier, program, None, program_id(program.source, grammar.language)


_WORKER_STATE: tuple[Grammar, int, int] | None = None  # set by _drawn before the workers fork


def _open(config: _Config, cpus: int | None) -> contextlib.AbstractContextManager[int]:
    """The per-process state of the synthesize stage: the number of processes that draw
    (``synthesize.workers``, or ``cpus``; 0: one per core)."""
    return contextlib.nullcontext(cpus or config[2].workers or os.cpu_count() or 1)


def _drawn(config: _Config, workers: int, todo: Iterable[tuple[int, str, int]]) -> Iterator[_Drawn]:
    """Programs in job order, drawn by ``workers`` forked processes (1: in-process)."""
    global _WORKER_STATE
    grammar, seed, params = config
    _WORKER_STATE = (grammar, seed, params.max_attempts)
    jobs = list(todo)
    if workers == 1 or len(jobs) < 200:
        yield from map(_draw, jobs)
        return
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        # Small chunks: the jobs come tier by tier and a tier-6 program takes ~10x a tier-1 one,
        # so chunks of 128 left one worker finishing the last (slowest) chunk alone.
        yield from pool.imap(_draw, jobs, chunksize=16)


def run_synthesize_stage(
    seed: int,
    params: SynthesizeParams,
    out_dir: str | Path,
    stats_path: str | Path,
    *,
    backend: Backend | None = None,
) -> StageStats:
    """Draw every (target, tier) job of each grammar of ``params.grammars``, in their order; keep
    programs that pass the tier check, drop duplicates (``backend``: where the programs are drawn;
    default local). Each language's programs are numbered from 0 (``index``: its RNG), so adding a
    language changes none of another's."""
    grammars = load_grammars(params.grammars)
    jobs = [(name, job) for name, grammar in grammars.items() for job in plan(grammar, params)]
    per_target: dict[str, Counter] = {name: Counter() for name in grammars}
    kept: Counter = Counter()
    reserves = 0

    def outcomes(todo: Iterator[tuple[str, tuple[int, str, int]]]) -> Iterator[Outcome]:
        nonlocal reserves
        seen: set[str] = set()
        for language, group in itertools.groupby(todo, key=lambda unit: unit[0]):
            grammar = grammars[language]
            first_reserve = len(grammar.targets()) * params.programs_per_target_tier * len(params.tiers)
            job = Shards((grammar, seed, params), _open, _drawn)
            for _, drawn in run_shards(backend, job, (unit for _, unit in group)):
                index, target, tier, program, dropped, pid = drawn
                if dropped or pid in seen:
                    yield Outcome(drop=dropped or "duplicate", tier=tier)
                    continue
                assert program is not None  # kept: it was generated
                seen.add(pid)
                kept[language] += 1
                reserve = index >= first_reserve
                if reserve:
                    reserves += 1
                else:
                    per_target[language][target] += 1
                row = {
                    "program_id": pid,
                    "language": language,
                    "index": index,
                    "source": program.source,
                    "entry": program.entry,
                    "tier": tier,
                    "target": target,
                    "param_types": json.dumps(program.params),
                    "n_lines": program.source.count("\n"),
                    "grammar_hash": grammar.grammar_hash,
                    "reserve": reserve,
                }
                yield Outcome([row], tier=tier)

    def extra(tally: Tally) -> dict[str, Any]:
        counts = [n for targets in per_target.values() for n in targets.values()] or [0]
        return {
            "programs_by_tier": tally.by_tier(tally.tiers_out),
            "targets_total": sum(len(g.targets()) for g in grammars.values()),
            "targets_covered": sum(len(targets) for targets in per_target.values()),
            "programs_per_target": {"min": min(counts), "max": max(counts)},
            "reserve_programs": reserves,
            "grammar_hash": ", ".join(g.grammar_hash for g in grammars.values()),
            "languages": {
                name: {
                    "programs": kept[name],
                    "targets_total": len(g.targets()),
                    "targets_covered": len(per_target[name]),
                    "grammar_hash": g.grammar_hash,
                }
                for name, g in grammars.items()
            },
        }

    output = Output(out_dir, PROGRAMS_SCHEMA, params.rows_per_shard)
    return run_stage("synthesize", jobs, outcomes, output, stats_path, total=len(jobs), extra=extra)
