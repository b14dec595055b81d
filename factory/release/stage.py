"""The assemble stage: tasks (after the difficulty filter, when there is one) → ``data/release/``.

Two passes over the input, so memory holds a narrow table of the rows, not the rows:

1. the plan (``plan``): each row's fate and configs, decided in polars tables: exact duplicates,
   contaminated and near-duplicate programs dropped, the split by program id, the ``phase1`` mix
   chosen by family shares. The card's, the plots' and the metrics' counts are its aggregations
   (``counts``).
2. the rows are streamed again (pyarrow) into ``<config>/<split>/part-NNNNN.parquet``, each batch
   filtered by the plan.

The release folder appears atomically; same input and params give byte-identical files.
"""

from __future__ import annotations

import multiprocessing
import shutil
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from functools import partial
from itertools import product
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from factory.errors import UserError
from factory.inputs.pool_table import pools_by_language
from factory.io import ShardWriter, parse_json_object, replace_dir, shard_paths, temp_sibling
from factory.params import AssembleParams
from factory.progress import progress
from factory.quality.measure import RELEASE_COLUMNS, release_quality
from factory.release import counts
from factory.release.benchmarks import BenchmarkIndex, FingerprintMap
from factory.release.card import render_card
from factory.release.configs import ConfigSpec, release_configs
from factory.release.plan import config_column, decide_programs, plan_rows, read_rows
from factory.release.plots import write_plots
from factory.release.provenance import difficulty_provenance, release_provenance
from factory.release.splits import SPLITS
from factory.sandbox.os_helpers import default_workers
from factory.stats import StageStats
from factory.tasks.tally import ItemTally

REQUIRED = ("task_id", "family", "source")
TALLY_COLUMNS = ["family", "tier", "n_questions", "questions"]
BATCH_ROWS = 1_000
#: Sources per task of a fingerprint process: a program takes about a millisecond.
FINGERPRINT_CHUNK = 64


def _schema(in_dir: Path) -> pa.Schema:
    paths = shard_paths(in_dir)
    if not paths:
        raise UserError(f"{in_dir}: no parquet shards (run the previous stage first)")
    try:
        schema = pq.read_schema(paths[0])
    except (OSError, pa.ArrowInvalid) as exc:
        raise UserError(f"{paths[0]}: not a parquet file ({exc})".splitlines()[0]) from None
    missing = [c for c in REQUIRED if c not in schema.names]
    if missing:
        raise UserError(f"{in_dir}: not a tasks table (no column '{missing[0]}')")
    return schema.remove_metadata()


@contextmanager
def _fingerprint_processes() -> Iterator[FingerprintMap]:
    """A ``FingerprintMap`` over one process per core, in order (the same fingerprints as
    ``map``): on 2 idle cores the benchmark index and the decisions took 2.7-3.3 s in the stage's
    process, 1.65-2.1 s over two (a third of the stage's time). Spawned, not forked: the stage's
    process runs the threads of polars and Arrow."""
    workers = default_workers()
    if workers == 1:
        yield map
        return
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as processes:
        yield partial(processes.map, chunksize=FINGERPRINT_CHUNK)


def _batches(in_dir: Path) -> Iterator[pa.RecordBatch]:
    for path in shard_paths(in_dir):
        try:
            yield from pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS)
        except (OSError, pa.ArrowInvalid) as exc:
            raise UserError(f"{path}: unreadable parquet shard ({exc})".splitlines()[0]) from None


class _ConfigWriters:
    """One ``ShardWriter`` per config and split, opened at its first row (a split without rows has
    no folder)."""

    def __init__(self, root: Path, schemas: Mapping[str, pa.Schema], rows_per_shard: int) -> None:
        self.root, self.schemas, self.rows_per_shard = root, schemas, rows_per_shard
        self.writers: dict[tuple[str, str], ShardWriter] = {}

    def write(self, config: ConfigSpec, split: str, rows: pa.RecordBatch) -> None:
        writer = self.writers.get((config.name, split))
        if writer is None:
            writer = self.writers[(config.name, split)] = ShardWriter(
                self.root / config.name / split, self.schemas[config.source], self.rows_per_shard
            )
        writer.write_table(rows)

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()

    def abort(self) -> None:
        for writer in self.writers.values():
            writer.abort()


