"""``params.yaml``: every knob of the pipeline, validated (a bad value names the param, exit 2)."""

from __future__ import annotations

import difflib
import importlib.util
import inspect
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from factory.errors import UserError


class _Section(BaseModel):
    # strict: "2" is not a number and True is not a worker count.
    model_config = ConfigDict(extra="forbid", strict=True)


_S = TypeVar("_S", bound=BaseModel)


class SynthesizeParams(_Section):
    grammars: list[str] = Field(
        ["grammars/python"], description="grammar folders, one per language, built in this order"
    )
    programs_per_target_tier: int = Field(2, ge=1)
    tiers: list[int] = [1, 2, 3, 4, 5, 6]
    max_attempts: int = Field(30, ge=1)
    reserve_per_target: int = Field(
        4, ge=0, le=100, description="reserve programs per target, run only for targets left short"
    )
    workers: int = Field(0, ge=0, description="processes; 0: one per core")
    rows_per_shard: int = Field(50_000, ge=100)

    @field_validator("grammars")
    @classmethod
    def _grammars(cls, v: list[str]) -> list[str]:
        if not v or len(set(v)) != len(v):
            raise ValueError("grammars must be a non-empty list of distinct grammar folders")
        return v

    @field_validator("tiers")
    @classmethod
    def _tiers(cls, v: list[int]) -> list[int]:
        if not v or any(t not in range(1, 7) for t in v) or len(set(v)) != len(v):
            raise ValueError("tiers must be distinct values among 1..6")
        return v


INPUT_CHECKS = (
    "constant_output",
    "one_sided_branch",
    "irrelevant_statement",
    "idle_repetition",
    "irrelevant_test",
    "inert_operation",
)


class InputsParams(_Section):
    per_program: int = Field(4, ge=1, le=100)
    candidates: int = Field(12, ge=1, le=1000)
    pool_size: int = Field(256, ge=1, le=100_000)
    related_share: float = Field(
        0.25,
        ge=0,
        le=1,
        description="per parameter, share of argument lists where it is made from an earlier one's value",
    )
    timeout_s: float = Field(1.0, gt=0, le=600)
    max_output_repr: int = Field(
        100, ge=10, description="no candidate whose output's text is longer is kept (execute's bound caps it)"
    )
    min_programs_per_target: int = Field(
        6, ge=0, description="targets with fewer kept program shapes run their reserve programs"
    )
    rows_per_shard: int = Field(50_000, ge=100)
    checks: list[str] = Field(list(INPUT_CHECKS), description="semantic checks run (drop reasons)")

    @field_validator("checks")
    @classmethod
    def _checks(cls, v: list[str]) -> list[str]:
        unknown = [c for c in v if c not in INPUT_CHECKS]
        if unknown or len(set(v)) != len(v):
            raise ValueError(f"checks must be distinct names among {', '.join(INPUT_CHECKS)}")
        return v


class ExecuteParams(_Section):
    timeout_s: float = Field(2.0, gt=0, le=600)
    memory_mb: int = Field(64, ge=64)
    max_output_repr: int = Field(2000, ge=10)
    hash_seeds: list[int] = [1, 2]
    workers: int = Field(0, ge=0, description="per hash seed; 0: the cores shared by the seeds")
    rows_per_shard: int = Field(50_000, ge=100)

    @field_validator("hash_seeds")
    @classmethod
    def _seeds(cls, v: list[int]) -> list[int]:
        if len(v) != 2 or v[0] == v[1] or any(s < 1 or s > 4294967295 for s in v):
            raise ValueError("hash_seeds must be two different integers in 1..4294967295")
        return v


class TasksParams(_Section):
    """The tasks stage: which item families to emit and how many questions each asks."""

    next_line: int = Field(5, ge=0, le=50, description="next_line questions per white-box item")
    state: int = Field(5, ge=0, le=50, description="state questions per white-box item")
    minus_one_share: float = Field(0.2, ge=0, le=1, description="cap on -1 next_line answers")
    nil_share: float = Field(0.2, ge=0, le=1, description="cap on Nil state answers")
    families: list[str] = ["white_box", "output", "input", "coverage"]
    coverage_per_item: int = Field(3, ge=1, le=50)
    input_max_output_share: float = Field(
        0.25,
        ge=0,
        le=1,
        description="no input item for a case whose output a random argument list hits more often than"
        " this (the inputs stage's output_share)",
    )
    max_occurrence: int = Field(4, ge=1, description="ask about a line's first k executions and its last")
    rows_per_shard: int = Field(50_000, ge=100)
    workers: int = Field(0, ge=0, description="processes building items; 0: one per core")

    @field_validator("families")
    @classmethod
    def _families(cls, v: list[str]) -> list[str]:
        known = ("white_box", "output", "input", "coverage")
        if not v or any(f not in known for f in v) or len(set(v)) != len(v):
            raise ValueError(f"families must be distinct values among {', '.join(known)}")
        return v


