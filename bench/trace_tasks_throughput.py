"""Trace + tasks throughput of the pipeline against the published pipeline's way, side by side.

Ours: the trace stage's and the tasks stage's code on in-memory rows (no parquet): every case
traced in the sandbox pools under two hash seeds (the first seed's workers send the trace JSON,
the second's only a digest, compared in the parent), then the items (white-box, output, coverage)
built from the stored trace JSON in the items worker pool. Theirs: an unsandboxed, in-process
``sys.settrace`` that takes ``repr`` of every local at every line event, once per case, nothing else.

Three case sets: CRUXEval's cases once (788 of the 800: the others' inputs are expressions; one
case per program: every program is new to the workers, the worst case for their per-program
caches), the same repeated --repeat times (each program comes back once the others have passed;
synthesized data has about three cases per program, next to each other), and synthesized tier-5/6
cases made on the spot by the synthesize → inputs → execute stages. Each measurement of ours gets
fresh worker pools, warmed on programs that are never measured.

The machine's speed drifts from minute to minute, so each set is measured --runs times, ours and
the naive tracer one after the other in each run, and the medians are shown (with the ratio of
each run).

Wall-clock rates move with the machine's load, so the bench also prints CPU seconds per case
(user + sys of this process and of every worker, live or reaped) and the rates they imply on two
idle cores: ours spread over both cores, the naive tracer on one (it is one process).
Targets on the 2-core dev machine: ≥ 1,000 cases/s for ours, and ≥ 0.25 of the naive rate.

``--language javascript`` measures the JavaScript path (issue 19, target ≥ 300 cases/s): the
tracer facet's ``trace_row`` jobs on one pool of ``node`` workers, one per core (its traces cannot
depend on the hash seed: ``Language.hash_seed_matters``, as the trace stage does), then the same
items, on synthesized tier-5/6 cases of grammars/javascript (there is no CRUXEval and no
naive tracer for it: those columns are empty).
Run: ``python bench/trace_tasks_throughput.py [--repeat 2] [--runs 3] [--language javascript]``
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory.errors import UserError
from factory.execute.runner import Executor
from factory.execute.stage import run_execute_stage
from factory.inputs.stage import run_inputs_stage
from factory.io import iter_rows
from factory.languages import language
from factory.literals import parse_args
from factory.params import ExecuteParams, InputsParams, SynthesizeParams, TasksParams, TraceParams
from factory.sandbox.trusted.pool import WorkerPool
from factory.synth.stage import run_synthesize_stage
from factory.tasks.job import build_all, items_pool
from factory.trace.stage import trace_executor, trace_rows

CRUXEVAL = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "cruxeval" / "cruxeval.jsonl"
TASKS = TasksParams(families=["white_box", "output", "coverage"])
TRACE = TraceParams()
CORES = 2  # the dev machine; the implied rate of ours assumes both cores busy
# Starts the workers and their imports before a measurement, on programs that are never measured.
WARM_UP = {
    name: [
        {"case_id": f"warm-up {i}", "source": source.format(i=i), "entry": "f", "args": "1"}
        for i in range(40)
    ]
    for name, source in [
        ("python", "def f(x):\n    y = x + {i}\n    return [y]\n"),
        ("javascript", "function f(x) {{\n  const y = x + {i};\n  return [y];\n}}\n"),
    ]
}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def naive_trace(source: str, entry: str, args: str) -> list[tuple[int, dict[str, str]]]:
    """The published way: repr of every local at every line event, in this process."""
    events: list[tuple[int, dict[str, str]]] = []

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != "<program>":
            return None
        if event == "line":
            events.append((frame.f_lineno, {k: repr(v) for k, v in frame.f_locals.items()}))
        return tracer

    namespace: dict[str, Any] = {}
    exec(compile(source, "<program>", "exec"), namespace)
    fn = namespace[entry]
    arg_values = parse_args(args)
    sys.settrace(tracer)
    try:
        fn(*arg_values)
    except Exception:
        pass
    finally:
        sys.settrace(None)
    return events


def ours(cases: list[dict[str, Any]], executor: Executor, pool: WorkerPool) -> tuple[int, int, float, float]:
    """Trace (two seeds; one for JavaScript) then items, as the two stages do; returns (cases
    kept, items built, seconds in the trace half, seconds in the items half)."""
    start = time.perf_counter()
    rows = [row for row, _ in trace_rows(cases, executor, TRACE) if row is not None]
    middle = time.perf_counter()
    name = executor.language.name
    items = sum(len(r["items"]) for r in build_all(rows, pool, seed=0, params=TASKS, language=name))
    return len(rows), items, middle - start, time.perf_counter() - middle


def cpu_seconds(pids: list[int]) -> float:
    """User + sys CPU seconds of this process, its reaped children and the live ``pids``."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited since: counted among the reaped children once waited for
        total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return total


def synthesized_cases(tmp: Path, language_name: str = "python") -> list[dict[str, Any]]:
    """The ``ok`` executions of tier-5/6 programs synthesized from the language's grammar."""
    execute = ExecuteParams()
    grammar = f"grammars/{language_name}"
    synthesize = SynthesizeParams(grammars=[grammar], tiers=[5, 6], programs_per_target_tier=2)
    run_synthesize_stage(3, synthesize, tmp / "p", tmp / "s.json")
    run_inputs_stage(3, InputsParams(), execute, grammar, tmp / "p", tmp / "c", tmp / "i.json")
    run_execute_stage(tmp / "c", tmp / "e", tmp / "e.json", execute)
    return [r for batch in iter_rows(tmp / "e") for r in batch if r["status"] == "ok"]


