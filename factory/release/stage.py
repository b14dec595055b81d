"""The assemble stage: tasks (after the difficulty filter, when there is one) → ``data/release/``.

Two passes over the input, so memory holds per-program decisions, not rows:

1. per row: an exact duplicate (a ``task_id`` seen before) is dropped; per program: contaminated
   (a benchmark's renamed-AST key or n-gram share, see ``benchmarks``), else its near-duplicate key
   (renamed AST); of programs sharing a key the one with the smallest ``program_id`` stays. The
   split comes from the program id; the ``phase1`` mix is chosen by family shares.
2. the rows are streamed again into ``<config>/<split>/part-NNNNN.parquet`` and counted for the
   card, the plots and the metrics.

The release folder appears atomically; same input and params give byte-identical files.
"""

from __future__ import annotations

import shutil
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from factory.errors import UserError
from factory.io import ShardWriter, count_rows, parse_json_object, replace_dir, shard_paths, temp_sibling
from factory.params import AssembleParams
from factory.progress import progress
from factory.release.benchmarks import BenchmarkIndex
from factory.release.card import render_card
from factory.release.configs import ConfigSpec, release_configs
from factory.release.normalize import parse, program_key
from factory.release.plots import write_plots
from factory.release.provenance import difficulty_provenance, release_provenance
from factory.release.splits import SPLITS, select_by_shares, split_of, unit_hash
from factory.stats import StageStats
from factory.synth.stage import program_id as compute_program_id
from factory.tasks.stage import _Tally

REQUIRED = ("task_id", "family", "source")
PASS1_COLUMNS = ("task_id", "program_id", "family", "source")
BATCH_ROWS = 1_000


@dataclass
class _Program:
    split: str
    drop: str | None = None  # contaminated:<benchmark>, near_duplicate, unparsable
    method: str | None = None  # ast or ngram, for contamination
    key: str | None = None


@dataclass
class _Plan:
    """Pass-1 results: each row's fate and each program's decision."""

    programs: dict[str, _Program] = field(default_factory=dict)
    row_drop: dict[tuple[str, int], str] = field(default_factory=dict)  # (input, ordinal) -> reason
    phase_rows: dict[str, set] = field(default_factory=dict)  # config -> chosen (input, ordinal)


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


def _batches(in_dir: Path, columns: list[str] | None = None) -> Iterator[list[dict[str, Any]]]:
    for path in shard_paths(in_dir):
        try:
            pf = pq.ParquetFile(path)
            for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=columns):
                yield batch.to_pylist()
        except (OSError, pa.ArrowInvalid) as exc:
            raise UserError(f"{path}: unreadable parquet shard ({exc})".splitlines()[0]) from None


def _plan(
    inputs: dict[str, Path],
    configs: list[ConfigSpec],
    params: AssembleParams,
    index: BenchmarkIndex,
    total: int,
) -> _Plan:
    plan = _Plan()
    seen: set[str] = set()
    first_of_key: dict[str, str] = {}
    families: dict[tuple[str, int], tuple[str, str, str]] = {}  # row -> (family, program_id, task_id)
    with progress("assemble: dedup and decontaminate", total) as advance:
        for name, in_dir in inputs.items():
            columns = [c for c in PASS1_COLUMNS if c in _schema(in_dir).names]
            ordinal = 0
            for batch in _batches(in_dir, columns):
                for row in batch:
                    where = (name, ordinal)
                    ordinal += 1
                    if row["task_id"] in seen:
                        plan.row_drop[where] = "exact_duplicate"
                        continue
                    seen.add(row["task_id"])
                    pid = row.get("program_id") or compute_program_id_safe(row["source"])
                    program = plan.programs.get(pid)
                    if program is None:
                        program = plan.programs[pid] = _decide(pid, row["source"], params, index)
                        if program.key is not None:
                            first = first_of_key.get(program.key)
                            if first is None or pid < first:
                                first_of_key[program.key] = pid
                    families[where] = (row["family"], pid, row["task_id"])
                advance(len(batch))
    for pid, program in plan.programs.items():
        if program.drop is None:
            assert program.key is not None  # _decide keys every program it does not drop
            if first_of_key[program.key] != pid:
                program.drop = "near_duplicate"
    candidates: dict[str, dict[str, dict[str, list]]] = {
        c.name: defaultdict(lambda: defaultdict(list)) for c in configs
    }
    for where, (family, pid, tid) in families.items():
        program = plan.programs[pid]
        if program.drop is not None:
            plan.row_drop[where] = program.drop
            continue
        for config in configs:
            if config.shares and config.source == where[0] and config.wants(family):
                # by a hash of the item, so the choice does not depend on the order of the rows
                candidates[config.name][program.split][family].append((unit_hash(tid, config.name), where))
    for config in configs:
        if config.shares:
            chosen: set = set()
            for split in SPLITS:
                chosen |= select_by_shares(candidates[config.name][split], config.shares)
            plan.phase_rows[config.name] = chosen
    return plan


