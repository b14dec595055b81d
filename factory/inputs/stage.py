"""The inputs stage: k argument lists per program, drawn by Hypothesis, chosen for coverage and
checked by running the program.

For each program, ``candidates`` argument tuples are sampled (seeded by ``seed`` and the program's
index) from its signature's pool: Hypothesis draws ``pool_size`` values once per run for each
parameter type, combined per signature (``factory/inputs/pools.py``). Each candidate runs once
in the sandbox pool under an arc trace (the (line, next line) pairs it executed); the
``per_program`` kept are those that run and add the most new ``if`` outcomes, then lines, not yet
covered by the ones already kept (ties: a new output value first, then the later, less minimal
draw). A program none of whose candidates runs is dropped (``no_candidate_ran``); the stats'
``candidate_status`` says how its candidates failed (``stopped``: past the trace stage's line
events, the CPU timeout or the memory limit, counted as one since which comes first depends on
the load). Each kept case records its
``output_share``: the share of the candidates that ran which gave its output (a random argument
list's chance to hit it; the tasks stage asks input questions only where it is small).

Then the semantic checks (``factory.quality.checks``, each a drop reason, counted per tier in the
stats' ``dropped_by_tier``; ``params.checks`` names the ones that run): ``constant_output`` (every
candidate that ran gave one output), ``one_sided_branch`` (no choice of kept inputs lets every
``if`` test they reach go both ways: another choice is searched when the greedy one does not;
with ``per_program: 1``, a test that no candidate sends the other way),
``irrelevant_statement`` (a statement whose removal changes no outcome: on the kept inputs first,
then on the other candidates, one of which is swapped in where it can be; all variants of a
program run as one ``ablation`` job, ``factory.quality.ablation``).

The worker and the job kinds ``arcs`` and ``ablation`` are the programs' language's (its
``runner`` and ``quality`` facets; for JavaScript, node and docs/languages.md §6.5), as are the
argument literals (``Language.drawn_literal``) and the near-duplicate key (``normalize``).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory import languages
from factory.backend import Backend, Shards, run_shards
from factory.contracts import CASES_SCHEMA, SPARES_SCHEMA
from factory.grammar.loader import StageGrammars
from factory.grammar.model import Grammar
from factory.inputs.pool_table import write_pools
from factory.inputs.pools import candidates_for, draw_pools
from factory.io import count_rows, iter_rows
from factory.params import ExecuteParams, InputsParams, TraceParams
from factory.quality import checks
from factory.quality.ablation import JOB_TIMEOUT_S as ABLATION_TIMEOUT_S
from factory.quality.ablation import KIND as ABLATION
from factory.quality.ablation import ablation_of, ablation_payload
from factory.quality.jobs import TOO_MANY_STEPS
from factory.sandbox.trusted.pool import WorkerPool
from factory.sandbox.trusted.worker import BAD_PROGRAM, CRASH, OK, RESOURCE_LIMIT
from factory.stage import (
    DEFAULT_LANGUAGE,
    Outcome,
    Output,
    Tally,
    by_language,
    chunks,
    language_of,
    run_stage,
)
from factory.stats import StageStats

NO_CANDIDATE_RAN = "no_candidate_ran"
#: A reserve program of a target whose main programs were enough: not run.
RESERVE_UNUSED = "reserve_unused"
#: A run past its line events (``too_many_steps``), its CPU time or its memory (``resource_limit``):
#: which of the three stops a long run first depends on the machine's load, so the three count as
#: one, in the waves (``_run_candidates``) and in the counts (``STOPPED``).
_STOPPED = {TOO_MANY_STEPS, RESOURCE_LIMIT}
STOPPED = "stopped"
_HOPELESS = _STOPPED | {CRASH, BAD_PROGRAM}


def case_id(program_id: str, args: str) -> str:
    return hashlib.sha256(f"{program_id}\0{args}".encode()).hexdigest()[:16]


def choose(
    candidates: list[str], results: list[dict[str, Any]], k: int, tests: Sequence[int] = ()
) -> list[tuple[str, int]]:
    """Greedy coverage: up to ``k`` (args, lines covered) among the candidates that ran, the most
    new outcomes of the ``if`` tests at lines ``tests`` first, then the most new lines."""
    args, runs = _distinct_ok(candidates, results)
    order = checks.rank(runs, frozenset(tests))
    return [(args[i], len(runs[i].get("lines") or ())) for i in order[:k]]


def _distinct_ok(
    candidates: list[str], results: list[dict[str, Any]]
) -> tuple[list[str], list[dict[str, Any]]]:
    """The candidates that ran ``ok`` (the first run of each argument text) and their runs."""
    seen: set[str] = set()
    args: list[str] = []
    runs: list[dict[str, Any]] = []
    for text, result in zip(candidates, results, strict=True):
        if result["status"] == OK and text not in seen:
            seen.add(text)
            args.append(text)
            runs.append(result)
    return args, runs


@dataclass
class _Judged:
    """One program between the checks: its ok candidates, the choice so far, and what to ablate."""

    args: list[str]
    runs: list[dict[str, Any]]
    tests: frozenset[int]
    chosen: tuple[int, ...] = ()
    others: tuple[int, ...] = ()
    variants: tuple[tuple[int, str], ...] = ()
    reasons: tuple[str, ...] = ()  # per variant, the check it serves (its drop reason)
    drop: str | None = None
    ablation: str | None = None  # the status of its ablation job, when one ran


#: The checks that run variants of the program (one ``ablation`` job), each with the ``analysis``
#: facet's function that makes its variants, in the job's order: the job stops at the first variant
#: of a check that drops which changes no outcome (``stop``): the program is dropped, so the
#: checks that drop come before the preference, whose variants all run.
_VARIANTS = (
    (checks.IRRELEVANT_STATEMENT, "removal_variants"),
    (checks.IDLE_REPETITION, "once_variants"),
    (checks.IRRELEVANT_TEST, "negated_tests"),
    (checks.INERT_OPERATION, "passthrough_variants"),
)


def _first_checks(
    program: dict[str, Any],
    candidates: list[str],
    runs: list[dict[str, Any]],
    tests: frozenset[int],
    k: int,
    enabled: frozenset[str],
    analysis: Any,
) -> _Judged:
    """Choose the kept inputs and run the checks that need no more runs."""
    args, ok_runs = _distinct_ok(candidates[: len(runs)], runs)
    judged = _Judged(args, ok_runs, tests)
    if not ok_runs:
        judged.drop = NO_CANDIDATE_RAN
        return judged
    if checks.CONSTANT_OUTPUT in enabled and checks.constant_output(ok_runs):
        judged.drop = checks.CONSTANT_OUTPUT
        return judged
    order = checks.rank(ok_runs, tests)
    chosen = tuple(order[:k])
    if checks.ONE_SIDED_BRANCH in enabled and k < 2:
        # One kept input takes each test one way: the test must go both ways across the candidates.
        if checks.one_sided(ok_runs, tests):
            judged.drop = checks.ONE_SIDED_BRANCH
            return judged
    elif checks.ONE_SIDED_BRANCH in enabled and checks.one_sided([ok_runs[i] for i in chosen], tests):
        two_sided = checks.two_sided_choice(ok_runs, tests, order, k)
        if two_sided is None:
            judged.drop = checks.ONE_SIDED_BRANCH
            return judged
        chosen = two_sided
    judged.chosen = chosen
    judged.others = tuple(i for i in order if i not in chosen)
    made = [
        (check, variant)
        for check, make in _VARIANTS
        if check in enabled
        for variant in getattr(analysis, make)(program["source"])
    ]
    judged.variants = tuple(variant for _, variant in made)
    judged.reasons = tuple(check for check, _ in made)
    return judged


def _ablate(pool: WorkerPool, batch: list[dict[str, Any]], judged: list[_Judged], one_sided: bool) -> None:
    """The checks of ``_VARIANTS`` on every program of the batch with variants (one ``ablation``
    job each): keep the choice, swap one in, or drop the program.
    Each job's status goes in ``ablation`` (``incomplete`` or a failure: some variants were not
    tried, hence their statements and tests kept)."""
    todo = [(program, j) for program, j in zip(batch, judged, strict=True) if j.drop is None and j.variants]
    payloads = [
        ablation_payload(
            program["source"],
            program["entry"],
            [text for _, text in j.variants],
            [j.args[i] for i in (*j.chosen, *j.others)],
            full=len(j.chosen),
            # a preference's variant (last) that changes nothing does not stop the job
            stop=sum(reason not in checks.PREFERENCES for reason in j.reasons),
            first_hit=True,
        )
        for program, j in todo
    ]
    for (_, j), result in zip(todo, pool.map(ABLATION, payloads), strict=True):
        j.ablation = result["status"]
        tests = j.tests if one_sided else frozenset()
        ablation = ablation_of(j.variants, result)
        choice = checks.relevant_choice(j.runs, tests, j.chosen, j.others, ablation, j.reasons)
        if choice is None:
            j.drop = checks.irrelevant_reason(ablation, j.reasons)
        else:
            j.chosen = choice


#: How many candidates of each program run in each pass (the rest in the last): a program stops
#: after a pass in which one of its runs timed out or exhausted memory.
WAVES = (1, 3)


def _run_candidates(
    pool: WorkerPool, batch: list[dict], drawn: list[list[str]], tests: list[list[int]], max_steps: int
) -> list[list[dict[str, Any]]]:
    """Arc-trace runs of the candidates (arcs from the lines ``tests[i]`` of program i), each
    stopped past ``max_steps`` line events (``too_many_steps``, a case the trace stage could not
    trace), in passes (``WAVES``): the first candidate of each program, then the next three, then
    the others, each pass only for programs none of whose runs so far was stopped (line events,
    CPU time or memory: ``_STOPPED``) or crashed. A program that is too slow on one input is
    nearly always too slow on others, or blows up on some (a list that a loop extends with
    itself): measured on the default programs, running every candidate of such programs took
    about 30% of the candidate runs' time. Line events count as a stop too because a run that
    stops at its 2,000th event after 0.1 s of CPU on a quiet machine can pass a CPU timeout of
    0.25 s first on a loaded one: the later passes must not depend on which came first
    (measured: counting them cost 5 of 1,487 programs)."""

    def payload(i: int, args: str) -> dict[str, Any]:
        program = batch[i]
        return {
            "source": program["source"],
            "entry": program["entry"],
            "args": args,
            "tests": tests[i],
            "budget": max_steps,
        }

    runs: list[list[dict[str, Any]]] = [[] for _ in batch]
    start = 0
    for size in (*WAVES, None):
        stop = None if size is None else start + size
        jobs = [
            (i, payload(i, args))
            for i, candidates in enumerate(drawn)
            if len(runs[i]) == start and all(r["status"] not in _HOPELESS for r in runs[i])
            for args in candidates[start:stop]
        ]
        for (i, _), result in zip(jobs, pool.map("arcs", [p for _, p in jobs]), strict=True):
            runs[i].append(result)
        if stop is None:
            break
        start = stop
    return runs


@dataclass(frozen=True)
class _Config:
    """The inputs stage's shard job: everything a process needs to judge programs."""

    seed: int
    params: InputsParams
    execute: ExecuteParams
    grammar: Grammar
    pools: dict[str, list[str]]
    max_steps: int


