"""A sandbox worker: a long-lived child process that runs trusted jobs for ``WorkerPool``.

It imports only the standard library and small modules (``factory.literals``,
``factory.program_code``, ``factory.sandbox.os_helpers``) so it starts fast and stays small.
Protocol: frames (``os_helpers``) of marshal data. The parent sends ``(kind, payload)``; the
worker answers one result dict per job, in order, on a private copy of its original stdout (fd 1,
0 and 2 then point at /dev/null, so a program can never write into the channel). The first frame
it sends is ``{"ready": pid}``. Given ``progress_fd`` (an 8-byte memfd from the pool), the worker
counts there the jobs it has started and may hold finished answers back to send several at once.

A job function has the signature ``fn(payload: dict) -> dict`` (the worker's limits are in
``worker_config()``) and is found by its kind's ``"module:function"`` path, imported on first use:
``KINDS`` are the built-in ones (``run``, ``lines``), a stage adds its own through the pool. It
should catch the program's exceptions itself (``call_program`` does); anything that escapes is
reported as ``crash`` with a ``detail``. Per job the worker resets stdout/stderr to the bounded
sink, the recursion limit, ``random``'s seed and the trace function.
A result carrying ``"retire": True`` makes the worker exit after sending it (the pool replaces it
without counting a crash); it is used after a MemoryError, when the heap may be left fragmented,
and after a job that changed process state a later job would see (module globals, the decimal
context, cwd, umask, environment, threads...: ``factory.sandbox.trusted.process_state``).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import marshal
import mmap
import os
import random
import resource
import signal
import struct
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from types import CodeType
from typing import Any

from factory.errors import UserError
from factory.literals import (
    _literal_shape,
    args_syntax_reason,
    first_view,
    is_literal,
    parse_args,
    repr_exceeds,
    second_view,
    shown_text,
)
from factory.program_code import PROGRAM_FILENAME, program_code
from factory.sandbox.os_helpers import HEADER, die_with_parent, frame, set_limits, typed_prctl, write_all
from factory.sandbox.trusted.process_state import Snapshot, reach

PROGRESS = struct.Struct("<Q")  # jobs started, in the memory shared with the pool
HOLD_S = 0.002  # how long finished answers may wait to be sent together (see ``serve``)
ARGS_FILENAME = "<args>"  # evaluated argument expressions: not the program, never traced
PROGRAM_MODULE_NAME = "__program__"

#: The built-in job kinds: kind -> "module:function". They call a program and describe what it
#: returned, which every stage that runs programs needs (the execute stage: ``run``; the inputs
#: stage: ``lines``), so they live with the building blocks they are made of. A stage's own kinds
#: (``factory.trace.jobs``, ``factory.tasks.job``) reach the worker through the pool's ``kinds``.
KINDS: dict[str, str] = {
    "run": "factory.sandbox.trusted.worker:run_job",
    "lines": "factory.sandbox.trusted.worker:lines_job",
}

DEFAULT_RECURSION_LIMIT = sys.getrecursionlimit()
# The worker raises its C stack limit to this (when the hard limit allows) and caps any recursion
# limit a program sets so that deep recursion through C code (sorted(key=f), repr, eval) raises
# RecursionError instead of overflowing the C stack. Measured on CPython 3.11: about 2.5 KiB of
# C stack per level in the worst pattern tried, so 10,000 levels need ~25 MiB of the 64 MiB.
STACK_BYTES = 64 << 20
BYTES_PER_LEVEL = 6 << 10
MAX_RECURSION_LIMIT = 10_000
FILE_SIZE_LIMIT = 1 << 20
COMPILE_CACHE_SIZE = 256

# The drop statuses (counted in stage stats); ``error:<ExceptionTypeName>`` is the open family.
OK = "ok"
RECURSION = "recursion"
MEMORY = "memory"
TIMEOUT = "timeout"
CRASH = "crash"
NON_LITERAL = "non_literal"
OUTPUT_TOO_LONG = "output_too_long"
BAD_PROGRAM = "bad_program"
#: What the pool reports for a job stopped by a limit: which limit a runaway job hits first (a case
#: doubling a tuple reaches the memory cap or the CPU timeout) depends on the machine's load, so
#: both are one status, and the verdict does not change with the load. ``detail`` names the limit.
RESOURCE_LIMIT = "resource_limit"
#: An output whose text would pass this many characters counts as ``memory``: whether a program
#: builds a value of tens of megabytes or hits the address-space limit doing so depends on where
#: earlier jobs left the worker's heap (``realloc`` grows a string in place or copies it), so the
#: two outcomes must be one verdict (measured: one candidate of the default programs went either
#: way with the order of the jobs). The worker retires after it, as after any ``memory``.
HUGE_OUTPUT = 1_000_000
RESOURCE_LIMITS = (TIMEOUT, MEMORY)


class WorkerConfig:
    """Limits of one worker, set by the pool (``memory_mb`` etc. as in ``WorkerPool``)."""

    __slots__ = (
        "memory_mb",
        "max_output_bytes",
        "max_output_repr",
        "cpu_backstop_s",
        "cpu_timeout_s",
        "kinds",
        "progress_fd",
    )

    def __init__(
        self,
        memory_mb: int = 1024,
        max_output_bytes: int = 65536,
        max_output_repr: int = 2000,
        cpu_backstop_s: int = 30,
        cpu_timeout_s: float | None = None,
        kinds: dict[str, str] | None = None,
        progress_fd: int | None = None,
    ) -> None:
        self.memory_mb = memory_mb
        self.max_output_bytes = max_output_bytes
        self.max_output_repr = max_output_repr
        self.cpu_backstop_s = cpu_backstop_s
        self.cpu_timeout_s = cpu_timeout_s
        self.kinds = dict(KINDS if kinds is None else kinds)
        # A shared 8-byte counter of the jobs this worker has started (see ``serve``).
        self.progress_fd = progress_fd


class BadProgram(Exception):
    """The job cannot even start: syntax error, no entry function, args that are not literals."""


class OutputLimitExceeded(BaseException):
    """Printed output passed the bound (a BaseException so ``except Exception`` cannot hide it)."""


class BoundedSink:
    """A text sink for the program's sys.stdout/sys.stderr that keeps nothing and counts chars."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.written = 0
        self.exceeded = False

    def reset(self) -> None:
        self.written = 0
        self.exceeded = False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.written += len(text)
        if self.written > self.limit:
            self.exceeded = True
            raise OutputLimitExceeded(f"printed output passed {self.limit} characters")
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    encoding = "utf-8"
    errors = "strict"


