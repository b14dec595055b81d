"""JavaScript execute throughput: the ``Executor``'s two pools of ``node`` workers, a program's cases
run in pairs (``factory.execute.batch``) and one per job, vs a fresh ``node -e`` per run.

The cases are those of the pipeline's kind: programs (hand-written functions of the kind the
JavaScript grammar generates, each a distinct source, as every generated program is) with
``--per-program`` drawn argument lists each, consecutive. Every case runs twice (V8's hash seeds 1
and 2) and is kept when both runs agree. The naive way: ``node -e '<program>; print
canonical(f(args))'`` twice per case, on a thread pool, measured on a subsample (--baseline-sample).
``--rounds`` runs the two paths that many times each, alternating which goes first.

    .venv/bin/python bench/js_execute.py [--cases 3000] [--per-program 4] [--rounds 1]
        [--baseline-sample 100] [--threads 8] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from factory.execute.runner import Executor
from factory.languages import language
from factory.languages.javascript.runner import FIXED_ENV
from factory.sandbox.os_helpers import default_workers
from factory.sandbox.trusted.pool import WorkerPool, proc_cpu_seconds

CANONICAL_JS = Path(__file__).resolve().parents[1] / "factory/languages/javascript/canonical.js"

#: (program, kinds of its arguments): i = int, a = array of ints, s = string, o = object of ints.
PROGRAMS: list[tuple[str, str]] = [
    ("function f(a, n) { return a.map((x) => x * n).filter((x) => x % 3 !== 0); }", "ai"),
    ("function f(s) { let out = ''; for (const c of s) { out = c + out; } return out; }", "s"),
    ("function f(a) { return [...a].sort((x, y) => x - y); }", "a"),
    ("function f(a) { let t = 0; for (let i = 0; i < a.length; i++) { if (a[i] > 0) { t += a[i]; } } return t; }", "a"),  # noqa: E501
    ("function f(s, n) { return s.repeat(2).slice(n % 5).toUpperCase(); }", "si"),
    ("function f(a) { return a.reduce((acc, x) => acc + x * x, 0); }", "a"),
    ("function f(o) { return Object.keys(o).map((k) => k + '=' + o[k]).join('&'); }", "o"),
    ("function f(s) { const m = new Map(); for (const c of s) { m.set(c, (m.get(c) || 0) + 1); } return m; }", "s"),  # noqa: E501
    ("function f(a) { return new Set(a.map((x) => x % 4)); }", "a"),
    ("function f(n) { let i = 0; let t = 1; while (i < n % 20) { t = t * 2; i += 1; } return t; }", "i"),
    ("function f(a, n) { const b = a.slice(); b.splice(1, 1, n); return b.reverse(); }", "ai"),
    ("function f(s) { return s.split('').filter((c) => 'aeiou'.includes(c)).length; }", "s"),
    ("function f(a) { return a.every((x) => x > -5) ? Math.max(...a, 0) : Math.min(...a, 0); }", "a"),
    ("function f(s, n) { return s.padStart(n % 12, '*').padEnd(12, '-'); }", "si"),
    ("function f(a) { const [x, y, ...rest] = a; return { x, y, rest: rest.length }; }", "a"),
    ("function f(o, n) { const r = {}; for (const [k, v] of Object.entries(o)) { r[k] = v + n; } return r; }", "oi"),  # noqa: E501
    ("function g(x) { return x % 2 === 0 ? x / 2 : 3 * x + 1; }\nfunction f(n) { let c = 0; let x = Math.abs(n) + 1; while (x !== 1 && c < 200) { x = g(x); c += 1; } return c; }", "i"),  # noqa: E501
    ("function f(a) { return a.findIndex((x) => x > 3) + a.indexOf(2) + a.lastIndexOf(1); }", "a"),
    ("function f(s) { return s.trim().replaceAll('a', 'b').at(-1) ?? null; }", "s"),
    ("function f(a) { return a.flatMap((x) => [x, x * 2]).slice(0, 6); }", "a"),
    ("function f(s, n) { return `${s.charAt(n % 3)}:${s.length}:${s.indexOf('e')}`; }", "si"),
    ("function f(a) { const out = []; for (const x of a) { if (x > 5) { break; } out.push(x); } return out; }", "a"),  # noqa: E501
    ("function f(n) { return [Number.isInteger(n / 2), Math.sign(n), Math.trunc(n / 3), Math.round(n / 7)]; }", "i"),  # noqa: E501
    ("function f(a) { return a.some((x) => x === 0) || a.includes(7); }", "a"),
    ("function f(s) { return parseInt(s.replace(/[^0-9]/g, '') || '0', 10) % 97; }", "s"),
    ("function f(a, n) { return a.fill(n, 1, 3).concat([n]); }", "ai"),
    ("function f(o) { return Object.values(o).sort((x, y) => y - x).slice(0, 2); }", "o"),
    ("function f(s) { let r = ''; for (let i = 0; i < s.length; i += 2) { r += s[i]; } return r; }", "s"),
    ("function f(a) { let lo = 0; let hi = a.length - 1; while (lo < hi) { const t = a[lo]; a[lo] = a[hi]; a[hi] = t; lo += 1; hi -= 1; } return a; }", "a"),  # noqa: E501
    ("function f(s, n) { return s.startsWith('a') ? s.substring(1, n % 6) : s.endsWith('e') ? s.toLowerCase() : s.concat(n); }", "si"),  # noqa: E501
]  # fmt: skip


def _arg(kind: str, rng: random.Random) -> str:
    if kind == "i":
        return str(rng.randint(-20, 40))
    if kind == "a":
        return json.dumps([rng.randint(-5, 9) for _ in range(rng.randint(0, 7))])
    if kind == "s":
        return json.dumps("".join(rng.choice("abcdeAE 12xyz") for _ in range(rng.randint(0, 10))))
    return json.dumps({k: rng.randint(-9, 9) for k in rng.sample("abcdefg", rng.randint(0, 4))})


def make_cases(n: int, seed: int = 0, per_program: int = 4) -> list[dict[str, Any]]:
    """``n`` cases: the programs in turn, each a distinct source (a numbered comment) with
    ``per_program`` freshly drawn argument lists."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        index = i // per_program
        source, kinds = PROGRAMS[index % len(PROGRAMS)]
        source = f"// program {index}\n{source}"
        cases.append({"source": source, "entry": "f", "args": ", ".join(_arg(k, rng) for k in kinds)})
    return cases


