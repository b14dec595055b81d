"""Release commands: ``assemble`` (the DVC stage that writes data/release) and ``publish``."""

from __future__ import annotations

from pathlib import Path

import typer

from factory.cli import app
from factory.cli.stages import PARAMS
from factory.params import load_params


@app.command()
def assemble(
    params: Path = PARAMS,
    tasks: Path = typer.Option(Path("data/tasks"), "--tasks", help="Items: data/tasks, or data/difficulty."),
    out: Path = typer.Option(Path("data/release"), help="The release folder (the Hub's layout)."),
    stats: Path = typer.Option(Path("data/metrics/assemble.json"), help="Stats JSON (DVC metrics)."),
    plots: Path = typer.Option(Path("data/plots/assemble"), help="Plot data as CSV (DVC plots)."),
    metrics_dir: Path = typer.Option(Path("data/metrics"), help="Stats of the earlier stages, for the card."),
    difficulty_stats: Path = typer.Option(
        None,
        "--difficulty-stats",
        help="Stats JSON of the difficulty stage (its solver and band go in the card).",
    ),
    lock: Path = typer.Option(Path("dvc.lock"), help="dvc.lock, for the revision of each stage."),
    extra_input: list[str] = typer.Option(
        [], "--extra-input", help="NAME=DIR: another items folder, read by the config of that name."
    ),
) -> None:
    """Dedup, decontaminate, split by program and write the configs and the dataset card."""
    from factory.errors import UserError
    from factory.io import require_columns
    from factory.release.stage import REQUIRED, release_note, run_assemble_stage

    extra = {}
    for spec in extra_input:
        name, sep, folder = spec.partition("=")
        if not sep or not name or not folder:
            raise UserError(f"--extra-input {spec!r}: expected NAME=DIR")
        extra[name] = Path(folder)
    p = load_params(params, stage="assemble")
    require_columns(tasks, REQUIRED, "tasks", "pass the output of the tasks (or difficulty) stage")
    for name, folder_path in extra.items():
        hint = f"--extra-input {name}= needs a folder of item shards"
        require_columns(folder_path, REQUIRED, "items", hint)
    result = run_assemble_stage(
        tasks,
        out,
        stats,
        p.assemble,
        all_params=p.model_dump(),
        metrics_dir=metrics_dir,
        plots_dir=plots,
        difficulty_stats=difficulty_stats,
        lock_path=lock,
        extra_inputs=extra,
    )
    result.print_summary()
    print(release_note(out, result))


@app.command()
def publish(
    repo_id: str = typer.Option(..., "--repo-id", help="The Hub dataset repository, ORG/NAME."),
    version: str = typer.Option(..., "--version", help="The version tag, vX.Y.Z."),
    folder: Path = typer.Option(Path("data/release"), help="The release folder to upload."),
    private: bool = typer.Option(False, "--private", help="Create the repository private."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be uploaded; upload nothing."),
    force: bool = typer.Option(False, "--force", help="Move the tag if the version already exists."),
) -> None:
    """Upload the release folder in one commit and tag it with the version (token: HF_TOKEN or login)."""
    from factory.release.publish import publish_release

    publish_release(folder, repo_id, version, private=private, dry_run=dry_run, force=force)
