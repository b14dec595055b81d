"""Stage commands (what dvc.yaml runs) and grammar tools."""

from __future__ import annotations

from pathlib import Path

import typer

from factory.cli import app
from factory.io import require_columns
from factory.params import load_params

grammar_app = typer.Typer(help="Inspect and validate grammar folders.", no_args_is_help=True)
app.add_typer(grammar_app, name="grammar")

PARAMS = typer.Option(Path("params.yaml"), "--params", help="The params file (params.yaml).")

# The columns each stage reads from its input table (checked before it runs, so that the wrong
# table is one line and exit 2, not an empty output): (columns, table name, hint).
PROGRAMS_INPUT = (
    ("program_id", "source", "entry", "param_types", "tier", "target", "grammar_hash"),
    "programs",
    "pass the output of the synthesize stage",
)
EXECUTIONS_INPUT = (
    ("case_id", "program_id", "source", "entry", "args", "tier", "status"),
    "executions",
    "pass the output of the execute stage",
)
TRACES_INPUT = (
    ("case_id", "source", "entry", "args", "trace"),
    "traces",
    "pass the output of the trace stage",
)


def require_input(folder: Path, spec: tuple[tuple[str, ...], str, str]) -> None:
    """UserError unless ``folder`` is a table with the columns of ``spec`` (see ``*_INPUT``)."""
    columns, what, hint = spec
    require_columns(folder, columns, what, hint)


@app.command()
def synthesize(
    params: Path = PARAMS,
    out: Path = typer.Option(Path("data/programs"), help="Output folder of program shards."),
    stats: Path = typer.Option(Path("data/metrics/synthesize.json"), help="Stats JSON (DVC metrics)."),
) -> None:
    """Generate programs for every target operation in every tier (the synthesize stage)."""
    from factory.synth.stage import run_synthesize_stage

    p = load_params(params, stage="synthesize")
    run_synthesize_stage(p.seed, p.synthesize, out, stats).print_summary()


@app.command()
def inputs(
    params: Path = PARAMS,
    programs: Path = typer.Option(Path("data/programs"), help="Programs from the synthesize stage."),
    out: Path = typer.Option(Path("data/cases"), help="Output folder of case shards."),
    stats: Path = typer.Option(Path("data/metrics/inputs.json"), help="Stats JSON (DVC metrics)."),
    pools: Path | None = typer.Option(None, help="Also save the drawn argument pools here."),
) -> None:
    """Draw inputs for every program with Hypothesis and keep those that cover most (the inputs stage)."""
    from factory.inputs.stage import run_inputs_stage

    p = load_params(params, stage="inputs")
    require_input(programs, PROGRAMS_INPUT)
    run_inputs_stage(
        p.seed, p.inputs, p.execute, p.synthesize.grammar, programs, out, stats, pools
    ).print_summary()


@app.command("traces")
def traces_stage(
    params: Path = PARAMS,
    executions: Path = typer.Option(Path("data/executions"), help="Executions from the execute stage."),
    out: Path = typer.Option(Path("data/traces"), help="Output folder of trace shards."),
    stats: Path = typer.Option(Path("data/metrics/trace.json"), help="Stats JSON (DVC metrics)."),
) -> None:
    """Trace every ok execution under both hash seeds; keep the cases whose traces agree (the trace
    stage; `execverify trace FILE` traces one program)."""
    from factory.trace.stage import run_trace_stage

    p = load_params(params, stage="trace")
    require_input(executions, EXECUTIONS_INPUT)
    run_trace_stage(executions, out, stats, p.trace, p.execute).print_summary()


@app.command("tasks")
def tasks_stage(
    params: Path = PARAMS,
    traces: Path = typer.Option(Path("data/traces"), help="Traces from the trace stage."),
    out: Path = typer.Option(Path("data/tasks"), help="Output folder of task shards."),
    stats: Path = typer.Option(Path("data/metrics/tasks.json"), help="Stats JSON (DVC metrics)."),
) -> None:
    """Derive the question items (white-box, output, input, coverage) from every trace."""
    from factory.tasks.stage import run_tasks_stage

    p = load_params(params, stage="tasks")
    require_input(traces, TRACES_INPUT)
    run_tasks_stage(traces, out, stats, p.seed, p.tasks).print_summary()


@grammar_app.command("check")
def grammar_check(
    folder: Path = typer.Argument(Path("grammars/python"), help="A language folder."),
) -> None:
    """Validate a grammar folder; problems are reported as file:line: message (exit 2)."""
    from factory.grammar.loader import load_grammar

    grammar = load_grammar(folder)
    types = len(grammar.types)
    print(
        f"{folder}: ok — {types} types, {len(grammar.targets())} operations "
        f"({len(grammar.operations)} variants), {len(grammar.predicates)} predicates, "
        f"hash {grammar.grammar_hash}"
    )
