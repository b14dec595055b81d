"""Splits by program: disjoint, deterministic, stable when programs are added; the phase-1 mix."""

from __future__ import annotations

from collections import Counter

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from factory.release.splits import select_by_shares, split_of

ids = st.lists(st.text("0123456789abcdef", min_size=16, max_size=16), min_size=1, max_size=300, unique=True)


@given(ids, ids, st.floats(0.05, 0.5))
@settings(max_examples=60, deadline=None)
def test_adding_programs_never_moves_an_existing_one(old: list[str], new: list[str], share: float) -> None:
    before = {pid: split_of(pid, share) for pid in old}
    after = {pid: split_of(pid, share) for pid in old + new}
    assert all(after[pid] == split for pid, split in before.items())
    assert set(after.values()) <= {"train", "test"}


def test_the_test_share_is_about_right_and_order_free() -> None:
    pids = [f"{i:016x}" for i in range(20_000)]
    counts = Counter(split_of(p, 0.1) for p in pids)
    assert 0.09 < counts["test"] / len(pids) < 0.11
    assert [split_of(p, 0.1) for p in reversed(pids)] == [split_of(p, 0.1) for p in pids][::-1]
    assert all(split_of(p, 0.0) == "train" for p in pids[:500])


def test_the_split_of_known_ids_is_pinned() -> None:
    # Known values, so that a change to the hash (which would move programs between splits) fails.
    pids = [f"{i:016x}" for i in range(40)]
    assert [p for p in pids if split_of(p, 0.1) == "test"] == [
        "0000000000000002",
        "0000000000000013",
        "0000000000000026",
        "0000000000000027",
    ]


def _candidates(sizes: dict[str, int]) -> pl.DataFrame:
    rows = [(f, i / n, i) for f, n in sizes.items() for i in range(n)]
    return pl.DataFrame(rows, schema=["family", "hash", "i"], orient="row")


@given(st.integers(1, 300), st.integers(1, 300), st.sampled_from([0.5, 0.25, 0.8]))
@settings(max_examples=60, deadline=None)
def test_select_by_shares_meets_the_shares(n_a: int, n_b: int, share_a: float) -> None:
    cands = _candidates({"a": n_a, "b": n_b})
    chosen = select_by_shares(
        cands.sample(fraction=1.0, shuffle=True, seed=n_a), {"a": share_a, "b": 1 - share_a}
    )
    got = Counter(chosen.get_column("family").to_list())
    total = min(n_a / share_a, n_b / (1 - share_a))
    for fam, share, n in (("a", share_a, n_a), ("b", 1 - share_a, n_b)):
        assert got[fam] == min(n, int(total * share + 1e-9))
    # the limiting family is taken whole; the other by smallest hash, whatever the row order
    for fam in "ab":
        assert sorted(chosen.filter(pl.col("family") == fam).get_column("i")) == list(range(got[fam]))


def test_select_by_shares_breaks_hash_ties_by_row_order() -> None:
    cands = pl.DataFrame(
        {"family": ["a", "a", "a", "a", "b"], "hash": [0.5, 0.1, 0.3, 0.1, 0.2], "i": range(5)}
    )
    chosen = select_by_shares(cands, {"a": 0.5, "b": 0.5})
    assert chosen.get_column("i").to_list() == [1, 4]  # one of a's two 0.1 hashes: the earlier row


def test_select_by_shares_without_a_family_is_empty() -> None:
    assert select_by_shares(_candidates({"a": 1}), {"a": 0.5, "b": 0.5}).is_empty()
    assert select_by_shares(_candidates({"a": 1, "c": 3}), {"a": 0.5, "b": 0.5}).is_empty()
