"""A pool of reused sandbox worker processes for trusted programs (docs/design.md §6.1).

Each worker is a long-lived ``python -m factory.sandbox.trusted.worker`` in its own process group, started
with one PYTHONHASHSEED (hash randomisation is fixed at interpreter start, so a pool serves one
seed). The parent keeps a small window of jobs queued in every worker, multiplexes the pipes with
``selectors``, and enforces the per-job timeout: a job that overruns gets its worker's whole
process group SIGKILLed, is reported as ``timeout``, and a fresh worker takes the slot. Jobs queued
behind it are sent again elsewhere, so one bad program never costs its neighbours anything.

The timeout counts the job's CPU seconds (a per-job ``ITIMER_PROF`` in the worker), so that the
same case gets the same verdict on an idle and on a loaded machine. The parent adds the wall-clock
side: past ``timeout_s`` a worker that is not runnable (sleeping, waiting on a child) is killed at
once; a runnable one (busy, or waiting for a core) may run on until its CPU timer fires, up to
``WALL_FACTOR`` × ``timeout_s`` of wall time.

Small jobs are cheap to run in bulk: a worker sends the answers of several jobs in one write
(see ``factory.sandbox.trusted.worker.serve``), and a counter in memory shared with the parent tells
which job was running when a worker died, so a crash or timeout is still blamed on that job
alone (the finished ones whose answers were lost run again). ``map_pools(affinity=...)`` sends
the jobs of one program to one worker of each pool, which then loads and analyses it once (the
``Executor`` compiles each program once, in the parent: ``factory.program_code``).

What a worker is comes from the pool's ``WorkerSpec``: the command that starts it, how jobs and
answers are encoded, what its death means, and how a job past its timeout is judged. The default,
``PythonWorker``, is the Python worker above; a language whose programs run elsewhere brings its own
(JavaScript's ``node`` worker: ``factory.languages.javascript.runner``) and gets the same
scheduling, batching, crash blame and restarts.
"""

from __future__ import annotations

import fcntl
import json
import marshal
import mmap
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from hashlib import blake2b
from pathlib import Path
from typing import Any

from factory.sandbox.os_helpers import HEADER, default_workers, frame
from factory.sandbox.trusted.worker import (
    CRASH,
    KINDS,
    MEMORY,
    PROGRESS,
    RESOURCE_LIMIT,
    RESOURCE_LIMITS,
    TIMEOUT,
    drop,
)

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])
STARTUP_TIMEOUT_S = 60.0
WALL_FACTOR = 10.0  # a runnable job's wall-clock limit, in multiples of its CPU timeout
RECHECK_S = 0.05  # how often a runnable job past its timeout is looked at again
READ_CHUNK = 1 << 18
FILL_STEP = 8  # jobs sent at once to a worker running short (see _Loop._fill_all)
# Pipe buffers of 256 KiB (Linux's default is 64 KiB): a worker's answers (a chunk of items is
# about 100 KB) fit, so it goes on without waiting for the parent to read them. Not more: pipe
# buffers count against a per-user limit (64 MiB by default), shared with every other pipe.
PIPE_BYTES = 1 << 18