# --- building blocks, shared by every job kind (the tracer reuses them) --------------------------

_code_cache: OrderedDict[str, Any] = OrderedDict()


def compile_program(source: str, shipped: bytes | None = None) -> Any:
    """The code of ``source`` (see ``factory.program_code``: loaded from ``shipped`` when the
    parent sent it compiled); a small LRU cache by source."""
    code = _code_cache.get(source)
    if code is not None:
        _code_cache.move_to_end(source)
        return code
    try:
        code = program_code(source, shipped)
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes in the source
        line = getattr(exc, "lineno", None)
        where = f" (line {line})" if line else ""
        msg = getattr(exc, "msg", None) or str(exc)
        raise BadProgram(f"syntax error{where}: {msg}") from None
    _code_cache[source] = code
    if len(_code_cache) > COMPILE_CACHE_SIZE:
        _code_cache.popitem(last=False)
    return code


_NO_REACH: frozenset[str] = frozenset()
_reach_cache: OrderedDict[str, frozenset[str] | None] = OrderedDict()


def _snapshot_for(payload: dict[str, Any]) -> Snapshot | None:
    """A ``Snapshot`` before a job whose program can reach process state (imports, dunders...),
    else None (``factory.sandbox.trusted.process_state``; by source, a small LRU cache)."""
    source = payload.get("source")
    if not isinstance(source, str):
        return None
    if source in _reach_cache:
        _reach_cache.move_to_end(source)
        modules = _reach_cache[source]
    else:
        try:
            modules = reach(source, compile_program(source, payload.get("code")))
        except BadProgram:
            modules = _NO_REACH  # it will not run
        except Exception:  # noqa: BLE001 - compiling ran out of memory or recursion: the job will say
            modules = None  # (and whatever it does, check everything)
        _reach_cache[source] = modules
        if len(_reach_cache) > COMPILE_CACHE_SIZE:
            _reach_cache.popitem(last=False)
    return None if modules == _NO_REACH else Snapshot(modules)


