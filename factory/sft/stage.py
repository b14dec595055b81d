"""The sft stage (optional, off by default): tasks → chat-format SFT examples.

A teacher (any solver backend, through the response cache) answers each output / input task
``n`` times; each response is judged by ``factory.scoring``; only responses judged right are kept,
at most ``per_task`` per task, as ``messages`` (user prompt, assistant response) — the chat
format TRL's SFTTrainer reads. The release's ``sft`` config is built from this folder
(``execverify stage assemble --extra-input sft=data/sft``): each example has its own ``task_id`` (the
task's id and the sample index; the release drops repeated ids) and keeps its task's
``program_id`` and ``source``, so it lands in its program's split and is decontaminated with it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from factory.contracts import SFT_SCHEMA
from factory.evaluate.metrics import verdict
from factory.evaluate.run import score_samples
from factory.io import count_rows, iter_rows
from factory.params import BackendParams, SftParams
from factory.solvers import CachedSolver, Sampling, solver_from_params
from factory.stage import Outcome, Output, Tally, chunks, run_stage
from factory.stats import StageStats

OFF_NOTICE = "SFT STAGE OFF (sft.enabled: false): no teacher model was asked; data/sft is empty."


def run_sft_stage(
    tasks_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    params: SftParams,
    seed: int,
    solver: CachedSolver | None = None,
    backend: BackendParams | None = None,
) -> StageStats:
    """Ask the teacher about the tasks of ``params.families`` and keep the right responses;
    ``solver`` overrides the params' one (tests), ``backend`` ``ray`` runs the teacher as replicas
    on that cluster (docs/backends.md)."""
    p = params
    kept: Counter[str] = Counter()
    owned = p.enabled and solver is None
    if owned:
        solver = solver_from_params(p, "sft", backend)

    def outcomes(tasks: Iterator[dict[str, Any]]) -> Iterator[Outcome]:
        for batch, asked, skipped in _rounds(tasks, p):
            answers: dict[int, tuple[list[str], list]] = {}
            if asked:
                assert solver is not None  # no task is read unless the stage is on
                prompts = [r["prompt"] for r in asked]
                samples = solver.generate(prompts, p.n, p.temperature, p.top_p, p.max_tokens, seed)
                asked_at = [i for i in range(len(batch)) if i not in skipped]
                for i, texts, results in zip(asked_at, samples, score_samples(asked, samples), strict=True):
                    answers[i] = (texts, results)
            for i, row in enumerate(batch):
                if i in skipped:
                    yield Outcome(drop=skipped[i], tier=row.get("tier"))
                    continue
                texts, results = answers[i]
                right = [k for k, r in enumerate(results) if verdict(r) == "right"][: p.per_task]
                if not right:
                    yield Outcome(drop="no_right_response", tier=row.get("tier"))
                    continue
                kept[row["family"]] += len(right)
                teacher = solver.model_id if solver is not None else ""
                examples = [_example(row, texts[k], k, teacher) for k in right]
                yield Outcome(examples, tier=row.get("tier"))

    def extra(tally: Tally) -> dict[str, Any]:
        stats: dict[str, Any] = {
            "enabled": p.enabled,
            "teacher": p.solver if p.enabled else None,
            "teacher_model": solver.model_id if (p.enabled and solver) else None,
            "n": p.n if p.enabled else 0,
            "families": p.families,
            "examples_by_family": dict(sorted(kept.items())),
            "examples": sum(kept.values()),
        }
        if not p.enabled:
            stats["notice"] = OFF_NOTICE
        return stats

    def rows() -> Iterator[dict[str, Any]]:
        # Off: the input is not read at all (it may not exist), and the output is an empty table.
        if not p.enabled:
            return iter(())
        return (row for batch in iter_rows(tasks_dir, batch_rows=p.chunk) for row in batch)

    try:
        if p.enabled and solver is not None:  # a Ray solver gets every missing prompt in one pass
            rounds = ([row["prompt"] for row in asked] for _, asked, _ in _rounds(rows(), p))
            solver.prefetch(rounds, p.n, Sampling(p.temperature, p.top_p, p.max_tokens, seed))
        total = count_rows(tasks_dir) if p.enabled else 0
        output = Output(out_dir, SFT_SCHEMA, rows_per_shard=p.rows_per_shard)
        return run_stage("sft", rows(), outcomes, output, stats_path, total=total, extra=extra)
    finally:
        if owned and solver is not None:
            solver.close()


def _rounds(
    tasks: Iterator[dict[str, Any]], p: SftParams
) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, str]]]:
    """The tasks in rounds of ``chunk``: (the round, the rows asked about, the drop reason of
    each other row by its position), one ``generate`` call per round."""
    seen = 0
    for batch in chunks(tasks, p.chunk):
        asked: list[dict[str, Any]] = []
        skipped: dict[int, str] = {}
        for i, row in enumerate(batch):
            if row["family"] not in p.families:
                skipped[i] = f"family_{row['family']}_not_used"
            elif p.limit and seen >= p.limit:
                skipped[i] = "over_limit"
            else:
                asked.append(row)
                seen += 1
        yield batch, asked, skipped


def _example(row: dict, response: str, index: int, teacher: str) -> dict:
    return {
        "task_id": f"{row['task_id']}:sft{index}",
        "source_task_id": row["task_id"],
        "case_id": row.get("case_id"),
        "program_id": row.get("program_id"),
        "language": row.get("language"),
        "family": row["family"],
        "tier": row.get("tier"),
        "messages": [{"role": "user", "content": row["prompt"]}, {"role": "assistant", "content": response}],
        "teacher_model": teacher,
        "sample_index": index,
        "source": row["source"],
    }
