"""``execverify stage <name>``: the pipeline stages, exactly as ``dvc.yaml`` runs them.

One command per entry of ``factory.registry``; the input folders are checked against their data
contracts before a stage runs (the wrong table is one line and exit 2). The one-off tools
(``run``, ``trace``, ``questions``, ``task``, ``score``, ``eval``, ``publish``) are top-level
commands of their own modules.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from factory.cli import app
from factory.errors import UserError
from factory.params import Params, load_params
from factory.registry import stage

if TYPE_CHECKING:
    from factory.stats import StageStats

stage_app = typer.Typer(
    help="The pipeline stages (what dvc.yaml runs; `dvc repro` runs them all).", no_args_is_help=True
)
app.add_typer(stage_app, name="stage")

ParamsFile = Annotated[Path, typer.Option("--params", help="The params file.")]
Stats = Annotated[Path, typer.Option("--stats", help="Stats JSON (its summary is a DVC metric).")]


def _default(name: str, option: str) -> Path:
    return Path(stage(name).default(option))


def _params(path: Path, name: str) -> Params:
    return load_params(path, stage=name)


def _check_inputs(name: str, **folders: Path) -> None:
    """UserError (one line, exit 2) unless each input folder of stage ``name`` is the table the
    registry says it reads (``--programs`` -> ``folders["programs"]``)."""
    for option, contract in stage(name).reads:
        contract.check(folders[option.removeprefix("--").replace("-", "_")])


def _on_backend(p: Params, run: Callable[..., StageStats], *args: Any, **kwargs: Any) -> None:
    """``run(*args, **kwargs)`` on the backend of ``params.yaml`` (docs/backends.md), then its
    one-screen summary."""
    from factory.backend import from_params

    with from_params(p.backend) as backend:
        stats = run(*args, **kwargs, backend=backend)
    stats.print_summary()


@stage_app.command("synthesize", help=stage("synthesize").summary)
def synthesize(
    params: ParamsFile = Path("params.yaml"),
    out: Annotated[Path, typer.Option(help="Output folder: program shards.")] = _default(
        "synthesize", "--out"
    ),
    stats: Stats = _default("synthesize", "--stats"),
) -> None:
    from factory.synth.stage import run_synthesize_stage

    p = _params(params, "synthesize")
    _on_backend(p, run_synthesize_stage, p.seed, p.synthesize, out, stats)


@stage_app.command("inputs", help=stage("inputs").summary)
def inputs(
    params: ParamsFile = Path("params.yaml"),
    programs: Annotated[Path, typer.Option(help="Programs (the synthesize stage's).")] = _default(
        "inputs", "--programs"
    ),
    out: Annotated[Path, typer.Option(help="Output folder: case shards.")] = _default("inputs", "--out"),
    stats: Stats = _default("inputs", "--stats"),
    pools: Annotated[Path | None, typer.Option(help="Also save the drawn argument pools here.")] = None,
    spares: Annotated[
        Path | None,
        typer.Option(help="Also save the spares here: the candidates that ran but were not kept."),
    ] = None,
) -> None:
    from factory.inputs.stage import run_inputs_stage

    p = _params(params, "inputs")
    _check_inputs("inputs", programs=programs)
    _on_backend(
        p,
        run_inputs_stage,
        p.seed,
        p.inputs,
        p.execute,
        p.synthesize.grammars,
        programs,
        out,
        stats,
        pools,
        p.trace.max_steps,
        spares_dir=spares,
    )


@stage_app.command("execute", help=stage("execute").summary)
def execute(
    params: ParamsFile = Path("params.yaml"),
    cases: Annotated[Path, typer.Option(help="Cases (the inputs stage's).")] = _default("execute", "--cases"),
    out: Annotated[Path, typer.Option(help="Output folder: executions.")] = _default("execute", "--out"),
    stats: Stats = _default("execute", "--stats"),
) -> None:
    from factory.execute.stage import run_execute_stage

    p = _params(params, "execute")
    _check_inputs("execute", cases=cases)
    _on_backend(p, run_execute_stage, cases, out, stats, p.execute)


@stage_app.command("trace", help=stage("trace").summary)
def trace(
    params: ParamsFile = Path("params.yaml"),
    executions: Annotated[Path, typer.Option(help="Executions (the execute stage's).")] = _default(
        "trace", "--executions"
    ),
    out: Annotated[Path, typer.Option(help="Output folder: trace shards.")] = _default("trace", "--out"),
    stats: Stats = _default("trace", "--stats"),
) -> None:
    from factory.trace.stage import run_trace_stage

    p = _params(params, "trace")
    _check_inputs("trace", executions=executions)
    _on_backend(p, run_trace_stage, executions, out, stats, p.trace, p.execute)


@stage_app.command("tasks", help=stage("tasks").summary)
def tasks(
    params: ParamsFile = Path("params.yaml"),
    traces: Annotated[Path, typer.Option(help="Traces (the trace stage's).")] = _default("tasks", "--traces"),
    out: Annotated[Path, typer.Option(help="Output folder: task shards.")] = _default("tasks", "--out"),
    stats: Stats = _default("tasks", "--stats"),
) -> None:
    from factory.tasks.stage import run_tasks_stage

    p = _params(params, "tasks")
    _check_inputs("tasks", traces=traces)
    _on_backend(p, run_tasks_stage, traces, out, stats, p.seed, p.tasks)


@stage_app.command("phase2", help=stage("phase2").summary)
def phase2(
    params: ParamsFile = Path("params.yaml"),
    programs: Annotated[Path, typer.Option(help="Programs (the synthesize stage's).")] = _default(
        "phase2", "--programs"
    ),
    executions: Annotated[Path, typer.Option(help="Executions (the execute stage's).")] = _default(
        "phase2", "--executions"
    ),
    spares: Annotated[
        Path, typer.Option(help="Spares (the inputs stage's): the hidden tests come from them.")
    ] = _default("phase2", "--spares"),
    out: Annotated[Path, typer.Option(help="Output folder: item shards.")] = _default("phase2", "--out"),
    stats: Stats = _default("phase2", "--stats"),
    pools: Annotated[
        Path | None,
        typer.Option(
            help="Argument pools saved by the inputs stage, for the fresh draws (else drawn here "
            "with the phase-2 seed)."
        ),
    ] = None,
) -> None:
    from factory.contracts import POOLS_SCHEMA
    from factory.io import require_columns
    from factory.phase2.stage import run_phase2_stage

    p = _params(params, "phase2")
    _check_inputs("phase2", programs=programs, executions=executions, spares=spares)
    if pools is not None:
        hint = "pass the --pools folder of the inputs stage"
        require_columns(pools, POOLS_SCHEMA.names, "argument pools", hint)
    _on_backend(
        p,
        run_phase2_stage,
        p.seed,
        p.phase2,
        p.inputs,
        p.execute,
        p.synthesize.grammars,
        programs,
        executions,
        spares,
        out,
        stats,
        pools,
    )


@stage_app.command("difficulty", help=stage("difficulty").summary)
def difficulty(
    params: ParamsFile = Path("params.yaml"),
    tasks: Annotated[Path, typer.Option(help="Tasks (the tasks stage's).")] = _default(
        "difficulty", "--tasks"
    ),
    out: Annotated[Path, typer.Option(help="Output folder: the tasks in the band.")] = _default(
        "difficulty", "--out"
    ),
    pass_stats: Annotated[
        Path, typer.Option("--pass-stats", help="Output folder: the pass statistics of every judged task.")
    ] = _default("difficulty", "--pass-stats"),
    stats: Stats = _default("difficulty", "--stats"),
) -> None:
    from factory.difficulty.stage import run_difficulty_stage, summary_line

    p = _params(params, "difficulty")
    _check_inputs("difficulty", tasks=tasks)
    run = run_difficulty_stage(tasks, out, pass_stats, stats, p.difficulty, p.seed, backend=p.backend)
    run.stats.print_summary()
    if p.difficulty.enabled:
        print(f"difficulty: {summary_line(run)}", file=sys.stderr)


@stage_app.command("sft", help=stage("sft").summary)
def sft(
    params: ParamsFile = Path("params.yaml"),
    tasks: Annotated[Path, typer.Option(help="Tasks (the tasks stage's).")] = _default("sft", "--tasks"),
    out: Annotated[Path, typer.Option(help="Output folder: chat-format SFT examples.")] = _default(
        "sft", "--out"
    ),
    stats: Stats = _default("sft", "--stats"),
) -> None:
    from factory.sft import run_sft_stage

    p = _params(params, "sft")
    if p.sft.enabled:  # switched off, the stage reads nothing
        _check_inputs("sft", tasks=tasks)
    run_sft_stage(tasks, out, stats, p.sft, p.seed, backend=p.backend).print_summary()


@stage_app.command("assemble", help=stage("assemble").summary)
def assemble(
    params: ParamsFile = Path("params.yaml"),
    tasks: Annotated[
        Path, typer.Option(help="Items: the difficulty stage's (or the tasks stage's).")
    ] = _default("assemble", "--tasks"),
    out: Annotated[Path, typer.Option(help="The release folder (the Hub's layout).")] = _default(
        "assemble", "--out"
    ),
    stats: Stats = _default("assemble", "--stats"),
    plots: Annotated[Path, typer.Option(help="Plot data as CSV (DVC plots).")] = _default(
        "assemble", "--plots"
    ),
    metrics_dir: Annotated[Path, typer.Option(help="Stats of the earlier stages, for the card.")] = Path(
        "data/metrics"
    ),
    difficulty_stats: Annotated[
        Path | None,
        typer.Option(
            "--difficulty-stats",
            help="Stats JSON of the difficulty stage (its solver and band go in the card).",
        ),
    ] = None,
    lock: Annotated[Path, typer.Option(help="dvc.lock, for the revision of each stage.")] = Path("dvc.lock"),
    extra_input: Annotated[
        list[str] | None,
        typer.Option(
            "--extra-input", help="NAME=DIR: another items folder, read by the config of that name."
        ),
    ] = None,
    pools: Annotated[
        Path | None, typer.Option(help="The inputs stage's argument pools (the card's quality figures).")
    ] = None,
) -> None:
    from factory.io import require_columns
    from factory.release.stage import REQUIRED, release_note, run_assemble_stage

    extra = {}
    for spec in extra_input or []:
        name, sep, folder = spec.partition("=")
        if not sep or not name or not folder:
            raise UserError(f"--extra-input {spec!r}: expected NAME=DIR")
        extra[name] = Path(folder)
    p = _params(params, "assemble")
    require_columns(tasks, REQUIRED, "tasks", "pass the output of the tasks (or difficulty) stage")
    for name, folder_path in extra.items():
        require_columns(
            folder_path, REQUIRED, "items", f"--extra-input {name}= needs a folder of item shards"
        )
    result = run_assemble_stage(
        tasks,
        out,
        stats,
        p.assemble,
        all_params=p.model_dump(exclude={"backend"}),  # where the stages ran is no part of the data
        metrics_dir=metrics_dir,
        plots_dir=plots,
        difficulty_stats=difficulty_stats,
        lock_path=lock,
        extra_inputs=extra,
        pools_dir=pools,
    )
    result.print_summary()
    print(release_note(out, result))
