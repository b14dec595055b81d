"""The registry of pipeline stages: one entry per stage of ``dvc.yaml`` (docs/design.md §2).

Each entry says what the stage is called, which command runs it, which params it reads, and the
folders it reads and writes. The stage commands take their default paths from here, ``load_params``
its required sections, and ``tests/test_registry.py`` checks that every ``cmd:`` and ``params:`` of
``dvc.yaml`` is exactly what the registry gives (``execverify stages`` lists them).
"""

from __future__ import annotations

from dataclasses import dataclass

from factory.contracts import CASES, EXECUTIONS, PROGRAMS, SPARES, TASKS, TRACES, TableContract


@dataclass(frozen=True)
class StageSpec:
    """One pipeline stage, run by ``execverify stage <name>``: the ``params`` entries it reads (as
    ``dvc.yaml`` lists them; ``required`` are the sections a params file must hold for it), and
    its options in command-line order: ``(option, default path)``; ``reads`` names the input
    options and the table each must be."""

    name: str
    params: tuple[str, ...]
    required: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    reads: tuple[tuple[str, TableContract], ...] = ()
    summary: str = ""

    def default(self, option: str) -> str:
        """The default path of ``--option`` (the one ``dvc.yaml`` passes)."""
        for name, path in self.options:
            if name == option:
                return path
        raise KeyError(f"stage {self.name} has no option {option}")

    def dvc_command(self) -> str:
        """The ``cmd:`` of this stage in ``dvc.yaml``."""
        options = " ".join(f"{name} {path}" for name, path in self.options)
        return f"execverify stage {self.name} --params params.yaml {options}"


STAGES: tuple[StageSpec, ...] = (
    StageSpec(
        "synthesize",
        params=("seed", "synthesize", "backend"),
        required=("synthesize",),
        options=(("--out", "data/programs"), ("--stats", "data/metrics/synthesize.json")),
        summary="Programs for every target operation in every tier, checked and deduplicated",
    ),
    StageSpec(
        "inputs",
        params=("seed", "synthesize.grammars", "inputs", "execute", "trace.max_steps", "backend"),
        required=("synthesize", "inputs", "execute"),
        options=(
            ("--programs", "data/programs"),
            ("--out", "data/cases"),
            ("--stats", "data/metrics/inputs.json"),
            ("--pools", "data/pools"),
            ("--spares", "data/spares"),
        ),
        reads=(("--programs", PROGRAMS),),
        summary="Hypothesis inputs per program, chosen for line coverage",
    ),
    StageSpec(
        "execute",
        params=("execute", "backend"),
        required=("execute",),
        options=(
            ("--cases", "data/cases"),
            ("--out", "data/executions"),
            ("--stats", "data/metrics/execute.json"),
        ),
        reads=(("--cases", CASES),),
        summary="Every case run in the sandbox under two hash seeds, with its status",
    ),
    StageSpec(
        "trace",
        params=("execute", "trace", "backend"),
        required=("execute", "trace"),
        options=(
            ("--executions", "data/executions"),
            ("--out", "data/traces"),
            ("--stats", "data/metrics/trace.json"),
        ),
        reads=(("--executions", EXECUTIONS),),
        summary="Every ok execution traced under both hash seeds; kept when the traces agree",
    ),
    StageSpec(
        "tasks",
        params=("seed", "tasks", "backend"),
        required=("tasks",),
        options=(
            ("--traces", "data/traces"),
            ("--out", "data/tasks"),
            ("--stats", "data/metrics/tasks.json"),
        ),
        reads=(("--traces", TRACES),),
        summary="Question items (white-box, output, input, coverage) from every trace",
    ),
    StageSpec(
        "phase2",
        params=("seed", "synthesize.grammars", "inputs", "execute", "phase2", "backend"),
        required=("synthesize", "inputs", "execute", "phase2"),
        options=(
            ("--programs", "data/programs"),
            ("--executions", "data/executions"),
            ("--spares", "data/spares"),
            ("--pools", "data/pools"),
            ("--out", "data/phase2"),
            ("--stats", "data/metrics/phase2.json"),
        ),
        reads=(("--programs", PROGRAMS), ("--executions", EXECUTIONS), ("--spares", SPARES)),
        summary="Code-generation items with hidden tests",
    ),
    StageSpec(
        "difficulty",
        params=("seed", "difficulty", "backend.kind", "backend.address"),
        required=(),  # off without its section
        options=(
            ("--tasks", "data/tasks"),
            ("--out", "data/difficulty"),
            ("--pass-stats", "data/difficulty_stats"),
            ("--stats", "data/metrics/difficulty.json"),
        ),
        reads=(("--tasks", TASKS),),
        summary="A solver model's pass rates; the tasks in the difficulty band",
    ),
    StageSpec(
        "sft",
        params=("seed", "sft", "backend.kind", "backend.address"),
        required=(),  # off without its section
        options=(("--tasks", "data/tasks"), ("--out", "data/sft"), ("--stats", "data/metrics/sft.json")),
        reads=(("--tasks", TASKS),),
        summary="A teacher's right answers as chat examples (off by default)",
    ),
    StageSpec(
        "assemble",
        params=("assemble",),
        required=("assemble",),
        options=(
            ("--tasks", "data/difficulty"),
            ("--difficulty-stats", "data/metrics/difficulty.json"),
            ("--out", "data/release"),
            ("--stats", "data/metrics/assemble.json"),
            ("--plots", "data/plots/assemble"),
            ("--extra-input", "phase2=data/phase2"),
            ("--extra-input", "sft=data/sft"),
            ("--pools", "data/pools"),
        ),
        summary="Dedup, decontamination, splits, configs and the dataset card",
    ),
)

BY_NAME: dict[str, StageSpec] = {spec.name: spec for spec in STAGES}


def stage(name: str) -> StageSpec:
    """The registry entry of stage ``name`` (KeyError naming the known ones)."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no stage {name!r}; the stages are {', '.join(BY_NAME)}") from None
