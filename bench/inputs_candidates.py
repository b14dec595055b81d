"""The inputs stage's candidate draws: ``candidates_for`` (a lazy permutation, stopped at the
first ``candidates`` distinct lists) against the full ``random.sample`` permutation it replaced
(issue 14), on the default programs and their saved pools, in one run.

Usage: python bench/inputs_candidates.py [--programs data/programs] [--pools data/pools] [--runs 3]
Both sides run in this one process, alternating, and count CPU seconds; the script fails when
they choose different lists for any program.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from factory.inputs.pool_table import read_pools
from factory.inputs.pools import candidates_for, signature_key
from factory.io import iter_rows
from factory.params import InputsParams, load_params

Draw = Callable[[dict[str, Any], dict[str, list[str]], int, InputsParams], list[str]]


def full_sample(
    program: dict[str, Any], pools: dict[str, list[str]], seed: int, params: InputsParams
) -> list[str]:
    """The way before issue 14: the whole permutation, then its first distinct lists."""
    pool = pools[signature_key(program)]
    rng = random.Random(f"{seed}:{program['index']}")
    return list(dict.fromkeys(rng.sample(pool, len(pool))))[: params.candidates]


def lazy(program: dict[str, Any], pools: dict[str, list[str]], seed: int, params: InputsParams) -> list[str]:
    return candidates_for(program, pools, None, seed, params)  # type: ignore[arg-type]  # pools hold every key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default="data/programs")
    parser.add_argument("--pools", default="data/pools")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    params = load_params(args.params, stage="inputs")
    pools = read_pools(args.pools)
    programs = [row for batch in iter_rows(args.programs, columns=["index", "param_types"]) for row in batch]
    sides: dict[str, Draw] = {"full sample (before)": full_sample, "candidates_for (now)": lazy}
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    chosen: dict[str, list[list[str]]] = {}
    for _ in range(args.runs):
        for name, draw in sides.items():
            start = time.process_time()
            chosen[name] = [draw(p, pools, params.seed, params.inputs) for p in programs]
            seconds[name].append(time.process_time() - start)
    before, now = chosen.values()
    assert before == now, "the two ways chose different candidates"
    print(f"{len(programs)} programs, {params.inputs.candidates} candidates each: the same lists")
    for name, times in seconds.items():
        print(f"{name:22} CPU s per pass: " + ", ".join(f"{t:.3f}" for t in times))


if __name__ == "__main__":
    main()
