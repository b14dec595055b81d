"""The assemble stage before and after a change, side by side: the code at git HEAD against the
working tree, on the same inputs, in one run.

Each measurement is a fresh ``execverify stage assemble`` process with the ``cmd`` of ``dvc.yaml``'s
``assemble`` stage (its inputs: ``data/`` of the default run; its outputs moved into a temporary
folder). "Before" runs the ``factory`` package of HEAD, extracted read-only with ``git archive``
and put first on ``PYTHONPATH``; "after" runs the working tree's (or the one under --after). The
two alternate, --runs times each, and the medians are shown: the process's wall time, its CPU
(user + sys), its peak RSS and the stage's own timer (from the start of the stage function: index
build, both passes, card and plots; not the interpreter start or the imports), with the ratio
after / before. The outputs of the last pair are compared file by file (the card records the
commit, the same for both).

Run: ``python bench/assemble_throughput.py [--runs 3] [--after DIR]`` (it needs ``data/``: run
``dvc repro`` first).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
EXECVERIFY = Path(sys.executable).parent / "execverify"
OUTPUTS = ("--out", "--stats", "--plots")
STAGE_TIMER = re.compile(r"assemble: [\d,]+ in → [\d,]+ out in ([\d.]+) s")


def assemble_args(out: Path) -> list[str]:
    """The arguments of dvc.yaml's assemble command, its outputs moved under ``out``."""
    cmd = shlex.split(yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["assemble"]["cmd"])
    assert cmd[:2] == ["execverify", "assemble"], cmd
    args = cmd[2:]
    for i, arg in enumerate(args[:-1]):
        if arg in OUTPUTS:
            args[i + 1] = str(out / arg.removeprefix("--") / Path(args[i + 1]).name)
    return args


def measure(package_root: Path, out: Path) -> dict[str, float]:
    """One assemble run with the ``factory`` package under ``package_root``."""
    env = {**os.environ, "PYTHONPATH": str(package_root), "CI": "1"}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(EXECVERIFY), "assemble", *assemble_args(out)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    proc.stderr.close()
    _, status, usage = os.wait4(proc.pid, 0)  # wait4, not wait(): the child's own CPU and peak RSS
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"assemble failed with {package_root}:\n{stderr[-2000:]}")
    timer = STAGE_TIMER.search(stderr)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "stage_s": float(timer.group(1)) if timer else float("nan"),
    }


def same_files(a: Path, b: Path) -> list[str]:
    """The files that differ between two output folders (or exist in one only)."""
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    differ = sorted(str(p) for p in files_a ^ files_b)
    differ += sorted(str(p) for p in files_a & files_b if not filecmp.cmp(a / p, b / p, shallow=False))
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="measurements of each side (medians shown)")
    parser.add_argument(
        "--after",
        type=Path,
        default=REPO,
        help="the folder holding the 'after' factory package (the working tree)",
    )
    args = parser.parse_args()
    if not (REPO / "data" / "difficulty").is_dir():
        sys.exit("data/ is missing: run `dvc repro` first")
    with tempfile.TemporaryDirectory(prefix="assemble-bench-") as tmp:
        head = Path(tmp) / "head"
        head.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", "HEAD", "factory"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(head)], input=archive.stdout, check=True)
        sides = {"before (HEAD)": head, f"after ({args.after})": args.after.resolve()}
        results: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        load = [os.getloadavg()[0]]
        for run in range(args.runs):
            for name, root in sides.items():
                results[name].append(measure(root, Path(tmp) / f"out-{list(sides).index(name)}"))
            load.append(os.getloadavg()[0])
            print(f"run {run + 1}/{args.runs} done", file=sys.stderr)
        differ = same_files(Path(tmp) / "out-0", Path(tmp) / "out-1")

    before, after = (
        {k: statistics.median(r[k] for r in results[name]) for k in results[name][0]} for name in sides
    )
    loads = f"load {min(load):.1f}–{max(load):.1f}"
    print(f"assemble stage, default data, medians of {args.runs} runs each ({loads})")
    print(f"{'':16}{'before':>10}{'after':>10}{'after/before':>14}")
    for key, label in (
        ("wall_s", "wall s"),
        ("cpu_s", "CPU s"),
        ("stage_s", "stage timer s"),
        ("peak_rss_mb", "peak RSS MB"),
    ):
        print(f"{label:16}{before[key]:>10.2f}{after[key]:>10.2f}{after[key] / before[key]:>14.3f}")
    print("outputs byte-identical" if not differ else f"outputs DIFFER: {', '.join(differ[:10])}")


if __name__ == "__main__":
    main()
