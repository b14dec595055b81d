"""The difficulty stage: tasks → tasks in the band + the pass statistics of every judged task.

For each task the solver samples ``n`` completions (through the response cache); each is judged
by ``factory.scoring`` (input answers run in the untrusted sandbox). A sample *passes* when every
question of the item is right. Tasks whose passes lie in ``[min_pass, max_pass]`` are written to
``out_dir`` with ``solver_model``, ``n``, ``passes``, ``pass_rate``, ``mean_reward`` and
``unparsed``; the same statistics of *every* judged task go to ``pass_stats_dir`` (with
``in_band``), so a user can re-band without asking the model again (a rerun with a new band is
all cache hits anyway).

Off by default (``difficulty.enabled: false``): every task passes unjudged, with null statistics,
and the metrics say so loudly (``enabled: false`` and a ``notice``).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from factory.evaluate.metrics import verdict
from factory.evaluate.run import score_samples
from factory.io import ShardWriter, count_rows, iter_rows
from factory.params import DifficultyParams
from factory.progress import progress
from factory.solvers import CachedSolver, solver_from_params
from factory.stats import StageStats
from factory.tasks.stage import TASKS_SCHEMA

SOLVER_FIELDS: list[pa.Field[Any]] = [
    pa.field("solver_model", pa.string()),
    pa.field("n", pa.int32()),
    pa.field("passes", pa.int32()),
    pa.field("pass_rate", pa.float64()),
    pa.field("mean_reward", pa.float64()),
    pa.field("unparsed", pa.int32()),  # samples with no parseable answer block
]
DIFFICULTY_SCHEMA = pa.schema([*TASKS_SCHEMA, *SOLVER_FIELDS])
# The ignore: mypy joins these columns' different types (pyarrow-stubs) to object.
PASS_STATS_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("case_id", pa.string()),
        pa.field("family", pa.string()),
        pa.field("tier", pa.int32()),
        *SOLVER_FIELDS,
        pa.field("in_band", pa.bool_()),
    ]
)
OFF_NOTICE = (
    "DIFFICULTY FILTER OFF (difficulty.enabled: false): no solver model judged these tasks; every "
    "task passes unfiltered. Turn it on with `dvc exp run -S difficulty.enabled=true` (embedded CPU "
    "model) or on a GPU `dvc exp run -S difficulty.enabled=true -S difficulty.solver=vllm "
    "-S difficulty.model=<model>`."
)


@dataclass
class Judged:
    """The pass statistics of one task over its n samples."""

    passes: int
    n: int
    mean_reward: float
    unparsed: int

    @property
    def pass_rate(self) -> float:
        return self.passes / self.n


def judge_samples(rows: Sequence[Mapping[str, Any]], samples: Sequence[Sequence[str]]) -> list[Judged]:
    """Score ``samples[i]`` (n completions) against task ``rows[i]`` with the one scorer; a sample
    passes when every question is right."""
    judged = []
    for results in score_samples(rows, samples):
        verdicts = [verdict(r) for r in results]
        mean_reward = sum(r.reward for r in results) / len(results)
        judged.append(Judged(verdicts.count("right"), len(results), mean_reward, verdicts.count("unparsed")))
    return judged


class _Tally:
    """Counts by tier and family, and the histogram of passes, for the metrics."""

    def __init__(self) -> None:
        self.by_tier: dict[str, Counter[str]] = defaultdict(Counter)
        self.by_family: dict[str, Counter[str]] = defaultdict(Counter)
        self.pass_rate_sum: defaultdict[str, float] = defaultdict(float)
        self.passes: Counter[int] = Counter()

    def add(self, row: Mapping[str, Any], judged: Judged | None, kept: bool) -> None:
        for table, key in ((self.by_tier, str(row.get("tier"))), (self.by_family, row["family"])):
            table[key]["in"] += 1
            table[key]["kept"] += kept
        if judged is not None:
            self.by_family[row["family"]]["judged"] += 1
            self.pass_rate_sum[row["family"]] += judged.pass_rate
            self.passes[judged.passes] += 1

    def to_dict(self) -> dict[str, Any]:
        families: dict[str, dict[str, float]] = {}
        for family, c in sorted(self.by_family.items()):
            families[family] = dict(sorted(c.items()))
            if c["judged"]:
                families[family]["mean_pass_rate"] = round(self.pass_rate_sum[family] / c["judged"], 6)
        tiers = sorted(self.by_tier.items(), key=lambda kv: (not kv[0].isdigit(), kv[0].zfill(4)))
        return {
            "by_tier": {tier: dict(sorted(c.items())) for tier, c in tiers},
            "by_family": families,
            "passes_histogram": {str(k): v for k, v in sorted(self.passes.items())},
        }


@dataclass
class DifficultyRun:
    """What a run did, beyond the metrics (model calls are not in the metrics: they differ
    between a first run and a cached rerun, while the metrics must not)."""

    stats: StageStats
    model_calls: int
    prompts_asked: int
    cache_hits: int


def run_difficulty_stage(
    tasks_dir: str | Path,
    out_dir: str | Path,
    pass_stats_dir: str | Path,
    stats_path: str | Path,
    params: DifficultyParams,
    seed: int,
    solver: CachedSolver | None = None,
) -> DifficultyRun:
    """Judge the tasks of ``tasks_dir`` (when enabled) and write the band, the pass statistics
    and the metrics. ``solver`` overrides the one the params describe (tests pass their own)."""
    p = params
    total = count_rows(tasks_dir)
    stats = StageStats("difficulty")
    tally = _Tally()
    if p.enabled and solver is None:
        solver = solver_from_params(p, "difficulty")
    solver_model = solver.model_id if (p.enabled and solver is not None) else None
    with (
        ShardWriter(out_dir, DIFFICULTY_SCHEMA, rows_per_shard=p.rows_per_shard) as writer,
        ShardWriter(pass_stats_dir, PASS_STATS_SCHEMA, rows_per_shard=p.rows_per_shard) as pass_writer,
        progress("difficulty", total) as advance,
    ):
        seen = 0
        for batch in iter_rows(tasks_dir, batch_rows=p.chunk):
            stats.items_in += len(batch)
            if not p.enabled:
                for row in batch:
                    writer.write(_with_stats(row, None, None))
                    tally.add(row, None, True)
                stats.items_out += len(batch)
                advance(len(batch))
                continue
            assert solver is not None
            take = len(batch) if not p.limit else max(0, min(len(batch), p.limit - seen))
            judged_rows, rest = batch[:take], batch[take:]
            seen += take
            if rest:
                stats.drop("not_judged_over_limit", len(rest))
                for row in rest:
                    tally.add(row, None, False)
            if judged_rows:
                prompts = [row["prompt"] for row in judged_rows]
                samples = solver.generate(prompts, p.n, p.temperature, p.top_p, p.max_tokens, seed)
                for row, judged in zip(judged_rows, judge_samples(judged_rows, samples), strict=True):
                    kept = p.min_pass <= judged.passes <= p.max_pass
                    pass_writer.write({**_pass_stats(row, judged, solver_model), "in_band": kept})
                    tally.add(row, judged, kept)
                    if kept:
                        writer.write(_with_stats(row, judged, solver_model))
                        stats.items_out += 1
                    else:
                        stats.drop("too_easy" if judged.passes > p.max_pass else "too_hard")
            advance(len(batch))
    stats.extra.update(tally.to_dict())
    stats.extra.update(
        {
            "enabled": p.enabled,
            "solver": p.solver if p.enabled else None,
            "solver_model": solver_model,
            "n": p.n if p.enabled else 0,
            "min_pass": p.min_pass,
            "max_pass": p.max_pass,
            "sampling": {
                "temperature": p.temperature,
                "top_p": p.top_p,
                "max_tokens": p.max_tokens,
                "seed": seed,
            },
            "limit": p.limit,
        }
    )
    if not p.enabled:
        stats.extra["notice"] = OFF_NOTICE
    stats.write(stats_path)
    return DifficultyRun(
        stats,
        model_calls=solver.model_calls if solver else 0,
        prompts_asked=solver.prompts_asked if solver else 0,
        cache_hits=solver.cache_hits if solver else 0,
    )


def _pass_stats(row: Mapping[str, Any], judged: Judged | None, solver_model: str | None) -> dict[str, Any]:
    if judged is None:
        values: dict[str, Any] = dict.fromkeys(("passes", "pass_rate", "mean_reward", "unparsed"))
        return {"solver_model": None, "n": 0, **values}
    return {
        "task_id": row["task_id"],
        "case_id": row.get("case_id"),
        "family": row.get("family"),
        "tier": row.get("tier"),
        "solver_model": solver_model,
        "n": judged.n,
        "passes": judged.passes,
        "pass_rate": judged.pass_rate,
        "mean_reward": judged.mean_reward,
        "unparsed": judged.unparsed,
    }


def _with_stats(row: Mapping[str, Any], judged: Judged | None, solver_model: str | None) -> dict[str, Any]:
    base = {f.name: row.get(f.name) for f in TASKS_SCHEMA}
    stats = _pass_stats(row, judged, solver_model)
    return {**base, **{f.name: stats[f.name] for f in SOLVER_FIELDS}}


def summary_line(run: DifficultyRun) -> str:
    """One line for the terminal: model calls and cache hits of this run."""
    return json.dumps(
        {"model_calls": run.model_calls, "prompts_asked": run.prompts_asked, "cache_hits": run.cache_hits}
    )
