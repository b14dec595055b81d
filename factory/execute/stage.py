"""The execute stage: cases → executions, every case with its status (docs/design.md §2).

Each case runs in the sandbox pool under two PYTHONHASHSEED values; the executions table holds all
case columns plus ``status`` (``ok`` or the drop reason), ``output_repr`` and ``output_type``.
Downstream stages keep ``status == "ok"``. Nothing run-dependent (timings, pids) is recorded, so the
same cases give byte-identical output (barring a case that sits right at the timeout).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from factory.errors import UserError
from factory.execute.runner import Executor
from factory.io import ShardWriter, count_rows, iter_rows, shard_paths
from factory.params import ExecuteParams, validate_section
from factory.progress import progress
from factory.stats import StageStats

REQUIRED_COLUMNS = ("case_id", "program_id", "source", "entry", "args", "tier", "target")
# Types of the columns the later stages rely on; other input columns pass through as they are.
CASE_TYPES: dict[str, pa.DataType] = {
    "case_id": pa.string(),
    "program_id": pa.string(),
    "source": pa.string(),
    "entry": pa.string(),
    "args": pa.string(),
    "tier": pa.int32(),
    "target": pa.string(),
}
RESULT_FIELDS = (
    pa.field("status", pa.string(), nullable=False),
    pa.field("output_repr", pa.string()),
    pa.field("output_type", pa.string()),
)
PROGRESS_STEP = 256


def validate_params(params: ExecuteParams | Mapping[str, Any] | None) -> ExecuteParams:
    """The ``execute`` params section, validated (UserError naming the first bad or unknown key)."""
    if isinstance(params, ExecuteParams):
        return params
    return validate_section(ExecuteParams, params, "execute params", prefix="execute.")


def executions_schema(cases_schema: pa.Schema | None) -> pa.Schema:
    """All case columns (the known ones with fixed types) followed by the three result columns."""
    fields: list[pa.Field] = []
    names = set()
    result_names = {f.name for f in RESULT_FIELDS}
    source_fields = list(cases_schema) if cases_schema is not None else []
    if not source_fields:
        source_fields = [pa.field(name, typ) for name, typ in CASE_TYPES.items()]
    for field in source_fields:
        if field.name in result_names:  # re-running on an executions table: results are redone
            continue
        typ = CASE_TYPES.get(field.name, field.type)
        fields.append(pa.field(field.name, typ))
        names.add(field.name)
    missing = [name for name in REQUIRED_COLUMNS if name not in names]
    if missing:
        raise UserError(f"cases table lacks column(s): {', '.join(missing)}")
    return pa.schema([*fields, *RESULT_FIELDS])


def _cases_schema(cases_dir: str | Path) -> pa.Schema | None:
    paths = shard_paths(cases_dir)
    return pq.read_schema(paths[0]).remove_metadata() if paths else None


def run_execute_stage(
    cases_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    params: ExecuteParams | Mapping[str, Any] | None = None,
) -> StageStats:
    """Run every case of ``cases_dir``; write the executions table to ``out_dir`` and the stats.

    ``params``: the ``execute`` section of params.yaml (``ExecuteParams`` or a mapping of it).
    """
    p = validate_params(params)
    schema = executions_schema(_cases_schema(cases_dir))
    total = count_rows(cases_dir)
    stats = StageStats("execute")
    per_tier_in: Counter = Counter()
    per_tier_ok: Counter = Counter()
    pending: deque[dict[str, Any]] = deque()

    def cases() -> Iterator[dict[str, Any]]:
        for batch in iter_rows(cases_dir):
            for row in batch:
                pending.append(row)  # the executor reads ahead; rows wait here for their result
                yield row

    with (
        Executor.from_params(p) as executor,
        ShardWriter(out_dir, schema, rows_per_shard=p.rows_per_shard) as writer,
        progress("execute", total) as advance,
    ):
        done = 0
        for result in executor.run(cases()):
            row = pending.popleft()
            status = result["status"]
            row["status"] = status
            row["output_repr"] = result["output_repr"]
            row["output_type"] = result["output_type"]
            writer.write(row)
            stats.items_in += 1
            tier = row.get("tier")
            per_tier_in[tier] += 1
            if status == "ok":
                stats.items_out += 1
                per_tier_ok[tier] += 1
            else:
                stats.drop(status)
            done += 1
            if done % PROGRESS_STEP == 0:
                advance(PROGRESS_STEP)
        advance(done % PROGRESS_STEP)

    stats.extra["yield_by_tier"] = {
        str(tier): {
            "in": n,
            "ok": per_tier_ok[tier],
            "share": round(per_tier_ok[tier] / n, 6),
        }
        for tier, n in sorted(per_tier_in.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
    }
    stats.write(stats_path)
    return stats
