"""Any benchmark script of ``bench/`` before and after a change, side by side in one run: the tree
of a git revision (default HEAD) against the working tree.

"Before" is REV's ``factory``, ``bench``, ``grammars`` and ``params.yaml``, extracted read-only
with ``git archive`` into a temporary folder (no worktree, stash or checkout), with ``data`` there a
link to this checkout's ``data/``; its own copy of the script runs there, with the folder as the
working directory and first on ``PYTHONPATH``. The working directory matters: the sandbox starts its
workers with ``python -m``, which puts the working directory first on ``sys.path``, so "before" run
from this checkout would mix the two trees' code. "After" is this checkout's script, run from here.
Each side runs its own copy of the script, since a refactor moves the modules the scripts import.

The two alternate, --runs times each. Every run's output is printed in full, then a table of the
numeric figures that can be paired: a line of "before" and one of "after" pair when they are the
same text once their numbers are taken out (the n-th such line with the n-th), and each number is
shown as the median of its runs, with the runs' spread ((max - min) / median) and after / before.
Lines that do not pair are printed side by side, unpaired, rather than guessed at. Each run's wall
time and CPU (the script's process and the children it waited for) are figures too.

Run: ``python bench/before_after.py [--base REV] [--runs 3] SCRIPT [script args...]``, from the
repository root, e.g. ``python bench/before_after.py --runs 2 trace_throughput.py --repeat 3``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXTRACTED = ("factory", "bench", "grammars", "params.yaml")
# A number not glued to a word or to another number's dot ("cc07fe7", the "7" of "3.11.7").
NUMBER = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
# What may stand between the numbers of a table row.
UNITS = re.compile(r"[\s×x%/s≥≤<>()|,;:-]*")

Key = tuple[str, int]  # a line's text with its numbers taken out, and its occurrence among those
Lines = dict[Key, tuple[str, list[float], list[str]]]  # the line, its numbers, their names


@dataclass
class Run:
    """One run of the script: its output and what the process cost."""

    stdout: str
    wall_s: float
    cpu_s: float


def extract(rev: str, dest: Path) -> str:
    """Write REV's tree (the EXTRACTED paths) under ``dest``; return the short commit."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, *EXTRACTED], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    (dest / "data").symlink_to(REPO / "data")
    return subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", rev], capture_output=True, text=True, check=True
    ).stdout.strip()


