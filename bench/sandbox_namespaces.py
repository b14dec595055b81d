"""The cost of the untrusted sandbox's namespaces per job, side by side with a job without them.

Two measurements, each over --n jobs, one at a time:

1. **The layer alone**, in an interpreter started as the fork server is (``python -S -s -B -P``,
   so ``sys.path`` and the bind mounts are the same): a fork whose child exits at once, against
   a fork whose child enters ``namespaces.Namespaces.enter`` (new namespaces, the keeper's fork,
   the private root, the uid switch) and then exits; both wait for the child. The difference is
   the namespaces' cost per job, teardown included.
2. **A whole job** through ``call_function`` (fork server, every layer, a one-line function), for
   scale: what one sandboxed call costs now.

    .venv/bin/python bench/sandbox_namespaces.py [--n 300]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAMESPACES = Path(__file__).resolve().parents[1] / "factory" / "sandbox" / "untrusted" / "namespaces.py"

# Run in the bare interpreter; prints the mean milliseconds of a plain fork and of a fork that
# enters the namespaces.
LAYER_PROBE = r"""
import ctypes, importlib.util, os, sys, tempfile, time
spec = importlib.util.spec_from_file_location("namespaces", sys.argv[1])
namespaces = importlib.util.module_from_spec(spec)
spec.loader.exec_module(namespaces)
n = int(sys.argv[2])
isolation = namespaces.Namespaces(ctypes)

def jobs(enter):
    start = time.perf_counter()
    for _ in range(n):
        tmp = tempfile.mkdtemp(prefix="bench-ns-")
        pid = os.fork()
        if pid == 0:
            if enter:
                done, unprivileged = isolation.enter(tmp, 16, 128)
                os._exit(0 if done and unprivileged else 3)
            os._exit(0)
        _pid, status = os.waitpid(pid, 0)
        os.rmdir(tmp)
        if status != 0:
            raise SystemExit(f"a job failed to enter its namespaces (status {status})")
    return (time.perf_counter() - start) / n * 1000

plain = jobs(False)
isolated = jobs(True)
print(plain, isolated)
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=300, help="jobs per measurement (default 300)")
    args = parser.parse_args()
    if args.n < 1:
        parser.error("--n must be at least 1")

    probe = [sys.executable, "-S", "-s", "-B", "-P", "-c", LAYER_PROBE, str(NAMESPACES), str(args.n)]
    done = subprocess.run(probe, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        sys.exit(f"the layer probe failed: {done.stderr.strip().splitlines()[-1:]}")
    plain, isolated = (float(x) for x in done.stdout.split())

    sys.path.insert(0, str(NAMESPACES.parents[3]))
    from factory.sandbox.untrusted.runner import call_function, sandbox_layers

    source = "def f(x):\n    return x + 1\n"
    call_function(source, "f", (0,))  # start the fork server
    start = time.perf_counter()
    for i in range(args.n):
        if call_function(source, "f", (i,)).value != i + 1:
            sys.exit("a sandboxed call returned a wrong value")
    whole = (time.perf_counter() - start) / args.n * 1000

    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.n} jobs each, one at a time")
    print(f"{'':44s}{'ms per job':>12s}")
    print(f"{'fork + exit (no namespaces)':44s}{plain:12.2f}")
    print(f"{'fork + namespaces + private root + exit':44s}{isolated:12.2f}")
    print(f"{'  the namespaces cost':44s}{isolated - plain:12.2f}  ({isolated / plain:.1f}x the bare fork)")
    print(f"{'a whole sandboxed call (every layer)':44s}{whole:12.2f}")
    print(f"layers in force: {', '.join(sandbox_layers()['in_force'])}")


if __name__ == "__main__":
    main()
