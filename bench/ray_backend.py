"""The Ray backend's overhead: the 10% paper-scale run of ``pipeline_scale.py`` (five stages,
each in a fresh process) on the local backend and on a two-node Ray cluster on this machine (one
CPU per node, ``tests/backend/cluster.py``), side by side; the outputs compared byte for byte;
the per-shard costs; and what they give for a bigger cluster.

Usage:
  python bench/ray_backend.py                    # the 10% paper-scale run (about 24K programs)
  python bench/ray_backend.py --paper 0.02       # a smaller run
  python bench/ray_backend.py --cpus 128         # the estimate for another cluster size

On 2 cores Ray cannot gain (two 1-CPU nodes, the driver and Ray's daemons share the cores): the
ratio is the overhead (target: under 1.15).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline_scale import PAPER_PROGRAMS, run_pipeline  # noqa: E402  (bench/ is sys.path[0])

from tests.backend.cluster import ray_cluster  # noqa: E402
from tests.pipeline import output_files  # noqa: E402

STAGES = ("synthesize", "inputs", "execute", "trace", "tasks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", type=float, default=0.1, help="fraction of the paper-scale profile")
    parser.add_argument("--shard-units", type=int, default=256, help="backend.shard_units on Ray")
    parser.add_argument("--cpus", type=int, default=128, help="cluster CPUs of the estimate (4 × 32)")
    args = parser.parse_args()
    from factory.grammar.loader import load_grammar

    per_unit = len(load_grammar("grammars/python").targets()) * 6
    k = max(1, round(args.paper * PAPER_PROGRAMS / per_unit))
    print(f"{k * per_unit:,} programs (programs_per_target_tier={k}); load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        for side in ("local", "ray"):
            (Path(tmp) / side).mkdir()
        start = time.perf_counter()
        local = run_pipeline(k, Path(tmp) / "local", {"kind": "local"})
        local_s = time.perf_counter() - start
        with ray_cluster(nodes=2) as cluster:
            backend = {"kind": "ray", "address": cluster.address, "shard_units": args.shard_units}
            start = time.perf_counter()
            on_ray = run_pipeline(k, Path(tmp) / "ray", backend)
            ray_s = time.perf_counter() - start
        a, b = output_files(Path(tmp) / "local"), output_files(Path(tmp) / "ray")
        differ = sorted(f for f in a.keys() | b.keys() if a.get(f) != b.get(f) and f != "params.yaml")
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    print(f"\n{'stage':<12}{'in':>9}{'local s':>10}{'ray s':>9}{'ray/local':>11}")
    for stage in STAGES:
        ray_s_stage, local_s_stage = on_ray[stage]["seconds"], local[stage]["seconds"]
        ratio = ray_s_stage / local_s_stage
        print(f"{stage:<12}{local[stage]['in']:>9,}{local_s_stage:>10.1f}{ray_s_stage:>9.1f}{ratio:>11.2f}")
    print(f"{'all (wall)':<21}{local_s:>10.1f}{ray_s:>9.1f}{ray_s / local_s:>11.2f}   (target < 1.15)")
    print("outputs byte-identical" if not differ else f"OUTPUTS DIFFER: {differ[:10]}")
    for name in (f for f in differ if f.endswith(".json")):  # which figures, for a stats file
        x, y = (json.loads(side[name]) if name in side else {} for side in (a, b))
        for key in sorted(x.keys() | y.keys()):
            if x.get(key) != y.get(key):
                print(
                    f"  {name} {key}: local {json.dumps(x.get(key))[:300]} ray {json.dumps(y.get(key))[:300]}"
                )
    print(f"\nper-shard costs on Ray ({args.shard_units} units a shard; actor s: the work, in the actor)")
    print(
        f"{'stage':<12}{'shards':>7}{'actor s':>9}{'s/shard':>9}{'ms/unit':>9}{'driver CPU s':>14}"
        f"{f'est. {args.cpus} CPUs, 100%':>24}"
    )
    total = 0.0
    for stage in STAGES:
        r = on_ray[stage]
        shards = r["shards"]
        work = sum(s for _, s in shards)
        units = sum(n for n, _ in shards)
        # The driver's own CPU (read, fold, write) does not spread; the actors' work does.
        estimate = max(r["driver_cpu_s"], work / args.cpus) / args.paper
        total += estimate
        print(
            f"{stage:<12}{len(shards):>7}{work:>9.1f}{work / max(1, len(shards)):>9.2f}"
            f"{1000 * work / max(1, units):>9.2f}{r['driver_cpu_s']:>14.1f}{estimate:>21.0f} s"
        )
    print(f"{'':<60}{total:>21.0f} s ≈ {total / 60:.0f} min for the paper profile")


if __name__ == "__main__":
    main()
