"""The saved argument pools table (``data/pools``): written by the inputs stage, read by the phase2
and assemble stages. Apart from ``factory.inputs.pools`` (which draws the pools): reading them needs
no Hypothesis, which took ~0.3 s of the assemble stage's imports."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from factory.contracts import POOLS_SCHEMA
from factory.io import ShardWriter, iter_rows
from factory.stage import DEFAULT_LANGUAGE, language_of


def write_pools(pools: Mapping[str, Mapping[str, list[str]]], out_dir: str | Path) -> None:
    """Save the drawn pools (language → signature → argument lists) so later stages sample them,
    not redraw; a row a signature, languages in the given order."""
    with ShardWriter(out_dir, POOLS_SCHEMA) as out:
        for language, signatures in pools.items():
            for key in sorted(signatures):
                out.write({"language": language, "signature": key, "args": signatures[key]})


def read_pools(in_dir: str | Path, language: str = DEFAULT_LANGUAGE) -> dict[str, list[str]]:
    """The pools of ``language`` that ``write_pools`` saved (signature → argument lists)."""
    return {
        row["signature"]: row["args"]
        for batch in iter_rows(in_dir)
        for row in batch
        if language_of(row) == language
    }


def pools_by_language(in_dir: str | Path) -> dict[str, dict[str, list[str]]]:
    """Every language's pools that ``write_pools`` saved (language -> signature -> argument lists)."""
    out: dict[str, dict[str, list[str]]] = {}
    for batch in iter_rows(in_dir):
        for row in batch:
            out.setdefault(language_of(row), {})[row["signature"]] = row["args"]
    return out
