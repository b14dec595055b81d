"""Run cases under two PYTHONHASHSEED values and keep only what both runs agree on (docs/design.md §4)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from factory import languages
from factory.execute.batch import run_pairs
from factory.languages import Language
from factory.params import ExecuteParams
from factory.program_code import portable_code
from factory.sandbox.os_helpers import default_workers
from factory.sandbox.trusted.pool import WorkerPool, map_pools
from factory.sandbox.trusted.worker import CRASH, RESOURCE_LIMIT

NONDETERMINISTIC = "nondeterministic"
# When the two runs end differently and one of them hit a resource limit, that limit is the more
# useful reason (a case that ran 1.9 s under one seed and 2.1 s under the other is slow, not
# hash-dependent).
_RESOURCE_STATUSES = (RESOURCE_LIMIT, CRASH)

Agree = Callable[[dict[str, Any], dict[str, Any]], bool]

#: Jobs queued in each worker. A case is short (a CRUXEval trace takes about 0.1 ms): a window
#: of many keeps a worker busy while the parent reads its answers and prepares the next jobs
#: (measured on CRUXEval: 16 left each worker idle for part of every round trip; 128 traces it
#: about 5% faster than 64, as the parent, which compiles every program, often waits for a CPU
#: until the next scheduler tick while both workers run).
WINDOW = 128
#: Programs whose compiled code the parent keeps (see ``factory.program_code``).
CODE_CACHE_SIZE = 256


def payload_of(case: dict[str, Any]) -> dict[str, Any]:
    """The worker payload of a case row: ``source``, ``entry``, ``args`` (and ``eval_args``)."""
    payload = {"source": case["source"], "entry": case.get("entry") or "f", "args": case["args"]}
    if case.get("eval_args"):
        payload["eval_args"] = True
    for option in _JOB_OPTIONS:  # e.g. the tracer's step and repr bounds
        if option in case:
            payload[option] = case[option]
    return payload


_JOB_OPTIONS = ("capture", "max_steps", "max_repr", "max_state_bytes", "one_line")


def _by_source(payload: dict[str, Any]) -> str:
    return payload["source"]


def same_output(a: dict[str, Any], b: dict[str, Any], values: Language | None = None) -> bool:
    """Two ``ok`` results agree: equal reprs, or reprs of the same value (see ``same_value``),
    read with the value model of ``values`` (a language; default Python)."""
    if a["output_type"] != b["output_type"]:
        return False
    if a["output_repr"] == b["output_repr"]:
        return True
    values = values or languages.language("python")
    try:
        return same_value(
            values.literal_value(a["output_repr"]), values.literal_value(b["output_repr"]), values
        )
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def same_value(a: Any, b: Any, values: Language | None = None) -> bool:
    """Sets compared as sets, everything else exactly: same types, and dicts in the same order
    (the elements compared with the ``strict_equal`` of ``values``, a language; default Python).

    (A dict whose key order follows the hash seed shows hash-dependent iteration, like a list
    built from a set, so its two runs do not agree.)
    """
    values = values or languages.language("python")
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            same_value(ka, kb, values) and same_value(a[ka], b[kb], values)
            for ka, kb in zip(a, b, strict=True)
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y, values) for x, y in zip(a, b, strict=True))
    return values.strict_equal(a, b)


def combine(
    results: Sequence[dict[str, Any]], agree: Agree | None = None, values: Language | None = None
) -> dict[str, Any]:
    """One verdict from the runs of a case under several hash seeds; the first run is recorded
    (outputs compared with the value model of ``values``, a language; default Python)."""
    first = results[0]
    status = first["status"]
    for other in results[1:]:
        if other["status"] != status:
            for limit in _RESOURCE_STATUSES:
                if any(r["status"] == limit for r in results):
                    return _verdict(first, limit)
            return _verdict(first, NONDETERMINISTIC)
        if status == "ok" and not same_output(first, other, values):
            return _verdict(first, NONDETERMINISTIC)
        if agree is not None and not agree(first, other):
            return _verdict(first, NONDETERMINISTIC)
    return first


def _verdict(first: dict[str, Any], status: str) -> dict[str, Any]:
    result = dict(first)
    result.update(status=status, output_repr=None, output_type=None)
    return result


class Executor:
    """Two worker pools, one per hash seed, that run every case on both (a context manager).

    The inputs stage reuses one Executor for its ``lines`` runs; the execute stage and
    ``execverify run`` use ``run``. Pools start when the Executor is made and live until close.
    ``workers`` is per pool; None shares the cores between the pools. ``language`` (default
    Python) gives the job kinds (its ``runner`` facet: ``run``, ``lines``) and the value model that
    compares the outputs of the seeds; ``kinds`` adds job kinds of a caller's own (the tracer's).
    A runner facet with a ``WORKER`` (JavaScript's ``node``) gets pools of that worker, the hash
    seed passed to it as it takes one (V8's ``--hash-seed``); one with ``BATCH_KINDS`` runs the
    ``run`` cases of a program in pairs (``factory.execute.batch``: the same verdicts, fewer fresh
    contexts) unless ``pairs`` is False. ``once``: one pool, of the first seed, on every core, for
    a caller whose runs cannot depend on the seed (``Language.hash_seed_matters``).
    """

    def __init__(
        self,
        *,
        timeout_s: float = 2.0,
        memory_mb: int = 1024,
        max_output_repr: int = 2000,
        hash_seeds: Sequence[int] = (1, 2),
        workers: int | None = None,
        max_output_bytes: int = 65536,
        kinds: Mapping[str, str] | None = None,
        language: Language | None = None,
        pairs: bool = True,
        once: bool = False,
    ) -> None:
        seeds = list(hash_seeds)
        if len(seeds) < 2 or len(set(seeds)) != len(seeds):
            raise ValueError(f"hash_seeds must be at least two different seeds, got {seeds!r}")
        if once:
            seeds = seeds[:1]
        self.hash_seeds = seeds
        self.language = language or languages.language("python")
        runner = self.language.facet("runner")
        kinds = {**runner.KINDS, **(kinds or {})}
        # A language whose programs run outside Python names its worker (``WorkerSpec``); the
        # Python worker loads the programs this Executor compiles (``_with_code``).
        worker = getattr(runner, "WORKER", None)
        self._ship_code = worker is None
        # The job kinds that run a program's cases in pairs (``factory.execute.batch``), if any.
        self._pair_kinds: Sequence[str] | None = getattr(runner, "BATCH_KINDS", None) if pairs else None
        self._codes: OrderedDict[str, bytes | None] = OrderedDict()  # source -> portable code
        if workers is None:
            # Every case runs once per seed, so the pools share the cores: as many processes as
            # cores in all. More would only add switching between processes (measured: about a
            # tenth more CPU per case when tracing CRUXEval with one worker per core per seed).
            workers = -(-default_workers() // len(seeds))
        self.pools: list[WorkerPool] = []
        try:
            for seed in seeds:
                self.pools.append(
                    WorkerPool(
                        workers=workers,
                        hash_seed=seed,
                        timeout_s=timeout_s,
                        memory_mb=memory_mb,
                        max_output_bytes=max_output_bytes,
                        max_output_repr=max_output_repr,
                        window=WINDOW,
                        kinds=kinds,
                        worker=worker,
                    )
                )
        except BaseException:
            self.close()
            raise

    def run(
        self,
        cases: Iterable[dict[str, Any]],
        kind: str | Sequence[str] = "run",
        *,
        agree: Agree | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Yield one result per case, in order: ``status`` (``ok``, a drop reason, or
        ``nondeterministic``), ``output_repr``, ``output_type`` (and ``lines`` for ``kind="lines"``,
        from the first seed's run). ``agree(first, other)`` adds a comparison of two ``ok`` runs
        (e.g. trace states); a case whose runs disagree is ``nondeterministic``. ``kind`` may name
        one job kind per hash seed (the first seed's result is the one recorded). Each program is
        compiled once, here, for every worker; the cases of one program go to one worker per pool
        when it keeps up (per-program work cached in the worker is then done once per pool).
        """
        payloads = (payload_of(case) for case in cases)
        if kind == "run" and agree is None and self._pair_kinds is not None:
            yield from run_pairs(self.pools, self._pair_kinds, payloads, self._verdict, _by_source)
            return
        if self._ship_code:
            payloads = (self._with_code(payload) for payload in payloads)
        for results in map_pools(self.pools, kind, payloads, affinity=_by_source):
            yield combine(results, agree, self.language)

    def confirm(
        self, cases: Sequence[dict[str, Any]], firsts: Sequence[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The verdicts of cases already run under the first hash seed (``firsts[i]``: the result of
        ``cases[i]``, e.g. a quality job's run): each case runs under the other seeds only (the pools
        after the first) and the runs are combined as ``run`` combines them."""
        if len(self.pools) < 2:
            raise ValueError("confirm needs the pools of two hash seeds (an Executor made once=True has one)")
        payloads = [payload_of(case) for case in cases]
        if self._ship_code:
            payloads = [self._with_code(payload) for payload in payloads]
        runs = map_pools(self.pools[1:], "run", payloads, affinity=_by_source)
        return [
            combine([first, *results], None, self.language)
            for first, results in zip(firsts, runs, strict=True)
        ]

    def _verdict(self, results: list[dict[str, Any]]) -> dict[str, Any]:
        return combine(results, None, self.language)

    def _with_code(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` with ``code``: its program compiled here once, for the workers of every
        seed to load instead of compiling it each (see ``factory.program_code``)."""
        source = payload["source"]
        codes = self._codes
        if source in codes:
            codes.move_to_end(source)
            code = codes[source]
        else:
            code = codes[source] = portable_code(source) if isinstance(source, str) else None
            if len(codes) > CODE_CACHE_SIZE:
                codes.popitem(last=False)
        if code is not None:
            payload["code"] = code
        return payload

    @classmethod
    def from_params(
        cls,
        params: ExecuteParams,
        kinds: Mapping[str, str] | None = None,
        language: Language | None = None,
        *,
        once: bool = False,
    ) -> Executor:
        """The Executor of the ``execute`` params section (``workers`` is per hash seed; 0 shares
        the cores between the seeds) for programs in ``language`` (default Python)."""
        return cls(
            timeout_s=params.timeout_s,
            memory_mb=params.memory_mb,
            max_output_repr=params.max_output_repr,
            hash_seeds=params.hash_seeds,
            workers=params.workers or None,
            kinds=kinds,
            language=language,
            once=once,
        )

    def close(self) -> None:
        for pool in self.pools:
            pool.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def with_cpus(params: ExecuteParams, cpus: int | None) -> ExecuteParams:
    """``params`` for a process with ``cpus`` CPUs (a backend's worker: the seeds' pools share
    them); None leaves ``params.workers`` as it is."""
    if cpus is None:
        return params
    return params.model_copy(update={"workers": -(-cpus // len(params.hash_seeds))})


def execute_cases(
    cases: Iterable[dict[str, Any]],
    *,
    timeout_s: float = 2.0,
    memory_mb: int = 1024,
    max_output_repr: int = 2000,
    hash_seeds: Sequence[int] = (1, 2),
    workers: int | None = None,
    kind: str = "run",
) -> Iterator[dict[str, Any]]:
    """Run cases (``source``, ``entry``, ``args``) under every seed; yield results in order."""
    with Executor(
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        max_output_repr=max_output_repr,
        hash_seeds=hash_seeds,
        workers=workers,
    ) as executor:
        yield from executor.run(cases, kind)