def _write_input(
    in_dir: Path,
    fates: pl.DataFrame,
    configs: list[ConfigSpec],
    writers: _ConfigWriters,
    tally: ItemTally | None,
    advance: Callable[[int], None],
    kept: list[dict[str, Any]] | None = None,
) -> None:
    """Stream the rows of one input into the writers of its ``configs``, each batch filtered by the
    plan's rows of that input (``fates``, in the same order); count the released rows in ``tally``
    and keep their ``RELEASE_COLUMNS`` in ``kept`` (for the quality figures)."""
    offset = 0
    for batch in _batches(in_dir):
        part = fates.slice(offset, batch.num_rows)
        offset += batch.num_rows
        for config, split in product(configs, SPLITS):
            mask = part.get_column(config_column(config.name)) & (part.get_column("split") == split)
            if mask.any():
                writers.write(config, split, batch.filter(mask.to_arrow()))
        if tally is not None or kept is not None:
            released = part.get_column("drop").is_null().to_arrow()
        if tally is not None:
            for row in batch.select(TALLY_COLUMNS).filter(released).to_pylist():
                tally.add(row)
        if kept is not None:
            columns = [*RELEASE_COLUMNS, *(["language"] if "language" in batch.schema.names else [])]
            kept += batch.select(columns).filter(released).to_pylist()
        advance(batch.num_rows)


def run_assemble_stage(
    tasks_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    params: AssembleParams,
    *,
    all_params: dict[str, Any] | None = None,
    metrics_dir: str | Path | None = None,
    plots_dir: str | Path | None = None,
    difficulty_stats: str | Path | None = None,
    lock_path: str | Path = "dvc.lock",
    root: str | Path = ".",
    extra_inputs: Mapping[str, str | Path] | None = None,
    pools_dir: str | Path | None = None,
) -> StageStats:
    """Assemble the release folder ``out_dir`` from the tasks table ``tasks_dir``. ``pools_dir``:
    the inputs stage's argument pools, for the quality figures that run programs on random
    inputs (without it those figures are not measured)."""
    stats = StageStats("assemble")
    if "tasks" in (extra_inputs or {}):
        raise UserError("--extra-input tasks: the name 'tasks' is the main input (--tasks)")
    inputs = {"tasks": Path(tasks_dir), **{k: Path(v) for k, v in (extra_inputs or {}).items()}}
    schemas = {name: _schema(d) for name, d in inputs.items()}
    pools = pools_by_language(pools_dir) if pools_dir is not None else None  # missing: fail first
    difficulty = difficulty_provenance(Path(difficulty_stats) if difficulty_stats else None)
    with _fingerprint_processes() as fingerprints:
        index = BenchmarkIndex.build(
            params.benchmarks,
            params.ngram,
            params.ngram_threshold,
            params.near_dup_literals,
            Path(root),
            common=params.ngram_common,
            fingerprints=fingerprints,
        )
        rows = read_rows(inputs, schemas)
        in_tasks = rows.filter(pl.col("input") == "tasks")
        families = in_tasks.get_column("family").unique().sort().to_list()
        configs = release_configs(
            params.phase1,
            families,
            [n for n in inputs if n != "tasks"],
            in_tasks.get_column("language").unique().sort().to_list(),
        )
        programs = decide_programs(rows, params, index, fingerprints)
    plan = plan_rows(rows, programs, configs)
    del rows  # the sources: the plan keeps ids and counts only

    out_dir = Path(out_dir)
    tmp = temp_sibling(out_dir, directory=True)
    writers = _ConfigWriters(tmp, schemas, params.rows_per_shard)
    tally = ItemTally()
    measured = set(RELEASE_COLUMNS) <= set(schemas["tasks"].names)
    kept: list[dict[str, Any]] = []
    try:
        with progress("assemble: write configs", plan.height) as advance:
            for name, in_dir in inputs.items():
                tallied = name == "tasks" and {"questions", "n_questions"} <= set(schemas[name].names)
                fates = plan.filter(pl.col("input") == name)
                own = [c for c in configs if c.source == name]
                keep = kept if name == "tasks" and measured else None
                _write_input(in_dir, fates, own, writers, tally if tallied else None, advance, keep)
        writers.close()
        if kept:
            with progress("assemble: quality figures", 1) as advance:
                stats.extra["quality"] = release_quality(kept, pools)
                advance(1)
        del kept
        rows_per_config = counts.config_rows(plan, configs)
        tier_family = counts.tier_family(plan, configs)
        _finish_stats(stats, plan, programs, index, configs, rows_per_config, tier_family)
        summary = _summary(stats, plan, rows_per_config, tier_family, tally, metrics_dir)
        prov = release_provenance(
            all_params or {"assemble": params.model_dump()},
            counts.grammar_hashes(plan),
            Path(lock_path),
            difficulty,
        )
        write_plots(tmp / "assets", Path(plots_dir) if plots_dir else None, summary)
        (tmp / "README.md").write_text(render_card(summary, configs, schemas, prov))
        replace_dir(tmp, out_dir)
    except BaseException:
        writers.abort()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    stats.write(stats_path)
    return stats


