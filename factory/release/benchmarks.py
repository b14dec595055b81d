"""Benchmark programs to decontaminate against, and the index that finds them in our programs.

A benchmark is a file of records (JSON Lines, gzipped JSON Lines or one JSON array); the program
of a record is its ``fields`` joined by newlines (HumanEval: prompt + canonical solution). A program
of ours is contaminated by a benchmark when one of its renamed-AST keys (the whole program or one
function) equals one of the benchmark's, or when at least ``threshold`` of its normalised-token
n-grams occur in the benchmark. An n-gram found in more than ``common`` programs of a benchmark is
an idiom of the language (``def _(_, _): _ = len(_)``), not a trace of one of its items: it is
not indexed. Without that, a short program of ours was mostly its function header and two
``_ = len(_)`` lines, which 3 to 74 MBPP programs each hold, and was removed as an MBPP copy.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from factory.errors import UserError
from factory.params import BenchmarkSpec
from factory.release.normalize import Fingerprint, fingerprint

#: How fingerprints of many sources are computed: ``map`` (the default) or a process pool's map,
#: the results in the order of the sources.
FingerprintMap = Callable[[Callable[[str], Fingerprint | None], Iterable[str]], Iterable[Fingerprint | None]]


def load_records(path: Path) -> list[dict[str, Any]]:
    """The records of a benchmark file; a missing or broken file is a UserError naming it."""
    if not path.is_file():
        raise UserError(f"{path}: benchmark file not found (see assemble.benchmarks in params.yaml)")
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            text = fh.read()
        if text.lstrip().startswith("["):
            records = json.loads(text)
        else:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, EOFError) as exc:
        raise UserError(f"{path}: not a JSON Lines or JSON array file ({exc})".splitlines()[0]) from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise UserError(f"{path}: expected JSON objects, one per record")
    return records


def benchmark_programs(spec: BenchmarkSpec, root: Path = Path(".")) -> list[str]:
    """The program text of every record of one benchmark."""
    path = root / spec.path
    programs = []
    for i, record in enumerate(load_records(path)):
        missing = [f for f in spec.fields if not isinstance(record.get(f), str)]
        if missing:
            raise UserError(f"{path}: record {i} has no text field '{missing[0]}' (assemble.benchmarks)")
        programs.append("\n".join(record[f] for f in spec.fields))
    return programs


#: The language of the benchmarks' programs (CRUXEval, HumanEval, MBPP): programs of another
#: language are not matched against them.
BENCHMARK_LANGUAGE = "python"


@dataclass
class BenchmarkIndex:
    """Renamed-AST keys and token n-grams of every benchmark program, by benchmark name."""

    n: int
    threshold: float
    literals: str = "keep"
    common: int | None = None  # n-grams in more programs of one benchmark are not indexed
    names: list[str] = field(default_factory=list)
    programs: dict[str, int] = field(default_factory=dict)  # name -> programs indexed
    keys: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    grams: dict[int, int] = field(default_factory=lambda: defaultdict(int))  # gram -> bitmask of names

    @classmethod
    def build(
        cls,
        specs: list[BenchmarkSpec],
        n: int,
        threshold: float,
        literals: str = "keep",
        root: Path = Path("."),
        common: int | None = None,
        fingerprints: FingerprintMap = map,
    ) -> BenchmarkIndex:
        index = cls(n, threshold, literals, common)
        for spec in specs:
            index.add(spec.name, benchmark_programs(spec, root), fingerprints)
        return index

    def fingerprinter(self) -> Callable[[str], Fingerprint | None]:
        """The function that gives a source's fingerprint as this index reads it (its n and
        literals), for a ``FingerprintMap``."""
        return partial(fingerprint, n=self.n, literals=self.literals)

    def add(self, name: str, programs: list[str], fingerprints: FingerprintMap = map) -> None:
        bit = 1 << len(self.names)
        self.names.append(name)
        self.programs[name] = 0
        found: Counter = Counter()  # gram -> programs of this benchmark holding it
        for program in fingerprints(self.fingerprinter(), programs):
            if program is None:
                continue
            self.programs[name] += 1
            for key in program.keys:
                self.keys[key].add(name)
            found.update(program.grams)
        for gram, count in found.items():
            if self.common is None or count <= self.common:
                self.grams[gram] |= bit

    def match(self, source: str) -> tuple[str, str] | None:
        """(benchmark, method) of the first benchmark that contaminates ``source``, or None."""
        program = self.fingerprinter()(source)
        return None if program is None else self.match_fingerprint(program)

    def match_fingerprint(self, program: Fingerprint) -> tuple[str, str] | None:
        """``match`` of a program's fingerprint (``fingerprinter()``'s).

        ``method`` is ``ast`` (a renamed-AST key matched) or ``ngram`` (the n-gram share reached
        the threshold); the AST match wins, then the benchmark with the largest n-gram share.
        """
        for key in sorted(program.keys):
            if key in self.keys:
                return min(self.keys[key], key=self.names.index), "ast"
        grams = program.grams
        if not grams:
            return None
        hits = [0] * len(self.names)
        for gram in grams:
            mask = self.grams.get(gram, 0)
            while mask:
                low = mask & -mask
                hits[low.bit_length() - 1] += 1
                mask ^= low
        best = max(range(len(self.names)), key=lambda i: (hits[i], -i), default=None)
        if best is not None and hits[best] / len(grams) >= self.threshold:
            return self.names[best], "ngram"
        return None