class TraceParams(_Section):
    max_steps: int = Field(2000, ge=1, le=1_000_000)  # longer traces are dropped (too_many_steps)
    max_repr: int = Field(300, ge=10)  # longer values are recorded truncated (never asked about)
    # a value outgrowing this (marshal bytes) ends the trace: state_too_large
    max_state_bytes: int = Field(1 << 20, ge=1024)
    rows_per_shard: int = Field(20_000, ge=100)


class Phase2Params(_Section):
    """The phase2 stage: code-generation items with shown examples and hidden tests."""

    examples: int = Field(3, ge=1, le=20, description="executed cases shown in the prompt (at most)")
    min_examples: int = Field(2, ge=1, le=20)
    hidden_tests: int = Field(8, ge=1, le=100, description="hidden unit tests per item (at most)")
    min_hidden_tests: int = Field(3, ge=1, le=100)
    candidates: int = Field(
        12, ge=1, le=1000, description="fresh argument lists drawn for a program whose spares fall short"
    )
    rows_per_shard: int = Field(50_000, ge=100)

    @model_validator(mode="after")
    def _minimums(self) -> Phase2Params:
        if self.min_examples > self.examples:
            raise ValueError("min_examples must not exceed examples")
        if self.min_hidden_tests > min(self.hidden_tests, self.candidates):
            raise ValueError("min_hidden_tests must not exceed hidden_tests or candidates")
        return self


