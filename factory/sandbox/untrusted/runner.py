"""The sandbox for untrusted code: model-written programs and model-proposed inputs (docs/design.md §6.2).

One process per job, in its own session and its own mount, PID, IPC, UTS and network namespaces
(``namespaces``: a private read-only root that shows only the interpreter, a noexec,
size-limited job directory, a uid of its own with no capabilities), with rlimits, a clean
environment, Landlock and a seccomp filter, an audit hook, and a wall-clock deadline that the
parent enforces with SIGKILL on the process group. Each job reports the kernel layers in force
before it gets the code; one missing is refused unless the user allows it (``KERNEL_LAYERS``).
The process is forked by a fork server (``fork``: a pre-started, pre-imported zygote with a
scrubbed environment; see ``fork`` for its cost); when the zygote cannot start, a fresh
interpreter runs ``child.py`` (``python -S -s -B -P``). Both do the same set-up before the job's
code.

Design: the child is a *function server*. It executes the completion's code once, then answers
call requests ``(name, args, kwargs)`` with the ``repr`` of the result. The unit tests themselves
run **here, in the trusted parent**: each test is executed with the completion's top-level
callables bound to proxies that forward calls to the child, and every value that comes back is
rebuilt with ``ast.literal_eval``. A test passes when its code finishes without an exception.

Threat model (the completion controls everything inside the child, including the harness code
that shares its interpreter):
- It can choose the return value of each call. That is exactly its job; it cannot learn what a
  test compares the value with (asserts, expected values and exception handling stay here).
- It cannot forge a pass: there is no verdict, exit code, stdout line or secret to forge. Early
  exits (``sys.exit``, ``os._exit``), crashes, timeouts, non-literal values (objects with a forged
  ``__eq__``) and protocol garbage all fail the call, and a failed call fails its test even when
  the test catches exceptions (the proxy raises a ``BaseException`` and marks the test failed).
- It cannot see the host: its root file system holds the interpreter's standard library and
  the system's shared libraries (read-only), five harmless devices, its own ``/proc`` and its
  job directory; no tests file, checkout, other job's directory or ``/etc``. It runs as a uid of
  its own (or, under a non-root scorer, without the capabilities its user namespace gave), is
  PID 1 of its PID namespace (nothing it starts outlives it, no other process is visible), and
  its SysV IPC objects die with its IPC namespace. Nothing it writes can be mapped as code
  (``noexec``): a compiled extension does not load.
- It cannot reach the host through the kernel where seccomp is active (x86_64, aarch64 Linux):
  no sockets, processes, exec, signals to others, ptrace, device nodes or fifos, links, mounts,
  namespaces, raised limits, writes relative to another directory fd. Where Landlock is active
  (Linux ≥ 5.13), the kernel also refuses every file-system change outside the temporary
  directory (and TCP, and signals out of the job), whatever the job does: ctypes' C types stay
  reachable after the lockdown (``object.__subclasses__()``) and a function pointer built from a
  raw address raises no audit event. The audit hook ends the child on writes outside the
  temporary directory (paths with ``..`` and a working directory outside it are refused too,
  closing check-then-use races between threads), on reads or listings of other processes'
  ``/proc`` entries and devices, on ``ctypes`` and on heap introspection (``gc``).
- Limits: the hook is Python-level; native code (ctypes' surviving C types, a module loaded
  through ``_imp``) can open files the hook never sees: the namespaces, the uid, seccomp and
  Landlock still hold (without them, on other platforms, such code could write anywhere and
  fork). Tests run in this process, so test code must be trusted.
  Semantics differ from a shared namespace in three rare cases: a test that inspects an argument
  the function mutated in place (arguments are copies), a test that uses a module the completion
  imported without importing it itself, and a function named like a built-in (bound only when
  listed in ``expose``, which scoring does for the entry function).
"""

from __future__ import annotations

import ast
import builtins
import keyword
import logging
import marshal
import math
import os
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.literals import is_literal, literal_eval, parse_args
from factory.sandbox.os_helpers import HEADER, frame
from factory.sandbox.untrusted import fork

CHILD_SCRIPT = str(Path(__file__).with_name("child.py"))
VIOLATION_EXIT = 86
MAX_RESPONSE_BYTES = 1 << 20  # one value's repr; bounds this process's parsing cost
FSIZE_MB = 8
NOFILE = 64
MAX_NAMES = 1000
_STARTUP_GRACE_S = 2.0  # interpreter start-up is not charged to the job's own budget

