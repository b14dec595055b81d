"""Scale of the data pipeline: time and peak memory per stage at 1× and 10× the default params,
and the time of a fraction of the paper-scale profile (≈ 240K programs), extrapolated. All five
stages run: synthesize, inputs, execute, trace, tasks.

Usage:
  python bench/pipeline_scale.py                 # default vs 10× default: seconds and peak RSS
  python bench/pipeline_scale.py --paper 0.1     # a 10% paper-scale run, timed, ×10 estimate

Each stage runs in a fresh process that reports its own peak RSS (the sandbox workers are separate
processes with their own address-space limit, so they are not counted). Target: the peak memory
of a 10× default run is at most 1.5× that of the default run (stages stream shards).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

PAPER_PROGRAMS = 240_000
STAGE_CODE = """
import json, resource, sys, time
from factory.backend import from_params
from factory.params import load_params
p = load_params(sys.argv[1]); out = sys.argv[2]; stage = sys.argv[3]
start = time.perf_counter()
with from_params(p.backend) as b:  # params.yaml's backend (local unless the file says otherwise)
    if stage == "synthesize":
        from factory.synth.stage import run_synthesize_stage
        s = run_synthesize_stage(p.seed, p.synthesize, out + "/programs", out + "/synthesize.json", backend=b)
    elif stage == "inputs":
        from factory.inputs.stage import run_inputs_stage
        s = run_inputs_stage(p.seed, p.inputs, p.execute, p.synthesize.grammars, out + "/programs",
                             out + "/cases", out + "/inputs.json", backend=b)
    elif stage == "execute":
        from factory.execute.stage import run_execute_stage
        s = run_execute_stage(out + "/cases", out + "/executions", out + "/execute.json", p.execute,
                              backend=b)
    elif stage == "trace":
        from factory.trace.stage import run_trace_stage
        s = run_trace_stage(out + "/executions", out + "/traces", out + "/trace.json", p.trace, p.execute,
                            backend=b)
    else:
        from factory.tasks.stage import run_tasks_stage
        s = run_tasks_stage(out + "/traces", out + "/tasks", out + "/tasks.json", p.seed, p.tasks, backend=b)
    seconds = time.perf_counter() - start
    shards = getattr(b, "shard_costs", [])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": seconds, "peak_rss_mb": usage.ru_maxrss / 1024, "in": s.items_in,
      "out": s.items_out, "driver_cpu_s": usage.ru_utime + usage.ru_stime, "shards": shards}))
"""


def run_pipeline(per_target_tier: int, tmp: Path, backend: dict | None = None) -> dict[str, dict]:
    """The five stages at ``per_target_tier`` programs per target and tier, each in a fresh
    process, on ``backend`` (a ``backend`` params section; default: params.yaml's)."""
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["synthesize"]["programs_per_target_tier"] = per_target_tier
    if backend is not None:
        params["backend"] = backend
    (tmp / "params.yaml").write_text(yaml.safe_dump(params))
    results = {}
    for stage in ("synthesize", "inputs", "execute", "trace", "tasks"):
        proc = subprocess.run(
            [sys.executable, "-c", STAGE_CODE, str(tmp / "params.yaml"), str(tmp), stage],
            capture_output=True,
            text=True,
            env={**os.environ, "CI": "1"},
            check=True,
        )
        results[stage] = json.loads(proc.stdout.strip().splitlines()[-1])
    return results


def show(label: str, results: dict[str, dict]) -> None:
    for stage, r in results.items():
        print(
            f"{label:<10}{stage:<12}{r['in']:>9,}{r['out']:>9,}{r['seconds']:>9.1f}{r['peak_rss_mb']:>11.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--paper", type=float, default=None, help="fraction of the paper-scale profile to run"
    )
    args = parser.parse_args()
    from factory.grammar.loader import load_grammar

    grammar = load_grammar(yaml.safe_load(Path("params.yaml").read_text())["synthesize"]["grammars"][0])
    per_unit = len(grammar.targets()) * 6
    print(f"{'run':<10}{'stage':<12}{'in':>9}{'out':>9}{'seconds':>9}{'peak MiB':>11}")
    if args.paper:
        k = max(1, round(args.paper * PAPER_PROGRAMS / per_unit))
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            results = run_pipeline(k, Path(tmp))
            total = time.perf_counter() - start
        show(f"paper×{args.paper:g}", results)
        print(
            f"{k * per_unit:,} programs in {total:.0f} s; the paper profile "
            f"(programs_per_target_tier={round(PAPER_PROGRAMS / per_unit)}) "
            f"≈ {total / args.paper / 60:.0f} min"
        )
        return
    peaks = {}
    for scale in (1, 10):
        with tempfile.TemporaryDirectory() as tmp:
            results = run_pipeline(scale, Path(tmp))
        show(f"{scale}×", results)
        peaks[scale] = max(r["peak_rss_mb"] for r in results.values())
    print(f"peak memory 10× / 1×: {peaks[10] / peaks[1]:.2f} (target ≤ 1.5)")


if __name__ == "__main__":
    main()
