"""The execute stage: cases → executions, every case with its status (docs/design.md §2).

Each case runs in the sandbox pool under two PYTHONHASHSEED values; the executions table holds all
case columns plus ``status`` (``ok`` or the drop reason), ``output_repr`` and ``output_type``.
Downstream stages keep ``status == "ok"``. Nothing run-dependent (timings, pids) is recorded, so the
same cases give byte-identical output (barring a case that sits right at the timeout).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from factory import languages
from factory.backend import Backend, Shards, run_shards
from factory.contracts import CASES, EXECUTION_CASE_TYPES, EXECUTION_RESULT_FIELDS
from factory.errors import UserError
from factory.execute.runner import Executor, with_cpus
from factory.io import count_rows, iter_rows, shard_paths
from factory.params import ExecuteParams, validate_section
from factory.stage import Outcome, Output, Tally, by_language, run_stage
from factory.stats import StageStats


def validate_params(params: ExecuteParams | Mapping[str, Any] | None) -> ExecuteParams:
    """The ``execute`` params section, validated (UserError naming the first bad or unknown key)."""
    if isinstance(params, ExecuteParams):
        return params
    return validate_section(ExecuteParams, params, "execute params", prefix="execute.")


def executions_schema(cases_schema: pa.Schema | None) -> pa.Schema:
    """All case columns (the known ones with fixed types) followed by the three result columns."""
    fields: list[pa.Field] = []
    names = set()
    result_names = {f.name for f in EXECUTION_RESULT_FIELDS}
    source_fields = list(cases_schema) if cases_schema is not None else []
    if not source_fields:
        source_fields = [pa.field(name, typ) for name, typ in EXECUTION_CASE_TYPES.items()]
    for field in source_fields:
        if field.name in result_names:  # re-running on an executions table: results are redone
            continue
        typ = EXECUTION_CASE_TYPES.get(field.name, field.type)
        fields.append(pa.field(field.name, typ))
        names.add(field.name)
    missing = [name for name in CASES.columns if name not in names]
    if missing:
        raise UserError(f"cases table lacks column(s): {', '.join(missing)}")
    return pa.schema([*fields, *EXECUTION_RESULT_FIELDS])


def _cases_schema(cases_dir: str | Path) -> pa.Schema | None:
    paths = shard_paths(cases_dir)
    return pq.read_schema(paths[0]).remove_metadata() if paths else None


def _open(config: tuple[ExecuteParams, str], cpus: int | None) -> Executor:
    """The per-process state of the execute stage: an Executor (one pool per hash seed)."""
    params, language = config
    return Executor.from_params(with_cpus(params, cpus), language=languages.language(language))


def _run(
    config: object, executor: Executor, cases: Iterable[dict[str, Any]]
) -> Iterator[tuple[str, str | None, str | None]]:
    """(status, output_repr, output_type) of every case, in order."""
    for result in executor.run(cases):
        yield result["status"], result["output_repr"], result["output_type"]


def run_execute_stage(
    cases_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    params: ExecuteParams | Mapping[str, Any] | None = None,
    *,
    backend: Backend | None = None,
) -> StageStats:
    """Run every case of ``cases_dir``; write the executions table to ``out_dir`` and the stats.

    ``params``: the ``execute`` section of params.yaml (``ExecuteParams`` or a mapping of it).
    Each case runs with the job kinds of its ``language`` (``factory.stage.language_of``), whose
    value model compares the runs. Every case is written with its status; a case that is not
    ``ok`` counts as dropped. ``backend``: where the cases run (default local).
    """
    p = validate_params(params)
    schema = executions_schema(_cases_schema(cases_dir))

    def outcomes(cases: Iterator[dict[str, Any]]) -> Iterator[Outcome]:
        for language, group in by_language(cases):
            languages.language(language)  # an unknown name fails here, not in every worker
            job = Shards((p, language), _open, _run)
            for row, (status, output_repr, output_type) in run_shards(backend, job, group):
                row["status"] = status
                row["output_repr"] = output_repr
                row["output_type"] = output_type
                yield Outcome([row], None if status == "ok" else status, row.get("tier"))

    def extra(tally: Tally) -> dict[str, Any]:
        tiers = sorted(tally.tiers_in.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
        return {
            "yield_by_tier": {
                str(tier): {
                    "in": n,
                    "ok": tally.tiers_out[tier],
                    "share": round(tally.tiers_out[tier] / n, 6),
                }
                for tier, n in tiers
            }
        }

    rows = (row for batch in iter_rows(cases_dir) for row in batch)
    output = Output(out_dir, schema, rows_per_shard=p.rows_per_shard)
    return run_stage("execute", rows, outcomes, output, stats_path, total=count_rows(cases_dir), extra=extra)
