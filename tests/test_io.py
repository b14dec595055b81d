"""Atomic, streaming parquet shards."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.io import ShardWriter, count_rows, iter_rows, read_table, shard_paths

SCHEMA = pa.schema([("i", pa.int64()), ("s", pa.string())])


def test_rows_stream_into_shards_in_order(tmp_path: Path) -> None:
    with ShardWriter(tmp_path / "out", SCHEMA, rows_per_shard=250, group_rows=100) as w:
        w.write_many({"i": i, "s": str(i)} for i in range(1000))
    paths = shard_paths(tmp_path / "out")
    assert [p.name for p in paths] == [f"part-{n:05d}.parquet" for n in range(4)]
    assert [pq.ParquetFile(p).metadata.num_rows for p in paths] == [250] * 4
    assert pq.ParquetFile(paths[0]).metadata.num_row_groups == 3  # 100 + 100 + 50
    assert [r["i"] for batch in iter_rows(tmp_path / "out", batch_rows=64) for r in batch] == list(
        range(1000)
    )
    assert count_rows(tmp_path / "out") == 1000
    assert read_table(tmp_path / "out").schema.metadata[b"python_version"].startswith(b"3.")


def test_arrow_rows_make_the_shards_that_dict_rows_make(tmp_path: Path) -> None:
    """``write_table`` (Arrow rows, in pieces of any size, between dict rows) cuts the same row
    groups and shards as ``write_many``: the files are byte-identical."""
    rows = [{"i": i, "s": str(i) * (i % 7)} for i in range(1000)]
    with ShardWriter(tmp_path / "dicts", SCHEMA, rows_per_shard=250, group_rows=100) as w:
        w.write_many(rows)
    table = pa.Table.from_pylist(rows, schema=SCHEMA.with_metadata({"from": "elsewhere"}))
    start = 0
    with ShardWriter(tmp_path / "tables", SCHEMA, rows_per_shard=250, group_rows=100) as w:
        for i, size in enumerate([1, 37, 300, 2, 0, 160, 99, 401]):
            if i % 3 == 1:
                w.write_many(rows[start : start + size])
            else:
                w.write_table(table.slice(start, size).to_batches()[0] if size else table.slice(start, 0))
            start += size
    assert start == len(rows)
    dicts, tables = shard_paths(tmp_path / "dicts"), shard_paths(tmp_path / "tables")
    assert [p.name for p in dicts] == [p.name for p in tables]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(dicts, tables, strict=True))


def test_an_empty_output_has_one_empty_shard(tmp_path: Path) -> None:
    with ShardWriter(tmp_path / "out", SCHEMA):
        pass
    assert read_table(tmp_path / "out").num_rows == 0


def test_a_failed_write_keeps_the_previous_output(tmp_path: Path) -> None:
    with ShardWriter(tmp_path / "out", SCHEMA) as w:
        w.write({"i": 1, "s": "a"})
    with pytest.raises(RuntimeError), ShardWriter(tmp_path / "out", SCHEMA, group_rows=1) as w:
        w.write({"i": 2, "s": "b"})
        raise RuntimeError("crash mid-stage")
    assert read_table(tmp_path / "out").to_pylist() == [{"i": 1, "s": "a"}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary folder left behind


def test_outputs_get_ordinary_modes(tmp_path: Path) -> None:
    """tempfile makes 0700 folders and 0600 files; outputs are swapped in with umask's modes."""
    import os

    from factory.io import write_json_atomic

    mask = os.umask(0o022)
    try:
        with ShardWriter(tmp_path / "out", SCHEMA) as w:
            w.write({"i": 1, "s": "a"})
        write_json_atomic(tmp_path / "stats.json", {"a": 1})
    finally:
        os.umask(mask)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "stats.json").stat().st_mode & 0o777 == 0o644


def test_temps_of_a_killed_writer_are_removed_by_the_next(tmp_path: Path) -> None:
    """A stage killed with SIGKILL leaves ``.<name>.tmp-<pid>-*``; the next writer removes those
    whose process is gone, and leaves a live writer's alone."""
    import os
    import subprocess
    import sys

    from factory.io import remove_stale_temps, write_json_atomic

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(dead.stdout)
    stale_dir = tmp_path / f".out.tmp-{dead_pid}-abc"
    stale_dir.mkdir()
    (stale_dir / "part-00000.parquet").write_bytes(b"half")
    stale_file = tmp_path / f".stats.json.tmp-{dead_pid}-xyz"
    stale_file.write_text("{")
    leftover_old = tmp_path / ".out.old"
    leftover_old.mkdir()
    live = tmp_path / f".out.tmp-{os.getpid()}-live"
    live.mkdir()
    other = tmp_path / ".outer.tmp-1-x"  # another output's name: not ours to judge
    other.mkdir()

    with ShardWriter(tmp_path / "out", SCHEMA) as w:
        w.write({"i": 1, "s": "a"})
    write_json_atomic(tmp_path / "stats.json", {"a": 1})

    assert not stale_dir.exists() and not stale_file.exists() and not leftover_old.exists()
    assert live.exists() and other.exists()
    assert read_table(tmp_path / "out").num_rows == 1
    assert remove_stale_temps(tmp_path / "out") == []  # nothing left but the live writer's
