"""The phase2 stage: programs + executions + spares → code-generation items with hidden tests.

For each program, the shown examples are its ``ok`` executed cases (the inputs stage chose them
for line coverage, which makes them the most telling examples), up to ``phase2.examples``. The
hidden tests come from the cases left: the program's other executed cases, then its spares (the
candidates the inputs stage ran ``ok`` and did not keep, with their outputs under the first hash
seed). Arguments that differ from the shown ones are taken, new outputs first, then outputs a
memorizer of the examples gets wrong; each spare taken runs again under the other hash seeds
and stays only where the runs agree, as the execute stage decides. A program left with fewer
than ``phase2.min_hidden_tests``, or with tests that a memorizer of the examples passes, gets
``phase2.candidates`` fresh argument lists, drawn with the inputs stage's machinery (its saved
pools, a per-program seeded sample, a seed of its own) and run under both seeds, and its tests
are chosen again. This leaves the phase-1 data as they are (raising ``inputs.per_program`` would
change every phase-1 item), and makes about 14,400 runs where drawing 12 new argument lists for
every program made 41,200 (``bench/README.md``).

The item's text is its language's (the grammar's; ``items.codegen``: signature, tests, examples),
and outputs are compared with that language's value model.

Drops, by reason: ``no_ok_case`` (the program never ran cleanly), ``too_few_examples``,
``too_few_hidden_tests``, ``constant_output`` (every shown and hidden output is the same value: a
function returning that constant would pass, so the item teaches nothing). The stats also record
``memorizer``: the share of items on which a program that memorises the shown examples (and
returns the most common shown output elsewhere) fails at least one hidden test.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory import languages
from factory.backend import Backend, Shards, run_shards
from factory.contracts import PHASE2_SCHEMA
from factory.errors import UserError
from factory.execute.runner import Executor
from factory.grammar.loader import StageGrammars
from factory.grammar.model import Grammar
from factory.inputs.pool_table import read_pools
from factory.inputs.pools import candidates_for, draw_pools
from factory.io import count_rows, iter_rows
from factory.languages import Language
from factory.params import ExecuteParams, InputsParams, Phase2Params
from factory.phase2.items import FAMILY, codegen, synth_prompt, task_id
from factory.sandbox.os_helpers import default_workers
from factory.sandbox.trusted.worker import OK
from factory.stage import Outcome, Output, Tally, chunks, language_of, run_stage
from factory.stats import StageStats

BATCH = 256

Case = tuple[str, str, str]  # (args, output_repr, output_type)


def _ok_cases_by_program(folder: str | Path) -> Iterator[tuple[str, list[Case]]]:
    """(program_id, ok cases) per program, in table order, of the executions (their ``status``) or
    the spares (every one ok); the inputs stage writes a program's rows together and the execute
    stage keeps the order."""
    current: str | None = None
    cases: list[Case] = []
    for batch in iter_rows(folder):
        for row in batch:
            if row["program_id"] != current:
                if current is not None:
                    yield current, cases
                current, cases = row["program_id"], []
            if row.get("status", OK) == OK:
                cases.append((row["args"], row["output_repr"], row["output_type"]))
    if current is not None:
        yield current, cases


def _joined(
    programs_dir: str | Path, folders: Sequence[str | Path]
) -> Iterator[tuple[dict, list[list[Case]]]]:
    """Each program with its ok cases in each of ``folders`` (an empty list where it has none)."""
    groups = [_ok_cases_by_program(folder) for folder in folders]
    pending = [next(group, None) for group in groups]
    for batch in iter_rows(programs_dir, batch_rows=BATCH):
        for program in batch:
            found: list[list[Case]] = []
            for k, group in enumerate(groups):
                if (head := pending[k]) is not None and head[0] == program["program_id"]:
                    found.append(head[1])
                    pending[k] = next(group, None)
                else:
                    found.append([])
            yield program, found
    for folder, head in zip(folders, pending, strict=True):
        if head is not None:
            raise UserError(
                f"{folder}: program {head[0]} is not in {programs_dir} or not in its order "
                "(rebuild the inputs and execute stages from these programs)"
            )


def _seed(seed: int) -> int:
    """The phase-2 draw seed: derived from the pipeline seed, different from the inputs stage's."""
    return int(hashlib.sha256(f"{seed}:phase2".encode()).hexdigest()[:12], 16)


_Unit = tuple[dict[str, Any], list[Case], list[Case]]  # (program, ok executed cases, spares)


