"""``execverify phase2 import``: outside code-generation data as phase-2 items (the phase2 stage is
``execverify stage phase2``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factory.cli import app
from factory.errors import UserError

phase2_app = typer.Typer(help="Phase-2 (code generation) items.", no_args_is_help=True)
app.add_typer(phase2_app, name="phase2")


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