def load_entry(
    source: object, entry: object, shipped: bytes | None = None
) -> tuple[Callable[..., Any], dict[str, Any]]:
    """Exec the program in a fresh namespace; return its entry function and the namespace.

    Raises BadProgram when the source does not compile or defines no callable ``entry``; an
    exception raised by the module-level code propagates (it is the program's own error).
    ``shipped``: the program compiled by the parent (``factory.program_code.portable_code``).
    """
    if not isinstance(source, str) or not isinstance(entry, str):
        raise BadProgram("source and entry must be strings")
    code = compile_program(source, shipped)
    namespace: dict[str, Any] = {"__name__": PROGRAM_MODULE_NAME, "__builtins__": builtins}
    exec(code, namespace)
    func = namespace.get(entry)
    if func is None:
        raise BadProgram(f"entry function {entry!r} is not defined by the program")
    if not callable(func):
        raise BadProgram(f"entry {entry!r} is not a function")
    return func, namespace


_HASH_SEED = os.environ.get("PYTHONHASHSEED", "")
#: Workers of an even hash seed rebuild their set arguments (``second_view``), so that of the two
#: seeds' runs (1 and 2 by default) one sees the sets as the scorer's child does (``first_view``)
#: and one in another order.
_WIDEN_SETS = _HASH_SEED.isdigit() and int(_HASH_SEED) % 2 == 0


def call_args(text: Any) -> tuple[Any, ...]:
    """Parse the argument-list text (``"[1, 2], 'ab'"``); BadProgram when it is not literals."""
    if not isinstance(text, str):
        raise BadProgram("args must be a string of Python literals")
    try:
        values = parse_args(text)
        return second_view(values) if _WIDEN_SETS else first_view(values)
    except UserError as exc:
        raise BadProgram(str(exc)) from None
    except (RecursionError, MemoryError):
        raise BadProgram("args are too deeply nested or too large") from None