def bench_executor(cases: list[dict[str, Any]], workers: int, *, pairs: bool) -> dict[str, float]:
    """Cases/s of the JavaScript ``Executor`` (every case run under both seeds), start-up excluded,
    and the CPU seconds per case of the parent and the workers."""
    with Executor(language=language("javascript"), workers=workers, pairs=pairs) as executor:
        list(executor.run(make_cases(64, seed=1)))  # the workers are up and warm
        before, workers_before = os.times(), _workers_cpu(executor.pools)
        t1 = time.perf_counter()
        results = list(executor.run(cases))
        seconds = time.perf_counter() - t1
        after, workers_after = os.times(), _workers_cpu(executor.pools)
    parent = after.user + after.system - before.user - before.system
    return {
        "n": len(cases),
        "ok": sum(r["status"] == "ok" for r in results),
        "seconds": seconds,
        "rate": len(cases) / seconds,
        "parent_cpu_ms_per_case": 1000 * parent / len(cases),
        "workers_cpu_ms_per_case": 1000 * (workers_after - workers_before) / len(cases),
    }


def _workers_cpu(pools: list[WorkerPool]) -> float:
    """CPU seconds the pools' live workers have used (a worker replaced meanwhile is not counted)."""
    return sum(proc_cpu_seconds(pid) or 0.0 for pool in pools for pid in pool.pids())


BASELINE_SCRIPT = (
    "const {{ canonical }} = require({canonical});\n{source}\n"
    "let out; try {{ out = canonical(f({args})); }} catch (e) {{ out = 'error:' + e.name; }}\n"
    "process.stdout.write(out);\n"
)


def baseline_case(case: dict[str, Any], node: str) -> bool:
    """The naive way: a fresh ``node -e`` twice, the outputs compared."""
    script = BASELINE_SCRIPT.format(canonical=json.dumps(str(CANONICAL_JS)), **case)
    env = {"PATH": os.environ.get("PATH", ""), **FIXED_ENV}
    outs = [
        subprocess.run([node, "-e", script], capture_output=True, text=True, env=env, check=False).stdout
        for _ in range(2)
    ]
    return outs[0] == outs[1]


def bench_baseline(cases: list[dict[str, Any]], threads: int) -> dict[str, float]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node (Node.js >= 20) is not on PATH")
    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        agree = sum(pool.map(lambda c: baseline_case(c, node), cases))
    seconds = time.perf_counter() - t0
    return {"n": len(cases), "agree": agree, "seconds": seconds, "rate": len(cases) / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--per-program", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each path, alternating")
    parser.add_argument("--baseline-sample", type=int, default=100)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--workers", type=int, default=0, help="per pool; 0: the cores shared by the two")
    args = parser.parse_args()
    cases = make_cases(args.cases, per_program=args.per_program)
    workers = args.workers or -(-default_workers() // 2)
    runs: list[tuple[str, dict[str, float]]] = []
    for round_ in range(args.rounds):
        paths = [("pairs", True), ("one per job", False)]
        for name, pairs in paths[:: 1 if round_ % 2 == 0 else -1]:
            runs.append((name, bench_executor(cases, workers, pairs=pairs)))
    naive = bench_baseline(cases[: args.baseline_sample], args.threads)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; {args.cases // args.per_program} programs, "
          f"{args.per_program} cases each; {workers} worker(s) per pool")  # fmt: skip
    head = f"{'':12} {'cases':>7} {'ok':>7} {'seconds':>8} {'cases/s':>9}"
    print(f"{head} {'CPU ms/case: workers':>21} {'parent':>7}")
    for name, r in runs:
        print(
            f"{name:12} {r['n']:>7} {r['ok']:>7} {r['seconds']:>8.2f} {r['rate']:>9.1f}"
            f" {r['workers_cpu_ms_per_case']:>21.3f} {r['parent_cpu_ms_per_case']:>7.3f}"
        )
    n, agree, seconds, rate = naive["n"], naive["agree"], naive["seconds"], naive["rate"]
    print(f"{'node -e':12} {n:>7} {agree:>7} {seconds:>8.2f} {rate:>9.1f}")
    best = max(r["rate"] for name, r in runs if name == "pairs")
    print(f"pairs vs node -e: {best / naive['rate']:.1f}x (ok column of node -e: runs that agreed)")


if __name__ == "__main__":
    main()