def compute_program_id_safe(source: str) -> str:
    """``program_id`` for a row without one (external items); unparsable sources hash as text."""
    try:
        return compute_program_id(source)
    except (SyntaxError, ValueError):
        return "unparsable:" + str(unit_hash(source))


def _decide(pid: str, source: str, params: AssembleParams, index: BenchmarkIndex) -> _Program:
    program = _Program(split=split_of(pid, params.test_share))
    tree = parse(source)
    if tree is None:
        program.drop = "unparsable"
        return program
    hit = index.match_tree(tree)
    if hit is not None:
        program.drop, program.method = f"contaminated:{hit[0]}", hit[1]
        return program
    program.key = program_key(tree, params.near_dup_literals)
    return program


@dataclass
class _Counts:
    """What the card, the plots and the metrics report about the released rows."""

    rows: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))  # config -> split -> n
    tier_family: Counter = field(default_factory=Counter)  # (tier, family) -> items
    trace_lengths: dict[str, int] = field(default_factory=dict)  # case_id -> trace length
    tally: _Tally = field(default_factory=_Tally)
    grammar_hashes: set[str] = field(default_factory=set)


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
) -> StageStats:
    """Assemble the release folder ``out_dir`` from the tasks table ``tasks_dir``."""
    stats = StageStats("assemble")
    if "tasks" in (extra_inputs or {}):
        raise UserError("--extra-input tasks: the name 'tasks' is the main input (--tasks)")
    inputs = {"tasks": Path(tasks_dir), **{k: Path(v) for k, v in (extra_inputs or {}).items()}}
    schemas = {name: _schema(d) for name, d in inputs.items()}
    difficulty = difficulty_provenance(Path(difficulty_stats) if difficulty_stats else None)
    index = BenchmarkIndex.build(
        params.benchmarks, params.ngram, params.ngram_threshold, params.near_dup_literals, Path(root)
    )
    total = sum(count_rows(d) for d in inputs.values())
    families = sorted({f for b in _batches(inputs["tasks"], ["family"]) for f in (r["family"] for r in b)})
    configs = release_configs(params.phase1, families, [n for n in inputs if n != "tasks"])
    plan = _plan(inputs, configs, params, index, total)

    counts = _Counts()
    out_dir = Path(out_dir)
    tmp = temp_sibling(out_dir, directory=True)
    writers: dict[tuple[str, str], ShardWriter] = {}
    uncounted = {c.source for c in configs if not c.counted}
    try:
        with progress("assemble: write configs", total) as advance:
            for name, in_dir in inputs.items():
                ordinal = 0
                for batch in _batches(in_dir):
                    for row in batch:
                        where = (name, ordinal)
                        ordinal += 1
                        stats.items_in += 1
                        reason = plan.row_drop.get(where)
                        if reason is not None:
                            stats.drop(reason)
                            continue
                        stats.items_out += 1
                        pid = row.get("program_id") or compute_program_id_safe(row["source"])
                        split = plan.programs[pid].split
                        _count(counts, row, name, name not in uncounted)
                        for config in configs:
                            if config.source != name or not config.wants(row["family"]):
                                continue
                            if config.shares and where not in plan.phase_rows[config.name]:
                                continue
                            writer = writers.get((config.name, split))
                            if writer is None:
                                writer = writers[(config.name, split)] = ShardWriter(
                                    tmp / config.name / split, schemas[name], params.rows_per_shard
                                )
                            writer.write(row)
                            counts.rows[config.name][split] += 1
                    advance(len(batch))
        for writer in writers.values():
            writer.close()
        _finish_stats(stats, plan, counts, index, configs)
        summary = _summary(stats, counts, configs, metrics_dir)
        prov = release_provenance(
            all_params or {"assemble": params.model_dump()},
            sorted(counts.grammar_hashes),
            Path(lock_path),
            difficulty,
        )
        write_plots(tmp / "assets", Path(plots_dir) if plots_dir else None, summary)
        (tmp / "README.md").write_text(render_card(summary, configs, schemas, prov))
        replace_dir(tmp, out_dir)
    except BaseException:
        for writer in writers.values():
            writer.abort()
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


