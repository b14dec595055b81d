"""Programs/s of the synthesize stage (generation + tier check + dedup + parquet), in one run.

Usage: python bench/synthesize_throughput.py [--per-target-tier 3]
Target on the 2-core dev machine: ≥ 1,000 programs/s with the default workers (one per core).
Also prints the single-process rate, so the parallel speed-up is visible side by side.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from factory.params import SynthesizeParams
from factory.synth.stage import run_synthesize_stage


def measure(per_target_tier: int, workers: int) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        params = SynthesizeParams(programs_per_target_tier=per_target_tier, workers=workers)
        start = time.perf_counter()
        stats = run_synthesize_stage(42, params, Path(tmp) / "p", Path(tmp) / "s.json")
        return stats.items_in, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-target-tier", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("CI", "1")  # plain progress lines
    rows = []
    for workers in (1, 0):
        n, seconds = measure(args.per_target_tier, workers)
        label = "1 process" if workers == 1 else f"{os.cpu_count()} processes (default)"
        rows.append((label, n, seconds, n / seconds))
    print(f"\n{'synthesize':<28}{'programs':>10}{'seconds':>10}{'programs/s':>12}")
    for label, n, seconds, rate in rows:
        print(f"{label:<28}{n:>10,}{seconds:>10.1f}{rate:>12,.0f}")
    print(
        f"speed-up of the default over one process: {rows[1][3] / rows[0][3]:.2f}x; target ≥ 1,000 programs/s"
    )


if __name__ == "__main__":
    main()
