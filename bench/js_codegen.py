"""JavaScript code-generation items, measured: built from the hand-written programs of
``bench/js_execute.py`` (each with 3 shown and 12 candidate argument lists, run in the node
worker pool), then scored in the untrusted sandbox: the gold completion (should score 1), the
memorizer of the shown examples (should fail hidden tests), and the time per item.

    .venv/bin/python bench/js_codegen.py [--programs 30] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from js_execute import PROGRAMS, _arg

from factory.languages.javascript.runner import WORKER
from factory.params import Phase2Params
from factory.phase2.items import gold_completion, memorizer_source
from factory.phase2.stage import _item
from factory.sandbox.trusted.pool import WorkerPool
from factory.scoring import score_item

TYPES = {"i": "number", "a": "array[number]", "s": "string", "o": "object[string, number]"}
NAMES = {"i": "n", "a": "items", "s": "text", "o": "counts"}


def build(n_programs: int, seed: int) -> list[tuple[dict[str, Any], list[tuple[str, str]], bool]]:
    """(item, shown calls, whether the stage predicts the memorizer fails) of the first
    ``n_programs`` programs (those the stage would not drop)."""
    rng = random.Random(seed)
    pool = WorkerPool(workers=2, hash_seed=1, worker=WORKER, memory_mb=64)
    items = []
    try:
        for index, (source, kinds) in enumerate(PROGRAMS[:n_programs]):
            arg_lists = [", ".join(_arg(k, rng) for k in kinds) for _ in range(15)]
            jobs = [{"source": source, "entry": "f", "args": a} for a in arg_lists]
            cases = [
                (a, r["output_repr"], r["output_type"])
                for a, r in zip(arg_lists, pool.map("run", jobs), strict=True)
                if r["status"] == "ok"
            ]
            program = {
                "program_id": f"bench{index}",
                "source": source,
                "entry": "f",
                "param_types": json.dumps([[f"{NAMES[k]}{i}", TYPES[k]] for i, k in enumerate(kinds)]),
                "tier": 0,
                "target": "bench",
                "grammar_hash": "bench",
            }
            item, reason = _item(program, cases[:3], cases[3:], Phase2Params(), "javascript")
            if item is not None:
                items.append((item, [(a, o) for a, o, _ in cases[:3]], reason == "memorizer_fails"))
    finally:
        pool.close()
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=len(PROGRAMS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    items = build(args.programs, args.seed)
    gold, memo, agree, seconds = 0, 0, 0, []
    for item, shown, predicted in items:
        start = time.perf_counter()
        gold += score_item(item, gold_completion(item)).reward == 1.0
        seconds.append(time.perf_counter() - start)
        source = memorizer_source("f", shown, "javascript")
        fails = score_item(item, f"<answer>\n```javascript\n{source}```\n</answer>").reward < 1.0
        memo += fails
        agree += fails == predicted
    tests = sum(i["n_tests"] for i, _, _ in items)
    print(f"{len(items)} items ({tests} hidden tests) from {args.programs} programs")
    print(f"gold scores 1 on {gold}/{len(items)}; the memorizer fails a hidden test on {memo}/{len(items)}")
    print(f"the stage's memorizer prediction (nothing run) agrees on {agree}/{len(items)}")
    seconds.sort()
    print(f"scoring the gold: median {seconds[len(seconds) // 2]:.3f} s an item, max {seconds[-1]:.3f} s")


if __name__ == "__main__":
    main()
