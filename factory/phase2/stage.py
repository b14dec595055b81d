"""The phase2 stage: programs + executions → code-generation items with hidden tests.

For each program, the shown examples are its ``ok`` executed cases (the inputs stage chose them
for line coverage, which makes them the most telling examples), up to ``phase2.examples``. The
default params keep 3 cases per program, too few to also hold tests out, so this stage draws
``phase2.candidates`` *extra* argument lists per program with the inputs stage's own machinery
(Hypothesis pools per signature, a per-program seeded sample; a seed of its own, so the draws
differ from the inputs stage's) and runs them in the trusted sandbox pool under both hash seeds,
exactly as the execute stage does; ``ok`` results (deterministic, literal output) whose
arguments differ from the shown ones become the hidden tests, new outputs first. This leaves the
phase-1 data as it is (raising ``inputs.per_program`` would change every phase-1 item) and costs
a few seconds.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory import languages
from factory.backend import Backend, Shards, run_shards
from factory.contracts import PHASE2_SCHEMA
from factory.errors import UserError
from factory.execute.runner import Executor, with_cpus
from factory.grammar.loader import StageGrammars
from factory.grammar.model import Grammar
from factory.inputs.pools import candidates_for, draw_pools, read_pools
from factory.io import count_rows, iter_rows
from factory.languages import Language
from factory.params import ExecuteParams, InputsParams, Phase2Params
from factory.phase2.items import FAMILY, codegen, synth_prompt, task_id
from factory.stage import Outcome, Output, Tally, chunks, language_of, run_stage
from factory.stats import StageStats

BATCH = 256

Case = tuple[str, str, str]  # (args, output_repr, output_type)


def _seed(seed: int) -> int:
    """The phase-2 draw seed: derived from the pipeline seed, different from the inputs stage's."""
    return int(hashlib.sha256(f"{seed}:phase2".encode()).hexdigest()[:12], 16)


def _ok_cases_by_program(executions_dir: str | Path) -> Iterator[tuple[str, list[Case]]]:
    """(program_id, ok cases) per program, in table order (the inputs stage writes a program's
    cases together and the execute stage keeps the order)."""
    current: str | None = None
    cases: list[Case] = []
    for batch in iter_rows(executions_dir):
        for row in batch:
            if row["program_id"] != current:
                if current is not None:
                    yield current, cases
                current, cases = row["program_id"], []
            if row["status"] == "ok":
                cases.append((row["args"], row["output_repr"], row["output_type"]))
    if current is not None:
        yield current, cases