class BenchmarkSpec(_Section):
    """One benchmark to decontaminate against: a JSON Lines (optionally gzipped) or JSON-array file."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    path: str
    fields: list[str] = Field(["code"], min_length=1, description="record fields joined into the program")


class AssembleParams(_Section):
    """The assemble stage: dedup, decontamination, splits and configs of the release folder."""

    test_share: float = Field(0.1, ge=0, lt=1, description="share of programs in the test split")
    phase1: dict[str, float] = Field(
        {"white_box": 0.5, "input": 0.5}, description="family -> share of the phase1 config"
    )
    near_dup_literals: str = Field("keep", pattern="^(keep|abstract)$")
    ngram: int = Field(12, ge=3, le=200, description="n of the token n-grams compared with benchmarks")
    ngram_threshold: float = Field(0.5, gt=0, le=1, description="share of a program's n-grams found")
    ngram_common: int = Field(
        10, ge=1, description="n-grams in more programs of one benchmark are idioms, not counted"
    )
    benchmarks: list[BenchmarkSpec] = [
        BenchmarkSpec(name="cruxeval", path="data/benchmarks/cruxeval/cruxeval.jsonl", fields=["code"]),
        BenchmarkSpec(
            name="humaneval",
            path="data/benchmarks/humaneval/HumanEval.jsonl.gz",
            fields=["prompt", "canonical_solution"],
        ),
        BenchmarkSpec(name="mbpp", path="data/benchmarks/mbpp/sanitized-mbpp.json", fields=["code"]),
    ]
    rows_per_shard: int = Field(50_000, ge=100)

    @field_validator("phase1")
    @classmethod
    def _phase1(cls, v: dict[str, float]) -> dict[str, float]:
        if not v or any(not 0 < s <= 1 for s in v.values()) or abs(sum(v.values()) - 1) > 1e-9:
            raise ValueError("phase1 shares must be in (0, 1] and sum to 1")
        return v

    @field_validator("benchmarks")
    @classmethod
    def _benchmarks(cls, v: list[BenchmarkSpec]) -> list[BenchmarkSpec]:
        if len({b.name for b in v}) != len(v):
            raise ValueError("benchmark names must be distinct")
        return v


class SolverParams(_Section):
    """Which model answers and how (shared by the difficulty stage and ``execverify eval``)."""

    solver: str = Field("transformers", description="transformers | openai | vllm")
    model: str = Field("embedded", description="embedded, a local folder, a Hub id, or a served name")
    temperature: float = Field(1.0, ge=0, le=5)
    top_p: float = Field(1.0, gt=0, le=1)
    max_tokens: int = Field(256, ge=1, le=65_536)
    base_url: str | None = Field(None, description="openai: the server (else $OPENAI_BASE_URL)")
    endpoint: str = Field("chat", description="openai: chat or completions")
    concurrency: int = Field(16, ge=1, le=4096)
    timeout_s: float = Field(300.0, gt=0)
    max_retries: int = Field(5, ge=0, le=100)
    batch_size: int = Field(4, ge=1, le=4096, description="transformers: prompts per generate call")
    threads: int = Field(1, ge=0, le=1024, description="transformers on CPU: torch threads (0: default)")
    cache: str = Field("", description="response cache (sqlite); empty: the user cache directory")
    tensor_parallel_size: int = Field(1, ge=1, le=64, description="vllm: GPUs per engine (tensor parallel)")
    replicas: int = Field(
        0, ge=0, le=4096, description="backend ray: model replicas (0: all the cluster holds)"
    )
    replica_cpus: int = Field(1, ge=1, le=1024, description="backend ray: CPUs of each replica")

    @field_validator("solver")
    @classmethod
    def _solver(cls, v: str) -> str:
        if v not in ("transformers", "openai", "vllm"):
            raise ValueError("solver must be one of transformers, openai, vllm")
        return v

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, v: str) -> str:
        if v not in ("chat", "completions"):
            raise ValueError("endpoint must be chat or completions")
        return v

    @model_validator(mode="after")
    def _tensor_parallel(self) -> SolverParams:
        if self.tensor_parallel_size > 1 and self.solver != "vllm":
            raise ValueError("tensor_parallel_size above 1 is for the vllm solver")
        return self

    def backend_options(self) -> dict[str, object]:
        """The keyword arguments of the chosen backend."""
        if self.solver == "openai":
            return {
                "base_url": self.base_url,
                "endpoint": self.endpoint,
                "concurrency": self.concurrency,
                "timeout_s": self.timeout_s,
                "max_retries": self.max_retries,
            }
        if self.solver == "transformers":
            return {"batch_size": self.batch_size, "threads": self.threads}
        return {"engine_kwargs": {"tensor_parallel_size": self.tensor_parallel_size}}


class DifficultyParams(SolverParams):
    """The difficulty stage: n samples per task, keep tasks whose passes lie in [min_pass, max_pass]."""

    enabled: bool = False
    n: int = Field(10, ge=1, le=1000)
    min_pass: int = Field(0, ge=0)
    max_pass: int = Field(3, ge=0)
    limit: int = Field(0, ge=0, description="judge only the first `limit` tasks (0: all)")
    chunk: int = Field(256, ge=1, description="tasks per generate-and-score round")
    rows_per_shard: int = Field(50_000, ge=100)

    def model_post_init(self, __context: Any) -> None:
        if self.min_pass > self.max_pass:
            raise ValueError(f"min_pass ({self.min_pass}) must not exceed max_pass ({self.max_pass})")
        if self.max_pass > self.n:
            raise ValueError(f"max_pass ({self.max_pass}) must not exceed n ({self.n})")


class SftParams(SolverParams):
    """The optional sft stage: a teacher's right responses to output / input tasks."""

    enabled: bool = False
    n: int = Field(4, ge=1, le=1000, description="teacher samples per task")
    per_task: int = Field(1, ge=1, description="right responses kept per task (at most)")
    families: list[str] = ["output", "input"]
    limit: int = Field(0, ge=0, description="ask about the first `limit` tasks of those families (0: all)")
    chunk: int = Field(256, ge=1)
    rows_per_shard: int = Field(50_000, ge=100)

    @field_validator("families")
    @classmethod
    def _families(cls, v: list[str]) -> list[str]:
        if not v or any(f not in ("output", "input") for f in v) or len(set(v)) != len(v):
            raise ValueError("families must be distinct values among output, input")
        return v


BACKENDS = ("local", "ray")


