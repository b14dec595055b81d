"""``execverify publish``: a release folder to the Hub (``execverify stage assemble`` writes it)."""

from __future__ import annotations

from pathlib import Path

import typer

from factory.cli import app


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
