"""The data contracts: every table a stage reads or writes, in one place (docs/design.md §2).

A stage's output schema here is exactly what its shards hold (column order, types and
nullability are part of the bytes). ``TableContract`` adds what a stage checks before it reads a
table: the columns it needs and a hint naming the stage that writes it, so that passing the wrong
folder is one line and exit 2, not an empty output.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from factory import languages
from factory.io import require_columns

# The ignores below: mypy joins a schema's different column types (pyarrow-stubs) to object.

#: synthesize → inputs, phase2: one generated program a row.
PROGRAMS_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        ("program_id", pa.string()),
        ("language", pa.string()),  # the registered name of the program's language (its grammar's)
        ("index", pa.int64()),
        ("source", pa.string()),
        ("entry", pa.string()),
        ("tier", pa.int8()),
        ("target", pa.string()),
        ("param_types", pa.string()),  # JSON list of [name, type expression]
        ("n_lines", pa.int32()),
        ("grammar_hash", pa.string()),
        ("reserve", pa.bool_()),  # a reserve program: the inputs stage runs it only for a short target
    ]
)

#: inputs → execute: one chosen argument list of a program a row.
CASES_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        ("case_id", pa.string()),
        ("program_id", pa.string()),
        ("language", pa.string()),
        ("source", pa.string()),
        ("entry", pa.string()),
        ("args", pa.string()),
        ("tier", pa.int8()),
        ("target", pa.string()),
        ("lines_covered", pa.int32()),
        ("grammar_hash", pa.string()),
        # Of the program's candidates that ran, the share that gave this case's output: what a
        # random well-typed argument list would hit (the tasks stage asks input questions only
        # where it is small).
        ("output_share", pa.float32()),
    ]
)

#: inputs → phase2: the candidates of each kept program that ran ``ok`` (under the first hash seed)
#: but were not chosen, in draw order, with their outputs: the phase2 stage's hidden tests.
SPARES_SCHEMA = pa.schema(
    [
        ("program_id", pa.string()),
        ("language", pa.string()),
        ("args", pa.string()),
        ("output_repr", pa.string()),
        ("output_type", pa.string()),
    ]
)

#: inputs → phase2 and assemble: the argument pool Hypothesis drew for each signature.
POOLS_SCHEMA = pa.schema(
    [("language", pa.string()), ("signature", pa.string()), ("args", pa.list_(pa.string()))]
)

#: execute: the case columns later stages rely on (other input columns pass through as they are)…
EXECUTION_CASE_TYPES: dict[str, pa.DataType] = {
    "case_id": pa.string(),
    "program_id": pa.string(),
    "language": pa.string(),
    "source": pa.string(),
    "entry": pa.string(),
    "args": pa.string(),
    "tier": pa.int32(),
    "target": pa.string(),
}
#: … followed by what the run gave: ``ok`` or the drop reason, and the output.
EXECUTION_RESULT_FIELDS = (
    pa.field("status", pa.string(), nullable=False),
    pa.field("output_repr", pa.string()),
    pa.field("output_type", pa.string()),
)

#: trace: the case as the inputs stage wrote it and its recorded output, then the trace.
TRACE_CASE_COLUMNS = [(f.name, f.type) for f in CASES_SCHEMA if f.name != "lines_covered"] + [
    ("output_repr", pa.string()),
    ("output_type", pa.string()),
]
TRACES_SCHEMA = pa.schema(
    [*TRACE_CASE_COLUMNS, ("trace", pa.string()), ("trace_length", pa.int32()), ("n_states", pa.int32())]
)

#: tasks → difficulty → assemble: one question item a row.
TASKS_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("case_id", pa.string(), nullable=False),
        pa.field("program_id", pa.string()),
        pa.field("language", pa.string()),
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

#: difficulty: a solver model's pass statistics of one task.
SOLVER_FIELDS: list[pa.Field] = [
    pa.field("solver_model", pa.string()),
    pa.field("n", pa.int32()),
    pa.field("passes", pa.int32()),
    pa.field("pass_rate", pa.float64()),
    pa.field("mean_reward", pa.float64()),
    pa.field("unparsed", pa.int32()),  # samples with no parseable answer block
]
#: difficulty → assemble, sft: the tasks in the band, with their pass statistics.
DIFFICULTY_SCHEMA = pa.schema([*TASKS_SCHEMA, *SOLVER_FIELDS])
#: difficulty: the pass statistics of every judged task, in the band or not (for re-banding).
PASS_STATS_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("case_id", pa.string()),
        pa.field("language", pa.string()),
        pa.field("family", pa.string()),
        pa.field("tier", pa.int32()),
        *SOLVER_FIELDS,
        pa.field("in_band", pa.bool_()),
    ]
)

#: phase2 (and `execverify phase2 import`) → assemble: one code-generation item a row.
PHASE2_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("family", pa.string(), nullable=False),  # always "codegen"
        pa.field("origin", pa.string(), nullable=False),  # "synth", or the imported dataset's name
        pa.field("program_id", pa.string()),  # synth: the program; imported: the dataset's id
        pa.field("language", pa.string()),  # the language of the function asked for
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("entry", pa.string(), nullable=False),
        pa.field("signature", pa.string()),
        pa.field("tests", pa.string(), nullable=False),  # JSON list of test sources (judged)
        pa.field("examples", pa.string(), nullable=False),  # JSON list of tests shown in the prompt
        pa.field("source", pa.string()),  # the reference solution
        pa.field("tier", pa.int32()),  # difficulty: the program's tier (imported: null)
        pa.field("target", pa.string()),
        pa.field("grammar_hash", pa.string()),
        pa.field("n_tests", pa.int32(), nullable=False),
        pa.field("n_examples", pa.int32(), nullable=False),
    ]
)

#: sft → assemble: a teacher's worked answer to a task, as chat messages.
MESSAGE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])
SFT_SCHEMA = pa.schema(
    [  # type: ignore[arg-type]
        pa.field("task_id", pa.string(), nullable=False),  # "<task's id>:sft<sample_index>"
        pa.field("source_task_id", pa.string(), nullable=False),
        pa.field("case_id", pa.string()),
        pa.field("program_id", pa.string()),
        pa.field("language", pa.string()),
        pa.field("family", pa.string(), nullable=False),
        pa.field("tier", pa.int32()),
        pa.field("messages", pa.list_(MESSAGE), nullable=False),
        pa.field("teacher_model", pa.string(), nullable=False),
        pa.field("sample_index", pa.int32(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ]
)


def program_id(source: str, language: str = "python") -> str:
    """A program's key: the content hash of its normalised source (formatting and comments do not
    matter: ``Language.normalized_source``), the same on every machine (docs/design.md §2.3)."""
    normalised = languages.language(language).normalized_source(source)
    return hashlib.sha256(normalised.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class TableContract:
    """What a stage needs of an input table: its name, the columns it reads, the stage that writes
    it (the hint of the one-line error when a folder lacks them)."""

    name: str
    columns: tuple[str, ...]
    written_by: str

    def check(self, folder: str | Path) -> None:
        """UserError (one line, exit 2) unless ``folder`` is a table with these columns."""
        require_columns(folder, self.columns, self.name, f"pass the output of the {self.written_by} stage")


PROGRAMS = TableContract(
    "programs",
    ("program_id", "source", "entry", "param_types", "tier", "target", "grammar_hash"),
    "synthesize",
)
CASES = TableContract(
    "cases", ("case_id", "program_id", "source", "entry", "args", "tier", "target"), "inputs"
)
EXECUTIONS = TableContract(
    "executions", ("case_id", "program_id", "source", "entry", "args", "tier", "status"), "execute"
)
SPARES = TableContract("spares", ("program_id", "args", "output_repr", "output_type"), "inputs")
TRACES = TableContract("traces", ("case_id", "source", "entry", "args", "trace"), "trace")
TASKS = TableContract("tasks", tuple(f.name for f in TASKS_SCHEMA if not f.nullable), "tasks")
