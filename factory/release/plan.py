"""The assemble stage's plan: every input row's fate, decided in polars tables before a row is written.

``read_rows`` loads a narrow table of the input rows (ids, family, tier, trace length, the
program's source; never the prompts or questions). ``decide_programs`` gives each program its split
and, when it goes, the reason: unparsable, contaminated (a benchmark's renamed-AST key or n-gram
share, see ``benchmarks``) or a near duplicate (of the programs sharing a renamed-AST key, the one
with the smallest ``program_id`` stays). ``plan_rows`` drops exact duplicates (a ``task_id`` seen
before) and the rows of dropped programs, and adds one boolean column per config (``config_column``):
the rows it releases (a mixed config's rows are chosen by family shares, per split).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from factory import languages
from factory.contracts import program_id as compute_program_id
from factory.errors import UserError
from factory.io import shard_paths
from factory.params import AssembleParams
from factory.progress import progress
from factory.release.benchmarks import BENCHMARK_LANGUAGE, BenchmarkIndex, FingerprintMap
from factory.release.configs import ConfigSpec
from factory.release.normalize import Fingerprint, parse, program_key
from factory.release.splits import SPLITS, select_by_shares, split_of, unit_hash
from factory.stage import DEFAULT_LANGUAGE

#: The columns the plan reads, with their type where an input lacks one (e.g. ``sft`` has no
#: ``trace_length``).
PLAN_COLUMNS: dict[str, type[pl.DataType]] = {
    "task_id": pl.String,
    "program_id": pl.String,
    "language": pl.String,
    "family": pl.String,
    "source": pl.String,
    "tier": pl.Int64,
    "case_id": pl.String,
    "trace_length": pl.Int64,
    "grammar_hash": pl.String,
}
PROGRAM_SCHEMA = {
    "program_id": pl.String,
    "split": pl.String,
    "drop": pl.String,  # contaminated:<benchmark>, near_duplicate, unparsable; null when kept
    "method": pl.String,  # ast or ngram, for contamination
    "key": pl.String,  # the near-duplicate key (renamed AST)
}


def compute_program_id_safe(source: str) -> str:
    """``program_id`` for a row without one (external items); unparsable sources hash as text."""
    try:
        return compute_program_id(source)
    except (SyntaxError, ValueError):
        return "unparsable:" + str(unit_hash(source))


def read_columns(in_dir: Path, columns: list[str]) -> pa.Table:
    """``columns`` of every shard of ``in_dir``; an unreadable shard is a UserError naming it."""
    tables = []
    for path in shard_paths(in_dir):
        try:
            # ParquetFile, not pq.read_table: that one imports pyarrow.dataset (and pandas), 0.5 s
            tables.append(pq.ParquetFile(path).read(columns=columns).replace_schema_metadata(None))
        except (OSError, pa.ArrowInvalid) as exc:
            raise UserError(f"{path}: unreadable parquet shard ({exc})".splitlines()[0]) from None
    return pa.concat_tables(tables)


def read_rows(inputs: Mapping[str, Path], schemas: Mapping[str, pa.Schema]) -> pl.DataFrame:
    """One row per input row, inputs in order: ``row`` (its position in all), ``input``, ``ordinal``
    (its position in its input) and the ``PLAN_COLUMNS`` (null where the input has no such column;
    ``program_id`` computed from the source where a row has none)."""
    frames = []
    for name, in_dir in inputs.items():
        present = [c for c in PLAN_COLUMNS if c in schemas[name].names]
        frame = pl.DataFrame(read_columns(in_dir, present))
        absent = [pl.lit(None, dtype).alias(c) for c, dtype in PLAN_COLUMNS.items() if c not in present]
        frames.append(
            frame.with_columns(*absent)
            .select(pl.lit(name).alias("input"), pl.int_range(pl.len()).alias("ordinal"), *PLAN_COLUMNS)
            .with_columns(_program_ids(), pl.col("language").fill_null(DEFAULT_LANGUAGE))
        )
    return pl.concat(frames, how="vertical_relaxed").with_row_index("row")


def _program_ids() -> pl.Expr:
    pid = pl.col("program_id")
    given = pid.is_not_null() & (pid != "")
    # null sources are skipped, so the (parsing) id is computed only for rows without one
    computed = (
        pl.when(~given).then(pl.col("source")).map_elements(compute_program_id_safe, return_dtype=pl.String)
    )
    return pl.when(given).then(pid).otherwise(computed).alias("program_id")


def decide_programs(
    rows: pl.DataFrame, params: AssembleParams, index: BenchmarkIndex, fingerprints: FingerprintMap = map
) -> pl.DataFrame:
    """One row per program of ``rows``, judged on the source of its first row that is not an exact
    duplicate: ``PROGRAM_SCHEMA``. ``fingerprints``: how the Python programs' fingerprints are
    computed (``benchmarks.FingerprintMap``)."""
    firsts = rows.filter(pl.col("task_id").is_first_distinct()).unique(
        "program_id", keep="first", maintain_order=True
    )
    firsts = firsts.select("program_id", "source", "language")
    python = firsts.filter(pl.col("language") == BENCHMARK_LANGUAGE).get_column("source").to_list()
    python_prints = iter(fingerprints(index.fingerprinter(), python))
    decisions = []
    with progress("assemble: dedup and decontaminate", firsts.height) as advance:
        for pid, source, language in firsts.iter_rows():
            if language == BENCHMARK_LANGUAGE:
                decisions.append(_decide_python(pid, source, next(python_prints), params, index))
            else:
                decisions.append(_decide(pid, source, language, params))
            advance(1)
    programs = pl.DataFrame(decisions, schema=PROGRAM_SCHEMA, orient="row")
    first_of_key = pl.col("program_id").min().over("key")
    near_duplicate = pl.col("drop").is_null() & (pl.col("program_id") != first_of_key)
    return programs.with_columns(
        drop=pl.when(near_duplicate).then(pl.lit("near_duplicate")).otherwise(pl.col("drop"))
    )


def _decide_python(
    pid: str, source: str, program: Fingerprint | None, params: AssembleParams, index: BenchmarkIndex
) -> tuple[Any, ...]:
    """(program_id, split, drop, method, key) of one program in ``BENCHMARK_LANGUAGE`` (Python),
    before near duplicates are known: the benchmarks' language, so it is matched against them
    (``program``: its fingerprint as the index reads it)."""
    split = split_of(pid, params.test_share)
    if program is None:
        return pid, split, "unparsable", None, None
    hit = index.match_fingerprint(program)
    if hit is not None:
        return pid, split, f"contaminated:{hit[0]}", hit[1], None
    if params.near_dup_literals == index.literals:
        key = program.key
    else:
        tree = parse(source)
        assert tree is not None  # it gave a fingerprint
        key = program_key(tree, params.near_dup_literals)
    return pid, split, None, None, _named(key, BENCHMARK_LANGUAGE)


def _decide(pid: str, source: str, language: str, params: AssembleParams) -> tuple[Any, ...]:
    """(program_id, split, drop, method, key) of one program in another ``language`` than the
    benchmarks': not matched against them."""
    split = split_of(pid, params.test_share)
    normalize = languages.language(language).facet("normalize")
    tree = normalize.parse(source)
    if tree is None:
        return pid, split, "unparsable", None, None
    return pid, split, None, None, _named(normalize.program_key(tree, params.near_dup_literals), language)


