"""Hypothesis draws of the inputs stage: a pool per parameter type (what the stage does) against a
pool per signature (what it did up to 0.1.0), on the signatures of the default programs, in one run.

Usage: python bench/inputs_pools.py [--programs data/programs] [--pool-size 256]
Both sides run in this one process, one after the other, on the same signatures and seed, and
count CPU seconds (the stage spreads the same work over one process per core).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

from hypothesis import strategies as st

from factory.grammar.loader import load_grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.pools import args_text, combine_pools, draw_type_pool, signature_key
from factory.inputs.strategies import strategy_for
from factory.io import iter_rows


def per_signature(grammar, keys: list[str], seed: int, size: int) -> dict[str, list[str]]:
    """The 0.1.0 way: one Hypothesis run of a tuple strategy per signature."""
    pools = {}
    for key in keys:
        strategy = st.tuples(*(strategy_for(grammar, parse_type(t)) for t in json.loads(key)))
        pool_seed = int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:12], 16)
        pools[key] = list(dict.fromkeys(args_text(v) for v in draw_examples(strategy, size, pool_seed)))
    return pools


def per_type(grammar, keys: list[str], seed: int, size: int) -> dict[str, list[str]]:
    types = sorted({t for key in keys for t in json.loads(key)})
    type_pools = {t: draw_type_pool(grammar, t, seed, size) for t in types}
    return {key: combine_pools(key, type_pools, seed, size) for key in keys}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default="data/programs")
    parser.add_argument("--grammar", default="grammars/python")
    parser.add_argument("--pool-size", type=int, default=256)
    args = parser.parse_args()
    grammar = load_grammar(args.grammar)
    keys = sorted({signature_key(r) for b in iter_rows(args.programs, columns=["param_types"]) for r in b})
    types = {t for key in keys for t in json.loads(key)}
    rows = []
    for label, draw in (("pool per type (now)", per_type), ("pool per signature (0.1.0)", per_signature)):
        start = time.process_time()
        pools = draw(grammar, keys, 42, args.pool_size)
        rows.append((label, time.process_time() - start, sum(map(len, pools.values()))))
    print(f"{len(keys)} signatures over {len(types)} types, pool size {args.pool_size}")
    print(f"{'':<30}{'CPU s':>8}{'argument lists':>16}")
    for label, seconds, n in rows:
        print(f"{label:<30}{seconds:>8.1f}{n:>16,}")
    print(f"ratio (per signature / per type): {rows[1][1] / rows[0][1]:.1f}x less CPU")


if __name__ == "__main__":
    main()
