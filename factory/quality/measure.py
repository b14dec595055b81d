"""The quality figures of a set of programs, per tier and overall (docs/quality.md).

A ``Program`` is one program, in its ``language``, with its own inputs (the arguments of its
released cases), the output types and lengths of those cases, and its input-family items.
``measure`` runs one ``quality`` job per program (``factory.quality.probe``: static facts,
``if`` outcomes on the own inputs, 40 random well-typed inputs, one random argument list per
input item) and the iterative ablation and the pass-through variants (``inert_operations_many``)
of ``factory.quality.ablation`` on the programs chosen for them, in one trusted worker pool per
language, with the kinds and worker of the language's ``measure`` facet (JavaScript's: the same
job on the node worker, ``factory.languages.javascript.measure``); ``summarize`` turns the
per-program ``Measured`` into the figures. Random draws are seeded by the
program's key (and an item's id), so the figures are the same on every run.
"""

from __future__ import annotations

import hashlib
import random
import re
import statistics
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factory import languages
from factory.errors import UserError
from factory.quality.ablation import inert_operations_many, irrelevant_statements_many
from factory.quality.checks import LONG_OUTPUT_CHARS
from factory.quality.probe import KIND
from factory.quality.signature import ArgsParser, PoolIndex, parsed_once
from factory.quality.static import KINDS as TRIVIAL_KINDS
from factory.quality.static import StaticFacts, TrivialOp
from factory.sandbox.trusted.pool import WorkerPool

RANDOM_INPUTS = 40
FOUR_LETTERS = re.compile(r"[A-Za-z]{4}")
ALL = "all"
#: The most CPU seconds one program's ``quality`` job may take: a job takes a few milliseconds,
#: and a random input that makes a program run away is stopped by its own timer
#: (``probe.RUN_CPU_S``, at most ``probe.MAX_SLOW`` times); this is only a backstop above the
#: worst of those, so that no figure depends on the load (at 1 s, two builds of the same data
#: measured different programs).
JOB_TIMEOUT_S = 10.0
#: Each worker's address space: a run that blows up (a string doubled in a loop) fills it in a
#: time that grows with it, so the pipeline's 64 MB (``execute.memory_mb``; a worker starts at
#: ~16 MB) rather than 256: the stage's figures took 2.0 s instead of 6.0 s, with the same values.
MEMORY_MB = 64


@dataclass(frozen=True)
class Program:
    """One program to measure: ``key`` (its id), ``tier`` (None for a benchmark), its own
    ``inputs`` (argument texts), the ``output_types`` of its cases and the length of each one's
    output text (``output_chars``), its input ``items`` (item id, output literal text);
    ``eval_args``: argument texts are expressions; ``language``: the registry name of its
    language."""

    key: str
    tier: int | None
    source: str
    entry: str
    inputs: tuple[str, ...]
    output_types: tuple[str, ...] = ()
    items: tuple[tuple[str, str], ...] = ()
    eval_args: bool = False
    language: str = "python"
    output_chars: tuple[int, ...] = ()


@dataclass
class Measured:
    """What was measured of one program (None: not measured)."""

    program: Program
    facts: StaticFacts | None = None
    irrelevant: int | None = None  # statements the iterative ablation removed
    inert: int | None = None  # assignments whose operation changed nothing on the own inputs
    reached_tests: int = 0
    one_outcome_tests: int = 0
    random_ok: int = 0
    random_constant: bool | None = None  # None: fewer than two random runs returned
    solved: list[bool] = field(default_factory=list)
    strings: int = 0
    four_letter_strings: int = 0


def programs_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Program]:
    """The programs of released item rows (``program_id``, ``source``, ``entry``, ``tier``,
    ``args``, ``family``, ``task_id``, ``output_repr``, ``output_type``; ``language`` when
    present, else Python), in program-id order:
    a program's inputs are the distinct ``args`` of its rows, its cases' output types one per
    input and the length of its output text, its items the rows of the ``input`` family."""
    grouped: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = grouped.setdefault(
            row["program_id"],
            {"row": row, "cases": {}, "items": []},
        )
        entry["cases"].setdefault(row["args"], (row.get("output_type"), row.get("output_repr")))
        if row.get("family") == "input" and row.get("output_repr") is not None:
            entry["items"].append((row["task_id"], row["output_repr"]))
    programs = []
    for key in sorted(grouped):
        entry = grouped[key]
        row, cases = entry["row"], entry["cases"]
        programs.append(
            Program(
                key=key,
                tier=row.get("tier"),
                source=row["source"],
                entry=row.get("entry") or "f",
                inputs=tuple(sorted(cases)),
                output_types=tuple(cases[a][0] for a in sorted(cases) if cases[a][0]),
                output_chars=tuple(len(cases[a][1]) for a in sorted(cases) if cases[a][1] is not None),
                items=tuple(sorted(set(entry["items"]))),
                language=row.get("language") or "python",
            )
        )
    return programs