def _named(key: str, language: str) -> str:
    """A near-duplicate key that names its language (but the default language's)."""
    return key if language == DEFAULT_LANGUAGE else f"{language}:{key}"


def plan_rows(rows: pl.DataFrame, programs: pl.DataFrame, configs: list[ConfigSpec]) -> pl.DataFrame:
    """``rows`` without the source, with ``split``, ``drop`` (null when released) and, per config, a
    boolean column ``config_column(name)``: the row goes into that config."""
    plan = (
        rows.drop("source")
        .join(programs.select("program_id", "split", "drop"), on="program_id", how="left")
        .sort("row")
        .with_columns(
            drop=pl.when(pl.col("task_id").is_first_distinct())
            .then(pl.col("drop"))
            .otherwise(pl.lit("exact_duplicate"))
        )
    )
    for config in configs:
        plan = plan.with_columns(
            _released_in(plan, config).fill_null(False).alias(config_column(config.name))
        )
    return plan


def config_column(config: str) -> str:
    """The plan's column of a config (a family config's name, e.g. ``input``, may be a column's)."""
    return f"config:{config}"


def _released_in(plan: pl.DataFrame, config: ConfigSpec) -> pl.Expr:
    wanted = (
        pl.col("drop").is_null()
        & (pl.col("input") == config.source)
        & pl.col("family").is_in(list(config.families))
    )
    if config.language is not None:
        wanted &= pl.col("language") == config.language
    if not config.shares:
        return wanted
    # by a hash of the item, so the choice does not depend on the order of the rows
    candidates = plan.filter(wanted).with_columns(
        hash=pl.col("task_id").map_elements(lambda tid: unit_hash(tid, config.name), return_dtype=pl.Float64)
    )
    chosen = [select_by_shares(candidates.filter(pl.col("split") == s), config.shares) for s in SPLITS]
    return pl.col("row").is_in(pl.concat(chosen).get_column("row").to_list())
