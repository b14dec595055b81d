"""Parquet shards and JSON written atomically, the provenance every artifact records, and the YAML
loader the project reads its YAML files with."""

from __future__ import annotations

import glob
import json
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

import factory
from factory.errors import UserError

SHARD_GLOB = "part-*.parquet"
#: Temporary names beside an output: ``.<name>.tmp-<pid>-<random>``. The pid tells a stale one (its
#: writer was killed) from one being written now.
TMP_MARK = ".tmp-"

#: PyYAML's safe loader in C (libyaml) where PyYAML was built with it, as its wheels are, else the
#: pure-Python one: the same data and line marks, read 5-7x faster (measured: the Python grammar
#: 0.93 -> 0.18 s, dvc.lock 0.3 -> 0.05 s). Its syntax errors are worded libyaml's way.
SAFE_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: tempfile makes private (0700/0600) files and folders; outputs get the modes open() would give.
_UMASK = _umask()
_DIR_MODE = 0o777 & ~_UMASK
_FILE_MODE = 0o666 & ~_UMASK


def temp_sibling(path: str | Path, *, directory: bool, suffix: str = "") -> Path:
    """A new temporary file or folder beside ``path``, with the modes of an ordinary one; stale
    ones left beside ``path`` by a killed writer are removed first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    prefix = f".{path.name}{TMP_MARK}{os.getpid()}-"
    if directory:
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=prefix))
        os.chmod(tmp, _DIR_MODE)
    else:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=suffix)
        os.close(fd)
        tmp = Path(name)
        os.chmod(tmp, _FILE_MODE)
    return tmp


def remove_stale_temps(path: str | Path) -> list[Path]:
    """Remove the temporary files and folders beside ``path`` whose writer is no longer running
    (a stage killed with SIGKILL cannot clean up after itself); return what was removed."""
    path = Path(path)
    removed: list[Path] = []
    if not path.parent.is_dir():
        return removed
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*"):
        rest = tmp.name[len(path.name) + 1 :]
        if rest.startswith(TMP_MARK):
            pid = rest[len(TMP_MARK) :].split("-", 1)[0]
            if pid.isdigit() and _alive(int(pid)):
                continue
        elif rest != ".old":  # replace_dir's previous output, kept only during the swap
            continue
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        removed.append(tmp)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def provenance() -> dict[str, str]:
    """What made an artifact: Python version (it shapes traces), package and Hypothesis versions."""
    return {
        "python_version": platform.python_version(),
        "python_implementation": sys.implementation.name,
        "factory_version": factory.__version__,
        "hypothesis_version": version("hypothesis"),
    }


def parse_json_object(text: str, where: str) -> dict[str, Any]:
    """One JSON object from user input; anything else is a UserError naming ``where``."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: not valid JSON ({exc.msg}, column {exc.colno})") from None
    if not isinstance(value, dict):
        raise UserError(f"{where}: expected a JSON object")
    return value


