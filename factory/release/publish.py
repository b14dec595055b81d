"""Publish a release folder to the Hugging Face Hub: one commit, tagged with the version.

The token comes from where ``huggingface_hub`` looks (``HF_TOKEN``, then the stored login); the
endpoint from ``HF_ENDPOINT``. Every failure (no token, a missing repository, no network, an
existing tag without ``--force``) is a one-line UserError.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from factory.errors import UserError
from factory.release.provenance import git_commit

VERSION = re.compile(r"^v\d+\.\d+\.\d+(?:[-.+][0-9A-Za-z.]+)?$")
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
# Remote files of an earlier version that this commit removes when the new folder lacks them.
DELETE_PATTERNS = ["*.parquet", "*.png", "README.md"]


def release_files(folder: Path) -> list[tuple[str, int]]:
    """(relative path, size) of every file of a release folder, sorted; checks it is one."""
    if not (folder / "README.md").is_file():
        raise UserError(f"{folder}: not a release folder (no README.md; run `dvc repro assemble` first)")
    return sorted(
        (p.relative_to(folder).as_posix(), p.stat().st_size)
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def publish_release(
    folder: Path,
    repo_id: str,
    version: str,
    *,
    private: bool = False,
    dry_run: bool = False,
    force: bool = False,
) -> str | None:
    """Upload ``folder`` to the dataset repo ``repo_id`` in one commit and tag it ``version``.

    Returns the commit id (None for a dry run).
    """
    if not REPO_ID.match(repo_id):
        raise UserError(f"--repo-id {repo_id!r}: expected ORG/NAME")
    if not VERSION.match(version):
        raise UserError(f"--version {version!r}: expected vMAJOR.MINOR.PATCH, e.g. v1.0.0")
    files = release_files(folder)
    message = f"Release {version} (git {git_commit()})"
    if dry_run:
        print(
            f"dry run: would upload {len(files)} files to datasets/{repo_id} "
            f"({'private' if private else 'public'}), commit {message!r}, tag {version}"
        )
        for path, size in files:
            print(f"  {size:>12,}  {path}")
        print(f"  {sum(s for _, s in files):>12,}  total bytes")
        return None

    import httpx
    from huggingface_hub import HfApi, get_token
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    token = get_token()
    if not token:
        raise UserError("no Hugging Face token: set HF_TOKEN or run `hf auth login`")
    api = HfApi(token=token)
    try:
        try:
            tags = {t.name for t in api.list_repo_refs(repo_id, repo_type="dataset").tags}
        except RepositoryNotFoundError:
            api.create_repo(repo_id, repo_type="dataset", private=private)
            tags = set()
        if version in tags and not force:
            raise UserError(f"datasets/{repo_id}: tag {version} already exists (use --force to move it)")
        info = api.upload_folder(
            folder_path=folder,
            repo_id=repo_id,
            repo_type="dataset",
            commit_message=message,
            delete_patterns=DELETE_PATTERNS,
            ignore_patterns=[".*", "**/.*"],
        )
        if version in tags:
            api.delete_tag(repo_id, tag=version, repo_type="dataset")
        api.create_tag(repo_id, tag=version, revision=info.oid, tag_message=message, repo_type="dataset")
    except (HfHubHTTPError, httpx.HTTPError, OSError, ValueError) as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"publish to datasets/{repo_id} failed: {text}") from None
    print(f"published datasets/{repo_id} {version}: commit {info.oid} ({len(files)} files)", file=sys.stderr)
    return info.oid
