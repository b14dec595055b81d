"""The argument pools Hypothesis draws, one per parameter type, combined per signature.

The inputs stage samples each program's candidate inputs from these pools and saves them; the
phase2 stage samples its hidden tests from the saved ones (docs/design.md §3).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import random
from pathlib import Path
from typing import Any

from factory.contracts import POOLS_SCHEMA
from factory.grammar.loader import load_grammar
from factory.grammar.model import Grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.strategies import strategy_for
from factory.io import ShardWriter, iter_rows
from factory.literals import canonical_repr
from factory.params import InputsParams
from factory.progress import progress


def args_text(values: tuple[Any, ...]) -> str:
    """Literal argument-list text, CRUXEval style: ``"[1, 2], 'ab'"`` (the same in every process)."""
    return ", ".join(canonical_repr(v) for v in values)


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
