"""The Ray backend: a stage's units in shards, sent to actors on a Ray cluster (docs/backends.md).

Each actor takes ``cpus_per_actor`` CPUs of the cluster and makes the job's per-process state
once (``Shards.open``: a trusted ``WorkerPool`` with the stage's limits, whose workers are the
actor's own children), then maps the shards it is given. The driver (the stage command) keeps
at most ``WINDOW`` shards queued per actor, gives the next shard to the least busy actor, and
yields the results in input order. An actor that dies (its node, its process, the OOM killer)
is restarted by Ray and the shards it held run again (``max_restarts`` / ``max_task_retries``,
``RETRIES`` each); results never depend on which actor ran a shard. Ray is imported only here
(``pip install -e '.[ray]'``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from factory.backend import ShardError, Shards
from factory.errors import UserError
from factory.stage import chunks

U = TypeVar("U")
R = TypeVar("R")

#: Shards queued per actor: one running, one waiting, so an actor never idles on a round trip.
WINDOW = 2
#: How far ahead of the oldest unfinished shard the driver may run (in shards per actor).
AHEAD = 8
#: Restarts of a lost actor, and retries of the shards it held.
RETRIES = 3


class ShardActor:
    """A Ray actor: the job's per-process state, made once (at its first shard, so that a restarted
    actor makes it again), and the shards it maps."""

    def __init__(self, cpus: int) -> None:
        self._cpus = cpus
        self._job: Shards[Any, Any, Any, Any] | None = None
        self._context: AbstractContextManager[Any] | None = None
        self._state: Any = None

    def run(self, job_box: list[Any], shard: list[Any]) -> tuple[list[Any], float]:
        """The results of ``shard`` and the seconds they took here (the first shard's include
        making the state). The job comes as a reference
        in a list, which Ray leaves to the actor to resolve: fetched once per actor process (the
        driver holds it until the end)."""
        start = time.perf_counter()
        if self._job is None:
            import ray

            job: Shards[Any, Any, Any, Any] = ray.get(job_box[0])
            self._context = job.open(job.config, self._cpus)
            self._state = self._context.__enter__()
            self._job = job
        results = list(self._job.work(self._job.config, self._state, shard))
        return results, time.perf_counter() - start

    def close(self) -> None:
        """Stop the state (the pool's workers) before the actor is killed."""
        if self._context is not None:
            self._context.__exit__(None, None, None)
            self._context = None


class RayBackend:
    """Shards of ``shard_units`` units on the Ray cluster at ``address`` (``HOST:PORT`` of the head,
    as ``ray start --head`` prints it; None: Ray's own lookup, else a Ray started for this run)."""

    def __init__(self, address: str | None, *, shard_units: int = 256, cpus_per_actor: int = 1) -> None:
        self.address = address
        self.shard_units = shard_units
        self.cpus_per_actor = cpus_per_actor
        self._ray: Any = None
        #: (units, seconds in the actor) of every shard run so far: the per-shard costs (bench/)
        self.shard_costs: list[tuple[int, float]] = []

    def __enter__(self) -> RayBackend:
        self._ray = connect(self.address)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None

    def actors(self) -> int:
        """How many actors a map starts: the cluster's CPUs over ``cpus_per_actor``."""
        cpus = int(self._ray.cluster_resources().get("CPU", 0))
        if cpus < self.cpus_per_actor:
            raise UserError(
                f"backend: the Ray cluster at {self.address or '(auto)'} has {cpus} CPUs, "
                f"fewer than backend.cpus_per_actor ({self.cpus_per_actor})"
            )
        return cpus // self.cpus_per_actor

    def map(self, job: Shards[Any, Any, U, R], units: Iterable[U]) -> Iterator[tuple[U, R]]:
        if self._ray is None:
            raise RuntimeError("the Ray backend is not connected: use it as a context manager")
        ray = self._ray
        shards = enumerate(chunks(units, self.shard_units))
        first = next(shards, None)
        if first is None:
            return
        remote = ray.remote(ShardActor).options(
            num_cpus=self.cpus_per_actor,
            max_restarts=RETRIES,
            max_task_retries=RETRIES,
            scheduling_strategy="SPREAD",
        )
        job_ref = ray.put(job)
        actors = [remote.remote(self.cpus_per_actor) for _ in range(self.actors())]
        try:
            yield from self._ordered(job, [job_ref], actors, itertools.chain([first], shards))
        finally:
            self._stop(actors)

    def _ordered(
        self,
        job: Shards[Any, Any, U, R],
        job_box: list[Any],
        actors: list[Any],
        todo: Iterator[tuple[int, list[U]]],
    ) -> Iterator[tuple[U, R]]:
        """Submit shards as actors free up, yield their results in shard order."""
        ray = self._ray
        load = [0] * len(actors)
        inflight: dict[Any, tuple[int, int]] = {}  # ref -> (shard index, actor)
        waiting: dict[int, list[U]] = {}  # submitted shards not yet yielded
        finished: dict[int, list[R]] = {}
        exhausted = False
        nxt = 0
        while True:
            while not exhausted and min(load) < WINDOW and len(waiting) < AHEAD * len(actors):
                item = next(todo, None)
                if item is None:
                    exhausted = True
                    break
                index, shard = item
                a = load.index(min(load))
                inflight[actors[a].run.remote(job_box, shard)] = (index, a)
                waiting[index] = shard
                load[a] += 1
            if not inflight:
                return
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                index, a = inflight.pop(ref)
                load[a] -= 1
                finished[index] = self._result(job, index, ref, len(waiting[index]))
            while nxt in finished:
                shard = waiting.pop(nxt)
                yield from zip(shard, finished.pop(nxt), strict=True)
                nxt += 1

    def _result(self, job: Shards[Any, Any, Any, R], index: int, ref: Any, size: int) -> list[R]:
        """The results of shard ``index``, or a ShardError naming it and the cause."""
        from ray import exceptions

        what = f"{getattr(job.work, '__module__', '?')}.{getattr(job.work, '__qualname__', '?')}"
        try:
            results: list[R]
            results, seconds = self._ray.get(ref)
        except exceptions.RayTaskError as exc:
            cause: BaseException = exc.cause if isinstance(exc.cause, BaseException) else exc
            lines = str(cause).strip().splitlines() or [""]
            line = lines[0] if cause is not exc else lines[-1]  # Ray's own text ends with the cause
            raise ShardError(
                f"{what}: shard {index} failed on the Ray cluster: {type(cause).__name__}: {line}"
            ) from exc
        except exceptions.RayActorError as exc:
            raise ShardError(
                f"{what}: shard {index} lost its actor {RETRIES + 1} times (backend retries: {RETRIES}): "
                f"{str(exc).strip().splitlines()[0]}"
            ) from exc
        if len(results) != size:
            raise ShardError(f"{what}: shard {index} gave {len(results)} results for {size} units")
        self.shard_costs.append((size, seconds))
        return results

    def _stop(self, actors: list[Any]) -> None:
        """Close every actor's state (its pool's workers), then end the actors."""
        ray = self._ray
        closing = [actor.close.remote() for actor in actors]
        with contextlib.suppress(Exception):
            ray.wait(closing, num_returns=len(closing), timeout=30)
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)


def connect(address: str | None) -> Any:
    """``ray`` connected to the cluster at ``address`` (None: Ray's own lookup, else a Ray started
    for this process); a UserError (one line) when no cluster answers there."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    options: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR"}
    if address is None:
        options["include_dashboard"] = False
    else:
        _reachable(address)
    try:
        ray.init(address=address, **options)
    except ConnectionError as exc:
        raise UserError(
            f"backend.address {address or '(auto)'}: no Ray cluster answers there ({exc})"
        ) from None
    return ray


def _reachable(address: str, timeout_s: float = 5.0) -> None:
    """UserError (one line) unless something listens at ``HOST:PORT``: ``ray.init`` would wait
    minutes for a head that is not there."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise UserError(
            f"backend.address {address}: no Ray head answers there ({exc.strerror or exc}); "
            "start one with `ray start --head --port=PORT`"
        ) from None