# Statuses (TestReport.status / CallResult.status).
OK = "ok"
SYNTAX_ERROR = "syntax_error"  # the code does not compile; nothing ran
LOAD_ERROR = "load_error"  # executing the code's top level raised
TIMEOUT = "timeout"
DIED = "died"  # the process ended without answering (os._exit, crash, memory, signal)
VIOLATION = "violation"  # the process ended with the audit hook's exit code (diagnostic only)
PROTOCOL = "protocol_error"  # the process answered garbage or too much
ERROR = "error"  # the called function raised
EXITED = "exited"  # the called function raised SystemExit (or another non-Exception)
NON_LITERAL = "non_literal"  # the called function returned a value that is not a literal
BAD_ARGS = "bad_args"  # the arguments are not literals
SANDBOX_INCOMPLETE = "sandbox_incomplete"  # a kernel layer is missing: the code was not run
ESCAPED = "control_flow_exception"  # the called function raised StopIteration (or StopAsyncIteration)


@dataclass
class TestReport:
    """The outcome of ``run_tests``: ``per_test[i]`` is True when test i passed."""

    __test__ = False  # not a pytest test class, whatever imports it

    passed: int
    total: int
    per_test: list[bool]
    status: str
    errors: list[str | None] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "total": self.total,
            "per_test": list(self.per_test),
            "status": self.status,
            "errors": list(self.errors),
        }


@dataclass
class CallResult:
    """The outcome of ``call_function``; ``value`` is meaningful only when status is ``ok``."""

    status: str
    value: Any = None
    value_repr: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK


class _ChildFailure(Exception):
    """The child cannot answer any more (status says why)."""

    def __init__(self, status: str, detail: str | None = None) -> None:
        super().__init__(detail or status)
        self.status = status
        self.detail = detail


class _TestAborted(BaseException):  # noqa: N818 - deliberately not an Exception
    """Raised into a test when a call failed in a way no test may catch (a BaseException, so a
    test's ``except Exception`` does not turn a dead or cheating child into a pass)."""


def _builtin_exception(mro_names: list[str]) -> type[Exception] | None:
    """The first built-in ``Exception`` class among the child's MRO names, else None.

    Only this interpreter's own built-in classes come out of here, so a completion cannot smuggle
    text out through exception type names; None (a ``SystemExit`` or garbage) fails the test.
    """
    for name in mro_names:
        candidate = getattr(builtins, name, None) if name.isidentifier() else None
        if (
            isinstance(candidate, type)
            and issubclass(candidate, Exception)
            and candidate.__module__ == "builtins"
        ):
            return candidate
    return None


def _exception_instance(mro_names: list[str]) -> Exception | None:
    for name in mro_names:
        cls = _builtin_exception([name])
        if cls is None:
            continue
        try:
            return cls("raised in the sandbox")
        except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError needs five arguments
            continue
    return None


class _NonFinite(ast.NodeTransformer):
    """Reads the names ``inf`` and ``nan`` (as a float's repr writes them) as float constants."""

    def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802 - the visitor's API
        if node.id in ("inf", "nan"):
            return ast.copy_location(ast.Constant(float(node.id)), node)
        return node


def _decode(text: str, loose: bool) -> Any:
    """Rebuild a value from the child's repr with ``ast.literal_eval`` (never ``eval``).

    Loose mode (unit tests) also reads ``inf`` and ``nan``, which a float's repr can hold.
    """
    try:
        return literal_eval(text)
    except ValueError:
        if not loose or ("inf" not in text and "nan" not in text):
            raise
    tree = _NonFinite().visit(ast.parse(text, mode="eval"))
    return literal_eval(tree)


class Opaque:
    """A test's stand-in for a value that is not a literal (a ``re.Match``, a generator...).

    It keeps only the truthiness the child reported, so ``assert f(x)`` and ``assert not f(x)``
    work; it equals nothing but itself, so it never satisfies ``== expected``.
    """

    __slots__ = ("_truthy",)

    def __init__(self, truthy: bool) -> None:
        self._truthy = truthy

    def __bool__(self) -> bool:
        return self._truthy

    def __repr__(self) -> str:
        return f"<opaque value, {'truthy' if self._truthy else 'falsy'}>"


