"""Where a stage's work runs: in this process tree (``local``) or on a Ray cluster (``ray``).

A stage states its work as a :class:`Shards` job (docs/backends.md): plain, picklable data
(``config``) and two module-level functions, ``open(config, cpus)``, a context manager that makes
the per-process state once (the stage's trusted ``WorkerPool`` or ``Executor``), and
``work(config, state, units)``, which yields one result per unit, in order. A :class:`Backend` runs the
job over the stage's units and yields ``(unit, result)`` pairs in input order; the stage turns
them into ``Outcome``s in its own process, so its counters and the output bytes never depend on
the backend, the shard boundaries or which process ran a shard.

``cpus`` is None where the stage's params decide (``execute.workers`` and the like; 0: every
core), or the number of CPUs of the process that runs the shard (a Ray actor's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from factory.params import BackendParams

C = TypeVar("C")
S = TypeVar("S")
U = TypeVar("U")
R = TypeVar("R")


@dataclass(frozen=True)
class Shards(Generic[C, S, U, R]):
    """A stage's work: ``open(config, cpus)`` makes the per-process state, ``work(config, state,
    units)`` maps units to results (one each, in order; a result must not depend on the other
    units, so that neither the shard boundaries nor the process that ran a shard show)."""

    config: C
    open: Callable[[C, int | None], AbstractContextManager[S]]
    work: Callable[[C, S, Iterable[U]], Iterator[R]]


class Backend(Protocol):
    """Runs :class:`Shards` jobs; a context manager (the Ray backend holds a connection)."""

    def map(self, job: Shards[Any, Any, U, R], units: Iterable[U]) -> Iterator[tuple[U, R]]:
        """``(unit, result)`` for every unit, in input order."""
        ...

    def __enter__(self) -> Backend: ...

    def __exit__(self, *exc: object) -> None: ...


class ShardError(RuntimeError):
    """A shard failed where it ran (a bug in the stage, or a worker lost more often than the
    retries allow): one line naming the stage's work, the shard and the cause."""


def run_shards(
    backend: Backend | None, job: Shards[Any, Any, U, R], units: Iterable[U]
) -> Iterator[tuple[U, R]]:
    """``backend.map(job, units)``; None: the local backend (a stage called without one)."""
    if backend is None:
        from factory.backend.local import LocalBackend

        backend = LocalBackend()
    return backend.map(job, units)


def from_params(params: BackendParams | None = None) -> Backend:
    """The backend that ``params.yaml``'s ``backend`` section names (None: local)."""
    from factory.backend.local import LocalBackend

    if params is None or params.kind == "local":
        return LocalBackend()
    from factory.backend.ray import RayBackend

    return RayBackend(params.address, shard_units=params.shard_units, cpus_per_actor=params.cpus_per_actor)
