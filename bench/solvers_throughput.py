"""Solver throughput: the difficulty stage with the embedded model, and the openai client's overhead.

1. Difficulty stage, the small embedded SmolLM2-135M-Instruct (``smollm2``) on this CPU
   (transformers backend): --tasks output tasks from CRUXEval, n=4 samples each, --max-tokens
   new tokens at most, a fresh cache; prints tasks/min, samples/s and generated tokens/s, then
   the same run again from the cache (side by side: the rerun asks the model nothing).
2. Client overhead at 64 concurrent requests: --requests chat requests to a local FAKE
   OpenAI-compatible server (a real HTTP server on 127.0.0.1 that answers at once,
   tests/solvers/fake_openai_server.py) through our OpenAISolver, side by side with the same
   requests sent by the bare openai SDK (AsyncOpenAI + a semaphore, no retries, no re-asks):
   what our layer (retry loop, seeds, re-ask bookkeeping, one event loop per call) adds.

    .venv/bin/python bench/solvers_throughput.py [--tasks 6] [--max-tokens 32] [--requests 1024] [--part both]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from factory.difficulty import judge_samples  # noqa: E402
from factory.evaluate import load_benchmark  # noqa: E402
from factory.solvers import CachedSolver, ResponseCache  # noqa: E402
from factory.solvers.openai_backend import OpenAISolver  # noqa: E402
from factory.solvers.transformers_backend import TransformersSolver  # noqa: E402
from tests.solvers.fake_openai_server import FakeOpenAI, serve  # noqa: E402

CRUXEVAL = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "cruxeval" / "cruxeval.jsonl"


def bench_difficulty(tasks: int, max_tokens: int, threads: int, n: int = 4) -> None:
    items, _ = load_benchmark("cruxeval-o", CRUXEVAL, limit=tasks)
    start = time.monotonic()
    backend = TransformersSolver("smollm2", device="cpu", batch_size=4, threads=threads)
    load_s = time.monotonic() - start
    with tempfile.TemporaryDirectory() as tmp:
        solver = CachedSolver(backend, ResponseCache(Path(tmp) / "c.sqlite"))
        rows = []
        for label in ("first run (model)", "rerun (cache)"):
            t0 = time.monotonic()
            samples = solver.generate([i["prompt"] for i in items], n, 1.0, 1.0, max_tokens, 0)
            judged = judge_samples(items, samples)
            rows.append((label, time.monotonic() - t0, sum(j.passes for j in judged)))
        tokens = backend.generated_tokens
    print(f"embedded model load (safetensors, cached conversion): {load_s:.2f} s")
    print(f"{'difficulty stage':<22} {'seconds':>8} {'tasks/min':>10} {'samples/s':>10} {'passes':>7}")
    for label, secs, passes in rows:
        print(f"{label:<22} {secs:8.2f} {60 * tasks / secs:10.1f} {tasks * n / secs:10.2f} {passes:7d}")
    rate = tokens / rows[0][1]
    print(f"generated tokens/s (first run): {rate:.1f} ({tokens} tokens, {tasks} tasks x n={n})")
    print(f"ratio rerun/first-run speed: {rows[0][1] / rows[1][1]:.0f}x")


async def _bare_sdk(url: str, requests: int, concurrency: int) -> None:
    import openai

    limit = asyncio.Semaphore(concurrency)
    async with openai.AsyncOpenAI(base_url=url, api_key="EMPTY", max_retries=0) as client:

        async def one(i: int) -> None:
            async with limit:
                reply = await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"p{i}"}], n=1, max_tokens=8
                )
                assert reply.choices[0].message.content is not None

        await asyncio.gather(*(one(i) for i in range(requests)))


def bench_client(requests: int, concurrency: int = 64, rounds: int = 3) -> None:
    """Best of ``rounds`` for each, taken in turn (the two share the machine's noise)."""
    bare, ours = [], []
    with serve(FakeOpenAI()) as url:
        solver = OpenAISolver("m", base_url=url, concurrency=concurrency)
        solver.generate(["warm-up"], 1)
        for _ in range(rounds):
            t0 = time.monotonic()
            asyncio.run(_bare_sdk(url, requests, concurrency))
            bare.append(time.monotonic() - t0)
            t0 = time.monotonic()
            solver.generate([f"p{i}" for i in range(requests)], 1, 1.0, 1.0, 8, 0)
            ours.append(time.monotonic() - t0)
    p, o = min(bare), min(ours)
    head = f"client, {concurrency} in flight"
    print(f"{head:<22} {'seconds':>8} {'req/s':>8} {'ms/request':>11}  (best of {rounds})")
    for label, secs in (("bare openai SDK", p), ("OpenAISolver", o)):
        print(f"{label:<22} {secs:8.2f} {requests / secs:8.0f} {1000 * secs / requests:11.2f}")
    print(f"overhead per request over the bare SDK: {1000 * (o - p) / requests:.2f} ms (ratio {o / p:.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--requests", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default)")
    ap.add_argument("--part", choices=("both", "model", "client"), default="both")
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    if args.part in ("both", "model"):
        bench_difficulty(args.tasks, args.max_tokens, args.threads)
    if args.part in ("both", "client"):
        bench_client(args.requests)


if __name__ == "__main__":
    main()