#: The kernel's layers every job must have (its namespaces and private root, no privilege, seccomp
#: and Landlock; the rlimits, the session and the audit hook are always set up). Without one,
#: untrusted code is refused (``sandbox_incomplete``) unless the user allows it
#: (``ALLOW_WEAK_ENV=1``, ``execverify score --allow-weak-sandbox``), and then one warning per
#: process names what is missing.
KERNEL_LAYERS = ("namespaces", "unprivileged", "seccomp", "landlock")
ALLOW_WEAK_ENV = "EXECVERIFY_ALLOW_WEAK_SANDBOX"
#: For tests of that policy: kernel layers to treat as missing (comma-separated names).
SIMULATE_MISSING_ENV = "EXECVERIFY_SANDBOX_SIMULATE_MISSING"
_last_layers: tuple[str, ...] | None = None  # what the latest job had in force
_warned: set[tuple[str, ...]] = set()


def weak_sandbox_allowed() -> bool:
    """Whether the user allowed untrusted code to run with a kernel layer missing."""
    return os.environ.get(ALLOW_WEAK_ENV, "") not in ("", "0")


def note_layers(text: str) -> tuple[str, ...]:
    """The kernel layers a child reported (less the simulated-missing ones), remembered for
    ``sandbox_layers``; warns once per set of missing layers when they are allowed."""
    global _last_layers
    simulated = set(os.environ.get(SIMULATE_MISSING_ENV, "").split(","))
    layers = tuple(n for n in KERNEL_LAYERS if n in text.split() and n not in simulated)
    if _last_layers is None:  # the first job of this process: say what holds (rewards' logs)
        logging.getLogger(__name__).info(
            "untrusted code runs under rlimits, its own session, the audit hook%s",
            "".join(f", {n}" for n in layers),
        )
    _last_layers = layers
    missing = missing_layers(layers)
    if missing and weak_sandbox_allowed() and missing not in _warned:
        _warned.add(missing)
        logging.getLogger(__name__).warning(
            "untrusted code runs without %s (%s is set): a hostile completion may reach the host",
            " and ".join(missing), ALLOW_WEAK_ENV,
        )  # fmt: skip
    return layers


def missing_layers(layers: tuple[str, ...]) -> tuple[str, ...]:
    """The kernel layers (``KERNEL_LAYERS``) not among ``layers``."""
    return tuple(n for n in KERNEL_LAYERS if n not in layers)


def sandbox_layers() -> dict[str, Any]:
    """The layers in force for untrusted jobs (from the latest job; a probe job when none ran yet):
    ``in_force`` (always the rlimits, the session and the audit hook, plus the kernel layers the
    job had), ``missing`` and ``weak_allowed``."""
    if _last_layers is None:
        call_function("def f():\n    return 0\n", "f", ())
    kernel = _last_layers or ()
    return {
        "in_force": ["rlimits", "session", "audit_hook", *kernel],
        "missing": list(missing_layers(kernel)),
        "weak_allowed": weak_sandbox_allowed(),
    }