@dataclass
class Run:
    """One measurement of both sides on one case set."""

    ours_s: float
    ours_cpu: float
    naive_s: float
    naive_cpu: float
    kept: int
    items: int
    trace_s: float
    items_s: float
    steps: int


def measure(cases: list[dict[str, Any]], language_name: str = "python") -> Run:
    """Ours on fresh pools, warmed on programs that are not measured (no program of the set is in
    any worker's caches when the measurement begins), then the naive tracer (Python only)."""
    lang = language(language_name)
    with trace_executor(ExecuteParams(), lang) as executor, items_pool() as pool:
        ours(WARM_UP[language_name], executor, pool)

        def pids() -> list[int]:
            return [pid for p in (*executor.pools, pool) for pid in p.pids()]

        # A worker replaced during the run is reaped (RUSAGE_CHILDREN) and its successor is live,
        # so the pids are read again at the end. A full collection first, for each side: one that
        # falls due during a measurement (this process holds ~100K objects) would cost it ~50 ms.
        gc.collect()
        cpu0, start = cpu_seconds(pids()), time.perf_counter()
        kept, items, trace_s, items_s = ours(cases, executor, pool)
        ours_s, ours_cpu = time.perf_counter() - start, cpu_seconds(pids()) - cpu0
    if language_name != "python":
        return Run(ours_s, ours_cpu, math.nan, math.nan, kept, items, trace_s, items_s, 0)
    gc.collect()
    cpu0, start = time.process_time(), time.perf_counter()
    steps = 0
    for case in cases:
        steps += len(naive_trace(case["source"], case["entry"], case["args"]))
    naive_s, naive_cpu = time.perf_counter() - start, time.process_time() - cpu0
    return Run(ours_s, ours_cpu, naive_s, naive_cpu, kept, items, trace_s, items_s, steps)


def report(label: str, n: int, runs: list[Run]) -> None:
    """The medians over ``runs`` (each run measures both sides, one after the other)."""

    def med(values: list[float]) -> float:
        return statistics.median(values)

    ours_rate, naive_rate = med([n / r.ours_s for r in runs]), med([n / r.naive_s for r in runs])
    ratio = med([r.naive_s / r.ours_s for r in runs])
    ours_ms, naive_ms = med([1e3 * r.ours_cpu / n for r in runs]), med([1e3 * r.naive_cpu / n for r in runs])
    implied_ours, implied_naive = CORES / ours_ms * 1e3, 1e3 / naive_ms
    implied_ratio = med([CORES * r.naive_cpu / r.ours_cpu for r in runs])
    print(
        f"{label:<24}{n:>7,}{ours_rate:>10,.0f}{naive_rate:>10,.0f}{ratio:>7.3f}"
        f"{ours_ms:>10.3f}{naive_ms:>10.3f}{implied_ours:>10,.0f}{implied_naive:>10,.0f}"
        f"{implied_ratio:>7.3f}"
    )
    last = runs[-1]
    each = " ".join(f"{r.naive_s / r.ours_s:.3f}" for r in runs)
    print(
        f"{'':<24}ratio of each run: {each}; ours kept {last.kept:,} and built {last.items:,} items"
        f" (trace half {last.trace_s:.2f} s, items half {last.items_s:.2f} s); naive saw"
        f" {last.steps:,} line events"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="CRUXEval repeated this many times")
    parser.add_argument("--runs", type=int, default=3, help="measurements per set (medians shown)")
    parser.add_argument("--language", default="python", choices=sorted(WARM_UP))
    args = parser.parse_args()
    os.environ.setdefault("CI", "1")
    with tempfile.TemporaryDirectory() as tmp:
        synth = synthesized_cases(Path(tmp), args.language)
    sets = [("synthesized tiers 5–6", synth)]
    if args.language == "python":
        crux = cruxeval_cases()
        sets[:0] = [("CRUXEval ×1", crux), (f"CRUXEval ×{args.repeat}", crux * args.repeat)]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'':<31}{'measured (wall clock)':^27}{'CPU ms per case':^20}{'implied on 2 idle cores':^27}")
    print(
        f"{'cases':<24}{'n':>7}{'ours/s':>10}{'naive/s':>10}{'ratio':>7}{'ours':>10}{'naive':>10}"
        f"{'ours/s':>10}{'naive/s':>10}{'ratio':>7}"
    )
    for label, cases in sets:
        report(label, len(cases), [measure(cases, args.language) for _ in range(args.runs)])
    target = "ours ≥ 1,000 cases/s; ratio ≥ 0.25" if args.language == "python" else "ours ≥ 300 cases/s"
    print(f"{args.language}: medians of {args.runs} runs; targets: {target}")


def cruxeval_cases() -> list[dict[str, Any]]:
    """CRUXEval's cases whose inputs are literals (~12 are expressions)."""
    cases = []
    for line in CRUXEVAL.read_text().splitlines():
        r = json.loads(line)
        try:
            parse_args(r["input"])
        except UserError:
            continue
        cases.append({"case_id": r["id"], "source": r["code"], "entry": "f", "args": r["input"]})
    return cases


if __name__ == "__main__":
    main()