def _units(programs_dir: str | Path, executions_dir: str | Path, spares_dir: str | Path) -> Iterator[_Unit]:
    """Each program with its ok executed cases and its spares."""
    for program, (cases, spares) in _joined(programs_dir, [executions_dir, spares_dir]):
        yield program, cases, spares


@functools.lru_cache(maxsize=1 << 14)
def _output_value(output_repr: str, language: str) -> Any:
    """The value of an output repr in a language, parsed once; shared between callers, so never
    mutated."""
    return languages.language(language).parse_args(output_repr)[0]


def _same(a: Case, b: Case, lang: Language) -> bool:
    """Whether two cases have strictly equal outputs (an ok output is a literal, never NaN, so
    equal reprs are equal values)."""
    if a[2] != b[2]:
        return False
    if a[1] == b[1]:
        return True
    if not lang.distinct_literals_may_be_equal(a[1], b[1]):
        return False
    return lang.strict_equal(_output_value(a[1], lang.name), _output_value(b[1], lang.name))


def choose_hidden(shown: list[Case], ran: list[Case], k: int, language: str = "python") -> list[Case]:
    """Up to ``k`` hidden cases among ``ran`` (in draw order): arguments not among the shown ones,
    each argument list once; outputs not seen yet first, then outputs other than the one a
    memorizer of the shown examples answers (``memorizer_fails``), then the others
    (``language``: whose value model compares outputs)."""
    lang = languages.language(language)
    taken = {args for args, _, _ in shown}
    fresh: list[Case] = []
    for case in ran:
        if case[0] not in taken:
            taken.add(case[0])
            fresh.append(case)
    seen = list(shown)
    default = _most_common(shown)
    new, telling, repeated = [], [], []
    for case in fresh:
        if not any(_same(case, s, lang) for s in seen):
            new.append(case)
            seen.append(case)
        elif not _same(case, default, lang):
            telling.append(case)
        else:
            repeated.append(case)
    return (new + telling + repeated)[:k]


def _most_common(shown: list[Case]) -> Case:
    """The first shown case with the most common output text: what a memorizer answers."""
    outputs = [c[1] for c in shown]
    most_common = max(outputs, key=outputs.count)
    return next(c for c in shown if c[1] == most_common)


def memorizer_fails(shown: list[Case], hidden: list[Case], language: str = "python") -> bool:
    """Whether ``items.memorizer_source`` fails some hidden test, computed without running it: it
    answers a call whose arguments are the same as shown ones (the facet's ``same_args``) with
    that output, else the most common shown output."""
    lang = languages.language(language)
    same_args = codegen(language).same_args
    default = _most_common(shown)
    shown_args = [(lang.parse_args(c[0]), c) for c in shown]
    for case in hidden:
        args = lang.parse_args(case[0])
        answer = next((c for a, c in shown_args if same_args(a, args)), default)
        if not _same(answer, case, lang):
            return True
    return False


@dataclass(frozen=True)
class _Config:
    """The phase2 stage's shard job: what a process needs to choose, confirm and top up the hidden
    tests of a language's programs."""

    language: str
    params: Phase2Params
    runs: ExecuteParams  # what the spares and the fresh draws run under
    grammar: Grammar  # the fresh draws': their pools and seed
    pools: dict[str, list[str]]
    draw_seed: int
    draw: InputsParams


@dataclass
class _Hidden:
    """One program's hidden tests on their way: chosen, confirmed, topped up."""

    shown: list[Case]
    executed: frozenset[str]  # the args of executed cases (already run under every seed)
    tests: list[Case] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)  # "confirm:<status>", "fresh:<status>"
    fails: bool | None = None  # whether a memorizer of the shown examples fails a test


#: (the item or None, "memorizer_fails" / "memorizer_passes" or the drop reason, the statuses of
#: the runs made for it)
_Built = tuple[dict[str, Any] | None, str, Counter]


def _open(config: _Config, cpus: int | None) -> Executor:
    """The per-process state of the phase2 stage: an Executor whose every seed's pool has every
    core (most of its runs confirm spares, on the pools after the first alone)."""
    lang = languages.language(config.language)
    workers = cpus or config.runs.workers or default_workers()
    return Executor.from_params(config.runs.model_copy(update={"workers": workers}), language=lang)