def ablation_sample(programs: Sequence[Program], per_tier: int | None) -> set[str]:
    """The keys of the programs to ablate: all (``per_tier`` None), else the first ``per_tier``
    of each tier of each language in the order of a hash of their key (a fixed sample, whatever
    else is released)."""
    if per_tier is None:
        return {p.key for p in programs}
    by_tier: dict[Any, list[Program]] = {}
    for p in programs:
        by_tier.setdefault((p.language, p.tier), []).append(p)
    chosen: set[str] = set()
    for members in by_tier.values():
        members.sort(key=lambda p: hashlib.sha256(p.key.encode()).hexdigest())
        chosen.update(p.key for p in members[:per_tier])
    return chosen


def random_args(program: Program, pool: Sequence[str], n: int = RANDOM_INPUTS) -> list[str]:
    """``n`` distinct argument lists of ``pool`` (all of them when it has fewer), seeded by the
    program's key."""
    rng = random.Random(f"quality:{program.key}")
    return rng.sample(list(pool), min(n, len(pool)))


def item_args(item_id: str, pool: Sequence[str]) -> str:
    """The one random argument list an input item is tried with, seeded by its id."""
    return random.Random(f"quality:{item_id}").choice(list(pool))


def measure(
    programs: Sequence[Program],
    pools: Callable[[Program], Sequence[str] | None] | None,
    *,
    ablate: Collection[str] | None = None,
    workers: int | None = None,
) -> list[Measured]:
    """Measure ``programs``: ``pools`` gives a program's pool of random argument lists (None, or
    None for a program: its random-input figures are not measured); ``ablate`` the keys of the
    programs whose irrelevant statements are measured (None: all)."""
    measured = [Measured(p) for p in programs]
    for language in sorted({p.language for p in programs}):
        group = [m for m in measured if m.program.language == language]
        _measure_language(language, group, pools, ablate, workers)
    return measured


def _measure_language(
    language: str,
    measured: Sequence[Measured],
    pools: Callable[[Program], Sequence[str] | None] | None,
    ablate: Collection[str] | None,
    workers: int | None,
) -> None:
    """Measure the programs of one language, in one pool of its ``measure`` facet's worker."""
    lang = languages.language(language)
    facet = lang.facet("measure")
    parse_args = parsed_once(lang.parse_args)
    for m in measured:
        m.strings, m.four_letter_strings = _string_counts(m.program, parse_args)
    # A generator: the pool reads the payloads as it needs them, so drawing overlaps the runs.
    payloads = (_payload(m.program, pools(m.program) if pools else None) for m in measured)
    with WorkerPool(
        workers=workers, timeout_s=JOB_TIMEOUT_S, memory_mb=MEMORY_MB, kinds=facet.KINDS, worker=facet.WORKER
    ) as pool:
        for m, (payload, result) in zip(measured, _with_payloads(pool, payloads), strict=True):
            _read_probe(m, payload, result)
        # The ablation runs literal arguments only: a program whose inputs are expressions (a few
        # of CRUXEval's) is left out rather than found all irrelevant.
        chosen = [
            m
            for m in measured
            if m.facts is not None
            and (ablate is None or m.program.key in ablate)
            and _literal_inputs(m.program, parse_args)
        ]
        removed = irrelevant_statements_many(
            [(m.program.source, m.program.entry, list(m.program.inputs)) for m in chosen],
            pool,
            iterative=True,
            language=language,
        )
        for m, lines in zip(chosen, removed, strict=True):
            assert m.facts is not None  # chosen above
            m.irrelevant = m.facts.irrelevant_count(lines)
        inert = inert_operations_many(
            [(m.program.source, m.program.entry, list(m.program.inputs)) for m in chosen],
            pool,
            language=language,
        )
        for m, lines in zip(chosen, inert, strict=True):
            m.inert = len(lines)


