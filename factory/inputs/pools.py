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
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from factory import languages
from factory.grammar.loader import load_grammar
from factory.grammar.model import Grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.related import Relations
from factory.inputs.strategies import weighted_branches
from factory.io import iter_rows
from factory.literals import canonical_repr
from factory.params import InputsParams
from factory.progress import progress
from factory.stage import language_of


def args_text(values: tuple[Any, ...]) -> str:
    """Literal argument-list text, CRUXEval style: ``"[1, 2], 'ab'"`` (the same in every process)."""
    return ", ".join(canonical_repr(v) for v in values)


def signature_key(program: dict[str, Any]) -> str:
    """The pool key of a program: its tuple of parameter types, as JSON."""
    return json.dumps(tuple(t for _, t in json.loads(program["param_types"])))


def draw_pool(grammar: Grammar, key: str, seed: int, pool_size: int, related_share: float = 0.0) -> list[str]:
    """The argument lists of one signature: the pools of its parameter types combined (see
    ``combine_pools``, ``related_share`` of them related); the same whichever process draws it."""
    drawn = {t: draw_type_values(grammar, t, seed, pool_size) for t in json.loads(key)}
    return _combine_all(grammar, [key], drawn, seed, pool_size, related_share)[key]


def draw_type_pool(grammar: Grammar, type_text: str, seed: int, pool_size: int) -> list[str]:
    """The literal texts of ``pool_size`` values that Hypothesis draws for one type (see
    ``draw_type_values``)."""
    return draw_type_values(grammar, type_text, seed, pool_size)[0]


def draw_type_values(
    grammar: Grammar, type_text: str, seed: int, pool_size: int
) -> tuple[list[str], dict[str, Any]]:
    """The literal texts of ``pool_size`` values that Hypothesis draws for one type, seeded by
    (seed, type) alone, in a seeded order, and the drawn value of each text. The grammar's
    language writes them (``Language.drawn_literal``: Python's ``canonical_repr``, JavaScript's
    value model).

    A type whose strategy is a ``mixture`` gets each branch's exact share of the pool (weights
    rounded by largest remainder), each branch drawn by its own seeded run: a branch with fewer
    distinct values than its share (the empty list) repeats them, so that 5% of the pool is
    empty lists even though there is one empty list. Values repeat only so; the pool's order is
    a seeded shuffle.

    Drawing is what costs (about 1-3 ms a value for collections in Hypothesis' engine), and the
    default programs have 89 signatures over 18 types: a pool per type, shared by every signature
    that has the type, draws 9 times less than a pool per signature did (bench/README.md).
    """
    t = parse_type(type_text)
    literal = languages.language(grammar.language).drawn_literal
    branches = weighted_branches(grammar, t)
    texts: list[str] = []
    values: dict[str, Any] = {}
    for i, ((_, strategy), n) in enumerate(
        zip(branches, _shares([w for w, _ in branches], pool_size), strict=True)
    ):
        if n == 0:
            continue
        type_seed = _seed(f"{seed}:{type_text}" if len(branches) == 1 else f"{seed}:{type_text}:{i}")
        drawn: dict[str, Any] = {}
        for v in draw_examples(strategy, n, type_seed):
            drawn.setdefault(literal(v, t), v)
        for text, v in drawn.items():
            values.setdefault(text, v)
        distinct = list(drawn)
        texts += [distinct[j % len(distinct)] for j in range(n)] if distinct else []
    random.Random(f"{seed}:{type_text}").shuffle(texts)
    return texts, values


def _combine_all(
    grammar: Grammar,
    keys: Iterable[str],
    drawn: Mapping[str, tuple[list[str], dict[str, Any]]],
    seed: int,
    pool_size: int,
    related_share: float,
) -> dict[str, list[str]]:
    """The pools of the signatures ``keys`` from their types' ``draw_type_values``."""
    texts = {t: pool for t, (pool, _) in drawn.items()}
    relations = None
    if related_share > 0:
        values = {t: by_text for t, (_, by_text) in drawn.items()}
        relations = Relations(related_share, values, languages.language(grammar.language).drawn_literal)
    return {key: combine_pools(key, texts, seed, pool_size, relations) for key in keys}