def _collect(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return args, kwargs


def args_code(text: str) -> CodeType:
    """Argument-list text (expressions, keyword arguments allowed) compiled as one call, under
    ``ARGS_FILENAME`` (never traced); SyntaxError or ValueError (null bytes) when it is not valid."""
    return compile(f"__collect__({text}\n)", ARGS_FILENAME, "eval", dont_inherit=True)


def collect_args(code: CodeType, namespace: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Evaluate ``args_code`` in the program's namespace: ``(args, kwargs)``. Whatever the
    expressions raise propagates."""
    namespace["__collect__"] = _collect
    try:
        return eval(code, namespace)
    finally:
        del namespace["__collect__"]


def eval_args(text: Any, namespace: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Evaluate argument-list text as expressions in ``namespace`` (BadProgram when that fails)."""
    if not isinstance(text, str):
        raise BadProgram("args must be a string")
    try:
        code = args_code(text)
    except (SyntaxError, ValueError) as exc:
        reason = args_syntax_reason(exc)
        raise BadProgram(f"args are not valid Python: {reason}: {shown_text(text)}") from None
    try:
        return collect_args(code, namespace)
    except BaseException as exc:
        raise BadProgram(f"evaluating the args failed: {short_text(exc)}") from None


def status_of(exc: BaseException) -> str:
    """The status for an exception that escaped the program."""
    if isinstance(exc, RecursionError):
        return RECURSION
    if isinstance(exc, MemoryError):
        return MEMORY
    if isinstance(exc, OutputLimitExceeded):
        return OUTPUT_TOO_LONG
    return f"error:{type(exc).__name__}"


def drop(status: str, detail: str | None = None) -> dict[str, Any]:
    """A result for a case that produced no output."""
    result: dict[str, Any] = {"status": status, "output_repr": None, "output_type": None}
    if detail:
        result["detail"] = detail
    if status == MEMORY:
        result["retire"] = True
    return result


def describe_output(value: Any, max_output_repr: int | None = None) -> dict[str, Any]:
    """``ok`` with the value's repr and type name, or ``non_literal`` / ``output_too_long``.

    ``max_output_repr`` defaults to the worker's configured bound.
    """
    if max_output_repr is None:
        max_output_repr = _config.max_output_repr
    try:
        # Too long is decided first, in time bounded by the limit (not by the value's size).
        if repr_exceeds(value, max_output_repr):
            return drop(MEMORY if repr_exceeds(value, max(HUGE_OUTPUT, max_output_repr)) else OUTPUT_TOO_LONG)
        if not _literal_shape(value, 0):
            return drop(NON_LITERAL)
        text = repr(value)
        if len(text) > max_output_repr:
            return drop(OUTPUT_TOO_LONG)
        if not is_literal(value):
            return drop(NON_LITERAL)
    except MemoryError:
        return drop(MEMORY)
    except Exception:
        return drop(NON_LITERAL)
    return {"status": OK, "output_repr": text, "output_type": type(value).__name__}


def call_program(
    payload: dict[str, Any],
    tracer: Callable[..., Any] | None = None,
) -> tuple[dict[str, Any] | None, Any]:
    """Load ``payload["source"]``, call its entry on the parsed args (under ``tracer`` if given).

    With ``payload["eval_args"]`` true, ``args`` is an expression list evaluated in the program's
    namespace, as CRUXEval's harness does (``f(thigh_o_two[:], 3)``, ``dict(e=1)``, lambdas);
    otherwise it must be literals. ``payload["code"]``, when present, is the program compiled by
    the parent (``factory.program_code.portable_code``).

    Returns ``(None, value)`` when the call returned, else ``(drop_result, None)``. The tracer is
    installed with ``sys.settrace`` only around the entry call (the module level is not traced).
    """
    kwargs: dict[str, Any] = {}
    try:
        evaluate = payload.get("eval_args", False)
        args = () if evaluate else call_args(payload.get("args", ""))
        func, namespace = load_entry(payload.get("source"), payload.get("entry", "f"), payload.get("code"))
        if evaluate:
            args, kwargs = eval_args(payload.get("args", ""), namespace)
    except BadProgram as exc:
        return drop(BAD_PROGRAM, str(exc)), None
    except BaseException as exc:  # raised by the program's module-level code
        return drop(status_of(exc), short_text(exc)), None
    try:
        if tracer is not None:
            sys.settrace(tracer)
        try:
            value = func(*args, **kwargs)
        finally:
            if tracer is not None:
                sys.settrace(None)
    except BaseException as exc:
        return drop(status_of(exc), short_text(exc)), None
    if _sink.exceeded:  # the program caught OutputLimitExceeded and went on
        return drop(OUTPUT_TOO_LONG), None
    return None, value


def short_text(exc: BaseException) -> str:
    """``Type: message`` of an exception (``Type`` alone when the message is empty or cannot be
    made), at most 300 characters."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except Exception:
        message = ""
    text = f"{name}: {message}" if message else name
    return text[:300]


# --- the built-in job kinds ----------------------------------------------------------------------


def run_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Call ``entry(*args)``; the result holds ``status``, ``output_repr``, ``output_type``."""
    failed, value = call_program(payload)
    if failed is not None:
        return failed
    return describe_output(value)


def lines_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Like ``run_job`` plus ``lines``: the sorted line numbers executed in the program's frames."""
    lines: set[int] = set()
    add = lines.add

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            add(frame.f_lineno)
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        # Called on each new frame; only the program's frames get a line tracer.
        return local if frame.f_code.co_filename == PROGRAM_FILENAME else None

    failed, value = call_program(payload, tracer)
    result = failed if failed is not None else describe_output(value)
    result["lines"] = sorted(lines)
    return result


# --- the process ---------------------------------------------------------------------------------

_sink = BoundedSink(65536)
_config = WorkerConfig()


def worker_config() -> WorkerConfig:
    """The limits this worker was started with (defaults outside a worker)."""
    return _config


_real_setrecursionlimit = sys.setrecursionlimit
_recursion_ceiling = MAX_RECURSION_LIMIT


def _capped_setrecursionlimit(limit: int) -> None:
    """Stands in for sys.setrecursionlimit in jobs: caps the limit at the C-stack-safe ceiling."""
    _real_setrecursionlimit(min(limit, _recursion_ceiling))


def _set_limits(config: WorkerConfig) -> None:
    global _recursion_ceiling
    mem = config.memory_mb << 20
    set_limits([("RLIMIT_AS", mem), ("RLIMIT_CORE", 0), ("RLIMIT_FSIZE", FILE_SIZE_LIMIT)], best_effort=False)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big write fails with OSError instead
    _set_soft_limit(resource.RLIMIT_CPU, config.cpu_backstop_s)
    _, hard_stack = resource.getrlimit(resource.RLIMIT_STACK)
    stack = STACK_BYTES if hard_stack == resource.RLIM_INFINITY else min(hard_stack, STACK_BYTES)
    try:
        resource.setrlimit(resource.RLIMIT_STACK, (stack, hard_stack))
    except (ValueError, OSError):
        stack = resource.getrlimit(resource.RLIMIT_STACK)[0]
    if stack != resource.RLIM_INFINITY:
        ceiling = min(MAX_RECURSION_LIMIT, stack // BYTES_PER_LEVEL)
        _recursion_ceiling = max(DEFAULT_RECURSION_LIMIT, ceiling)
    _die_with_parent()


def _set_soft_limit(limit: int, soft: int) -> None:
    """Set a resource limit's soft value, keeping its hard one."""
    resource.setrlimit(limit, (soft, resource.getrlimit(limit)[1]))


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the parent dies, so a busy or sleeping job never outlives it."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        prctl = typed_prctl(ctypes.CDLL(None, use_errno=True))
    except Exception:
        prctl = None
    die_with_parent(prctl, None, 1)  # exit 1 if the parent died before prctl took effect


_RESET_SIGNALS = (
    signal.SIGALRM,
    signal.SIGVTALRM,
    signal.SIGPROF,
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGCHLD,
    signal.SIGPIPE,
    signal.SIGXCPU,
    signal.SIGXFSZ,
)


class _Jobs:
    """Resolves kinds to functions (lazily) and runs one job with a clean per-job state."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.functions: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        self.cpu_armed = config.cpu_backstop_s
        self.handlers = [(sig, signal.getsignal(sig)) for sig in _RESET_SIGNALS]
        random.seed(0)
        self.random_state = random.getstate()

    def function(self, kind: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        func = self.functions.get(kind)
        if func is None:
            target = self.config.kinds.get(kind)
            if target is None:
                raise KeyError(f"unknown job kind {kind!r}")
            module_name, _, attr = target.partition(":")
            func = getattr(importlib.import_module(module_name), attr)
            self.functions[kind] = func
        return func

    def run(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        self._arm_cpu()
        if self.config.cpu_timeout_s:
            # The job's timeout counts CPU seconds, not wall seconds, so that a busy machine does
            # not turn a slow case into a timeout (outputs stay the same under load). SIGPROF's
            # default action ends the worker; the pool reads that death as ``timeout``.
            signal.setitimer(signal.ITIMER_PROF, self.config.cpu_timeout_s)
        _sink.reset()
        _real_setrecursionlimit(DEFAULT_RECURSION_LIMIT)
        # Seeded before every job (the state random.seed(0) gives, set directly: faster), imported
        # up front so that a program's first `import random` gets the same state as every later
        # one: results never depend on a worker's history.
        random.setstate(self.random_state)
        snapshot = _snapshot_for(payload)
        sys.stdout = sys.stderr = _sink
        try:
            result = self.function(kind)(payload)
        except MemoryError:
            result = drop(MEMORY)
        except BaseException as exc:
            result = drop(CRASH, f"job {kind!r} failed: {short_text(exc)}")
        finally:
            sys.settrace(None)
            sys.setprofile(None)
            sys.stdout = sys.stderr = _sink
            # A program's alarm or signal handler must not fire during a later job.
            signal.alarm(0)
            signal.setitimer(signal.ITIMER_PROF, 0)
            if snapshot is not None or payload.get("eval_args"):
                # Only a program that reaches a module (an import, a dunder, eval: see
                # ``_snapshot_for``), or arguments evaluated as code, can have set a handler. The
                # others skip the check: signal.getsignal for every signal of every job took about
                # 18% more CPU per case in bench/execute_throughput.py (2026-12-02).
                for sig, handler in self.handlers:
                    if signal.getsignal(sig) != handler:
                        signal.signal(sig, handler)
        if snapshot is not None and snapshot.changed() is not None:
            result = {**result, "retire": True}  # a later job must not see what this one changed
        return result

    def _arm_cpu(self) -> None:
        # RLIMIT_CPU counts the worker's whole life; keep at least one backstop of headroom.
        used = time.process_time()
        if used + self.config.cpu_backstop_s > self.cpu_armed:
            self.cpu_armed = int(used) + 2 * self.config.cpu_backstop_s
            _set_soft_limit(resource.RLIMIT_CPU, self.cpu_armed)


def _encode(result: dict[str, Any]) -> bytes:
    try:
        data = marshal.dumps(result)
    except ValueError as exc:  # a job returned something marshal cannot carry
        data = marshal.dumps(drop(CRASH, f"result is not plain data: {exc}"))
    return frame(data)


def serve(config: WorkerConfig) -> None:
    """Set limits, take over fds 0-2, then answer jobs until the parent closes the channel."""
    global _sink, _config
    _config = config
    _set_limits(config)  # first, so that a failure still reaches the inherited stderr
    chan_in = os.dup(0)  # os.dup makes non-inheritable copies: a program's children never see them
    chan_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.dont_write_bytecode = True
    _sink = BoundedSink(config.max_output_bytes)
    sys.stdout = sys.stderr = _sink
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process
    sys.setrecursionlimit = _capped_setrecursionlimit
    jobs = _Jobs(config)
    progress = None
    if config.progress_fd is not None:
        progress = mmap.mmap(config.progress_fd, PROGRESS.size)
        os.close(config.progress_fd)  # the mapping stays; a program's children never see the fd
    write_all(chan_out, _encode({"ready": os.getpid()}))
    buf = bytearray()
    out = bytearray()  # answers not sent yet
    held_since = 0.0
    started = 0
    loads = marshal.loads
    unpack = HEADER.unpack_from
    clock = time.monotonic
    while True:
        data = os.read(chan_in, 1 << 20)
        if not data:
            return
        buf += data
        pos, end = 0, len(buf)
        while end - pos >= 4:
            (size,) = unpack(buf, pos)
            if end - pos - 4 < size:
                break
            kind, payload = loads(bytes(buf[pos + 4 : pos + 4 + size]))
            pos += 4 + size
            started += 1
            if progress is not None:
                PROGRESS.pack_into(progress, 0, started)
            result = jobs.run(kind, payload)
            if not out:
                held_since = clock()
            out += _encode(result)
            if result.get("retire"):
                write_all(chan_out, out)
                os._exit(0)
            # With the shared counter, answers wait to be sent together while the next job is
            # already in the buffer (one write, and one wake-up of the parent, for several small
            # jobs); once the oldest has waited HOLD_S they go out before the next job starts.
            # Should the worker die meanwhile, the counter tells the parent which job was
            # running; the finished ones whose answers were lost run again.
            if (
                progress is None
                or end - pos < 4
                or end - pos - 4 < unpack(buf, pos)[0]
                or clock() - held_since >= HOLD_S
            ):
                write_all(chan_out, out)
                out.clear()
        del buf[:pos]


def main() -> None:
    """``python -m factory.sandbox.trusted.worker '<config dict repr>'``"""
    options = ast.literal_eval(sys.argv[1]) if len(sys.argv) > 1 else {}
    try:
        serve(WorkerConfig(**options))
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    os._exit(0)  # skip interpreter teardown: nothing to flush, and it is the slow part


if __name__ == "__main__":
    # Run the imported module's main, not this __main__ copy: job functions are resolved through
    # "factory.sandbox.trusted.worker:...", and its sink and exception classes must be the ones in use.
    from factory.sandbox.trusted import worker as _worker

    _worker.main()
