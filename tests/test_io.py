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