def release_note(out_dir: str | Path, stats: StageStats) -> str:
    """The line that ends a build: where the release is, its rows per config, how to load it."""
    configs = stats.extra.get("configs", {})
    rows = {name: sum(splits.values()) for name, splits in configs.items()}
    default = "phase1" if "phase1" in rows else next(iter(rows), "")
    shown = ", ".join(f"{name} {n:,}" for name, n in rows.items())
    return (
        f"release: {out_dir}/ ({stats.items_out:,} rows; by config: {shown}); "
        f"load it with datasets.load_dataset({str(out_dir)!r}, {default!r}) or read {out_dir}/README.md"
    )


def _finish_stats(
    stats: StageStats,
    plan: pl.DataFrame,
    programs: pl.DataFrame,
    index: BenchmarkIndex,
    configs: list[ConfigSpec],
    rows_per_config: dict[str, dict[str, int]],
    tier_family: dict[tuple[Any, str], int],
) -> None:
    stats.items_in = plan.height
    stats.items_out = plan.height
    for reason, n in sorted(counts.drops(plan).items()):
        stats.drop(reason, n)
        stats.items_out -= n
    program_stats = counts.program_stats(programs, index.names)
    stats.extra.update(
        {
            "programs": program_stats["programs"],
            "programs_by_split": program_stats["programs_by_split"],
            "decontamination": {
                "benchmark_programs": dict(index.programs),
                "programs_removed": program_stats["programs_removed"],
                "ngram": index.n,
                "ngram_threshold": index.threshold,
                "ngram_common": index.common,
            },
            "configs": {
                c.name: {s: rows_per_config[c.name].get(s, 0) for s in SPLITS}
                for c in configs
                if c.name in rows_per_config
            },
            "items_by_tier_family": {
                f"{tier}/{family}": n for (tier, family), n in sorted(tier_family.items(), key=str)
            },
            "items_by_language_family": {
                f"{language}/{family}": n
                for (language, family), n in sorted(counts.language_family(plan, configs).items())
            },
        }
    )


def _summary(
    stats: StageStats,
    plan: pl.DataFrame,
    rows_per_config: dict[str, dict[str, int]],
    tier_family: dict[tuple[Any, str], int],
    tally: ItemTally,
    metrics_dir: str | Path | None,
) -> dict[str, Any]:
    """Everything the card and the plots show, as plain data."""
    stages = []
    if metrics_dir is not None:
        for name in ("synthesize", "inputs", "execute", "trace", "tasks", "difficulty"):
            path = Path(metrics_dir) / f"{name}.json"
            if path.is_file():
                m = parse_json_object(path.read_text(), str(path))
                stages.append(
                    {
                        "stage": name,
                        "in": m.get("in", 0),
                        "out": m.get("out", 0),
                        "dropped": m.get("dropped", {}),
                    }
                )
    own = stats.to_dict()
    stages.append({"stage": "assemble", "in": own["in"], "out": own["out"], "dropped": own["dropped"]})
    return {
        "stats": own,
        "stages": stages,
        "configs": rows_per_config,
        "tier_family": {f"{t}\t{f}": n for (t, f), n in tier_family.items()},
        "language_family": stats.extra["items_by_language_family"],
        "trace_lengths": counts.trace_lengths(plan),
        "answers": tally.to_dict()["answers"] if tally.items else {},
        "quality": stats.extra.get("quality"),
    }
