"""``execverify phase2 build`` (the phase2 stage) and ``execverify phase2 import`` (outside data)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factory.cli import app
from factory.cli.stages import EXECUTIONS_INPUT, PARAMS, PROGRAMS_INPUT, require_input
from factory.errors import UserError
from factory.params import load_params

phase2_app = typer.Typer(help="Phase-2 (code generation) items.", no_args_is_help=True)
app.add_typer(phase2_app, name="phase2")


@phase2_app.command("build")
def build(
    params: Path = PARAMS,
    programs: Path = typer.Option(Path("data/programs"), help="Programs from the synthesize stage."),
    executions: Path = typer.Option(Path("data/executions"), help="Executions from the execute stage."),
    out: Path = typer.Option(Path("data/phase2"), help="Output folder of item shards."),
    stats: Path = typer.Option(Path("data/metrics/phase2.json"), help="Stats JSON (DVC metrics)."),
    pools: Path | None = typer.Option(
        None, help="Argument pools saved by the inputs stage (else drawn here with the phase-2 seed)."
    ),
) -> None:
    """Code-generation items from our programs: signature and executed examples shown, hidden tests
    from extra inputs run here (the phase2 stage)."""
    from factory.inputs.stage import POOLS_SCHEMA
    from factory.io import require_columns
    from factory.phase2.stage import run_phase2_stage

    require_input(programs, PROGRAMS_INPUT)
    require_input(executions, EXECUTIONS_INPUT)
    if pools is not None:
        hint = "pass the --pools folder of the inputs stage"
        require_columns(pools, POOLS_SCHEMA.names, "argument pools", hint)

    p = load_params(params, stage="phase2")
    run_phase2_stage(
        p.seed, p.phase2, p.inputs, p.execute, p.synthesize.grammar, programs, executions, out, stats, pools
    ).print_summary()


@phase2_app.command("import")
def import_command(
    source: Annotated[
        str, typer.Argument(help="A .jsonl(.gz)/.json/.parquet file, a dataset folder or a Hub id.")
    ],
    out: Annotated[Path, typer.Option(help="Output folder of item shards.")],
    name: Annotated[
        str | None, typer.Option(help="Origin recorded in each item (default: from SOURCE).")
    ] = None,
    config: Annotated[str | None, typer.Option(help="Dataset config (load_dataset's name).")] = None,
    split: Annotated[str, typer.Option(help="Dataset split.")] = "train",
    revision: Annotated[str | None, typer.Option(help="Dataset revision (a tag or commit).")] = None,
    show: Annotated[int, typer.Option(help="Tests also shown in the prompt.")] = 1,
    verify: Annotated[
        bool, typer.Option("--verify/--no-verify", help="Keep only items whose reference passes its tests.")
    ] = False,
    limit: Annotated[int | None, typer.Option(help="Read at most this many rows.")] = None,
    timeout: Annotated[
        float, typer.Option(help="--verify: CPU seconds each reference solution may take per test.")
    ] = 5.0,
    stats: Annotated[
        Path | None, typer.Option(help="Stats JSON (default: OUT/../metrics/import-NAME.json).")
    ] = None,
) -> None:
    """Import an outside code-generation dataset (HumanEval, MBPP or generic rows) as phase-2 items."""
    from factory.phase2.importer import import_dataset, read_rows

    if show < 0:
        raise UserError(f"--show must be at least 0, got {show}")
    if limit is not None and limit < 1:
        raise UserError(f"--limit must be at least 1, got {limit}")
    if not timeout > 0:
        raise UserError(f"--timeout must be positive, got {timeout}")
    origin = name or _origin(source)
    stats_path = stats or out.parent / "metrics" / f"import-{origin}.json"
    rows = read_rows(source, config=config, split=split, revision=revision)
    import_dataset(
        rows, origin, out, stats_path, show=show, verify=verify, limit=limit, timeout_s=timeout
    ).print_summary()


def _origin(source: str) -> str:
    """``mbpp`` for ``.../sanitized-mbpp.json``, ``HumanEval`` for ``HumanEval.jsonl.gz``, the repo
    name for a Hub id."""
    base = source.rstrip("/").rsplit("/", 1)[-1]
    for suffix in (".gz", ".jsonl", ".json", ".parquet"):
        base = base.removesuffix(suffix)
    return base.replace(" ", "_") or "imported"