@dataclass(frozen=True)
class _Checked:
    """What one program became: its case rows, or the drop reason; the statuses of its candidate
    runs (``STOPPED`` for the three stops) and of its ablation job (None: none ran); the spare
    rows of a kept program (``_spare``)."""

    rows: list[dict[str, Any]]
    drop: str | None
    statuses: list[str]
    ablation: str | None
    spares: list[dict[str, Any]]


@contextlib.contextmanager
def _open(config: _Config, cpus: int | None) -> Iterator[tuple[WorkerPool, WorkerPool]]:
    """The per-process state of the inputs stage: the candidates' pool (the candidate timeout)
    and the ablation jobs' pool, bounded by their line events, under a backstop far above it
    (``factory.quality.ablation.JOB_TIMEOUT_S``); ``execute.workers`` each, or ``cpus``."""
    execute = config.execute
    language = languages.language(config.grammar.language)
    runner = language.facet("runner")

    def worker_pool(timeout_s: float) -> WorkerPool:
        return WorkerPool(
            workers=cpus or execute.workers or None,
            hash_seed=execute.hash_seeds[0],
            timeout_s=timeout_s,
            memory_mb=execute.memory_mb,
            max_output_repr=min(execute.max_output_repr, config.params.max_output_repr),
            # `arcs` and `ablation` of the language's worker (the runner's own kinds after them)
            kinds={**language.facet("quality").KINDS, **runner.KINDS},
            worker=getattr(runner, "WORKER", None),  # None: the Python worker
        )

    with worker_pool(config.params.timeout_s) as pool, worker_pool(ABLATION_TIMEOUT_S) as ablation_pool:
        yield pool, ablation_pool