def _seed(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def _shares(weights: list[float], total: int) -> list[int]:
    """``total`` split in proportion to ``weights``: floors, then the largest remainders (earlier
    branches first on ties)."""
    exact = [w * total / sum(weights) for w in weights]
    counts = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (counts[i] - exact[i], i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts


# A type with fewer distinct values than this (bool) gives its parameters every combination,
# equal values included; others never give two parameters of one argument list the same value.
DISTINCT_MIN_VALUES = 8


def combine_pools(
    key: str,
    type_pools: dict[str, list[str]],
    seed: int,
    pool_size: int,
    relations: Relations | None = None,
) -> list[str]:
    """A signature's ``pool_size`` argument lists from its types' pools, seeded by (seed,
    signature): the j-th takes the j-th value of a permutation of each parameter's pool (a
    random one past the pool's end), two parameters of one type different permutations. Two
    parameters of one type never get the same value when its pool has others (a value equal to
    an earlier parameter's moves on to the column's next different one), except for types with
    fewer than ``DISTINCT_MIN_VALUES`` values. Lists repeat as the type pools' values do (the
    share of empty values carries over); ``candidates_for`` picks distinct ones.

    With ``relations``, a parameter of a relatable type (``factory/inputs/related.py``) that an
    earlier one shares is, in ``relations.share`` of the lists, made from one of those, by a
    random number stream of its own: the other lists are the same with or without it."""
    types = json.loads(key)
    if not types:
        return [""]
    rng = random.Random(f"{seed}:{key}")
    columns = [rng.sample(type_pools[t], len(type_pools[t])) for t in types]
    distinct = {t: len(set(type_pools[t])) >= DISTINCT_MIN_VALUES for t in set(types)}
    # each parameter of a relatable type that earlier ones share: those earlier ones
    earlier: dict[int, list[int]] = {}
    if relations is not None:
        for k, t in enumerate(types):
            others = [i for i in range(k) if types[i] == t]
            if others and relations.relatable(t):
                earlier[k] = others
    related_rng = random.Random(f"{seed}:{key}:related")
    rows = []
    for j in range(pool_size):
        picks: list[str] = []
        for i, (t, column) in enumerate(zip(types, columns, strict=True)):
            at = j if j < len(column) else rng.randrange(len(column))
            taken = {picks[k] for k in range(i) if types[k] == t} if distinct[t] else set()
            for step in range(len(column)):
                if column[(at + step) % len(column)] not in taken:
                    at = (at + step) % len(column)
                    break
            picks.append(column[at])
        for made, others in earlier.items():
            if relations is not None and related_rng.random() < relations.share:
                text = relations.relate(
                    types[made], picks[related_rng.choice(others)], picks[made], related_rng
                )
                if text is not None and text not in picks:
                    picks[made] = text
        rows.append(", ".join(picks))
    return rows


_grammars: dict[str, Grammar] = {}  # loaded once per process and grammar folder


def _draw_in_worker(job: tuple[str, str, int, int]) -> tuple[list[str], dict[str, Any]]:
    grammar_dir, type_text, seed, pool_size = job
    grammar = _grammars.get(grammar_dir)
    if grammar is None:
        grammar = _grammars[grammar_dir] = load_grammar(grammar_dir)
    return draw_type_values(grammar, type_text, seed, pool_size)


def draw_pools(
    programs_dir: str | Path,
    grammar_dir: str,
    seed: int,
    pool_size: int,
    workers: int | None = None,
    related_share: float = 0.0,
) -> dict[str, list[str]]:
    """Every signature's pool for the programs of ``programs_dir`` in the language of the grammar
    of ``grammar_dir``: the type pools drawn in parallel processes (they depend only on (seed,
    type), so this changes no output), then combined per signature, ``related_share`` of its
    lists related (``combine_pools``)."""
    grammar = load_grammar(grammar_dir)
    language = grammar.language
    keys = sorted(
        {
            signature_key(row)
            for batch in iter_rows(programs_dir, columns=["param_types", "language"])
            for row in batch
            if language_of(row) == language
        }
    )
    types = sorted({t for key in keys for t in json.loads(key)})
    jobs = [(str(grammar_dir), t, seed, pool_size) for t in types]
    workers = min(workers or os.cpu_count() or 1, len(types))
    type_pools: dict[str, tuple[list[str], dict[str, Any]]] = {}
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
    return _combine_all(grammar, keys, type_pools, seed, pool_size, related_share)


def candidates_for(
    program: dict[str, Any], pools: dict[str, list[str]], grammar: Grammar, seed: int, params: InputsParams
) -> list[str]:
    """The candidate argument lists of one program: the first ``candidates`` distinct lists of a
    permutation, seeded by the program's index, of the pool that Hypothesis drew for its
    signature (the tuple of its parameter types).

    Many programs share a signature, so each signature's pool is drawn once per run (up front by
    ``draw_pools``, or here on first use); a program's own sample still depends only on
    (seed, index), so it can be regenerated alone.
    """
    key = signature_key(program)
    pool = pools.get(key)
    if pool is None:
        pool = pools[key] = draw_pool(grammar, key, seed, params.pool_size, params.related_share)
    rng = random.Random(f"{seed}:{program['index']}")
    return _first_distinct(_shuffled(rng, pool), params.candidates)


def _shuffled(rng: random.Random, pool: list[str]) -> Iterator[str]:
    """``rng.sample(pool, len(pool))``, item by item: the same items in the same order from the
    same random numbers (a full sample draws one ``randrange(n - i)`` per item and swaps, the
    loop below), stopped as soon as the caller has what it needs. A program takes 12 distinct
    lists of a pool of 256: for the 3,217 default programs, 0.17 s instead of the 0.62 s of the
    whole permutations, in the inputs stage's main process (measured 2026-12-06)."""
    n = len(pool)
    rest = list(pool)
    for i in range(n):
        j = rng.randrange(n - i)
        yield rest[j]
        rest[j] = rest[n - i - 1]


def _first_distinct(items: Iterator[str], k: int) -> list[str]:
    """The first ``k`` distinct items, in order."""
    seen: dict[str, None] = {}
    for item in items:
        if len(seen) >= k:
            break
        seen.setdefault(item)
    return list(seen)