class _Worker:
    """One child process and the parent's view of its channel."""

    __slots__ = (
        "proc",
        "pid",
        "wfd",
        "rfd",
        "rbuf",
        "wbuf",
        "inflight",
        "head_start",
        "ready",
        "spawned",
        "recheck",
        "writing",
        "dead",
        "progress",
        "answered",
    )

    def __init__(self, proc: subprocess.Popen[bytes], progress: mmap.mmap) -> None:
        assert proc.stdin is not None and proc.stdout is not None  # started with both as pipes
        self.proc = proc
        self.progress = progress  # the worker's count of jobs started (shared memory)
        self.answered = 0  # answers received (the hello frame aside)
        self.pid = proc.pid
        self.wfd = proc.stdin.fileno()
        self.rfd = proc.stdout.fileno()
        os.set_blocking(self.wfd, False)
        for fd in (self.wfd, self.rfd):
            _widen_pipe(fd)
        self.rbuf = bytearray()
        self.wbuf = bytearray()
        # (index, frame) of the jobs sent and not answered; the head is the one running now.
        self.inflight: deque[tuple[int, bytes]] = deque()
        self.head_start = 0.0
        self.ready = False
        self.spawned = time.monotonic()
        self.recheck = 0.0  # past the head job's timeout: when to look at the worker again
        self.writing = False
        self.dead = False

    def running(self) -> int:
        """How many of the jobs in flight the worker has started: the last of them is running
        (or was, when it died); the ones before it finished, their answers held back."""
        return PROGRESS.unpack_from(self.progress, 0)[0] - self.answered

    def kill(self) -> int:
        """SIGKILL the whole process group (the program's children too), reap, close the pipes.

        Idempotent: once reaped, the pid may belong to someone else and is never signalled again.
        """
        if self.dead:
            return self.proc.returncode
        self.dead = True
        try:
            os.killpg(self.pid, signal.SIGKILL)  # pgid == pid: the worker leads its own session
        except (ProcessLookupError, PermissionError):
            pass
        rc = self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            assert stream is not None  # pipes (see __init__)
            try:
                stream.close()
            except OSError:
                pass
        return rc


def _widen_pipe(fd: int) -> None:
    """Linux: let the pipe hold ``PIPE_BYTES``. Best effort: the size stays as it was where that
    is not allowed."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (AttributeError, OSError):  # not Linux, or over a limit
        pass


def _kill_all(workers: list[_Worker | None]) -> None:
    for i, w in enumerate(workers):
        if w is not None:
            assert w.proc.stdin is not None  # a pipe (see _Worker)
            try:
                w.proc.stdin.close()  # EOF: an idle worker would exit by itself
            except OSError:
                pass
            w.kill()
            workers[i] = None


def _runnable(pid: int) -> bool:
    """Whether the process is running or waiting for a core (state R in /proc), not blocked."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    state_at = stat.rindex(b")") + 2  # after "pid (comm) ", comm may hold spaces or parentheses
    return stat[state_at : state_at + 1] == b"R"


def proc_cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system, all threads) of a process so far, from /proc; None when it
    cannot be read (the process is gone, or this is not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime: fields 14 and 15


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class WorkerSpec(ABC):
    """What a pool's workers are: how to start one, the codec of its frames, and how its limits are
    applied. Every worker speaks the same frames (``os_helpers.frame``), says hello first, answers
    in order, and counts the jobs it has started in the shared memory (``PROGRESS`` at offset 0)."""

    #: The job kinds every pool of this spec has (``{kind: target}``, as the worker resolves it).
    kinds: Mapping[str, str]
    #: Bytes of the shared memory a worker writes its progress to (the pool reads ``PROGRESS``).
    progress_size: int = PROGRESS.size
    #: Where the worker's stderr goes (``subprocess``'s ``stderr``): None inherits the pool's.
    stderr: int | None = None

    @abstractmethod
    def argv(self, config: dict[str, Any], hash_seed: int) -> list[str]:
        """The command line of a worker of a pool with this hash seed; ``config`` holds the pool's
        limits (``memory_mb``, ``max_output_repr``, ``kinds``, ``progress_fd`` ...: see
        ``WorkerPool.__init__``)."""

    @abstractmethod
    def env(self, hash_seed: int) -> dict[str, str]:
        """The environment of the workers of a pool with this hash seed."""

    @abstractmethod
    def encode(self, kind: str, payload: dict[str, Any]) -> bytes:
        """A job as the worker reads it (without the frame header); TypeError when the payload
        cannot be carried."""

    @abstractmethod
    def decode(self, data: bytes) -> dict[str, Any]:
        """An answer (a frame's payload) as a result dict."""

    @abstractmethod
    def death_status(self, rc: int) -> str:
        """What the death of a worker during a job means, from its exit status."""

    @abstractmethod
    def over_time(self, pid: int, progress: mmap.mmap, timeout_s: float) -> float:
        """A job of the worker ``pid`` has run ``timeout_s`` of wall time: 0 to kill it now as a
        timeout, else the seconds to wait before asking again (the wall-clock backstop,
        ``WALL_FACTOR`` × ``timeout_s``, is the pool's)."""


class PythonWorker(WorkerSpec):
    """``python -m factory.sandbox.trusted.worker``: marshal frames, PYTHONHASHSEED, and a CPU
    timer in the worker itself (``ITIMER_PROF``): past the timeout, a runnable worker is left to
    its timer, a blocked one is killed."""

    kinds = KINDS
    # marshal.loads itself, not a method around it: one call less per answer on the hot path.
    decode = staticmethod(marshal.loads)  # type: ignore[assignment]

    def argv(self, config: dict[str, Any], hash_seed: int) -> list[str]:
        return [sys.executable, "-m", "factory.sandbox.trusted.worker", repr(config)]

    def env(self, hash_seed: int) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONHASHSEED"] = str(hash_seed)
        # The worker must import this very package, installed or not.
        env["PYTHONPATH"] = package_path(env)
        return env

    def encode(self, kind: str, payload: dict[str, Any]) -> bytes:
        try:
            return marshal.dumps((kind, payload))
        except ValueError:
            raise TypeError("the payload is not plain data (dict/list/str/int/... only)") from None

    def death_status(self, rc: int) -> str:
        return _death_status(rc)

    def over_time(self, pid: int, progress: mmap.mmap, timeout_s: float) -> float:
        return RECHECK_S if _runnable(pid) else 0.0  # busy or starved: its CPU timer decides


PYTHON_WORKER = PythonWorker()


def package_path(env: Mapping[str, str]) -> str:
    """``PYTHONPATH`` for a child process that imports this very package, installed or not."""
    return os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)


