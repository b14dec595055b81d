"""How many released items each of the 186 reference operations has (issue 16 wants >= 20 each).

Usage: python bench/operation_coverage.py [--release data/release] [--least 20]

Counts the rows of the four phase-1 family configs (white_box, output, input, coverage; both
splits) by their ``target`` column, for the reference operations that tests/grammar/test_coverage.py
maps to grammar operations (the table it checks against docs/reference-operations.md), and prints
how many reach ``--least`` and the ones that do not.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

FAMILIES = ("white_box", "output", "input", "coverage")
TABLE = Path(__file__).resolve().parents[1] / "tests" / "grammar" / "test_coverage.py"


def reference_operations() -> set[str]:
    """The grammar operation of each reference operation (the test module's REFERENCE table)."""
    spec = importlib.util.spec_from_file_location("reference_table", TABLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return set(module.REFERENCE.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="data/release")
    parser.add_argument("--least", type=int, default=20)
    args = parser.parse_args()
    counts: Counter = Counter()
    for family in FAMILIES:
        for shard in sorted(Path(args.release, family).glob("*/*.parquet")):
            counts.update(pq.read_table(shard, columns=["target"]).column("target").to_pylist())
    reference = reference_operations()
    short = sorted((counts[op], op) for op in reference if counts[op] < args.least)
    reached = len(reference) - len(short)
    print(f"{reached} of {len(reference)} reference operations have >= {args.least} items")
    for n, op in short:
        print(f"  {op}: {n}")


if __name__ == "__main__":
    main()