def _items(config: _Config, executor: Executor, units: Iterable[_Unit]) -> Iterator[_Built]:
    """(the item, or None and the drop reason; the statuses of the runs made for it) of every
    program, in order, ``BATCH`` programs at a time."""
    params, language = config.params, config.language
    for batch in chunks(units, BATCH):
        hidden = [_choose(cases, spares, params, language) for _, cases, spares in batch]
        _confirm(executor, [program for program, _, _ in batch], hidden)
        short = [i for i, h in enumerate(hidden) if h.shown and _falls_short(h, params, language)]
        _top_up(config, executor, [batch[i][0] for i in short], [hidden[i] for i in short])
        for (program, cases, _), h in zip(batch, hidden, strict=True):
            item, reason = _item(program, cases, h.tests, params, language, fails=h.fails)
            yield item, reason, h.statuses


def _choose(cases: list[Case], spares: list[Case], params: Phase2Params, language: str) -> _Hidden:
    """A program's hidden tests chosen among its executed cases past the shown ones and its spares
    (none for a program with too few cases to show)."""
    shown = cases[: params.examples]
    if len(shown) < params.min_examples:
        return _Hidden([], frozenset())
    h = _Hidden(shown, frozenset(case[0] for case in cases))
    h.tests = choose_hidden(shown, cases[params.examples :] + spares, params.hidden_tests, language)
    return h


def _confirm(executor: Executor, programs: list[dict[str, Any]], hidden: list[_Hidden]) -> None:
    """Run the spares taken (arguments no executed case has) under the other hash seeds; keep
    those whose runs agree with the inputs stage's."""
    taken = [
        (h, case, program)
        for program, h in zip(programs, hidden, strict=True)
        for case in h.tests
        if case[0] not in h.executed
    ]
    jobs = [{"source": p["source"], "entry": p["entry"], "args": case[0]} for _, case, p in taken]
    firsts = [{"status": OK, "output_repr": case[1], "output_type": case[2]} for _, case, _ in taken]
    for (h, case, _), verdict in zip(taken, executor.confirm(jobs, firsts), strict=True):
        h.statuses[f"confirm:{verdict['status']}"] += 1
        if verdict["status"] != OK:
            h.tests.remove(case)


def _falls_short(h: _Hidden, params: Phase2Params, language: str) -> bool:
    """Whether a program has fewer hidden tests than ``min_hidden_tests``, or a memorizer of the
    examples passes them all (what it computes of that is kept in ``h.fails``). Topping up every
    program with fewer than ``hidden_tests`` as well took the fresh runs from 2,800 to 5,200 for
    22 more items with all 8: the programs whose candidates the inputs stage stopped early, whose
    fresh draws hit the limits too."""
    if len(h.tests) < params.min_hidden_tests:
        return True
    h.fails = memorizer_fails(h.shown, h.tests, language)
    return not h.fails


def _top_up(
    config: _Config, executor: Executor, programs: list[dict[str, Any]], hidden: list[_Hidden]
) -> None:
    """Draw ``phase2.candidates`` fresh argument lists for each program (the phase-2 seed), run
    them under every seed, and choose its hidden tests again among what it had and what ran."""
    params, language = config.params, config.language
    drawn = [candidates_for(p, config.pools, config.grammar, config.draw_seed, config.draw) for p in programs]
    jobs = [
        {"source": p["source"], "entry": p["entry"], "args": args}
        for p, candidates in zip(programs, drawn, strict=True)
        for args in candidates
    ]
    results = iter(executor.run(jobs))
    for h, candidates in zip(hidden, drawn, strict=True):
        fresh = []
        for args in candidates:
            result = next(results)
            h.statuses[f"fresh:{result['status']}"] += 1
            if result["status"] == OK:
                fresh.append((args, result["output_repr"], result["output_type"]))
        h.tests = choose_hidden(h.shown, h.tests + fresh, params.hidden_tests, language)
        h.fails = None  # computed again with the item