def _check(
    config: _Config, pools: tuple[WorkerPool, WorkerPool], programs: Iterable[dict[str, Any]]
) -> Iterator[_Checked]:
    """Draw, run, choose and check the inputs of every program, in order, 256 at a time."""
    pool, ablation_pool = pools
    params, grammar = config.params, config.grammar
    analysis = languages.language(grammar.language).facet("analysis")
    enabled = frozenset(params.checks)
    for batch in chunks(programs, 256):
        drawn = [candidates_for(program, config.pools, grammar, config.seed, params) for program in batch]
        tests = [analysis.branch_tests(program["source"]) for program in batch]
        all_runs = _run_candidates(pool, batch, drawn, tests, config.max_steps)
        judged, statuses = [], []
        for program, candidates, runs, lines in zip(batch, drawn, all_runs, tests, strict=True):
            statuses.append([STOPPED if r["status"] in _STOPPED else r["status"] for r in runs])
            j = _first_checks(
                program, candidates, runs, frozenset(lines), params.per_program, enabled, analysis
            )
            judged.append(j)
        if enabled & {check for check, _ in _VARIANTS}:
            two_way = checks.ONE_SIDED_BRANCH in enabled and params.per_program >= 2
            _ablate(ablation_pool, batch, judged, two_way)
        for program, j, ran in zip(batch, judged, statuses, strict=True):
            if j.drop is not None:
                yield _Checked([], j.drop, ran, j.ablation, [])
                continue
            outputs = Counter(run["output_repr"] for run in j.runs)
            rows = [
                _case(
                    program,
                    j.args[i],
                    len(j.runs[i].get("lines") or ()),
                    outputs[j.runs[i]["output_repr"]] / len(j.runs),
                )
                for i in j.chosen
            ]
            spares = [_spare(program, j.args[i], j.runs[i]) for i in range(len(j.args)) if i not in j.chosen]
            yield _Checked(rows, None, ran, j.ablation, spares)