def _with_payloads(
    pool: WorkerPool, payloads: Iterable[dict[str, Any]]
) -> Iterable[tuple[dict[str, Any], dict[str, Any]]]:
    """(payload, result) of each ``quality`` job, in order."""
    sent: list[dict[str, Any]] = []

    def keep() -> Iterable[dict[str, Any]]:
        for payload in payloads:
            sent.append(payload)
            yield payload

    for index, result in enumerate(pool.map(KIND, keep())):
        yield sent[index], result
        sent[index] = {}  # answered: its draws are not needed again


def _literal_inputs(program: Program, parse_args: ArgsParser) -> bool:
    try:
        for text in program.inputs:
            parse_args(text)
    except UserError:
        return False
    return True


def _payload(program: Program, pool: Sequence[str] | None) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "source": program.source,
        "entry": program.entry,
        "eval_args": program.eval_args,
        "inputs": list(program.inputs),
        "random": [],
        "items": [],
    }
    if pool:
        payload["random"] = random_args(program, pool)
        payload["items"] = [[item_args(item, pool), output] for item, output in program.items]
    return payload


def _read_probe(m: Measured, payload: dict[str, Any], result: dict[str, Any]) -> None:
    if result.get("status") != "ok":
        return  # the job timed out or crashed: nothing of it is measured
    static = result["static"]
    if static is not None:
        m.facts = StaticFacts(
            statements=tuple((first, last) for first, last in static["statements"]),
            trivial=tuple(TrivialOp(*t) for t in static["trivial"]),
            dead_stores=tuple(static["dead_stores"]),
            unread_loops=tuple(static["unread_loops"]),
            identifiers=frozenset(static["identifiers"]),
            if_tests=(),
        )
    m.reached_tests = len(result["tests"])
    m.one_outcome_tests = sum(1 for _, true, false in result["tests"] if true + false == 1)
    m.random_ok = result["random_ok"]
    if payload["random"] and m.random_ok >= 2:
        m.random_constant = result["random_constant"]
    m.solved = list(result["solved"])


def _string_counts(program: Program, parse_args: ArgsParser) -> tuple[int, int]:
    """(string arguments, those with a run of four ASCII letters) of the program's own inputs:
    the arguments that are strings, not the strings inside a container argument (the share the
    issue and CRUXEval's figure count)."""
    total = hits = 0
    for text in program.inputs:
        try:
            values = parse_args(text)
        except UserError:
            continue
        for value in values:
            if isinstance(value, str):
                total += 1
                hits += bool(FOUR_LETTERS.search(value))
    return total, hits


# --- the figures ----------------------------------------------------------------------------------


def summarize(measured: Sequence[Measured]) -> dict[str, dict[str, Any]]:
    """The figures per tier (``"1"``...) and over all programs (``"all"``); a share is None when
    nothing it counts was measured."""
    groups: dict[str, list[Measured]] = {}
    for m in measured:
        if m.program.tier is not None:
            groups.setdefault(str(m.program.tier), []).append(m)
    out = {tier: figures(groups[tier]) for tier in sorted(groups, key=int)}
    out[ALL] = figures(list(measured))
    return out


def figures(group: Sequence[Measured]) -> dict[str, Any]:
    """The quality figures of one group of programs (docs/quality.md defines each)."""
    static = [m for m in group if m.facts is not None]
    ablated = [m for m in static if m.irrelevant is not None]
    judged = [m for m in group if m.random_constant is not None]
    items = [s for m in group for s in m.solved]
    statements = sum(len(m.facts.statements) for m in ablated if m.facts)
    reached = sum(m.reached_tests for m in group)
    strings = sum(m.strings for m in group)
    kinds = [{t.kind for t in m.facts.trivial} for m in static if m.facts]
    types = Counter(t for m in group for t in m.program.output_types)
    cases = sum(types.values())
    lengths = [n for m in group for n in m.program.output_chars]
    return {
        "programs": len(group),
        "ablated_programs": len(ablated),
        "statements": statements,
        "irrelevant_statements": _share(sum(m.irrelevant or 0 for m in ablated), statements),
        "constant_output_judged": len(judged),
        "constant_output": _share(sum(bool(m.random_constant) for m in judged), len(judged)),
        "trivial_operation": _share(sum(bool(k) for k in kinds), len(static)),
        **{f"trivial_{kind}": _share(sum(kind in k for k in kinds), len(static)) for kind in TRIVIAL_KINDS},
        "reached_if_tests": reached,
        "one_outcome_if_tests": _share(sum(m.one_outcome_tests for m in group), reached),
        "input_items": len(items),
        "random_solves_input_item": _share(sum(items), len(items)),
        "strings": strings,
        "four_letter_strings": _share(sum(m.four_letter_strings for m in group), strings),
        "inert_operation": _share(sum(bool(m.inert) for m in ablated), len(ablated)),
        "clean": _share(sum(_clean(m) for m in ablated), len(ablated)),
        "dead_store": _share(sum(bool(m.facts.dead_stores) for m in static if m.facts), len(static)),
        "unread_loop_variable": _share(
            sum(bool(m.facts.unread_loops) for m in static if m.facts), len(static)
        ),
        "median_relevant_statements": _median(
            [len(m.facts.statements) - (m.irrelevant or 0) for m in ablated if m.facts]
        ),
        "median_output_chars": _median(lengths),
        "long_output": _share(sum(n > LONG_OUTPUT_CHARS for n in lengths), len(lengths)),
        "output_types": {t: round(n / cases, 4) for t, n in sorted(types.items())},
        "identifiers": len(set().union(*(m.facts.identifiers for m in static if m.facts))),
    }


