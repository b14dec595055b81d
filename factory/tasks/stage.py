"""The tasks stage: traces → tasks, one row per item (docs/design.md §2, §5).

Reads the traces table (the execution columns plus ``trace``, the JSON of the trace with
states, and ``trace_length``), builds each case's items with ``build_items_for_case`` and streams
them into shards with a fixed schema. Stats count *cases*: ``in`` cases read, ``out`` cases that
gave at least one item, ``dropped`` cases that gave none, by reason (so in = out + dropped);
``extra`` holds items per family and per tier, families skipped per reason, and the distribution
of gold answers. Same input, seed and params give byte-identical output.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa

from factory.io import ShardWriter, count_rows, iter_rows
from factory.params import TasksParams
from factory.progress import progress
from factory.stats import StageStats
from factory.tasks.items import build_items_for_case
from factory.tasks.job import build_all, items_pool

__all__ = ["TASKS_SCHEMA", "build_items_for_case", "run_tasks_stage"]

# The ignore: mypy joins these columns' different types (pyarrow-stubs) to object.
TASKS_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("case_id", pa.string(), nullable=False),
        pa.field("program_id", pa.string()),
        pa.field("family", pa.string(), nullable=False),
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("questions", pa.string(), nullable=False),  # JSON: questions with gold answers
        pa.field("answer", pa.string(), nullable=False),  # JSON: the typed gold answers
        pa.field("source", pa.string(), nullable=False),
        pa.field("entry", pa.string(), nullable=False),
        pa.field("args", pa.string(), nullable=False),
        pa.field("tier", pa.int32()),
        pa.field("target", pa.string()),
        pa.field("grammar_hash", pa.string()),
        pa.field("trace_length", pa.int32()),
        pa.field("n_questions", pa.int32()),
        pa.field("n_lines", pa.int32()),
        pa.field("n_loops", pa.int32()),
        pa.field("n_branches", pa.int32()),
        pa.field("has_helper", pa.bool_()),
        pa.field("max_depth", pa.int32()),
        pa.field("output_repr", pa.string()),
        pa.field("output_type", pa.string()),
    ]
)
PROGRESS_STEP = 256


class _Tally:
    """Distributions of items and gold answers, for the stats."""

    def __init__(self) -> None:
        self.items = 0
        self.per_family: Counter[str] = Counter()
        self.per_tier: dict[str, Counter[str]] = defaultdict(Counter)
        self.skipped: Counter[str] = Counter()
        self.questions: Counter[str] = Counter()  # questions per family of question
        self.minus_one = 0
        self.nil = 0
        self.coverage: Counter[str] = Counter()
        self.state_types: Counter[str] = Counter()
        self.output_types: Counter[str] = Counter()
        self.n_questions: dict[str, Counter[int]] = defaultdict(Counter)

    def add(self, item: dict[str, Any]) -> None:
        family = item["family"]
        self.items += 1
        self.per_family[family] += 1
        self.per_tier[str(item.get("tier"))][family] += 1
        self.n_questions[family][item["n_questions"]] += 1
        for q in json.loads(item["questions"]):
            qf = q["family"]
            self.questions[qf] += 1
            answer = q["answer"]
            if qf == "next_line" and answer == -1:
                self.minus_one += 1
            elif qf == "state":
                if answer == "Nil":
                    self.nil += 1
                else:
                    self.state_types[answer.rsplit(";", 1)[1].strip()] += 1
            elif qf == "coverage":
                self.coverage[answer] += 1
            elif qf == "output":
                self.output_types[q["answer_type"]] += 1

    def to_dict(self) -> dict[str, Any]:
        def share(n: int, of: int) -> float:
            return round(n / of, 6) if of else 0.0

        def top(counter: Counter[str], n: int = 20) -> dict[str, int]:
            return dict(sorted(counter.most_common(n), key=lambda kv: (-kv[1], kv[0])))

        return {
            "items": self.items,
            "items_by_family": dict(sorted(self.per_family.items())),
            "items_by_tier": {
                tier: dict(sorted(c.items()))
                for tier, c in sorted(self.per_tier.items(), key=lambda kv: _tier_key(kv[0]))
            },
            "items_skipped": dict(sorted(self.skipped.items())),
            "questions_by_family": dict(sorted(self.questions.items())),
            "questions_per_item": {
                family: {str(k): v for k, v in sorted(c.items())}
                for family, c in sorted(self.n_questions.items())
            },
            "answers": {
                "next_line_minus_one": self.minus_one,
                "next_line_minus_one_share": share(self.minus_one, self.questions["next_line"]),
                "state_nil": self.nil,
                "state_nil_share": share(self.nil, self.questions["state"]),
                "state_types": top(self.state_types),
                "output_types": top(self.output_types),
                "coverage": dict(sorted(self.coverage.items())),
            },
        }


def _tier_key(tier: str) -> tuple[int, int | str]:
    return (0, int(tier)) if tier.lstrip("-").isdigit() else (1, tier)


def run_tasks_stage(
    traces_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    seed: int,
    params: TasksParams | None = None,
) -> StageStats:
    """Build the items of every traced case of ``traces_dir``; write the tasks table to
    ``out_dir`` and the stats JSON to ``stats_path``."""
    p = params if params is not None else TasksParams()
    total = count_rows(traces_dir)
    stats = StageStats("tasks")
    tally = _Tally()
    with (
        items_pool(p.workers) as pool,
        ShardWriter(out_dir, TASKS_SCHEMA, rows_per_shard=p.rows_per_shard) as writer,
        progress("tasks", total) as advance,
    ):
        # Trace JSON is large: small batches from the shards, read as the workers need them.
        rows = (row for batch in iter_rows(traces_dir, batch_rows=1_000) for row in batch)
        done = 0
        for result in build_all(rows, pool, seed, p):
            stats.items_in += 1
            tally.skipped.update(result["reasons"])
            if result["items"]:
                stats.items_out += 1
                for item in result["items"]:
                    writer.write(item)
                    tally.add(item)
            else:
                stats.drop(result["drop"])
            done += 1
            if done % PROGRESS_STEP == 0:
                advance(PROGRESS_STEP)
        advance(done % PROGRESS_STEP)
    extra_params = p.model_dump()
    del extra_params["workers"]  # how many processes built the items is no part of them
    stats.extra.update(tally.to_dict())
    stats.extra["params"] = extra_params
    stats.extra["seed"] = seed
    stats.write(stats_path)
    return stats