def run_inputs_stage(
    seed: int,
    params: InputsParams,
    execute: ExecuteParams,
    grammar_dirs: str | Path | Sequence[str | Path],
    programs_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    pools_dir: str | Path | None = None,
    max_steps: int = TraceParams().max_steps,
    *,
    spares_dir: str | Path | None = None,
    backend: Backend | None = None,
) -> StageStats:
    """Draw, run, choose and check the inputs of every program; write ``out_dir`` (cases), the
    stats, when ``pools_dir`` is given the drawn pools (the release's quality figures draw from
    them), and when ``spares_dir`` is given the spares: each kept program's other candidates that
    ran ``ok``, with their outputs (``SPARES_SCHEMA``; the phase2 stage's hidden tests come from
    them). ``grammar_dirs``: the grammar folder of each language of the programs
    (``synthesize.grammars``); each program runs with its language's facets. A candidate past
    ``max_steps`` line events (the trace stage's limit) is not kept. ``backend``: where the
    programs' candidates run (default local). UserError when a language lacks a facet the stage
    needs, or a program's language has no grammar here."""
    stage_grammars = StageGrammars(grammar_dirs)
    present = {language_of(r) for batch in iter_rows(programs_dir, columns=["language"]) for r in batch}
    for name in sorted(present):
        stage_grammars.of(name, programs_dir)  # every language present has its grammar
    grammars = stage_grammars.grammars
    normalizers = {name: _check_facets(languages.language(name)) for name in grammars}
    enabled = frozenset(params.checks)
    status_counts: Counter = Counter()
    ablation_status: Counter = Counter()
    dropped_by_tier: dict[str, Counter] = {}
    pools = {
        name: draw_pools(
            programs_dir,
            stage_grammars.folders[name],
            seed,
            params.pool_size,
            execute.workers or None,
            params.related_share,
        )
        for name in grammars
        if name in present
    }

    # The distinct shapes kept (the release's near-duplicate key: programs that differ only in
    # names count once), each with the program the assemble stage keeps of it, the least id, and
    # that program's target: a shape counts for that target alone (``len(a)`` is the same program
    # for a set and a list). Another language's targets are named "<language>:<target>".
    shape_owner: dict[tuple[str, str], tuple[str, str]] = {}
    targets_seen: set[str] = set()

    def kept_by_target() -> Counter:
        return Counter(target for _, target in shape_owner.values())

    reserves_run: Counter = Counter()

    def target_of(program: dict[str, Any]) -> str:
        language = language_of(program)
        return program["target"] if language == DEFAULT_LANGUAGE else f"{language}:{program['target']}"

    def outcome(program: dict[str, Any], checked: _Checked) -> Outcome:
        targets_seen.add(target_of(program))
        status_counts.update(checked.statuses)
        if checked.ablation is not None:
            ablation_status[checked.ablation] += 1
        if checked.drop is not None:
            # Why a program's candidates failed is in candidate_status; running one
            # again in the execute stage (two seeds, a longer timeout) would only cost time.
            dropped_by_tier.setdefault(checked.drop, Counter())[program["tier"]] += 1
            return Outcome(drop=checked.drop, tier=program["tier"])
        normalize = normalizers[language_of(program)]
        tree = normalize.parse(program["source"])
        shape = (language_of(program), program["program_id"] if tree is None else normalize.program_key(tree))
        owner = (program["program_id"], target_of(program))
        shape_owner[shape] = min(shape_owner.get(shape, owner), owner)
        spares = checked.spares if spares_dir is not None else ()
        return Outcome(checked.rows, tier=program["tier"], side_rows=spares)

    def language_outcomes(language: str, programs: Iterator[dict[str, Any]]) -> Iterator[Outcome]:
        config = _Config(seed, params, execute, grammars[language], pools[language], max_steps)
        job = Shards(config, _open, _check)
        reserves: list[dict[str, Any]] = []

        def main() -> Iterator[dict[str, Any]]:
            for program in programs:
                if program.get("reserve"):
                    reserves.append(program)  # synthesize writes a language's reserves last
                else:
                    yield program

        for program, checked in run_shards(backend, job, main()):
            yield outcome(program, checked)
        # The main programs are judged: run the reserves of the targets they left short.
        least = params.min_programs_per_target
        kept = kept_by_target()
        short = {target_of(r) for r in reserves if kept[target_of(r)] < least}
        needed = [r for r in reserves if target_of(r) in short]
        checked_reserves = run_shards(backend, job, needed)
        for program in reserves:
            if target_of(program) not in short:
                yield Outcome(drop=RESERVE_UNUSED, tier=program["tier"])
                continue
            ran, checked = next(checked_reserves)
            assert ran["program_id"] == program["program_id"]  # the backend keeps the order
            reserves_run["run"] += 1
            result = outcome(program, checked)
            reserves_run["kept"] += result.drop is None
            yield result

    def outcomes(programs: Iterator[dict[str, Any]]) -> Iterator[Outcome]:
        for language, group in by_language(programs):
            yield from language_outcomes(language, group)

    def extra(tally: Tally) -> dict[str, Any]:
        kept = kept_by_target()
        return {
            "cases": tally.rows,
            "signatures": sum(len(p) for p in pools.values()),
            "candidate_status": dict(sorted(status_counts.items())),
            "checks": sorted(enabled),
            "ablation_status": dict(sorted(ablation_status.items())),
            "dropped_by_tier": {reason: tally.by_tier(c) for reason, c in sorted(dropped_by_tier.items())},
            "programs_kept_by_tier": tally.by_tier(tally.tiers_out),
            "programs_with_a_running_input_by_tier": tally.by_tier(
                tally.tiers_in - dropped_by_tier.get(NO_CANDIDATE_RAN, Counter())
            ),
            "reserve_programs": {"run": reserves_run["run"], "kept": reserves_run["kept"]},
            "targets_short": sorted(t for t in targets_seen if kept[t] < params.min_programs_per_target),
        }

    rows = (row for batch in iter_rows(programs_dir, batch_rows=256) for row in batch)
    output = Output(out_dir, CASES_SCHEMA, params.rows_per_shard)
    spares = None if spares_dir is None else Output(spares_dir, SPARES_SCHEMA, params.rows_per_shard)
    stats = run_stage(
        "inputs", rows, outcomes, output, stats_path, total=count_rows(programs_dir), extra=extra,
        side_output=spares, label="inputs: run candidates",
    )  # fmt: skip
    if pools_dir is not None:
        write_pools(pools, pools_dir)
    return stats


def _check_facets(language: languages.Language) -> Any:
    """The language's ``normalize`` facet, once every facet the stage uses is found (UserError,
    one line, for the first missing: before any drawing or running)."""
    language.facet("runner")
    language.facet("quality")
    language.facet("analysis")
    return language.facet("normalize")


def _spare(program: dict[str, Any], args: str, run: dict[str, Any]) -> dict[str, Any]:
    """The spares-table row of a candidate of ``program`` that ran ``ok`` and was not kept."""
    return {
        "program_id": program["program_id"],
        "language": language_of(program),
        "args": args,
        "output_repr": run["output_repr"],
        "output_type": run["output_type"],
    }


def _case(program: dict[str, Any], args: str, n_lines: int, output_share: float) -> dict[str, Any]:
    """The cases-table row of one chosen argument list of ``program`` (``output_share``: of the
    candidates that ran, the share that gave its output)."""
    return {
        "case_id": case_id(program["program_id"], args),
        "program_id": program["program_id"],
        "language": language_of(program),
        "source": program["source"],
        "entry": program["entry"],
        "args": args,
        "tier": program["tier"],
        "target": program["target"],
        "lines_covered": n_lines,
        "grammar_hash": program["grammar_hash"],
        "output_share": output_share,
    }