def check_imports(root: Path, env: dict[str, str]) -> None:
    """Fail unless ``factory`` resolves under ``root`` from there (PYTHONPATH must beat the
    editable install's finder)."""
    where = subprocess.run(
        [sys.executable, "-c", "import factory; print(factory.__file__)"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(root.resolve()):
        sys.exit(f"factory imports from {where}, not from {root}")


def run_once(name: str, root: Path, script: list[str]) -> Run:
    """Run ``root``'s copy of the script from ``root``; print its output as it comes."""
    env = {**os.environ, "PYTHONPATH": str(root), "CI": "1"}
    check_imports(root, env)
    print(f"===== {name}: load {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryFile("w+") as stderr:  # a file, not a pipe: progress lines cannot block it
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, str(root / "bench" / script[0]), *script[1:]],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            print(line, end="", flush=True)
            lines.append(line)
        _, status, usage = os.wait4(proc.pid, 0)  # wait4, not wait(): the child's own CPU
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status):
            stderr.seek(0)
            sys.exit(f"{name} failed:\n{stderr.read()[-3000:]}")
    return Run("".join(lines), wall, usage.ru_utime + usage.ru_stime)


def names(line: str, header: str) -> list[str]:
    """A name for each number of ``line``: the words just before it, or, for the numbers of a table
    row (the line's last numbers, with nothing but units between them, each under a word of
    ``header``), that word."""
    spans = [m.span() for m in NUMBER.finditer(line)]
    before = [line[prev[1] : start] for prev, (start, _) in zip([(0, 0), *spans], spans, strict=False)]
    result = [" ".join(b.split()[-4:]) or "-" for b in before]
    row = len(spans) - 1
    while row > 0 and UNITS.fullmatch(before[row]):
        row -= 1
    words = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", header)]
    columns = [next((w for s, e, w in words if s < end and start < e), None) for start, end in spans]
    while row < len(spans) and columns[row] is None:  # a number in the row's label ("CRUXEval ×2")
        row += 1
    if len(spans) - row >= 2 and all(columns[row:]):
        result[row:] = [str(c) for c in columns[row:]]
    return result


def parsed(run: Run) -> Lines:
    """The output's lines that hold numbers, by key: the line, its numbers and their names."""
    lines: Lines = {}
    seen: Counter[str] = Counter()
    header = ""  # the last line with words but no digits: a table's column names, if any
    extra = f"process: wall {run.wall_s:.2f} s, CPU {run.cpu_s:.2f} s"
    for line in [*run.stdout.splitlines(), extra]:
        numbers = [float(m.group().replace(",", "")) for m in NUMBER.finditer(line)]
        if not numbers:
            if re.search(r"[^\W\d]", line) or not line.strip():  # a rule ("----") keeps the header
                header = line
            continue
        skeleton = " ".join(NUMBER.sub("#", line).split())
        lines[(skeleton, seen[skeleton])] = (line.rstrip(), numbers, names(line, header))
        seen[skeleton] += 1
    return lines


def medians(runs: list[Lines], key: Key) -> tuple[list[float], list[float]]:
    """The median of each number of ``key``'s line over the runs that have it, and its spread."""
    columns = list(zip(*(r[key][1] for r in runs if key in r), strict=True))
    mids = [statistics.median(c) for c in columns]
    spreads = [(max(c) - min(c)) / m if m else 0.0 for c, m in zip(columns, mids, strict=True)]
    return mids, spreads


def fmt(x: float) -> str:
    """A figure at a sensible precision."""
    if x == int(x) and abs(x) >= 1:
        return f"{x:,.0f}"
    return f"{x:,.1f}" if abs(x) >= 100 else f"{x:.3g}"


def table(before: list[Lines], after: list[Lines]) -> None:
    """Print the paired figures, then the lines that did not pair."""
    keys_b = list(dict.fromkeys(k for r in before for k in r))
    keys_a = list(dict.fromkeys(k for r in after for k in r))
    print(f"\n{'figure':<64}{'before':>11}{'±':>6}{'after':>11}{'±':>6}{'after/before':>14}")
    for key in keys_b:
        if key not in keys_a:
            continue
        (mid_b, spread_b), (mid_a, spread_a) = medians(before, key), medians(after, key)
        line, _, labels = next(r[key] for r in after if key in r)
        if len(mid_b) != len(mid_a):  # cannot happen with equal skeletons; be safe
            print(f"  unpaired: {line}")
            continue
        if all(
            b == a and not (sb or sa) for b, a, sb, sa in zip(mid_b, mid_a, spread_b, spread_a, strict=True)
        ):
            print(f"same in every run: {line.strip()}")
            continue
        print(line[:120])
        for i, (b, a, sb, sa) in enumerate(zip(mid_b, mid_a, spread_b, spread_a, strict=True)):
            ratio = f"{a / b:.3f}" if b else "-"
            label = f"  {i + 1}: {labels[i]}"
            print(f"{label:<64}{fmt(b):>11}{sb:>6.0%}{fmt(a):>11}{sa:>6.0%}{ratio:>14}")
    only_b = [next(r[k][0] for r in before if k in r) for k in keys_b if k not in keys_a]
    only_a = [next(r[k][0] for r in after if k in r) for k in keys_a if k not in keys_b]
    if only_b or only_a:
        print("\nlines that did not pair (in output order, side by side, not matched to each other):")
        for left, right in itertools.zip_longest(only_b, only_a, fillvalue="-"):
            print(f"  before: {left}\n  after : {right}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="the 'before' revision (default HEAD)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each side (medians shown)")
    parser.add_argument("script", help="a script of bench/, e.g. trace_throughput.py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    opts = parser.parse_args()
    script = [Path(opts.script).name, *opts.args]
    if not (REPO / "bench" / script[0]).is_file():
        sys.exit(f"no bench/{script[0]} in the working tree")
    with tempfile.TemporaryDirectory(prefix="before-after-") as tmp:
        commit = extract(opts.base, Path(tmp))
        if not (Path(tmp) / "bench" / script[0]).is_file():
            sys.exit(f"no bench/{script[0]} at {opts.base}")
        sides = {f"before ({opts.base} = {commit})": Path(tmp), "after (working tree)": REPO}
        results: dict[str, list[Run]] = {name: [] for name in sides}
        loads = [os.getloadavg()[0]]
        for i in range(opts.runs):
            for name, root in sides.items():
                results[name].append(run_once(f"{name}, run {i + 1}/{opts.runs}", root, script))
                loads.append(os.getloadavg()[0])
    before, after = ([parsed(r) for r in runs] for runs in results.values())
    print(
        f"\n{' '.join(script)}: before = {opts.base} ({commit}), after = the working tree; medians of"
        f" {opts.runs} runs each, alternating; ± = (max - min) / median over one side's runs;"
        f" load {min(loads):.1f}–{max(loads):.1f}"
    )
    table(before, after)


if __name__ == "__main__":
    main()