def _with_cases(programs_dir: str | Path, executions_dir: str | Path) -> Iterator[tuple[dict, list[Case]]]:
    """Each program with its ok executed cases (programs without cases get an empty list)."""
    groups = _ok_cases_by_program(executions_dir)
    pending = next(groups, None)
    for batch in iter_rows(programs_dir, batch_rows=BATCH):
        for program in batch:
            if pending is not None and pending[0] == program["program_id"]:
                yield program, pending[1]
                pending = next(groups, None)
            else:
                yield program, []
    if pending is not None:
        raise UserError(
            f"{executions_dir}: program {pending[0]} is not in {programs_dir} or not in its order "
            "(rebuild the inputs and execute stages from these programs)"
        )


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
    each argument list once; outputs not seen yet first, then the others (``language``: whose
    value model compares outputs)."""
    lang = languages.language(language)
    taken = {args for args, _, _ in shown}
    fresh: list[Case] = []
    for case in ran:
        if case[0] not in taken:
            taken.add(case[0])
            fresh.append(case)
    seen = list(shown)
    new, repeated = [], []
    for case in fresh:
        if any(_same(case, s, lang) for s in seen):
            repeated.append(case)
        else:
            new.append(case)
            seen.append(case)
    return (new + repeated)[:k]


def memorizer_fails(shown: list[Case], hidden: list[Case], language: str = "python") -> bool:
    """Whether ``items.memorizer_source`` fails some hidden test, computed without running it: it
    answers a call whose arguments are the same as shown ones (the facet's ``same_args``) with
    that output, else the most common shown output."""
    lang = languages.language(language)
    same_args = codegen(language).same_args
    outputs = [c[1] for c in shown]
    most_common = max(outputs, key=outputs.count)
    default = next(c for c in shown if c[1] == most_common)
    shown_args = [(lang.parse_args(c[0]), c) for c in shown]
    for case in hidden:
        args = lang.parse_args(case[0])
        answer = next((c for a, c in shown_args if same_args(a, args)), default)
        if not _same(answer, case, lang):
            return True
    return False


@dataclass(frozen=True)
class _Config:
    """The phase2 stage's shard job: what a process needs to draw and run the hidden tests."""

    grammar: Grammar
    pools: dict[str, list[str]]
    draw_seed: int
    draw: InputsParams
    params: Phase2Params
    candidates: ExecuteParams  # the execute params the candidates run under


_Built = tuple[dict[str, Any] | None, str, list[str]]  # (item or None, reason, candidate statuses)


def _open(config: _Config, cpus: int | None) -> Executor:
    """The per-process state of the phase2 stage: an Executor for the candidates."""
    lang = languages.language(config.grammar.language)
    return Executor.from_params(with_cpus(config.candidates, cpus), language=lang)


def _items(
    config: _Config, executor: Executor, pairs: Iterable[tuple[dict[str, Any], list[Case]]]
) -> Iterator[_Built]:
    """(the item, or None and the drop reason; the statuses of its candidate runs) of every
    program, in order, ``BATCH`` programs at a time."""
    params = config.params
    for batch in chunks(pairs, BATCH):
        # Programs that will be dropped for want of shown examples are not run at all.
        drawn = [
            candidates_for(program, config.pools, config.grammar, config.draw_seed, config.draw)
            if len(cases) >= params.min_examples
            else []
            for program, cases in batch
        ]
        jobs = [
            {"source": program["source"], "entry": program["entry"], "args": args}
            for (program, _), candidates in zip(batch, drawn, strict=True)
            for args in candidates
        ]
        results = iter(executor.run(jobs))
        for (program, cases), candidates in zip(batch, drawn, strict=True):
            ran, statuses = [], []
            for args in candidates:
                result = next(results)
                statuses.append(result["status"])
                if result["status"] == "ok":
                    ran.append((args, result["output_repr"], result["output_type"]))
            item, reason = _item(program, cases, ran, params, config.grammar.language)
            yield item, reason, statuses


def run_phase2_stage(
    seed: int,
    params: Phase2Params,
    inputs: InputsParams,
    execute: ExecuteParams,
    grammar_dirs: str | Path | Sequence[str | Path],
    programs_dir: str | Path,
    executions_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    pools_dir: str | Path | None = None,
    *,
    backend: Backend | None = None,
) -> StageStats:
    """Build the code-generation items of every program; write ``out_dir`` and the stats.

    Hidden-test candidates are sampled (with the phase-2 seed) from the argument pools the inputs
    stage saved in ``pools_dir``; without it, the pools are drawn here with the phase-2 seed.
    ``grammar_dirs``: the grammar folder of each language of the programs; each program's item is
    written in its language. ``backend``: where the candidates run (default local).
    """
    grammars = StageGrammars(grammar_dirs)
    draw = inputs.model_copy(update={"candidates": params.candidates})
    draw_seed = _seed(seed)
    hidden_counts: Counter = Counter()
    statuses: Counter = Counter()
    memorizer = 0

    def pools_of(language: str) -> dict[str, list[str]]:
        if pools_dir is not None:
            return read_pools(pools_dir, language)
        folder = grammars.folders[language]
        return draw_pools(
            programs_dir, folder, draw_seed, draw.pool_size, execute.workers or None, draw.related_share
        )

    # candidates get the inputs stage's timeout, as there: a slow one is dropped
    candidates = execute.model_copy(update={"timeout_s": inputs.timeout_s})

    def outcomes(pairs: Iterator[tuple[dict[str, Any], list[Case]]]) -> Iterator[Outcome]:
        nonlocal memorizer
        for language, group in itertools.groupby(pairs, key=lambda pair: language_of(pair[0])):
            grammar = grammars.of(language, programs_dir)
            config = _Config(grammar, pools_of(language), draw_seed, draw, params, candidates)
            for (program, _), (item, reason, ran) in run_shards(
                backend, Shards(config, _open, _items), group
            ):
                statuses.update(ran)
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
            "candidate_status": dict(sorted(statuses.items())),
            "memorizer": {
                "items_where_it_fails_a_hidden_test": memorizer,
                "share": round(memorizer / kept, 6) if kept else 0.0,
            },
        }

    output = Output(out_dir, PHASE2_SCHEMA, params.rows_per_shard)
    pairs = _with_cases(programs_dir, executions_dir)
    total = count_rows(programs_dir)
    return run_stage("phase2", pairs, outcomes, output, stats_path, total=total, extra=extra)


def _item(
    program: dict[str, Any], cases: list[Case], ran: list[Case], params: Phase2Params, language: str
) -> tuple[dict[str, Any] | None, str]:
    """(the item, "memorizer_fails" or "memorizer_passes"), or (None, the drop reason); the text
    in ``language`` (a registered name)."""
    if not cases:
        return None, "no_ok_case"
    shown = cases[: params.examples]
    if len(shown) < params.min_examples:
        return None, "too_few_examples"
    hidden = choose_hidden(shown, ran, params.hidden_tests, language)
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
    fails = memorizer_fails(shown, hidden, language)
    return item, "memorizer_fails" if fails else "memorizer_passes"