def _clean(m: Measured) -> bool:
    """Free of irrelevant statements, constant output and trivial operations."""
    return m.irrelevant == 0 and not m.random_constant and m.facts is not None and not m.facts.trivial


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _median(values: list[int]) -> float | None:
    return float(statistics.median(values)) if values else None


# --- a release ------------------------------------------------------------------------------------

#: The columns of a released item row that ``programs_from_rows`` reads (and ``language``, which
#: a release of several languages has).
RELEASE_COLUMNS = (
    "program_id",
    "source",
    "entry",
    "tier",
    "args",
    "family",
    "task_id",
    "output_repr",
    "output_type",
)
#: Programs per tier whose irrelevant statements the assemble stage measures (the iterative
#: ablation costs about 12 ms a program on 2 cores: 40 a tier took 3 s of the stage's 9.6 s;
#: bench/quality.py measures every program).
STAGE_ABLATION_PER_TIER = 15
#: A language's pools: signature -> argument lists (``factory.inputs.pool_table.read_pools``).
Pools = Mapping[str, Sequence[str]]


def pool_finder(
    programs: Sequence[Program], pools: Mapping[str, Pools]
) -> Callable[[Program], Sequence[str] | None]:
    """A program's pool of random argument lists (``pools``: per language), found from its own
    arguments (``factory.quality.signature``, on the values of its language's ``measure`` facet);
    None when none fits (worked out once per language and arguments: it is asked twice)."""
    indexes = {
        name: PoolIndex(pools[name], parsed_once(languages.language(name).facet("measure").shape_args))
        for name in sorted({p.language for p in programs})
        if pools.get(name)
    }
    keys: dict[tuple[str, tuple[str, ...]], str | None] = {}

    def pool_of(program: Program) -> Sequence[str] | None:
        index = indexes.get(program.language)
        if index is None:
            return None
        asked = (program.language, program.inputs)
        if asked not in keys:
            keys[asked] = index.signature(program.inputs)
        key = keys[asked]
        return None if key is None else pools[program.language][key]

    return pool_of


def release_quality(
    rows: Iterable[Mapping[str, Any]],
    pools: Mapping[str, Pools] | None,
    *,
    ablation_per_tier: int | None = STAGE_ABLATION_PER_TIER,
    workers: int | None = None,
) -> dict[str, dict[str, Any]]:
    """The quality figures of released item rows (``RELEASE_COLUMNS``, and ``language``), per
    language: per tier and overall, with how they were measured. ``pools``: the inputs stage's,
    per language; without them the random-input figures are None."""
    programs = programs_from_rows(rows)
    find = pool_finder(programs, pools) if pools else None
    measured = measure(programs, find, ablate=ablation_sample(programs, ablation_per_tier), workers=workers)
    out = {}
    for language in sorted({p.language for p in programs}, key=lambda name: (name != "python", name)):
        group = [m for m in measured if m.program.language == language]
        pooled = bool(pools and pools.get(language))
        out[language] = {
            "random_inputs": RANDOM_INPUTS if pooled else 0,
            "ablation_per_tier": ablation_per_tier,
            "programs_without_pool": sum(1 for m in group if find is None or find(m.program) is None),
            "figures": summarize(group),
        }
    return out
