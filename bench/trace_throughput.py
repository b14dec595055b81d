"""Tracer throughput: our change-only capture against the published pipeline's way.

The published pipeline traced with an in-process ``sys.settrace`` that took ``repr`` of every local
at every line event. Ours records a step per statement execution and only the variables that
changed, found by identity and cheap fingerprints. This script prints, in one run:

1. traced cases/s on CRUXEval's 800 cases, with capture, for both, and the ratio;
2. the cost per step on a program with large locals (a 1,000-element list mutated in a loop of
   1,000 iterations), for both;
3. the cost of the stored trace JSON (``factory.trace.stored.stored_json``, written from the
   tracer's tuples) against ``json.dumps`` of the trace's dicts, per CRUXEval trace.

Run: ``.venv/bin/python bench/trace_throughput.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from factory.errors import UserError  # noqa: E402
from factory.literals import parse_args  # noqa: E402
from factory.params import TraceParams  # noqa: E402
from factory.program_code import PROGRAM_FILENAME  # noqa: E402
from factory.trace.stored import stored_json  # noqa: E402
from factory.trace.tracer import trace_call, traced, with_lists  # noqa: E402

CRUXEVAL = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "cruxeval" / "cruxeval.jsonl"

LARGE_LOCALS = """\
def f(n):
    data = list(range(1000))
    total = 0
    for i in range(n):
        data[i % 1000] = data[i % 1000] + 1
        total += data[i % 1000]
    return total