class _Child:
    """One live untrusted process and the parent's end of its two pipes.

    The process is forked by the fork server (``fork``) when it runs, else started fresh
    (``python -S -s -B -P child.py``); both do the same set-up before the code.
    """

    def __init__(self, code: str, *, memory_mb: int, cpu_s: int, loose: bool) -> None:
        self.tmp = os.path.realpath(tempfile.mkdtemp(prefix="execverify-untrusted-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.job: fork.Job | None = None
        self.req_w = self.resp_r = -1
        self.names: list[str] = []
        self.raw_names: list[str] = []
        self.layers: tuple[str, ...] = ()
        self.code = code
        self.loose = loose
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        limits = (memory_mb, cpu_s, FSIZE_MB, NOFILE)
        try:
            self.job = _fork_job(req_r, resp_w, self.tmp, limits)
            if self.job is None:
                self.proc = _start_process(req_r, resp_w, self.tmp, limits)
        except BaseException:
            for fd in (req_r, req_w, resp_r, resp_w):
                os.close(fd)
            self._remove_tmp()
            raise
        os.close(req_r)
        os.close(resp_w)
        self.req_w, self.resp_r = req_w, resp_r
        os.set_blocking(req_w, False)
        os.set_blocking(resp_r, False)

    # -- framing -----------------------------------------------------------------------------
    def _send(self, payload: bytes, deadline: float) -> None:
        data = memoryview(frame(payload))
        poller = select.poll()
        poller.register(self.req_w, select.POLLOUT)
        while data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _ChildFailure(TIMEOUT)
            events = poller.poll(max(1, int(left * 1000)))
            if not events:
                continue
            if events[0][1] & (select.POLLERR | select.POLLHUP):
                raise _ChildFailure(self._death_status())
            try:
                n = os.write(self.req_w, data)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise _ChildFailure(self._death_status()) from None
            data = data[n:]

    def _recv_exact(self, n: int, deadline: float, poller: select.poll) -> bytes:
        chunks: list[bytes] = []
        while n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _ChildFailure(TIMEOUT)
            if not poller.poll(max(1, int(left * 1000))):
                continue
            try:
                chunk = os.read(self.resp_r, min(n, 1 << 20))
            except BlockingIOError:
                continue
            if not chunk:
                raise _ChildFailure(self._death_status())
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def recv(self, deadline: float) -> tuple[str, str]:
        """One response frame: (kind, text)."""
        poller = select.poll()
        poller.register(self.resp_r, select.POLLIN)
        (size,) = HEADER.unpack(self._recv_exact(HEADER.size, deadline, poller))
        if size < 1 or size > MAX_RESPONSE_BYTES:
            raise _ChildFailure(PROTOCOL, "response too large")
        payload = self._recv_exact(size, deadline, poller)
        return chr(payload[0]), payload[1:].decode("utf-8", "replace")

    def _death_status(self) -> str:
        if self.job is not None:
            # The pipe closed: the job is ending; its exit code tells a refused event apart.
            end = time.monotonic() + 0.5
            while (rc := self.job.exit_code()) is None and time.monotonic() < end:
                time.sleep(0.002)
        elif self.proc is not None:
            try:
                rc = self.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                return DIED
        else:
            return DIED
        return VIOLATION if rc == VIOLATION_EXIT else DIED

    # -- protocol ----------------------------------------------------------------------------
    def start(self, deadline: float) -> None:
        """Check the child's layers, send the code and wait until it has loaded; raises
        _ChildFailure (``sandbox_incomplete`` before the code is sent, see ``KERNEL_LAYERS``)."""
        kind, text = self.recv(deadline)
        if kind != "K":
            raise _ChildFailure(PROTOCOL, "no layers frame")
        self.layers = note_layers(text)
        missing = missing_layers(self.layers)
        if missing and not weak_sandbox_allowed():
            raise _ChildFailure(SANDBOX_INCOMPLETE, "missing: " + ", ".join(missing))
        self._send(marshal.dumps({"code": self.code, "loose": self.loose}), deadline)
        kind, text = self.recv(deadline)
        if kind == "L":
            cls = _builtin_exception(text.split("\n"))
            raise _ChildFailure(LOAD_ERROR, cls.__name__ if cls else None)
        if kind != "R":
            raise _ChildFailure(PROTOCOL, "unexpected frame")
        raw = [n for n in text.split("\n")[:MAX_NAMES] if n.isidentifier() and not keyword.iskeyword(n)]
        # Built-in names are never proxied: a completion cannot shadow len() or sorted() in a test.
        builtin_names = set(dir(builtins))
        self.raw_names = raw
        self.names = [n for n in raw if n not in builtin_names and not n.startswith("__")]

    def call(self, name: str, args: tuple, kwargs: dict, deadline: float) -> tuple[str, Any]:
        """Call ``name`` in the child.

        Returns ("value", v), ("opaque", truthiness), ("raise", exception instance),
        ("exited", None) for SystemExit and the like, or ("non_literal", None).
        """
        self._send(marshal.dumps((name, args, kwargs)), deadline)
        kind, text = self.recv(deadline)
        if kind == "V":
            try:
                return "value", _decode(text, self.loose)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return "non_literal", None
        if kind == "O" and text in ("0", "1"):
            return "opaque", text == "1"
        if kind == "E":
            exc = _exception_instance(text.split("\n"))
            return ("raise", exc) if exc is not None else ("exited", None)
        if kind == "X":
            return "non_literal", None
        raise _ChildFailure(PROTOCOL, "unexpected frame")

    # -- teardown ----------------------------------------------------------------------------
    def close(self) -> None:
        for fd in (self.req_w, self.resp_r):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.req_w = self.resp_r = -1
        if self.job is not None:
            self.job.release()  # kills the job's process group, then the zygote reaps it
            self.job = None
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None
        self._remove_tmp()

    def _remove_tmp(self) -> None:
        def fix_and_retry(func: Any, path: str, _exc: Any) -> None:
            # The child may have removed permissions inside its directory.
            try:
                parent = os.path.dirname(path)
                os.chmod(parent, stat.S_IRWXU)
                if os.path.isdir(path) and not os.path.islink(path):
                    os.chmod(path, stat.S_IRWXU)
                func(path)
            except OSError:
                pass

        shutil.rmtree(self.tmp, onerror=fix_and_retry)


def _fork_job(req_r: int, resp_w: int, tmp: str, limits: tuple[int, int, int, int]) -> fork.Job | None:
    """A job forked by the fork server; a zygote found dead is replaced once. None when there is
    no fork server (the caller starts a fresh process)."""
    for _attempt in range(2):
        server = fork.server()
        if server is None:
            return None
        try:
            return server.spawn(req_r, resp_w, tmp, limits)
        except fork.ForkServerError:
            continue
    return None


def _start_process(
    req_r: int, resp_w: int, tmp: str, limits: tuple[int, int, int, int]
) -> subprocess.Popen[bytes]:
    """The per-process path: a fresh interpreter runs ``child.py``."""
    env = {**fork.ZYGOTE_ENV, "HOME": tmp, "TMPDIR": tmp}
    args = [req_r, resp_w, tmp, *limits, os.getpid()]
    return fork.spawn_script(CHILD_SCRIPT, args, cwd=tmp, env=env, pass_fds=(req_r, resp_w))


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole process group (it leads its own session), then reap it."""
    for kill in (lambda: os.killpg(proc.pid, signal.SIGKILL), lambda: proc.kill()):
        try:
            kill()
        except (ProcessLookupError, PermissionError, OSError):
            pass
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        pass


def _cpu_budget(timeout_s: float, n_calls: int) -> int:
    # A backstop for a parent that dies: the wall-clock deadline is what normally stops a job.
    return int(math.ceil(timeout_s * (n_calls + 1) + _STARTUP_GRACE_S)) + 1


class _Session:
    """Drives one child through a list of tests; proxies call into it."""

    def __init__(self, child: _Child, timeout_s: float) -> None:
        self.child = child
        self.timeout_s = timeout_s
        self.deadline = 0.0
        self.failure: str | None = None  # why the current test must fail whatever it catches
        self.dead = False

    def invoke(self, name: str, args: tuple, kwargs: dict) -> Any:
        if self.dead:
            self.failure = self.failure or DIED
            raise _TestAborted(DIED)
        if not all(is_literal(a) for a in args) or not all(
            isinstance(k, str) and is_literal(v) for k, v in kwargs.items()
        ):
            self.failure = BAD_ARGS
            raise _TestAborted(BAD_ARGS)
        try:
            kind, value = self.child.call(name, args, kwargs, self.deadline)
        except _ChildFailure as exc:
            self.dead = True
            self.failure = exc.status
            raise _TestAborted(exc.status) from None
        if kind == "value":
            return value
        if kind == "opaque":
            return Opaque(value)
        if kind == "raise":
            if isinstance(value, (StopIteration, StopAsyncIteration)):
                # Out of a proxy it would end the test's own iteration early, as if every item
                # passed (``assert all(map(lambda c: f(c[0]) == c[1], cases))``): no test may see it.
                self.failure = ESCAPED
                raise _TestAborted(ESCAPED)
            raise value
        self.failure = EXITED if kind == "exited" else NON_LITERAL
        raise _TestAborted(self.failure)


class _Proxy:
    """Stands for one of the completion's top-level callables inside a test."""

    __slots__ = ("_session", "_name")

    def __init__(self, session: _Session, name: str) -> None:
        self._session = session
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.invoke(self._name, args, kwargs)

    def __repr__(self) -> str:
        return f"<sandboxed {self._name}>"


def _syntax_ok(code: str) -> bool:
    try:
        compile(code, "<solution>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError):
        return False
    return True


def run_tests(
    code: str,
    tests: list[str],
    *,
    timeout_s: float = 5.0,
    memory_mb: int = 512,
    expose: tuple[str, ...] | list[str] = (),
) -> TestReport:
    """Run unit tests (Python source, typically ``assert f(1) == 2``) against untrusted ``code``.

    ``timeout_s`` bounds loading the code and, separately, each test. After a test kills or
    hangs the child, a fresh child is started for the next test.

    The tests see the code's top-level callables, except names of built-ins (a completion must
    not replace ``len`` or ``sorted`` inside a test); names in ``expose`` (the entry function)
    are bound even when they shadow a built-in. Values cross as literals: built-in subclasses
    (``Counter``, ``namedtuple``) arrive as their base type, ``inf``/``nan`` as floats, other
    objects as an ``Opaque`` that keeps only its truthiness.
    """
    check_limits(timeout_s, memory_mb)
    total = len(tests)
    per_test = [False] * total
    errors: list[str | None] = [None] * total
    compiled: list[Any] = []
    for i, test in enumerate(tests):
        try:
            compiled.append(compile(test, f"<test {i}>", "exec", dont_inherit=True))
        except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
            compiled.append(None)
            errors[i] = "test_syntax_error"
    if not _syntax_ok(code):
        return TestReport(0, total, per_test, SYNTAX_ERROR, [e or SYNTAX_ERROR for e in errors])
    status = OK
    session: _Session | None = None
    try:
        for i, test_code in enumerate(compiled):
            if test_code is None:
                continue
            if session is None or session.dead:
                if session is not None:
                    session.child.close()
                session, load_status = _load(code, timeout_s, memory_mb, total, loose=True)
                if session is None:
                    status = status if status != OK else load_status
                    for j in range(i, total):
                        errors[j] = errors[j] or load_status
                    break
            session.failure = None
            session.deadline = time.monotonic() + timeout_s
            namespace: dict[str, Any] = {"__name__": "__test__", "__builtins__": builtins}
            for name in session.child.names:
                namespace[name] = _Proxy(session, name)
            for name in expose:
                if name in session.child.raw_names:
                    namespace[name] = _Proxy(session, name)
            try:
                exec(test_code, namespace)
            except _TestAborted:
                pass
            except Exception as exc:  # noqa: BLE001 - a failing assertion or any test error
                errors[i] = type(exc).__name__
            else:
                per_test[i] = session.failure is None
            if session.failure is not None:
                errors[i] = session.failure
                if session.dead and status == OK:
                    status = session.failure
    finally:
        if session is not None:
            session.child.close()
    return TestReport(sum(per_test), total, per_test, status, errors)


def _load(
    code: str, timeout_s: float, memory_mb: int, n_calls: int, *, loose: bool
) -> tuple[_Session | None, str]:
    """Start a child and load the code in it: (session, "ok") or (None, why not)."""
    cpu_s = _cpu_budget(timeout_s, n_calls)
    child = _Child(code, memory_mb=memory_mb, cpu_s=cpu_s, loose=loose)
    try:
        child.start(time.monotonic() + timeout_s + _STARTUP_GRACE_S)
    except _ChildFailure as exc:
        child.close()
        return None, exc.status
    except BaseException:
        child.close()
        raise
    return _Session(child, timeout_s), OK


def call_function(
    source: str,
    entry: str,
    args: tuple | str,
    *,
    timeout_s: float = 5.0,
    memory_mb: int = 512,
) -> CallResult:
    """Run ``entry(*args)`` from ``source`` in the sandbox; the result comes back as a literal.

    ``args`` is a tuple of literal values or CRUXEval-style argument text (``"[1, 2], 'ab'"``).
    A result that ``literal_eval(repr(result))`` cannot rebuild is status ``non_literal``.
    """
    check_limits(timeout_s, memory_mb)
    values = parse_args(args) if isinstance(args, str) else tuple(args)
    if not all(is_literal(v) for v in values):
        return CallResult(BAD_ARGS)
    if not _syntax_ok(source):
        return CallResult(SYNTAX_ERROR)
    session, status = _load(source, timeout_s, memory_mb, 1, loose=False)
    if session is None:
        return CallResult(status)
    try:
        if entry not in session.child.raw_names:
            return CallResult(ERROR, error="NameError")
        deadline = time.monotonic() + timeout_s
        try:
            kind, value = session.child.call(entry, values, {}, deadline)
        except _ChildFailure as exc:
            return CallResult(exc.status)
        if kind == "value":
            return CallResult(OK, value=value, value_repr=repr(value))
        if kind == "raise":
            return CallResult(ERROR, error=type(value).__name__)
        if kind == "exited":
            return CallResult(EXITED)
        return CallResult(NON_LITERAL)  # opaque values included: only literals count here
    finally:
        session.child.close()


def check_limits(timeout_s: float, memory_mb: int) -> None:
    """ValueError unless a job's limits are sane (a timeout up to an hour, at least 32 MB)."""
    if not (isinstance(timeout_s, (int, float)) and 0 < timeout_s <= 3600):
        raise ValueError(f"timeout_s must be in (0, 3600], got {timeout_s!r}")
    if not (isinstance(memory_mb, int) and 32 <= memory_mb <= 1 << 20):
        raise ValueError(f"memory_mb must be an int in [32, 1048576], got {memory_mb!r}")
