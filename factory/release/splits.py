"""Deterministic splits by program, and the share-driven selection of a mixed config.

A program's split depends on its ``program_id`` alone (a hash, no RNG, no position), so no program
appears in two splits and adding programs never moves an existing one.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping

import polars as pl

SPLITS = ("train", "test")
_BUCKETS = 1 << 32


def unit_hash(text: str, salt: str = "") -> float:
    """A stable number in [0, 1) from ``text`` (sha256; the same on every machine and run)."""
    digest = hashlib.sha256(f"{salt}\0{text}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / _BUCKETS


def split_of(program_id: str, test_share: float) -> str:
    """``test`` for a ``test_share`` of programs (by a hash of the id), ``train`` for the rest."""
    return "test" if unit_hash(program_id, "split") < test_share else "train"


def select_by_shares(candidates: pl.DataFrame, shares: Mapping[str, float]) -> pl.DataFrame:
    """The rows of ``candidates`` to take so that family f makes ``shares[f]`` of the mix, as many as
    the rarest allows (none when a family of ``shares`` has no candidate).

    ``candidates`` has a ``family`` and a ``hash`` column; within a family the smallest hashes are
    taken (on a tie, the earlier row), so the choice is deterministic and an item, once chosen, stays
    chosen while its family's count is what limits the mix.
    """
    sizes = dict(candidates.group_by("family").len().iter_rows())
    if any(not sizes.get(f) for f in shares):
        return candidates.clear()
    total = min(sizes[f] / share for f, share in shares.items())
    take = {f: min(sizes[f], math.floor(total * share + 1e-9)) for f, share in shares.items()}
    rank = pl.col("hash").rank("ordinal").over("family")
    return candidates.filter(rank <= pl.col("family").replace_strict(take, default=0, return_dtype=pl.Int64))