def json_frame_payload(kind: str, payload: dict[str, Any]) -> bytes:
    """A job as JSON (``[kind, payload]``, ASCII: a lone surrogate travels as its escape), for a
    worker that reads JSON frames; TypeError when the payload is not JSON data."""
    try:
        return json.dumps([kind, payload], separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise TypeError(f"the payload is not JSON data: {exc}") from None


def _dropped(status: str) -> dict[str, Any]:
    result = drop(status)
    result.pop("retire", None)
    return result


def _death_status(rc: int) -> str:
    """What a worker's death during a job means."""
    if rc in (-signal.SIGPROF, -signal.SIGXCPU):  # the job's CPU timer, or the RLIMIT_CPU backstop
        return TIMEOUT
    if rc == -signal.SIGKILL:  # not ours (we record our own kills): the kernel's OOM killer
        return MEMORY
    return CRASH


class WorkerPool:
    """Reused worker processes, all with one PYTHONHASHSEED; a context manager.

    ``map(kind, payloads)`` yields one result dict per payload, in input order. Every result has
    ``status`` (``ok`` or a drop reason, see ``factory.sandbox.trusted.worker``); ``run`` and
    ``lines`` results also have ``output_repr`` and ``output_type``. ``kinds`` adds job kinds
    (``{kind: "module:function"}``, a stage's own) to the worker's built-in ``KINDS``. ``worker``
    says what the workers are (default: the Python worker, ``PythonWorker``).
    """

    def __init__(
        self,
        workers: int | None = None,
        hash_seed: int = 1,
        timeout_s: float = 2.0,
        memory_mb: int = 1024,
        max_output_bytes: int = 65536,
        max_output_repr: int = 2000,
        *,
        window: int = 16,
        kinds: Mapping[str, str] | None = None,
        worker: WorkerSpec | None = None,
    ) -> None:
        workers = default_workers() if workers is None else workers
        _check_int("workers", workers, 1)
        _check_int("hash_seed", hash_seed, 0, 2**32 - 1)
        _check_int("memory_mb", memory_mb, 64)
        _check_int("max_output_bytes", max_output_bytes, 0)
        _check_int("max_output_repr", max_output_repr, 1)
        _check_int("window", window, 1)
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
            raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
        self.size = workers
        self.hash_seed = hash_seed
        self.timeout_s = float(timeout_s)
        self.window = window
        self.spec = PYTHON_WORKER if worker is None else worker
        self.kinds = {**self.spec.kinds, **(kinds or {})}
        config = {
            "memory_mb": memory_mb,
            "max_output_bytes": max_output_bytes,
            "max_output_repr": max_output_repr,
            # Only a backstop for a parent that stopped watching; the parent's timeout comes first.
            "cpu_backstop_s": int(self.timeout_s * 3) + 5,
            "cpu_timeout_s": self.timeout_s,
            "kinds": self.kinds,
        }
        self._config = config  # the worker's argument, with its progress_fd added per worker
        self._env = self.spec.env(hash_seed)
        self._workers: list[_Worker | None] = [None] * workers
        self._finalizer = weakref.finalize(self, _kill_all, self._workers)
        self._owner: object | None = None  # the map in progress
        self._closed = False
        self.restarts = 0  # workers replaced after a timeout, crash or retirement
        self._ensure_workers()

    # -- public -------------------------------------------------------------------------------

    def map(
        self,
        kind: str,
        payloads: Iterable[dict[str, Any]],
        *,
        affinity: Callable[[dict[str, Any]], str] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Run ``kind`` on every payload; yield the results in input order (``affinity``: see
        ``map_pools``)."""
        for results in map_pools([self], kind, payloads, affinity=affinity):
            yield results[0]

    def pids(self) -> list[int]:
        """Process ids of the live workers (for tests and diagnostics)."""
        return [w.pid for w in self._workers if w is not None]

    def close(self) -> None:
        """Stop every worker (and anything it started) and reap it; safe to call twice."""
        self._closed = True
        self._finalizer()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals used by map_pools ----------------------------------------------------------

    def _spawn(self) -> _Worker:
        fd = _shared_memory_fd()
        try:
            size = self.spec.progress_size
            os.ftruncate(fd, size)
            progress = mmap.mmap(fd, size)
            proc = subprocess.Popen(
                self.spec.argv({**self._config, "progress_fd": fd}, self.hash_seed),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.spec.stderr,
                env=self._env,
                start_new_session=True,  # own process group: a timeout kills everything it started
                close_fds=True,
                pass_fds=(fd,),
                bufsize=0,
            )
        finally:
            os.close(fd)
        return _Worker(proc, progress)

    def _ensure_workers(self) -> None:
        for i, w in enumerate(self._workers):
            if w is None:
                self._workers[i] = self._spawn()

    def _acquire(self, kind: str, owner: object) -> None:
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        if self._owner is not None:
            raise RuntimeError("the worker pool is already running a map(); finish that one first")
        if kind not in self.kinds:
            raise ValueError(f"unknown job kind {kind!r} (known: {', '.join(sorted(self.kinds))})")
        self._ensure_workers()
        self._owner = owner

    def _release(self, owner: object) -> None:
        if self._owner is owner:
            self._owner = None


def _shared_memory_fd() -> int:
    """A file descriptor of a fresh file in memory (an unlinked temporary file where Linux's
    memfd is not available), not inherited by children unless passed."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("pool-progress", os.MFD_CLOEXEC)
    with tempfile.TemporaryFile() as f:
        return os.dup(f.fileno())


def _slot_hash(key: str) -> int:
    """A well-mixed hash of an affinity key, the same in every process (``hash`` is salted)."""
    digest = blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _check_int(name: str, value: Any, low: int, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be an integer <= {high}, got {value!r}")


def map_pools(
    pools: Sequence[WorkerPool],
    kind: str | Sequence[str],
    payloads: Iterable[dict[str, Any] | None],
    *,
    max_ahead: int = 4096,
    affinity: Callable[[dict[str, Any]], str] | None = None,
) -> Iterator[list[dict[str, Any]]]:
    """Run every payload once on each pool, all pools in one event loop.

    Yields, in input order, one list per payload holding each pool's result (same order as
    ``pools``). ``kind`` is one job kind for every pool, or one per pool (e.g. the full trace
    from the first hash seed and only its digest from the second). ``max_ahead`` bounds how far
    dispatch runs ahead of the oldest unfinished payload. Payloads are read lazily and must be
    plain data (what ``marshal`` carries). The iterator may yield None for "none yet": it is asked
    again on the next turn, so it must yield None only while results it waits for are in flight
    (the ``Executor``'s batches add jobs that way: ``factory.execute.batch``).

    ``affinity(payload)`` (e.g. the program's source) sends payloads with the same key to the
    same worker of each pool while that worker keeps up, so that per-program work cached in a
    worker (compiled code, parsed trees) is done once per pool rather than once per worker. A
    worker with nothing of its own to do takes the oldest job queued for another one, so no
    worker idles while work is queued. Results never depend on which worker ran a job.
    """
    return _Loop(pools, kind, payloads, max_ahead, affinity).run()


class _Loop:
    """The event loop behind ``map_pools`` (one instance per call)."""

    def __init__(
        self,
        pools: Sequence[WorkerPool],
        kind: str | Sequence[str],
        payloads: Iterable[dict[str, Any] | None],
        max_ahead: int,
        affinity: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        self.pools = list(pools)
        self.kinds = [kind] * len(self.pools) if isinstance(kind, str) else list(kind)
        if len(self.kinds) != len(self.pools):
            raise ValueError(f"{len(self.kinds)} job kinds for {len(self.pools)} pools")
        self.source = iter(payloads)
        self.max_ahead = max(1, max_ahead)
        self.lanes = len(self.pools)
        self.affinity = affinity
        # How far the search for a worker's own jobs may read ahead: a few windows' worth.
        self.affinity_ahead = min(self.max_ahead, 2 * sum(p.window * p.size for p in self.pools))
        # Jobs not yet sent, per lane and per worker slot (the slot the job's key maps to).
        self.queues: list[list[deque[tuple[int, bytes]]]] = [
            [deque() for _ in range(pool.size)] for pool in self.pools
        ]
        self.results: dict[int, list[Any]] = {}
        self.left: dict[int, int] = {}
        self.next_in = 0
        self.next_out = 0
        self.exhausted = False
        self.sel: selectors.BaseSelector | None = None
        self.acquired: list[WorkerPool] = []
        self.finished = False

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> Iterator[list[dict[str, Any]]]:
        try:
            for pool, kind in zip(self.pools, self.kinds, strict=True):
                pool._acquire(kind, self)
                self.acquired.append(pool)
            self.sel = selectors.DefaultSelector()
            for lane, pool in enumerate(self.pools):
                for w in pool._workers:
                    assert w is not None  # _acquire started every slot's worker
                    self.sel.register(w.rfd, selectors.EVENT_READ, (w, lane))
            results, left = self.results, self.left
            while True:
                # Workers first: a worker whose answers just arrived gets more work before the
                # consumer handles those answers (it would idle meanwhile); and again after
                # results were taken, as that may let more payloads be read.
                self._fill_all()
                taken = self.next_out
                while self.next_out < self.next_in and left[self.next_out] == 0:
                    del left[self.next_out]
                    out = results.pop(self.next_out)
                    self.next_out += 1
                    if self.exhausted and self.next_out == self.next_in:
                        # Release the pools before the last yield: a consumer that takes exactly
                        # as many results as it sent may start the next map straight away.
                        self._finish()
                        yield out
                        return
                    yield out
                if self.next_out != taken:
                    self._fill_all()
                if self.exhausted and self.next_out == self.next_in:
                    return
                for key, _mask in self.sel.select(self._wait_time()):
                    w, lane = key.data
                    if w.dead:  # replaced earlier in this batch of events
                        continue
                    if key.fd == w.rfd:
                        self._read(w, lane)
                    else:
                        self._flush(w, lane)
                self._check_deadlines()
        finally:
            self._finish()

    def _wait_time(self) -> float | None:
        now = time.monotonic()
        deadline = None
        for pool in self.pools:
            for w in pool._workers:
                assert w is not None  # a map runs with every slot's worker started
                if w.inflight:
                    d = max(w.head_start + pool.timeout_s, w.recheck)
                elif not w.ready:
                    d = w.spawned + STARTUP_TIMEOUT_S
                else:
                    continue
                if deadline is None or d < deadline:
                    deadline = d
        return None if deadline is None else max(0.0, deadline - now + 1e-4)

    # -- dispatch -------------------------------------------------------------------------------

    def _pull(self) -> bool:
        """Read one more payload into every lane's queue; False when none may or can be read."""
        if self.exhausted or self.next_in - self.next_out >= self.max_ahead:
            return False
        try:
            payload = next(self.source)
        except StopIteration:
            self.exhausted = True
            return False
        if payload is None:  # none yet: the consumer adds more once it has taken results
            return False
        idx = self.next_in
        # Without a key, jobs are dealt out in turn (an idle worker takes others' jobs anyway).
        key = idx if self.affinity is None else _slot_hash(self.affinity(payload))
        frames: dict[tuple[WorkerSpec, str], bytes] = {}
        for pool, slots, kind in zip(self.pools, self.queues, self.kinds, strict=True):
            q = slots[key % len(slots)]
            job = frames.get((pool.spec, kind))
            if job is None:
                try:
                    data = pool.spec.encode(kind, payload)
                except TypeError as exc:
                    raise TypeError(f"payload {self.next_in}: {exc}") from None
                job = frames[pool.spec, kind] = frame(data)
            q.append((idx, job))
        self.next_in += 1
        self.results[idx] = [None] * self.lanes
        self.left[idx] = self.lanes
        return True

    def _fill_all(self) -> None:
        """Top up every worker of every lane, lane after lane; a worker running short first gets
        ``FILL_STEP`` jobs, sent at once, and the rest of its window at its next turn: when
        reading payloads takes time (a program compiled for each), no worker waits for another
        worker's whole window to be read first."""
        while any([self._fill(lane) for lane in range(self.lanes)]):
            pass

    def _fill(self, lane: int) -> bool:
        """Top up every ready worker of the lane (see ``_fill_all``): first with the jobs queued
        for its slot (reading more payloads while that queue is empty), then with the oldest job
        queued for another slot. True when a job was added."""
        pool = self.pools[lane]
        slots = self.queues[lane]
        now = time.monotonic()
        added = False
        for slot, w in enumerate(pool._workers):
            assert w is not None  # a map runs with every slot's worker started
            if not w.ready or len(w.inflight) >= pool.window:
                continue
            own = slots[slot]
            # A worker running short gets a few jobs at once, before the other lanes' turn.
            target = pool.window if len(w.inflight) >= FILL_STEP else min(pool.window, FILL_STEP)
            while len(w.inflight) < target:
                if not own and not self._pull_for(slots, slot):
                    others = [q for q in slots if q]
                    if not others:
                        break
                    item = min(others, key=lambda q: q[0][0]).popleft()  # the oldest job
                else:
                    item = own.popleft()
                if not w.inflight:
                    w.head_start = now
                w.inflight.append(item)
                w.wbuf += item[1]
                added = True
            if w.wbuf and not w.writing:
                self._flush(w, lane)
        return added

    def _pull_for(self, slots: list[deque[tuple[int, bytes]]], slot: int) -> bool:
        """Read payloads until one is queued for ``slot``; False when none may or can be read,
        or when the search would run more than ``affinity_ahead`` jobs ahead of the oldest
        unfinished one (the results of later jobs wait in memory until it is done)."""
        while not slots[slot]:
            if self.next_in - self.next_out >= self.affinity_ahead or not self._pull():
                return False
        return True

    def _flush(self, w: _Worker, lane: int) -> None:
        try:
            n = os.write(w.wfd, w.wbuf)
        except BlockingIOError:
            n = 0
        except (BrokenPipeError, OSError):
            n = len(w.wbuf)  # the worker is gone; its EOF on the read side tells the rest
        del w.wbuf[:n]
        assert self.sel is not None  # made by run() before any worker is written to
        if w.wbuf and not w.writing:
            self.sel.register(w.wfd, selectors.EVENT_WRITE, (w, lane))
            w.writing = True
        elif not w.wbuf and w.writing:
            self.sel.unregister(w.wfd)
            w.writing = False

    # -- results ----------------------------------------------------------------------------------

    def _deliver(self, idx: int, lane: int, result: dict[str, Any]) -> None:
        if result.get("status") in RESOURCE_LIMITS:
            result = {**result, "status": RESOURCE_LIMIT, "detail": result["status"]}
        self.results[idx][lane] = result
        self.left[idx] -= 1

    def _read(self, w: _Worker, lane: int) -> None:
        try:
            data = os.read(w.rfd, READ_CHUNK)
        except OSError:
            data = b""
        if not data:
            self._on_death(w, lane)
            return
        buf = w.rbuf
        buf += data
        pos, end = 0, len(buf)
        now = time.monotonic()
        loads, unpack = self.pools[lane].spec.decode, HEADER.unpack_from
        while end - pos >= 4:
            (size,) = unpack(buf, pos)
            if end - pos - 4 < size:
                break
            result = loads(bytes(buf[pos + 4 : pos + 4 + size]))
            pos += 4 + size
            if not w.ready:
                w.ready = True  # the hello frame
                continue
            idx, _ = w.inflight.popleft()
            w.answered += 1
            w.head_start = now
            retire = result.pop("retire", False)
            self._deliver(idx, lane, result)
            if retire:  # it exits after this answer; nothing else of it is running
                self._take_down(w, lane)
                self._respawn(w, lane)
                return
        del buf[:pos]

    def _on_death(self, w: _Worker, lane: int) -> None:
        """The channel hit EOF: the worker died (segfault, os._exit, a kill we did not send)."""
        rc = self._take_down(w, lane)
        if not w.ready:
            raise RuntimeError(
                f"a sandbox worker exited while starting (exit code {rc}); "
                "see its message above (is memory_mb too small?)"
            )
        self._answer_running(w, lane, self.pools[lane].spec.death_status(rc))
        self._respawn(w, lane)

    def _check_deadlines(self) -> None:
        now = time.monotonic()
        for lane, pool in enumerate(self.pools):
            for w in list(pool._workers):
                assert w is not None  # a map runs with every slot's worker started
                if w.inflight and now - w.head_start > pool.timeout_s and now >= w.recheck:
                    if now - w.head_start < pool.timeout_s * WALL_FACTOR:
                        wait = pool.spec.over_time(w.pid, w.progress, pool.timeout_s)
                        if wait > 0:
                            w.recheck = now + wait
                            continue
                    self._take_down(w, lane)
                    self._answer_running(w, lane, TIMEOUT)
                    self._respawn(w, lane)
                elif not w.ready and now - w.spawned > STARTUP_TIMEOUT_S:
                    self._take_down(w, lane)
                    raise RuntimeError(f"a sandbox worker did not start within {STARTUP_TIMEOUT_S:.0f}s")

    def _take_down(self, w: _Worker, lane: int) -> int:
        assert self.sel is not None  # made by run() before any worker is watched
        self.sel.unregister(w.rfd)
        if w.writing:
            self.sel.unregister(w.wfd)
            w.writing = False
        return w.kill()

    def _answer_running(self, w: _Worker, lane: int, status: str) -> None:
        """Give ``status`` to the job the (now dead) worker was running. Jobs it finished before
        but whose answers it still held stay in flight, to be sent again by ``_respawn``."""
        running = min(w.running(), len(w.inflight))
        if running <= 0:
            return  # it died between jobs: nothing to blame
        idx, _ = w.inflight[running - 1]
        del w.inflight[running - 1]
        self._deliver(idx, lane, _dropped(status))

    def _respawn(self, w: _Worker, lane: int) -> None:
        """Send ``w``'s unanswered jobs again (first in line) and start its successor."""
        pool = self.pools[lane]
        slot = pool._workers.index(w)
        self.queues[lane][slot].extendleft(reversed(w.inflight))
        w.inflight.clear()
        w.wbuf.clear()
        new = pool._spawn()
        pool._workers[slot] = new
        pool.restarts += 1
        assert self.sel is not None  # made by run() before any worker is watched
        self.sel.register(new.rfd, selectors.EVENT_READ, (new, lane))

    def _finish(self) -> None:
        """On exit (normal, error, or the consumer stopped early): no job may stay in flight."""
        if self.finished:
            return
        self.finished = True
        for pool in self.acquired:
            for i, w in enumerate(pool._workers):
                if w is not None and (w.dead or w.inflight or w.wbuf):
                    w.kill()
                    pool._workers[i] = None  # respawned by the next map
            pool._release(self)
        if self.sel is not None:
            self.sel.close()
