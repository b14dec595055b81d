"""Model replicas on a Ray cluster through Ray Data (docs/backends.md, "The model stages").

``RaySolver`` sends batches of prompts through ``ray.data.from_items(...).map_batches(Replica)``:
each replica is a Ray actor that builds the backend (``make_backend``: a transformers model or a
vLLM engine) once and answers the batches it is given by ``generate``, the same call the local
path makes, so greedy texts are the same and sampled ones too (the same batches, the same seeds).
On a cluster with GPUs a replica takes ``tensor_parallel_size`` of them (vLLM's tensor-parallel
group in a placement group of its own when above one), elsewhere ``cpus`` CPUs. A replica that
is lost (its process, its node) is restarted and its batch runs again (``RETRIES``).
The response cache stays in the driver (``CachedSolver``): replicas only answer. Ray is imported
only here, when a batch is first missing.
"""

from __future__ import annotations

import json
import os
import socket
import time
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from factory.backend.ray import RETRIES, WINDOW, connect
from factory.errors import UserError
from factory.solvers.base import BaseSolver, Sampling

#: Seconds a pass waits for all its replicas to load their model before it fails.
STARTUP_S = 1800


@dataclass(frozen=True)
class Placement:
    """Where the replicas run: the cluster (``address``; None: Ray's own lookup), how many
    (``replicas``; 0: as many as the cluster holds), and what each takes: ``gpus`` (the
    tensor-parallel size; used where the cluster has GPUs) and ``cpus``."""

    address: str | None
    replicas: int = 0
    gpus: int = 1
    cpus: int = 1


class Replica:
    """A Ray Data actor: one backend, built once, answering batches of prompts (a row per batch:
    ``index`` and its ``prompts`` as JSON -> ``index`` and ``n`` texts per prompt as JSON, which
    Arrow carries as plain strings)."""

    def __init__(self, kind: str, model: str | None, options: dict[str, Any], n: int, sampling: Sampling):
        from factory.solvers import make_backend

        self.backend = make_backend(kind, model, **options)
        self.n = n
        self.sampling = sampling

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        texts, seconds = [], []
        for prompts in batch["prompts"]:
            start = time.perf_counter()
            texts.append(
                json.dumps(self.backend.generate(json.loads(prompts), self.n, **self.sampling.to_dict()))
            )
            seconds.append(time.perf_counter() - start)
        replica = [f"{socket.gethostname()}:{os.getpid()}"] * len(texts)
        return {
            "index": [int(i) for i in batch["index"]],
            "texts": texts,
            "replica": replica,
            "seconds": seconds,
        }


