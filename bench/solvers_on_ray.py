"""The model stages' solver pass on Ray Data vs one local process: the prompts of ``--tasks``
CRUXEval-O tasks, ``--n`` samples each (temperature 1), through SmolLM2-135M (the transformers
backend, one torch thread) with a fresh response cache, first in this process, then as
``--replicas`` replicas on a two-node Ray cluster on this machine (``tests/backend/cluster.py``,
one CPU per node). Prints each side's wall time (model load / replica start included), the
seconds the batches took in the replicas, the per-prompt cost, and whether the texts are equal.

Usage:
  python bench/solvers_on_ray.py [--tasks 16] [--n 2] [--max-tokens 32] [--chunk 4] [--replicas 2]

On 2 cores the replicas cannot gain (two 1-CPU nodes, the driver and Ray's daemons share the cores).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from factory.evaluate import load_benchmark  # noqa: E402
from factory.solvers import Sampling, make_solver  # noqa: E402
from factory.solvers.ray_data import Placement, RaySolver  # noqa: E402
from tests.backend.cluster import ray_cluster  # noqa: E402

CRUXEVAL = REPO / "data" / "benchmarks" / "cruxeval" / "cruxeval.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--chunk", type=int, default=4, help="prompts per batch (CachedSolver.chunk)")
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args()
    items, _ = load_benchmark("cruxeval-o", CRUXEVAL, limit=args.tasks)
    prompts = [item["prompt"] for item in items]
    sampling = Sampling(temperature=1.0, max_tokens=args.max_tokens, seed=0)
    options = {"threads": 1, "batch_size": 4}
    with tempfile.TemporaryDirectory() as tmp:
        local = make_solver("transformers", "smollm2", Path(tmp) / "local.sqlite", "local", **options)
        local.chunk = args.chunk
        start = time.monotonic()
        local.backend  # noqa: B018  (builds it: the model load)
        load_s = time.monotonic() - start
        expected = local.generate(prompts, args.n, **sampling.to_dict())
        local_s = time.monotonic() - start
        with ray_cluster(nodes=2) as cluster:
            placement = Placement(cluster.address, replicas=args.replicas)
            cache = Path(tmp) / "ray.sqlite"
            ray = make_solver("transformers", "smollm2", cache, "ray", placement, **options)
            ray.chunk = args.chunk
            start = time.monotonic()
            try:
                ray.prefetch([prompts], args.n, sampling)
                ray_s = time.monotonic() - start
                got = ray.generate(prompts, args.n, **sampling.to_dict())
                backend = ray.backend
                assert isinstance(backend, RaySolver)
                batch_s = backend.batch_seconds
                replicas = dict(backend.answered_by)
            finally:
                ray.close()
    asked = len(dict.fromkeys(prompts))
    print(f"{asked} prompts x n={args.n}, <= {args.max_tokens} tokens, batches of {args.chunk}")
    print(f"local, one process : {local_s:7.1f} s wall ({load_s:.1f} s model load)")
    print(f"ray, {args.replicas} replicas    : {ray_s:7.1f} s wall (connect, replicas' start, pass)")
    print(f"ray / local        : {ray_s / local_s:7.2f}")
    print(
        f"batches in the replicas: {len(batch_s)}, {sum(batch_s):.1f} s in all, "
        f"{sum(batch_s) / asked:.2f} s per prompt ({sum(batch_s) / asked / args.n:.2f} s per sample); "
        f"by replica: {sorted(replicas.values())}"
    )
    print(f"local, generation only: {(local_s - load_s) / asked:.2f} s per prompt")
    print(f"texts equal: {got == expected}")


if __name__ == "__main__":
    main()
