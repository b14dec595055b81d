"""Irrelevant statements: a statement is irrelevant on some inputs when the program with it
removed gives the same outcome (status and output) on each of them.

The variants (one statement removed each) are made here, in the parent, by the language's
``analysis`` facet (``removal_variants``); all variants × all inputs of one program run as one
``ablation`` job in a worker of a pool started with ``factory.quality.jobs.KINDS``, every run
bounded by a line-event budget (a variant can loop forever: removing a counter's increment), and
a run past it or raising counts as a changed outcome. A statement whose variant was not run (the
job's total budget ran out, or the job failed) counts as relevant: the checks only ever err
towards keeping a statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from factory import languages
from factory.quality.jobs import INCOMPLETE
from factory.sandbox.trusted.pool import WorkerPool
from factory.sandbox.trusted.worker import OK

KIND = "ablation"
#: A variant run may take FACTOR × the original run's line events + SLACK; a job TOTAL in all.
#: TOTAL bounds a job's work whatever the load (about 1 µs a traced line here: 0.2 s); the
#: CPU timeout of the pool the jobs run in, JOB_TIMEOUT_S, is only a backstop far above it, so
#: that no verdict depends on the machine's load (at the inputs stage's 0.25 s candidate timeout,
#: two builds of the same data differed in 4 ablation jobs).
FACTOR = 2
SLACK = 1000
TOTAL = 200_000
JOB_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Ablation:
    """One program's ablation: per variant, its statement's first line and the indices of the
    inputs on which removing it changed the outcome (None: not run)."""

    lines: tuple[int, ...]
    sources: tuple[str, ...]
    changed: tuple[tuple[int, ...] | None, ...]
    complete: bool

    def irrelevant(self) -> list[int]:
        """Indices of the variants that changed no outcome on any input they ran on."""
        return [v for v, hits in enumerate(self.changed) if hits is not None and not hits]


def removal_variants(source: str, language: str = "python") -> list[tuple[int, str]]:
    """(first line, source) of each variant of ``source`` with one statement removed."""
    return [
        (line, text) for line, text in languages.language(language).facet("analysis").removal_variants(source)
    ]


def passthrough_variants(source: str, language: str = "python") -> list[tuple[int, str]]:
    """(first line, source) of each variant of ``source`` with an assignment's value replaced by
    a variable it reads (the ``analysis`` facet's ``passthrough_variants``)."""
    analysis = languages.language(language).facet("analysis")
    return [(line, text) for line, text in analysis.passthrough_variants(source)]


def ablation_payload(
    source: str,
    entry: str,
    variants: Sequence[str],
    inputs: Sequence[str],
    *,
    full: int | None = None,
    stop: int = 0,
    first_hit: bool = False,
) -> dict[str, Any]:
    """The ``ablation`` job of ``variants`` on ``inputs`` (``full``, ``stop`` and ``first_hit``:
    see ``factory.quality.jobs.ablation_job``; ``full`` defaults to every input)."""
    return {
        "source": source,
        "entry": entry,
        "variants": list(variants),
        "inputs": list(inputs),
        "full": len(inputs) if full is None else full,
        "stop": stop,
        "first_hit": first_hit,
        "factor": FACTOR,
        "slack": SLACK,
        "total": TOTAL,
    }


def ablation_of(variants: Sequence[tuple[int, str]], result: dict[str, Any]) -> Ablation:
    """The ``Ablation`` an ``ablation`` job's result says (a failed job: nothing was run)."""
    if result["status"] in (OK, INCOMPLETE):
        changed = tuple(None if hits is None else tuple(hits) for hits in result["changed"])
    else:
        changed = (None,) * len(variants)
    return Ablation(
        lines=tuple(line for line, _ in variants),
        sources=tuple(text for _, text in variants),
        changed=changed,
        complete=result["status"] == OK,
    )


def irrelevant_statements(
    source: str,
    entry: str,
    args_list: list[str],
    pool: WorkerPool,
    *,
    iterative: bool,
    language: str = "python",
) -> list[int]:
    """First lines (1-based) of the statements of ``source`` whose removal changes no outcome on
    ``args_list``, in source order. ``iterative``: a removal that changes nothing is kept and the
    remaining statements are tried again on the reduced program, until none can go (so a
    statement only used by removed ones goes too); otherwise each is tried on the original alone.
    ``pool`` must have been started with ``factory.quality.jobs.KINDS``."""
    return irrelevant_statements_many(
        [(source, entry, args_list)], pool, iterative=iterative, language=language
    )[0]


def irrelevant_statements_many(
    programs: Sequence[tuple[str, str, list[str]]],
    pool: WorkerPool,
    *,
    iterative: bool,
    language: str = "python",
) -> list[list[int]]:
    """``irrelevant_statements`` of many (source, entry, args_list) at once: their jobs share the
    pool's workers (an iterative reduction runs one round of every program at a time)."""
    if not iterative:
        variants = [removal_variants(source, language) for source, _, _ in programs]
        return _unchanged(programs, variants, pool)
    return _reduce(programs, pool, language)


def inert_operations_many(
    programs: Sequence[tuple[str, str, list[str]]], pool: WorkerPool, *, language: str = "python"
) -> list[list[int]]:
    """Per (source, entry, args_list): the first lines of the assignments one of whose
    ``passthrough_variants`` changes no outcome on ``args_list`` (an operation that does nothing
    the output shows on those inputs), in source order, each once. ``pool``: as above."""
    variants = [passthrough_variants(source, language) for source, _, _ in programs]
    return [sorted(set(lines)) for lines in _unchanged(programs, variants, pool)]


def _unchanged(
    programs: Sequence[tuple[str, str, list[str]]],
    variants: Sequence[list[tuple[int, str]]],
    pool: WorkerPool,
) -> list[list[int]]:
    """Per program, the lines of its ``variants`` that changed no outcome on its inputs."""
    payloads = [
        ablation_payload(source, entry, [text for _, text in vs], args)
        for (source, entry, args), vs in zip(programs, variants, strict=True)
    ]
    out = []
    for vs, result in zip(variants, pool.map(KIND, payloads), strict=True):
        ablation = ablation_of(vs, result)
        out.append([ablation.lines[v] for v in ablation.irrelevant()])
    return out


def _reduce(
    programs: Sequence[tuple[str, str, list[str]]], pool: WorkerPool, language: str
) -> list[list[int]]:
    """Iterative reduction: each round removes the first statement (in source order) that
    changes nothing, from every program that still has one."""
    current = [source for source, _, _ in programs]
    removed: list[list[int]] = [[] for _ in programs]
    active = list(range(len(programs)))
    while active:
        variants = {i: removal_variants(current[i], language) for i in active}
        payloads = [
            ablation_payload(
                current[i],
                programs[i][1],
                [text for _, text in variants[i]],
                programs[i][2],
                stop=len(variants[i]),
            )
            for i in active
        ]
        still = []
        for i, result in zip(active, pool.map(KIND, payloads), strict=True):
            irrelevant = ablation_of(variants[i], result).irrelevant()
            if irrelevant:
                line, current[i] = variants[i][irrelevant[0]]
                removed[i].append(line)
                still.append(i)
        active = still
    return [sorted(lines) for lines in removed]