class RaySolver(BaseSolver):
    """The ``kind`` backend of ``model`` (with ``options``) as data-parallel replicas on Ray."""

    one_pass = True

    def __init__(self, kind: str, model: str | None, options: dict[str, Any], placement: Placement):
        from factory.solvers import model_id

        self.model_id = model_id(kind, model)
        self.kind, self.model, self.options, self.placement = kind, model, options, placement
        # Ray Data's progress lines would interleave with the stage's own progress: errors only.
        os.environ.setdefault("RAY_DATA_LOG_LEVEL", "ERROR")
        self._ray = connect(placement.address)
        context = self._ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        # Every replica loads its model before the first batch goes out, so the batches spread
        # over all of them (else the first replica up takes the first batches).
        context.wait_for_min_actors_s = STARTUP_S
        #: the replicas of the last pass, the batches each replica (``host:pid``) answered, and
        #: the seconds of each batch in its replica (bench/)
        self.replicas = 0
        self.answered_by: Counter[str] = Counter()
        self.batch_seconds: list[float] = []

    def resources(self) -> tuple[int, dict[str, Any]]:
        """How many replicas a pass starts and the ``map_batches`` resources of each; a
        UserError (one line) when the cluster holds none or fewer than asked."""
        p = self.placement
        cluster = self._ray.cluster_resources()
        gpus, cpus = int(cluster.get("GPU", 0)), int(cluster.get("CPU", 0))
        where = f"the Ray cluster at {p.address or '(auto)'}"
        if gpus and p.gpus > 1:  # vLLM's tensor-parallel workers: a GPU and a CPU each, on one node
            fits, unit = min(gpus, cpus) // p.gpus, f"{p.gpus} GPUs"
            args: dict[str, Any] = {"num_gpus": 0, "ray_remote_args_fn": _tensor_parallel_group(p.gpus)}
        elif gpus:
            fits, unit = min(gpus, cpus // p.cpus), f"a GPU and {p.cpus} CPUs"
            args = {"num_cpus": p.cpus, "num_gpus": 1}
        else:
            fits, unit = cpus // p.cpus, f"{p.cpus} CPUs"
            args = {"num_cpus": p.cpus}
        replicas = p.replicas or fits
        if fits < 1 or replicas > fits:
            raise UserError(
                f"{where} ({gpus} GPUs, {cpus} CPUs) holds {fits} solver replicas of {unit}, "
                f"not {replicas}: lower replicas, replica_cpus or tensor_parallel_size"
            )
        return replicas, args

    def stream(
        self, batches: Sequence[Sequence[str]], n: int, sampling: Sampling
    ) -> Iterator[tuple[int, list[list[str]]]]:
        """Every batch through the replicas, yielded as it comes back (any order)."""
        if not batches:
            return
        replicas, resources = self.resources()
        self.replicas = replicas = min(replicas, len(batches))
        items = [{"index": i, "prompts": json.dumps(list(batch))} for i, batch in enumerate(batches)]
        dataset = self._ray.data.from_items(items, override_num_blocks=len(items))
        pool = self._ray.data.ActorPoolStrategy(size=replicas, max_tasks_in_flight_per_actor=WINDOW)
        with warnings.catch_warnings():
            # Ray 2.60 deprecates the actor options given as keywords (and ray_remote_args_fn),
            # with no named replacement yet; ray is pinned (the `ray` extra).
            warnings.simplefilter("ignore", DeprecationWarning)
            answered = dataset.map_batches(
                Replica,
                fn_constructor_args=(self.kind, self.model, self.options, n, sampling),
                batch_size=1,  # one batch of prompts per call: the call the local path makes
                batch_format="pandas",
                compute=pool,  # a fixed pool; each replica has one batch running and one waiting
                max_restarts=RETRIES,  # Ray Data's default: restart a lost replica forever
                max_task_retries=RETRIES,
                **resources,
            )
        self.answered_by.clear()
        self.batch_seconds.clear()
        try:
            for row in answered.iter_rows():
                self.answered_by[row["replica"]] += 1
                self.batch_seconds.append(float(row["seconds"]))
                yield int(row["index"]), json.loads(row["texts"])
        except Exception as exc:
            raise _one_line(exc) from exc

    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        """One batch, answered by one replica (the stages use ``stream`` with many)."""
        return [texts for _, texts in self.stream([prompts], n, sampling)][0]

    def close(self) -> None:
        """Disconnect from the cluster (the replicas end with their pass)."""
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None


class ReplicaError(RuntimeError):
    """The replicas failed (a bug, or a replica lost more often than ``RETRIES``): one line."""


def _one_line(exc: BaseException) -> Exception:
    """The UserError behind a failed pass (a replica could not load its model: exit 2), else a
    ReplicaError naming the cause in one line. Ray hands a replica's failure back as text (an
    actor that died in its constructor keeps only the traceback's text): the UserError is its
    last line ``factory.errors.UserError: ...``."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in chain:
        chain.append(cause)
        inner = getattr(cause, "cause", None)
        cause = inner if isinstance(inner, BaseException) else (cause.__cause__ or cause.__context__)
    marker = f"{UserError.__module__}.{UserError.__qualname__}: "
    for error in chain:
        if isinstance(error, UserError):
            return UserError(str(error))
        for line in reversed(str(error).splitlines()):
            if line.strip().startswith(marker):
                return UserError(line.strip()[len(marker) :])
    last = next((e for e in reversed(chain) if str(e).strip()), exc)
    lines = str(last).strip().splitlines() or [""]
    return ReplicaError(f"the solver replicas on Ray failed: {type(last).__name__}: {lines[-1].strip()}")


def _tensor_parallel_group(gpus: int) -> Any:
    """A ``ray_remote_args_fn``: each replica in a placement group of ``gpus`` bundles of a GPU
    and a CPU on one node, which vLLM's tensor-parallel workers then use (the pattern of vLLM's
    Ray Data example)."""

    def remote_args() -> dict[str, Any]:
        import ray
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        group = ray.util.placement_group([{"GPU": 1, "CPU": 1}] * gpus, strategy="STRICT_PACK")
        return {
            "scheduling_strategy": PlacementGroupSchedulingStrategy(
                group, placement_group_capture_child_tasks=True
            )
        }

    return remote_args