class BackendParams(_Section):
    """Where the stages run (docs/backends.md): ``local`` (this machine) or ``ray`` (a cluster).
    The outputs are byte-identical whichever runs them."""

    kind: str = Field("local", description="local | ray")
    address: str | None = Field(None, description="ray: the head's HOST:PORT (None: Ray's own lookup)")
    shard_units: int = Field(256, ge=1, le=1_000_000, description="ray: units per shard (one task)")
    cpus_per_actor: int = Field(1, ge=1, le=1024, description="ray: CPUs of each actor (its pool's workers)")

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v not in BACKENDS:
            raise ValueError(f"kind must be one of {', '.join(BACKENDS)}")
        if v == "ray" and importlib.util.find_spec("ray") is None:
            raise ValueError("kind ray needs Ray, which is not installed (pip install -e '.[ray]')")
        return v

    @field_validator("address")
    @classmethod
    def _address(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        if info.data.get("kind") == "local":
            raise ValueError("an address is for kind ray; the local backend takes none")
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+:[0-9]{1,5}", v):
            raise ValueError("address must be HOST:PORT (the head's, as `ray start --head` prints it)")
        return v


class Params(_Section):
    seed: int = Field(42, ge=0)
    synthesize: SynthesizeParams = SynthesizeParams()
    inputs: InputsParams = InputsParams()
    execute: ExecuteParams = ExecuteParams()
    trace: TraceParams = TraceParams()
    tasks: TasksParams = TasksParams()
    phase2: Phase2Params = Phase2Params()
    assemble: AssembleParams = AssembleParams()
    difficulty: DifficultyParams = DifficultyParams()
    sft: SftParams = SftParams()
    backend: BackendParams = BackendParams()


# The sections each stage command reads (as dvc.yaml declares them): a params file given to that
# command must have them, so that a forgotten section is an error, not silently the defaults.
# The optional stages (difficulty, sft) are off unless their section turns them on, and say so
# loudly when off, so a file without their section is accepted.
def load_params(path: str | Path = "params.yaml", stage: str | None = None) -> Params:
    """Read and validate params; a missing file, a bad value or an unknown key is a UserError naming it.

    With ``stage`` (a stage of ``factory.registry``), each section that stage reads must be in the file.
    """
    from factory.registry import stage as stage_spec  # the registry names each stage's sections

    raw = read_params_file(path)
    params = validate_section(Params, raw, str(path))
    for section in stage_spec(stage).required if stage is not None else ():
        if section not in raw:
            raise UserError(f"{path}: no '{section}:' section (the {stage} stage reads its settings from it)")
    return params


def read_params_file(path: str | Path) -> dict[str, Any]:
    """The mapping of a params YAML file; a missing file or a bad one is a UserError naming it."""
    path = Path(path)
    try:
        raw: Any = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise UserError(f"{path}: params file not found") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {exc}".splitlines()[0]) from None
    if not isinstance(raw, dict):
        raise UserError(f"{path}: params must be a YAML mapping")
    return raw


#: Keys of earlier versions, with what replaced them.
RENAMED = {"synthesize.grammar": "synthesize.grammars, a list of grammar folders (one per language)"}


def validate_section(model: type[_S], data: Mapping[str, Any] | None, where: str, prefix: str = "") -> _S:
    """``model`` from a mapping (a params section); a bad or unknown key is a UserError naming it."""
    try:
        return model.model_validate(dict(data or {}))
    except ValidationError as exc:
        err = exc.errors()[0]
        key = f"{prefix}{'.'.join(str(p) for p in err['loc'])}".rstrip(".") or "(root)"
        if err["type"] == "extra_forbidden" and key in RENAMED:
            raise UserError(f"{where}: {key}: renamed to {RENAMED[key]}") from None
        if err["type"] == "extra_forbidden":
            known = _field_names(model, err["loc"][:-1])
            close = difflib.get_close_matches(str(err["loc"][-1]), known, n=1)
            hint = (
                f" (did you mean '{close[0]}'?)"
                if close
                else f" (known: {', '.join(known)})"
                if known
                else ""
            )
            raise UserError(f"{where}: {key}: unknown key{hint}") from None
        raise UserError(f"{where}: param '{key}': {err['msg']} (got {err.get('input')!r})") from None


def _field_names(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The keys allowed at ``loc`` (a pydantic error location, list indices included) in ``model``."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part)
        if field is None:
            return []
        current = next(
            (
                t
                for t in (field.annotation, *typing.get_args(field.annotation))
                if inspect.isclass(t) and issubclass(t, BaseModel)
            ),
            None,
        )
        if current is None:
            return []
    return list(current.model_fields)