def _count(counts: _Counts, row: dict[str, Any], source: str, item: bool = True) -> None:
    family = row["family"]
    if item:
        counts.tier_family[(row.get("tier"), family)] += 1
    if row.get("grammar_hash"):
        counts.grammar_hashes.add(row["grammar_hash"])
    if row.get("case_id") and row.get("trace_length") is not None:
        counts.trace_lengths[row["case_id"]] = row["trace_length"]
    if source == "tasks" and "questions" in row and "n_questions" in row:
        counts.tally.add(row)


def _finish_stats(
    stats: StageStats, plan: _Plan, counts: _Counts, index: BenchmarkIndex, configs: list[ConfigSpec]
) -> None:
    programs = Counter(p.drop or "kept" for p in plan.programs.values())
    decon: dict[str, dict[str, int]] = {name: {"ast": 0, "ngram": 0} for name in index.names}
    for p in plan.programs.values():
        if p.drop and p.drop.startswith("contaminated:"):
            assert p.method is not None  # _decide gives every contaminated program its method
            decon[p.drop.split(":", 1)[1]][p.method] += 1
    kept_split = Counter(p.split for p in plan.programs.values() if p.drop is None)
    stats.extra.update(
        {
            "programs": {"in": len(plan.programs), **dict(sorted(programs.items()))},
            "programs_by_split": {s: kept_split.get(s, 0) for s in SPLITS},
            "decontamination": {
                "benchmark_programs": dict(index.programs),
                "programs_removed": decon,
                "ngram": index.n,
                "ngram_threshold": index.threshold,
            },
            "configs": {
                c.name: {s: counts.rows[c.name].get(s, 0) for s in SPLITS}
                for c in configs
                if counts.rows[c.name]
            },
            "items_by_tier_family": {
                f"{tier}/{family}": n for (tier, family), n in sorted(counts.tier_family.items(), key=str)
            },
        }
    )


def _summary(
    stats: StageStats, counts: _Counts, configs: list[ConfigSpec], metrics_dir: str | Path | None
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
    lengths = Counter(counts.trace_lengths.values())
    return {
        "stats": own,
        "stages": stages,
        "configs": {c.name: dict(counts.rows[c.name]) for c in configs if counts.rows[c.name]},
        "tier_family": {f"{t}\t{f}": n for (t, f), n in counts.tier_family.items()},
        "trace_lengths": dict(sorted(lengths.items())),
        "answers": counts.tally.to_dict()["answers"] if counts.tally.items else {},
    }