def write_json_atomic(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as pretty, key-sorted JSON; readers never see a half-written file."""
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    tmp = temp_sibling(path, directory=False)
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class ShardWriter:
    """Stream rows into ``part-NNNNN.parquet`` shards of a folder that appears atomically.

    Rows are written as row groups of ``group_rows`` as they come, so memory stays bounded by one
    row group whatever the size of the output; a new shard starts every ``rows_per_shard`` rows.
    Everything goes to a hidden temporary folder beside the target; ``close()`` swaps it into
    place, so a crash or a bad input never leaves a half-written output (the previous one stays).
    """

    def __init__(
        self, out_dir: str | Path, schema: pa.Schema, rows_per_shard: int = 50_000, group_rows: int = 2_000
    ):
        self.out_dir = Path(out_dir)
        self.out_dir.parent.mkdir(parents=True, exist_ok=True)
        meta = {k.encode(): v.encode() for k, v in provenance().items()}
        self.schema = schema.with_metadata({**(schema.metadata or {}), **meta})
        self.rows_per_shard = rows_per_shard
        self.group_rows = min(group_rows, rows_per_shard)
        self.tmp_dir = temp_sibling(self.out_dir, directory=True)
        self._rows: list[dict[str, Any]] = []  # rows given as dicts, not yet in _tables
        self._tables: list[pa.Table] = []  # the rows buffered before them
        self._buffered = 0
        self._writer: pq.ParquetWriter | None = None
        self._shards = 0
        self._in_shard = 0
        self.rows = 0

    def write(self, row: dict[str, Any]) -> None:
        self._rows.append(row)
        self._buffered += 1
        if self._buffered >= self.group_rows:
            self._flush()

    def write_many(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            self.write(row)

    def write_table(self, rows: pa.Table | pa.RecordBatch) -> None:
        """Rows already in Arrow form, of ``schema``'s columns and types: the same shards as
        ``write_many`` of them as dicts, without making the dicts (the assemble stage's rows come
        from Arrow, and making their dicts and reading them back was most of its writing time)."""
        table = pa.Table.from_batches([rows]) if isinstance(rows, pa.RecordBatch) else rows
        if not table.schema.equals(self.schema):
            table = table.cast(self.schema)
        self._hold_rows()
        self._tables.append(table)
        self._buffered += table.num_rows
        if self._buffered >= self.group_rows:
            self._flush()

    def _hold_rows(self) -> None:
        if self._rows:
            self._tables.append(pa.Table.from_pylist(self._rows, schema=self.schema))
            self._rows = []

    def _flush(self, last: bool = False) -> None:
        """Write the buffered rows as row groups of ``group_rows`` rows counted from the first row
        (and, ``last``, the rest), each cut where a shard ends; keep the rest buffered."""
        self._hold_rows()
        if not self._tables:
            return
        buffered = pa.concat_tables(self._tables)
        start = 0
        while buffered.num_rows - start >= self.group_rows or (last and start < buffered.num_rows):
            size = min(self.group_rows, buffered.num_rows - start)
            self._write_group(buffered.slice(start, size).combine_chunks())
            start += size
        rest = buffered.slice(start)
        self._tables = [rest] if rest.num_rows else []
        self._buffered = rest.num_rows

    def _write_group(self, group: pa.Table) -> None:
        while group.num_rows:
            if self._writer is None:
                path = self.tmp_dir / f"part-{self._shards:05d}.parquet"
                self._writer = pq.ParquetWriter(path, self.schema, compression="zstd")
                self._shards += 1
                self._in_shard = 0
            take = min(group.num_rows, self.rows_per_shard - self._in_shard)
            self._writer.write_table(group.slice(0, take))
            group = group.slice(take)
            self._in_shard += take
            self.rows += take
            if self._in_shard >= self.rows_per_shard:
                self._writer.close()
                self._writer = None

    def close(self) -> None:
        """Write what is buffered (always at least one shard, possibly empty); swap the folder in."""
        self._flush(last=True)
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if not self._shards:  # the same file as schema.empty_table()'s, which imports pandas (0.45 s)
            empty = pa.Table.from_batches([], schema=self.schema)
            pq.write_table(empty, self.tmp_dir / "part-00000.parquet", compression="zstd")
        replace_dir(self.tmp_dir, self.out_dir)

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        shutil.rmtree(self.tmp_dir, ignore_errors=True)

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def replace_dir(tmp_dir: str | Path, out_dir: str | Path) -> None:
    """Swap the finished folder ``tmp_dir`` in as ``out_dir`` (the previous one goes only after)."""
    tmp_dir, out_dir = Path(tmp_dir), Path(out_dir)
    old = None
    if out_dir.exists():
        old = out_dir.with_name(f".{out_dir.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(out_dir, old)
    os.replace(tmp_dir, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def shard_paths(in_dir: str | Path) -> list[Path]:
    """The shards of a stage output folder, in order; a missing folder is a UserError."""
    in_dir = Path(in_dir)
    if not in_dir.is_dir():
        raise UserError(f"{in_dir}: input folder not found (run the previous stage first)")
    return sorted(in_dir.glob(SHARD_GLOB))


def iter_batches(
    in_dir: str | Path, batch_rows: int = 10_000, columns: list[str] | None = None
) -> Iterator[pa.RecordBatch]:
    """Yield the rows of a stage output folder as Arrow batches, never loading it whole (only those
    of ``columns`` a shard has, when given: a table written before a column was added lacks it)."""
    for path in shard_paths(in_dir):
        pf = pq.ParquetFile(path)
        present = None if columns is None else [c for c in columns if c in pf.schema_arrow.names]
        yield from pf.iter_batches(batch_size=batch_rows, columns=present)


def iter_rows(
    in_dir: str | Path, batch_rows: int = 10_000, columns: list[str] | None = None
) -> Iterator[list[dict[str, Any]]]:
    """:func:`iter_batches` as lists of dicts."""
    for batch in iter_batches(in_dir, batch_rows, columns):
        yield batch.to_pylist()


def count_rows(in_dir: str | Path) -> int:
    return sum(pq.ParquetFile(p).metadata.num_rows for p in shard_paths(in_dir))


def read_table(in_dir: str | Path) -> pa.Table:
    """Load a whole stage output (for tests and small tools; stages stream with iter_rows)."""
    paths = shard_paths(in_dir)
    return pa.concat_tables([pq.read_table(p) for p in paths]) if paths else pa.table({})


def require_columns(in_dir: str | Path, columns: Iterable[str], what: str, hint: str | None = None) -> None:
    """Check, before a stage reads it, that ``in_dir`` is a stage table holding ``columns``.

    Reads only the parquet schema of the first shard. A missing folder, a folder without shards,
    an unreadable shard or missing columns is a UserError naming the folder and what table was
    expected (``what``, e.g. ``"traces"``), ending with ``hint`` (e.g. ``"pass the output of the
    trace stage"``) when given.
    """
    in_dir = Path(in_dir)
    tail = f"; {hint}" if hint else ""
    table = f"{'an' if what[:1] in 'aeiou' else 'a'} {what} table"
    paths = shard_paths(in_dir)
    if not paths:
        raise UserError(f"{in_dir}: no {SHARD_GLOB} shards, not {table}{tail}")
    try:
        names = set(pq.read_schema(paths[0]).names)
    except (OSError, pa.ArrowException) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{paths[0]}: not a parquet file ({reason[:200]}){tail}") from None
    missing = [c for c in dict.fromkeys(columns) if c not in names]
    if missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        raise UserError(f"{in_dir}: not {table} (missing columns: {shown}){tail}")
