"""The local backend: the whole stream of units through one per-process state, in this process
tree (what every stage did before there were backends; the default)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from factory.backend import Shards

U = TypeVar("U")
R = TypeVar("R")


class LocalBackend:
    """One ``open`` for the whole stage, its units streamed to ``work`` (no shards: the stage's
    pool reads ahead across what would be shard boundaries, so the local path keeps its speed)."""

    def map(self, job: Shards[Any, Any, U, R], units: Iterable[U]) -> Iterator[tuple[U, R]]:
        pending: deque[U] = deque()

        def queued() -> Iterator[U]:
            for unit in units:
                pending.append(unit)  # ``work`` reads ahead; a unit waits here for its result
                yield unit

        with job.open(job.config, None) as state:
            for result in job.work(job.config, state, queued()):
                yield pending.popleft(), result

    def __enter__(self) -> LocalBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        pass