def run_phase2_stage(
    seed: int,
    params: Phase2Params,
    inputs: InputsParams,
    execute: ExecuteParams,
    grammar_dirs: str | Path | Sequence[str | Path],
    programs_dir: str | Path,
    executions_dir: str | Path,
    spares_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    pools_dir: str | Path | None = None,
    *,
    backend: Backend | None = None,
) -> StageStats:
    """Build the code-generation items of every program; write ``out_dir`` and the stats.

    The hidden tests come from each program's executed cases past the shown ones and from its
    spares (``spares_dir``, the inputs stage's; those taken run again under the other hash seeds,
    with the inputs stage's timeout). Where they fall short, fresh candidates are sampled (with
    the phase-2 seed) from the argument pools the inputs stage saved in ``pools_dir`` (without it,
    the pools are drawn here with the phase-2 seed). ``grammar_dirs``: the grammar folder of each
    language of the programs; each program's item is written in its language. ``backend``: where
    the runs are made (default local).
    """
    grammars = StageGrammars(grammar_dirs)
    draw = inputs.model_copy(update={"candidates": params.candidates})
    draw_seed = _seed(seed)
    hidden_counts: Counter = Counter()
    statuses: Counter = Counter()
    memorizer = topped_up = 0

    def pools_of(language: str) -> dict[str, list[str]]:
        if pools_dir is not None:
            return read_pools(pools_dir, language)
        folder = grammars.folders[language]
        return draw_pools(
            programs_dir, folder, draw_seed, draw.pool_size, execute.workers or None, draw.related_share
        )

    # the spares ran under the inputs stage's timeout, and fresh draws get it too: a slow one is dropped
    runs = execute.model_copy(update={"timeout_s": inputs.timeout_s})

    def outcomes(units: Iterator[_Unit]) -> Iterator[Outcome]:
        nonlocal memorizer, topped_up
        for language, group in itertools.groupby(units, key=lambda unit: language_of(unit[0])):
            grammar = grammars.of(language, programs_dir)
            config = _Config(language, params, runs, grammar, pools_of(language), draw_seed, draw)
            for (program, _, _), (item, reason, ran) in run_shards(
                backend, Shards(config, _open, _items), group
            ):
                statuses.update(ran)
                topped_up += any(status.startswith("fresh:") for status in ran)
                if item is None:
                    yield Outcome(drop=reason, tier=program["tier"])
                    continue
                hidden_counts[item["n_tests"]] += 1
                memorizer += reason == "memorizer_fails"
                yield Outcome([item], tier=program["tier"])

    def extra(tally: Tally) -> dict[str, Any]:
        kept = sum(tally.tiers_out.values())
        return {
            "items_by_tier": tally.by_tier(tally.tiers_out),
            "hidden_tests_per_item": {str(k): hidden_counts[k] for k in sorted(hidden_counts)},
            # confirm: the spares taken, run again under the other hash seeds; fresh: the draws
            # for the programs whose spares fell short, run under every seed
            "run_status": dict(sorted(statuses.items())),
            "topped_up": topped_up,
            "memorizer": {
                "items_where_it_fails_a_hidden_test": memorizer,
                "share": round(memorizer / kept, 6) if kept else 0.0,
            },
        }

    output = Output(out_dir, PHASE2_SCHEMA, params.rows_per_shard)
    units = _units(programs_dir, executions_dir, spares_dir)
    total = count_rows(programs_dir)
    return run_stage("phase2", units, outcomes, output, stats_path, total=total, extra=extra)


def _item(
    program: dict[str, Any],
    cases: list[Case],
    hidden: list[Case],
    params: Phase2Params,
    language: str,
    fails: bool | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """(the item, "memorizer_fails" or "memorizer_passes"), or (None, the drop reason); the text
    in ``language`` (a registered name); ``hidden``: its hidden tests; ``fails``: whether a
    memorizer of the shown examples fails one of them (None: computed here)."""
    if not cases:
        return None, "no_ok_case"
    shown = cases[: params.examples]
    if len(shown) < params.min_examples:
        return None, "too_few_examples"
    if len(hidden) < params.min_hidden_tests:
        return None, "too_few_hidden_tests"
    every = shown + hidden
    lang = languages.language(language)
    if all(_same(every[0], c, lang) for c in every[1:]):
        return None, "constant_output"
    entry = program["entry"]
    text = codegen(language)
    param_types = json.loads(program["param_types"])
    sig = text.signature(entry, param_types, [c[2] for c in every])
    tests = [text.example_test(entry, *c) for c in hidden]
    examples = [text.example_test(entry, *c) for c in shown]
    shown_calls = [(c[0], c[1]) for c in shown]
    item = {
        "task_id": task_id("synth", program["program_id"], tests),
        "family": FAMILY,
        "origin": "synth",
        "program_id": program["program_id"],
        "prompt": synth_prompt(entry, sig, shown_calls, language=language, types=text.type_rule(param_types)),
        "entry": entry,
        "signature": sig,
        "tests": json.dumps(tests),
        "examples": json.dumps(examples),
        "source": program["source"],
        "tier": program["tier"],
        "target": program["target"],
        "grammar_hash": program["grammar_hash"],
        "n_tests": len(tests),
        "n_examples": len(examples),
        "language": language,
    }
    if fails is None:
        fails = memorizer_fails(shown, hidden, language)
    return item, "memorizer_fails" if fails else "memorizer_passes"
