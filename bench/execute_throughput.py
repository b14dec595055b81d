"""Execute-path throughput: the reused worker pool vs a fresh interpreter per run.

Both sides run the same CRUXEval cases (800, repeated to --cases) under two PYTHONHASHSEED values
and compare the two outputs. Ours: ``Executor`` (two pools, one per seed). The published
pipeline's way: a fresh ``python -c`` twice per case, 64 threads; it is measured on a subsample
(--baseline-sample) to keep the run short, which favours it slightly (no tail of slow cases).

    .venv/bin/python bench/execute_throughput.py [--cases 8000] [--baseline-sample 400]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from factory.execute.runner import Executor
from factory.sandbox.os_helpers import default_workers

CRUXEVAL = Path(__file__).resolve().parents[1] / "data/benchmarks/cruxeval/cruxeval.jsonl"


def load_cases(path: Path, n: int) -> list[dict[str, Any]]:
    """CRUXEval cases repeated (in order) up to ``n``."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    base = [{"source": r["code"], "entry": "f", "args": r["input"], "eval_args": True} for r in records]
    return [base[i % len(base)] for i in range(n)]


def bench_pool(cases: list[dict[str, Any]], workers: int | None) -> dict[str, float]:
    """Cases/s of the Executor (both seeds), with and without pool start-up."""
    t0 = time.perf_counter()
    with Executor(workers=workers) as executor:
        list(executor.run(cases[:16]))  # the workers are up and warm
        t1 = time.perf_counter()
        results = list(executor.run(cases))
        t2 = time.perf_counter()
    ok = sum(r["status"] == "ok" for r in results)
    return {
        "n": len(cases),
        "ok": ok,
        "seconds": t2 - t1,
        "rate": len(cases) / (t2 - t1),
        "rate_with_startup": len(cases) / (t2 - t1 + (t1 - t0)),
    }


BASELINE_SCRIPT = "{source}\nprint(repr(f({args})))\n"


def baseline_case(case: dict[str, Any]) -> bool:
    """The fresh-interpreter way: run the program twice (two hash seeds), compare the outputs."""
    script = BASELINE_SCRIPT.format(source=case["source"], args=case["args"])
    outs = []
    for seed in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=10,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outs.append((proc.returncode, proc.stdout))
    return outs[0] == outs[1] and outs[0][0] == 0


def bench_baseline(cases: list[dict[str, Any]], threads: int) -> dict[str, float]:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        ok = sum(pool.map(baseline_case, cases))
    seconds = time.perf_counter() - t0
    return {"n": len(cases), "ok": ok, "seconds": seconds, "rate": len(cases) / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=8000, help="cases for our path")
    parser.add_argument("--baseline-sample", type=int, default=400, help="cases for the baseline")
    parser.add_argument("--threads", type=int, default=64, help="baseline threads")
    parser.add_argument("--workers", type=int, default=None, help="workers per seed (CPUs)")
    parser.add_argument("--data", type=Path, default=CRUXEVAL)
    opts = parser.parse_args()

    cases = load_cases(opts.data, opts.cases)
    workers = opts.workers or default_workers()
    print(f"CPUs available: {default_workers()}; workers per seed: {workers}", flush=True)
    ours = bench_pool(cases, workers)
    print(
        f"ours      : {ours['n']:>6} cases in {ours['seconds']:.2f}s = {ours['rate']:>8,.0f} "
        f"cases/s ({ours['rate_with_startup']:,.0f}/s counting pool start-up), "
        f"ok {ours['ok']}/{ours['n']}",
        flush=True,
    )
    sample = cases[: opts.baseline_sample]
    base = bench_baseline(sample, opts.threads)
    print(
        f"baseline  : {base['n']:>6} cases in {base['seconds']:.2f}s = {base['rate']:>8,.1f} "
        f"cases/s (fresh `python -c` twice per case, {opts.threads} threads; "
        f"subsample of {base['n']}), ok {base['ok']}/{base['n']}",
        flush=True,
    )
    ratio = ours["rate"] / base["rate"]
    print(f"ratio     : {ratio:,.0f}x  (targets: >= 2,000 cases/s and >= 100x)")


if __name__ == "__main__":
    main()