"""


@functools.lru_cache(maxsize=1024)
def _compile(source: str) -> Any:
    # Compiled once per program, like ours, so that only the tracing itself is compared.
    return compile(source, PROGRAM_FILENAME, "exec", dont_inherit=True)


def baseline_trace(source: str, entry: str, args: str) -> dict[str, Any]:
    """The published way: repr of every local at every line event of the program's frames."""
    code = _compile(source)
    namespace: dict[str, Any] = {"__name__": "__program__"}
    exec(code, namespace)
    try:
        values = parse_args(args)
    except UserError:  # CRUXEval writes a few arguments as expressions
        values = eval(compile(f"({args},)", "<args>", "eval", dont_inherit=True), namespace)
    records: list[tuple[int, str, dict[str, str]]] = []

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            records.append(
                (
                    frame.f_lineno,
                    frame.f_code.co_name,
                    {k: repr(v) for k, v in frame.f_locals.items()},
                )
            )
        return local

    def on_call(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == PROGRAM_FILENAME else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        output = namespace[entry](*values)
    finally:
        sys.settrace(previous)
    return {"output_repr": repr(output), "steps": records}


def _is_literal_args(text: str) -> bool:
    try:
        parse_args(text)
    except UserError:
        return False
    return True


def cases_per_second(cases: list[dict[str, str]], tracer: str, repeat: int) -> tuple[float, int]:
    """Best of ``repeat`` runs over all cases; also the total number of steps of one run."""
    rates = []
    steps = 0
    for _ in range(repeat):
        steps = 0
        start = time.perf_counter()
        for case in cases:
            if tracer == "ours":
                result = trace_call(case["code"], "f", case["input"], eval_args=case["eval"])
            else:
                result = baseline_trace(case["code"], "f", case["input"])
            steps += len(result["steps"])
        rates.append(len(cases) / (time.perf_counter() - start))
    return max(rates), steps


def per_step_cost(tracer: str, n: int, repeat: int) -> tuple[float, int]:
    """Median microseconds per step for the large-locals program (and its number of steps)."""
    costs = []
    steps = 0
    for _ in range(repeat):
        start = time.perf_counter()
        if tracer == "ours":
            result = trace_call(LARGE_LOCALS, "f", str(n), max_steps=10 * n + 100)
            assert result["status"] == "ok", result["status"]
        elif tracer == "lines":
            result = trace_call(LARGE_LOCALS, "f", str(n), capture=False, max_steps=10 * n + 100)
        else:
            result = baseline_trace(LARGE_LOCALS, "f", str(n))
        elapsed = time.perf_counter() - start
        steps = len(result["steps"])
        costs.append(elapsed / steps * 1e6)
    return statistics.median(costs), steps


def stored_json_cost(cases: list[dict[str, Any]], repeat: int) -> tuple[float, float]:
    """Median microseconds per ``ok`` trace of ``stored_json`` and of ``json.dumps`` of the dicts
    (the two are byte-identical; the runs alternate)."""
    limits = TraceParams()
    traces = []
    for case in cases:
        result, tracer = traced(
            case["code"],
            "f",
            case["input"],
            True,
            limits.max_steps,
            limits.max_repr,
            eval_args=case["eval"],
            quiet=True,
            max_state_bytes=limits.max_state_bytes,
        )
        if result["status"] == "ok" and tracer is not None:
            traces.append((result, tracer))

    def dumps(result: dict[str, Any], tracer: Any) -> str:
        full = with_lists(dict(result), tracer)
        stored = {k: full[k] for k in ("status", "output_repr", "output_type", "steps", "states")}
        return json.dumps(stored, separators=(",", ":"))

    assert all(stored_json(r, t) == dumps(r, t) for r, t in traces)
    costs: dict[str, list[float]] = {"ours": [], "dumps": []}
    for _ in range(repeat):
        for name, encode in (("ours", stored_json), ("dumps", dumps)):
            start = time.process_time()
            for result, tracer in traces:
                encode(result, tracer)
            costs[name].append((time.process_time() - start) / len(traces) * 1e6)
    return statistics.median(costs["ours"]), statistics.median(costs["dumps"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best/median)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    options = parser.parse_args()

    cases = [json.loads(line) for line in CRUXEVAL.read_text().splitlines() if line.strip()]
    for case in cases:
        case["eval"] = not _is_literal_args(case["input"])
    ours, our_steps = cases_per_second(cases, "ours", options.repeat)
    base, base_steps = cases_per_second(cases, "baseline", options.repeat)
    big_ours, big_steps = per_step_cost("ours", 1000, options.repeat)
    big_lines, _ = per_step_cost("lines", 1000, options.repeat)
    big_base, big_base_steps = per_step_cost("baseline", 1000, options.repeat)
    json_ours, json_dumps = stored_json_cost(cases, max(5, options.repeat))
    report = {
        "python": sys.version.split()[0],
        "cruxeval_cases": len(cases),
        "cruxeval_cases_per_s_ours": round(ours, 1),
        "cruxeval_cases_per_s_baseline": round(base, 1),
        "cruxeval_ratio_ours_over_baseline": round(ours / base, 2),
        "cruxeval_steps_ours": our_steps,
        "cruxeval_line_events_baseline": base_steps,
        "large_locals_us_per_step_ours": round(big_ours, 2),
        "large_locals_us_per_step_lines_only": round(big_lines, 2),
        "large_locals_us_per_step_baseline": round(big_base, 2),
        "large_locals_speedup": round(big_base / big_ours, 2),
        "large_locals_steps": big_steps,
        "stored_json_us_per_trace_ours": round(json_ours, 2),
        "stored_json_us_per_trace_json_dumps": round(json_dumps, 2),
    }
    if options.json:
        print(json.dumps(report))
        return
    print(f"Python {report['python']}")
    print(f"CRUXEval ({len(cases)} cases, capture on):")
    print(f"  ours      {ours:9.1f} cases/s  ({our_steps} steps)")
    print(f"  baseline  {base:9.1f} cases/s  ({base_steps} line events, repr of every local)")
    print(f"  ratio     {ours / base:9.2f}x")
    print(f"Large locals (1,000-element list mutated over 1,000 iterations, {big_steps} steps):")
    print(f"  ours       {big_ours:8.2f} us/step (capture of changes only)")
    print(f"  lines only {big_lines:8.2f} us/step (capture=False)")
    print(f"  baseline   {big_base:8.2f} us/step ({big_base_steps} line events)")
    print(f"  speedup    {big_base / big_ours:8.2f}x")
    print("Stored trace JSON, per CRUXEval trace (CPU):")
    print(f"  ours       {json_ours:8.2f} us (stored_json, from the tracer's tuples)")
    print(f"  json.dumps {json_dumps:8.2f} us (of the trace's dicts, built for it)")
    print(f"  ratio      {json_dumps / json_ours:8.2f}x")


if __name__ == "__main__":
    main()
