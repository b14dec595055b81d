"""Trace + tasks throughput of the pipeline against the published pipeline's way, side by side.

Ours: every case traced in the sandbox pool under two hash seeds (the determinism check of the
trace stage), then the questions derived and the items (white-box, output, coverage) built, as the
tasks stage does. Theirs: an unsandboxed, in-process ``sys.settrace`` that takes ``repr`` of every
local at every line event, once per case, and nothing else.

Two case sets: CRUXEval's 800 cases (repeated to --repeat × 800), and synthesized tier-5/6 cases
made on the spot by the synthesize → inputs → execute stages.

Targets on the 2-core dev machine: ≥ 1,000 cases/s for ours, and ≥ 0.25 of the naive rate.
Run: ``python bench/trace_tasks_throughput.py [--repeat 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from factory.errors import UserError
from factory.execute.runner import Executor
from factory.execute.stage import run_execute_stage
from factory.inputs.stage import run_inputs_stage
from factory.io import iter_rows
from factory.literals import parse_args
from factory.params import ExecuteParams, InputsParams, SynthesizeParams, TasksParams
from factory.synth.stage import run_synthesize_stage
from factory.tasks.items import build_items_for_case
from factory.trace.stage import same_trace, trace_payloads

CRUXEVAL = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "cruxeval" / "cruxeval.jsonl"
TASKS = TasksParams(families=["white_box", "output", "coverage"])


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


def ours(cases: list[dict[str, Any]], executor: Executor) -> tuple[int, int]:
    """Trace (two seeds) + questions + items; returns (cases kept, items built)."""
    kept = items = 0
    payloads = trace_payloads(cases, 2000, 300)
    for case, result in zip(cases, executor.run(payloads, kind="trace", agree=same_trace), strict=True):
        if result["status"] != "ok":
            continue
        kept += 1
        items += len(build_items_for_case(case, result, seed=0, params=TASKS))
    return kept, items


def synthesized_cases(tmp: Path) -> list[dict[str, Any]]:
    execute = ExecuteParams()
    run_synthesize_stage(
        3, SynthesizeParams(tiers=[5, 6], programs_per_target_tier=2), tmp / "p", tmp / "s.json"
    )
    run_inputs_stage(3, InputsParams(), execute, "grammars/python", tmp / "p", tmp / "c", tmp / "i.json")
    run_execute_stage(tmp / "c", tmp / "e", tmp / "e.json", execute)
    return [r for batch in iter_rows(tmp / "e") for r in batch if r["status"] == "ok"]


def measure(label: str, cases: list[dict[str, Any]], executor: Executor) -> None:
    start = time.perf_counter()
    kept, items = ours(cases, executor)
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    steps = 0
    for case in cases:
        steps += len(naive_trace(case["source"], case["entry"], case["args"]))
    naive_s = time.perf_counter() - start
    ours_rate, naive_rate = len(cases) / ours_s, len(cases) / naive_s
    print(
        f"{label:<26}{len(cases):>7,}{ours_rate:>12,.0f}{naive_rate:>12,.0f}{ours_rate / naive_rate:>9.2f}"
        f"   (ours kept {kept:,} and built {items:,} items; naive saw {steps:,} line events)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="CRUXEval repeated this many times")
    args = parser.parse_args()
    os.environ.setdefault("CI", "1")
    records = [json.loads(line) for line in CRUXEVAL.read_text().splitlines()]
    crux = []
    for r in records:
        try:
            parse_args(r["input"])
        except UserError:
            continue  # ~12 inputs are expressions, not literals
        crux.append({"case_id": r["id"], "source": r["code"], "entry": "f", "args": r["input"]})
    with tempfile.TemporaryDirectory() as tmp:
        synth = synthesized_cases(Path(tmp))
    print(f"{'cases':<26}{'n':>7}{'ours/s':>12}{'naive/s':>12}{'ratio':>9}")
    with Executor() as executor:
        ours(crux[:50], executor)  # warm the pools
        measure(f"CRUXEval ×{args.repeat}", crux * args.repeat, executor)
        measure("synthesized tiers 5–6", synth, executor)
    print("targets: ours ≥ 1,000 cases/s; ratio ≥ 0.25")


if __name__ == "__main__":
    main()
