"""The sft stage (optional, off by default): tasks → chat-format SFT examples.

A teacher (any solver backend, through the response cache) answers each output / input task
``n`` times; each response is judged by ``factory.scoring``; only responses judged right are kept,
at most ``per_task`` per task, as ``messages`` (user prompt, assistant response) — the chat
format TRL's SFTTrainer reads. The release's ``sft`` config is built from this folder
(``execverify assemble --extra-input sft=data/sft``): each example has its own ``task_id`` (the
task's id and the sample index; the release drops repeated ids) and keeps its task's
``program_id`` and ``source``, so it lands in its program's split and is decontaminated with it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa

from factory.evaluate.metrics import verdict
from factory.evaluate.run import score_samples
from factory.io import ShardWriter, count_rows, iter_rows
from factory.params import SftParams
from factory.progress import progress
from factory.solvers import CachedSolver, solver_from_params
from factory.stats import StageStats

MESSAGE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])
# The ignore: mypy joins these columns' different types (pyarrow-stubs) to object.
SFT_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        pa.field("task_id", pa.string(), nullable=False),  # "<task's id>:sft<sample_index>"
        pa.field("source_task_id", pa.string(), nullable=False),
        pa.field("case_id", pa.string()),
        pa.field("program_id", pa.string()),
        pa.field("family", pa.string(), nullable=False),
        pa.field("tier", pa.int32()),
        pa.field("messages", pa.list_(MESSAGE), nullable=False),
        pa.field("teacher_model", pa.string(), nullable=False),
        pa.field("sample_index", pa.int32(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ]
)
OFF_NOTICE = "SFT STAGE OFF (sft.enabled: false): no teacher model was asked; data/sft is empty."


def run_sft_stage(
    tasks_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    params: SftParams,
    seed: int,
    solver: CachedSolver | None = None,
) -> StageStats:
    """Ask the teacher about the tasks of ``params.families`` and keep the right responses."""
    p = params
    stats = StageStats("sft")
    kept: Counter[str] = Counter()
    if p.enabled and solver is None:
        solver = solver_from_params(p, "sft")
    with ShardWriter(out_dir, SFT_SCHEMA, rows_per_shard=p.rows_per_shard) as writer:
        if p.enabled:
            assert solver is not None
            with progress("sft", count_rows(tasks_dir)) as advance:
                seen = 0
                for batch in iter_rows(tasks_dir, batch_rows=p.chunk):
                    stats.items_in += len(batch)
                    rows = []
                    for row in batch:
                        if row["family"] not in p.families:
                            stats.drop(f"family_{row['family']}_not_used")
                        elif p.limit and seen >= p.limit:
                            stats.drop("over_limit")
                        else:
                            rows.append(row)
                            seen += 1
                    if rows:
                        prompts = [r["prompt"] for r in rows]
                        samples = solver.generate(prompts, p.n, p.temperature, p.top_p, p.max_tokens, seed)
                        for row, texts, results in zip(
                            rows, samples, score_samples(rows, samples), strict=True
                        ):
                            right = [i for i, r in enumerate(results) if verdict(r) == "right"][: p.per_task]
                            if not right:
                                stats.drop("no_right_response")
                                continue
                            stats.items_out += 1
                            kept[row["family"]] += len(right)
                            for i in right:
                                writer.write(_example(row, texts[i], i, solver.model_id))
                    advance(len(batch))
    stats.extra.update(
        {
            "enabled": p.enabled,
            "teacher": p.solver if p.enabled else None,
            "teacher_model": solver.model_id if (p.enabled and solver) else None,
            "n": p.n if p.enabled else 0,
            "families": p.families,
            "examples_by_family": dict(sorted(kept.items())),
            "examples": sum(kept.values()),
        }
    )
    if not p.enabled:
        stats.extra["notice"] = OFF_NOTICE
    stats.write(stats_path)
    return stats


def _example(row: dict, response: str, index: int, teacher: str) -> dict:
    return {
        "task_id": f"{row['task_id']}:sft{index}",
        "source_task_id": row["task_id"],
        "case_id": row.get("case_id"),
        "program_id": row.get("program_id"),
        "family": row["family"],
        "tier": row.get("tier"),
        "messages": [{"role": "user", "content": row["prompt"]}, {"role": "assistant", "content": response}],
        "teacher_model": teacher,
        "sample_index": index,
        "source": row["source"],
    }
