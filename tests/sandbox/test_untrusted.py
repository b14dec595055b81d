"""The untrusted-code sandbox: normal behaviour, then a suite of hostile completions.

Every hostile completion (tests/sandbox/hostile/) must fail all its tests, write nothing outside
its sandbox, reach nothing over the network, leave no process or directory behind, and leave
this (scoring) process alive and as fast as before. Jobs run through the fork server (the
zygote); the suite checks that they do, and a part of it runs again on the per-process path.
The zygote's own attack surface (reaching or killing it, leftover processes, descriptors,
state carried from one job to the next, its death and restart) is tested at the end.
"""

from __future__ import annotations

import atexit
import base64
import functools
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

import pytest

from factory.sandbox.untrusted import fork, namespaces, runner
from factory.sandbox.untrusted.runner import (
    ALLOW_WEAK_ENV,
    SANDBOX_INCOMPLETE,
    SIMULATE_MISSING_ENV,
    Opaque,
    call_function,
    run_tests,
    sandbox_layers,
)
from factory.scoring import score_item

HOSTILE = Path(__file__).parent / "hostile"
CHILD = Path(runner.CHILD_SCRIPT)
TIMEOUT = 1.0
SECRET_NAME = "EXECVERIFY_TEST_SECRET"
SECRET_VALUE = "hf_not_a_real_token_4242"


# --------------------------------------------------------------------------------------------
# helpers and fixtures


@pytest.fixture(autouse=True)
def sandbox_dirs(monkeypatch: pytest.MonkeyPatch):
    """Record every sandbox directory made during a test; all must be gone afterwards."""
    made: list[str] = []
    real = tempfile.mkdtemp

    def recording(*args, **kwargs):
        path = real(*args, **kwargs)
        made.append(path)
        return path

    monkeypatch.setattr(runner.tempfile, "mkdtemp", recording)
    yield made
    left = [p for p in made if os.path.exists(p)]
    assert not left, f"sandbox directories left behind: {left}"
    assert not _sandbox_processes(), "sandbox processes left behind"


def _live_processes() -> list[tuple[int, int, bytes]]:
    """(pid, parent pid, command line) of every live (not zombie) process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if fields[0] != "Z":
            found.append((int(entry), int(fields[1]), cmdline))
    return found


def _sandbox_processes(grace_s: float = 2.0) -> list[int]:
    """Jobs still alive after ``grace_s``: fresh processes of ours running the child script, and
    any process but the zygote itself with the zygote's command line (a forked job, or anything
    a job forked: without exec it keeps that command line, wherever it was reparented)."""
    me = os.getpid()
    zygote = _zygote_cmdline()
    deadline = time.monotonic() + grace_s
    while True:
        found = [
            pid
            for pid, ppid, cmdline in _live_processes()
            if (ppid == me and b"untrusted/child.py" in cmdline)
            or (zygote is not None and cmdline == zygote[1] and pid != zygote[0])
        ]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)  # a job killed a moment ago may still be exiting


def _zygote_cmdline() -> tuple[int, bytes] | None:
    server = fork.running()
    if server is None:
        return None
    with open(f"/proc/{server.pid}/cmdline", "rb") as fh:
        return server.pid, fh.read()


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection and every byte it gets."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.received = b""
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.settimeout(1.0)
            try:
                while data := conn.recv(65536):
                    self.received += data
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self._stop = True
        self.thread.join(2)
        self.sock.close()


@pytest.fixture(scope="module")
def listener():
    lst = Listener()
    yield lst
    lst.close()


@pytest.fixture(scope="module")
def baseline_speed() -> float:
    return _normal_call_seconds()


def _normal_call_seconds() -> float:
    code = "def f(x):\n    return x + 1\n"
    tests = [f"assert f({i}) == {i + 1}" for i in range(5)]
    times = []
    for _ in range(5):
        start = time.perf_counter()
        report = run_tests(code, tests, timeout_s=5.0)
        times.append(time.perf_counter() - start)
        assert report.passed == 5
    return statistics.median(times)


_MKDTEMP = tempfile.mkdtemp
HOST_QUEUE_KEY = 0x5EC6  # a SysV message queue of the scorer's (see ``host_queue``)


def hostile(name: str, outside: Path, port: int, bait: Path | None = None) -> str:
    """A hostile fixture with its placeholders filled in: a path outside the sandbox, a
    listener's port, the secret's name, a tests file (``bait``), the scorer's and the fork
    server's pids, a SysV queue key of the scorer's, and a compiled extension's bytes."""
    text = (HOSTILE / f"{name}.py").read_text()
    zygote = fork.running()
    text = (
        text.replace("__OUTSIDE__", str(outside))
        .replace("__PORT__", str(port))
        .replace("__SECRET_NAME__", SECRET_NAME)
        .replace("__BAIT__", str(bait or outside.with_name("tests.json")))
        .replace("__SCORER_PID__", str(os.getpid()))
        .replace("__ZYGOTE_PID__", str(zygote.pid if zygote else os.getpid()))
        .replace("__HOST_QUEUE_KEY__", str(HOST_QUEUE_KEY))
    )
    if "__EXTENSION_B64__" in text:
        text = text.replace("__EXTENSION_B64__", base64.b64encode(compiled_extension().read_bytes()).decode())
    return text


EXTENSION_C = """
#include <Python.h>
static PyObject *two(PyObject *self, PyObject *args) { return PyLong_FromLong(2); }
static PyMethodDef methods[] = {{"two", two, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "evil", NULL, -1, methods};
PyMODINIT_FUNC PyInit_evil(void) { return PyModule_Create(&module); }
"""


@functools.cache
def compiled_extension() -> Path:
    """A C extension module ``evil`` whose ``two()`` returns 2, built with the machine's compiler;
    it imports and answers 2 in an ordinary interpreter (checked here)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("building the extension attack needs a C compiler")
    build = Path(_MKDTEMP(prefix="hostile-extension-"))  # not a sandbox directory (see sandbox_dirs)
    atexit.register(shutil.rmtree, build, True)
    (build / "evil.c").write_text(EXTENSION_C)
    target = build / "evil.so"
    include = sysconfig.get_paths()["include"]
    build_command = [compiler, "-shared", "-fPIC", f"-I{include}", "evil.c", "-o", target.name]
    subprocess.run(build_command, cwd=build, check=True)
    probe = f"import sys; sys.path.insert(0, {str(build)!r}); import evil; print(evil.two())"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout == "2\n"
    return target


# --------------------------------------------------------------------------------------------
# normal behaviour


def test_passing_and_failing_tests_are_told_apart():
    report = run_tests(
        "def f(x):\n    return x + 1\n",
        ["assert f(1) == 2", "assert f(2) == 4", "assert f(3) == 4"],
    )
    assert report.per_test == [True, False, True]
    assert (report.passed, report.total, report.status) == (2, 3, "ok")
    assert report.errors == [None, "AssertionError", None]


def test_exceptions_cross_as_builtin_types():
    code = (
        "class Bad(ValueError):\n    pass\ndef f(x):\n    if x < 0:\n        raise Bad('no')\n    return x\n"
    )
    expects_raise = "try:\n    f(-1)\nexcept ValueError:\n    pass\nelse:\n    raise AssertionError"
    assert run_tests(code, [expects_raise, "assert f(2) == 2"]).per_test == [True, True]


def test_values_cross_as_literals():
    code = (
        "import collections, re\n"
        "def counter(x):\n    return collections.Counter(x)\n"
        "def point(x):\n    return collections.namedtuple('P', 'a b')(x, x)\n"
        "def infinite(x):\n    return float('inf')\n"
        "def match(x):\n    return re.match('a', x)\n"
    )
    tests = [
        "assert counter('aab') == {'a': 2, 'b': 1}",
        "assert point(1) == (1, 1)",
        "assert infinite(0) == float('inf')",
        "assert match('ab')",
        "assert not match('b')",
        "assert match('ab') != 1",
    ]
    assert run_tests(code, tests).per_test == [True] * 6


def test_opaque_values_equal_nothing():
    assert Opaque(True) != Opaque(True)
    assert bool(Opaque(True)) and not bool(Opaque(False))
    code = "def f(x):\n    return iter([x])\n"
    assert run_tests(code, ["assert f(1) == iter([1])", "assert f(1)"]).per_test == [False, True]


def test_builtin_names_are_not_proxied_unless_exposed():
    code = "def len(x):\n    return 3\ndef sum(a, b):\n    return a * b\n"
    assert run_tests(code, ["assert len([1]) == 3"]).per_test == [False]
    assert run_tests(code, ["assert sum(2, 5) == 10"], expose=["sum"]).per_test == [True]


def test_arguments_are_copies():
    code = "def f(xs):\n    xs.append(1)\n    return len(xs)\n"
    tests = ["xs = []\nassert f(xs) == 1\nassert xs == []"]
    assert run_tests(code, tests).per_test == [True]


def test_a_hung_test_costs_only_itself():
    code = "def f(x):\n    while x == 1:\n        pass\n    return x\n"
    start = time.monotonic()
    report = run_tests(code, ["assert f(1) == 1", "assert f(2) == 2"], timeout_s=TIMEOUT)
    assert report.per_test == [False, True]
    assert report.status == "timeout"
    assert time.monotonic() - start < 10


def test_syntax_and_load_errors():
    report = run_tests("def f(x) return x", ["assert f(1) == 1"])
    assert (report.status, report.passed) == ("syntax_error", 0)
    report = run_tests("raise ValueError('at import')\ndef f(x):\n    return x", ["assert f(1)"])
    assert (report.status, report.passed, report.errors) == ("load_error", 0, ["load_error"])


def test_a_bad_test_fails_alone():
    report = run_tests("def f(x):\n    return x\n", ["assert f(1) ==", "assert f(1) == 1"])
    assert report.per_test == [False, True]


def test_call_function_statuses():
    src = (
        "import collections\n"
        "def f(a, b):\n    return a + b\n"
        "def g(x):\n    return collections.Counter(x)\n"
        "def h(x):\n    return float('inf')\n"
        "def boom(x):\n    raise KeyError(x)\n"
        "def hang(x):\n    while True:\n        pass\n"
    )
    result = call_function(src, "f", "[1], [2]")
    assert (result.status, result.value, result.value_repr) == ("ok", [1, 2], "[1, 2]")
    assert call_function(src, "f", ((1,), (2,))).value == (1, 2)
    assert call_function(src, "g", ("ab",)).status == "non_literal"  # strict: exact types only
    assert call_function(src, "h", (1,)).status == "non_literal"
    assert (call_function(src, "boom", (1,)).status, call_function(src, "boom", (1,)).error) == (
        "error",
        "KeyError",
    )
    assert call_function(src, "hang", (1,), timeout_s=TIMEOUT).status == "timeout"
    assert call_function(src, "missing", (1,)).status == "error"
    assert call_function(src, "f", (float("nan"), 1)).status == "bad_args"


def test_ordinary_file_work_inside_the_sandbox_is_allowed():
    src = (
        "import os, subprocess, socket, tempfile\n"  # importing is fine; using them is not
        "def f(x):\n"
        "    home = os.getcwd()\n"
        "    os.makedirs('a/b')\n"
        "    os.chdir('a')\n"
        "    with open('b/data.txt', 'w') as fh:\n"
        "        fh.write(x)\n"
        "    os.rename('b/data.txt', 'b/renamed.txt')\n"
        "    with tempfile.NamedTemporaryFile('w', delete=False) as tmp:\n"
        "        tmp.write('t')\n"
        "    os.chdir(home)  # absolute: '..' is refused in paths that change things\n"
        "    status = open('/proc/self/status').read()\n"
        "    with open('a/b/renamed.txt') as fh:\n"
        "        return [fh.read(), sorted(os.listdir('a/b')), 'Seccomp' in status]\n"
    )
    result = call_function(src, "f", ("hello",))
    assert (result.status, result.value) == ("ok", ["hello", ["renamed.txt"], True])


def test_environment_and_directory_are_clean(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(SECRET_NAME, SECRET_VALUE)
    src = (
        "import os\n"
        "def env(x):\n    return sorted(os.environ)\n"
        "def where(x):\n    return [os.getcwd(), os.listdir('.'), os.environ['HOME']]\n"
    )
    keys = call_function(src, "env", (0,)).value
    assert set(keys) <= {"PATH", "LANG", "HOME", "TMPDIR", "PYTHONHASHSEED", "LC_CTYPE"}
    cwd, listing, home = call_function(src, "where", (0,)).value
    assert listing == [] and home == cwd
    assert os.path.basename(cwd).startswith("execverify-untrusted-")
    assert not os.path.exists(cwd)


def test_limit_arguments_are_checked():
    with pytest.raises(ValueError):
        run_tests("def f(x):\n    return x", ["assert f(1)"], timeout_s=0)
    with pytest.raises(ValueError):
        call_function("def f(x):\n    return x", "f", (1,), memory_mb=1)


@pytest.mark.skipif(
    os.uname().machine not in ("x86_64", "aarch64") or sys.platform != "linux",
    reason="the seccomp filter covers x86_64 and aarch64 Linux",
)
def test_seccomp_holds_without_the_audit_hook():
    """The kernel-level layer alone refuses forks, sockets, signals to others, dir_fd writes."""
    probe = f"""
import json, os, socket, sys, threading
sys.path.insert(0, {str(CHILD.parent)!r})
import child
active, _ = child._lockdown(os.getppid(), child.prepare_lockdown())
out = {{"active": active}}
def attempt(name, fn):
    try:
        fn()
        out[name] = "allowed"
    except (OSError, ValueError) as exc:
        out[name] = type(exc).__name__
attempt("fork", os.fork)
attempt("socket", socket.socket)
attempt("kill_parent", lambda: os.kill(os.getppid(), 0))
attempt("kill_self", lambda: os.kill(os.getpid(), 0))
attempt("thread", lambda: threading.Thread(target=lambda: None).start())
attempt("mkfifo", lambda: os.mkfifo({str(tempfile.gettempdir())!r} + "/execverify-fifo-probe"))
dfd = os.open("/", os.O_RDONLY)
attempt("dirfd_write", lambda: os.open("execverify-probe", os.O_WRONLY | os.O_CREAT, dir_fd=dfd))
attempt("dirfd_read", lambda: os.close(os.open("etc", os.O_RDONLY, dir_fd=dfd)))
import resource
attempt("raise_limit", lambda: resource.setrlimit(resource.RLIMIT_CORE, (-1, -1)))
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    out = json.loads(done.stdout)
    assert out["active"] is True
    for name in ("fork", "socket", "kill_parent", "mkfifo", "dirfd_write", "raise_limit"):
        assert out[name] != "allowed", name
    for name in ("kill_self", "thread", "dirfd_read"):
        assert out[name] == "allowed", name
    assert not os.path.exists("/execverify-probe")
    assert not os.path.exists(os.path.join(tempfile.gettempdir(), "execverify-fifo-probe"))


def _landlock_abi() -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(ctypes.c_long(444), None, ctypes.c_long(0), ctypes.c_long(1))


@pytest.mark.skipif(
    sys.platform != "linux" or os.uname().machine not in ("x86_64", "aarch64") or _landlock_abi() < 1,
    reason="Landlock needs Linux >= 5.13 with the LSM enabled",
)
def test_landlock_confines_changes_without_the_audit_hook(tmp_path: Path):
    """The kernel-level layer alone: file-system changes only beneath the job's directory."""
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    probe = f"""
import json, os, sys
sys.path.insert(0, {str(CHILD.parent)!r})
import child
active, landlocked = child._lockdown(os.getppid(), child.prepare_lockdown(), tmp={str(inside)!r})
out = {{"seccomp": active, "landlock": landlocked}}
def attempt(name, fn):
    try:
        fn()
        out[name] = "allowed"
    except OSError as exc:
        out[name] = type(exc).__name__
attempt("write_inside", lambda: open({str(inside / "a.txt")!r}, "w").write("x"))
attempt("mkdir_inside", lambda: os.mkdir({str(inside / "d")!r}))
attempt("write_outside", lambda: open({str(outside / "a.txt")!r}, "w").write("x"))
attempt("mkdir_outside", lambda: os.mkdir({str(outside / "d")!r}))
attempt("rename_out", lambda: os.rename({str(inside / "a.txt")!r}, {str(outside / "b.txt")!r}))
attempt("read_outside", lambda: open("/etc/hostname").read())
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    out = json.loads(done.stdout)
    assert out["seccomp"] is True and out["landlock"] is True
    for name in ("write_inside", "mkdir_inside", "read_outside"):
        assert out[name] == "allowed", name
    for name in ("write_outside", "mkdir_outside", "rename_out"):
        assert out[name] == "PermissionError", name
    assert list(outside.iterdir()) == []


# --------------------------------------------------------------------------------------------
# the hostile suite

PLUS_ONE = ["assert f(1) == 2", "assert f(5) == 6"]
HOSTILE_CASES = {
    "infinite_loop": PLUS_ONE,
    "infinite_loop_signals_ignored": PLUS_ONE[:1],
    "loop_at_import": PLUS_ONE[:1],
    "memory_bomb": PLUS_ONE[:1],
    "memory_bomb_caught": PLUS_ONE[:1],
    "fork_bomb": PLUS_ONE[:1],
    "fork_bomb_multiprocessing": PLUS_ONE[:1],
    "write_outside_open": PLUS_ONE[:1],
    "write_outside_os_open": PLUS_ONE[:1],
    "write_outside_traversal": PLUS_ONE[:1],
    "write_outside_dir_fd": PLUS_ONE[:1],
    "write_outside_symlink": PLUS_ONE[:1],
    "mkfifo_outside": PLUS_ONE[:1],
    "network": PLUS_ONE[:1],
    "network_urllib": PLUS_ONE[:1],
    "subprocess_spawn": PLUS_ONE[:1],
    "os_system": PLUS_ONE[:1],
    "posix_spawn": PLUS_ONE[:1],
    "kill_parent": PLUS_ONE[:1],
    "kill_parent_pidfd": PLUS_ONE[:1],
    "sys_exit_at_import": PLUS_ONE,
    "os_exit_at_import": PLUS_ONE,
    "sys_exit_in_function": PLUS_ONE,
    "os_exit_in_function": PLUS_ONE,
    "fake_result_lines": PLUS_ONE,
    "huge_output": PLUS_ONE[:1],
    "huge_return": PLUS_ONE[:1],
    "deep_recursion": PLUS_ONE[:1],
    "patch_builtins": PLUS_ONE + ["assert isinstance(f(1), str)", "assert len(f(1)) == 2"],
    "forged_eq": PLUS_ONE,
    "env_secret": [f"assert f(1) == {SECRET_VALUE!r}"],
    "proc_parent_environ": [f"assert {SECRET_VALUE!r} in f(1)"],
    "ctypes_escape": PLUS_ONE[:1],
    "gc_hunt": PLUS_ONE[:1],
    "raise_limits": PLUS_ONE[:1],
    "chmod_sandbox_dir": ["assert f(1) == 2"],
    "chdir_escape": PLUS_ONE[:1],
    "proc_self_root": [f"assert {SECRET_VALUE!r} in f(1)"],
    "ctypes_without_import": PLUS_ONE[:1],
    "stop_iteration": ["assert all(map(lambda c: f(c[0]) == c[1], [(1, 2), (5, 6)]))", *PLUS_ONE],
    "colliding_hashes": PLUS_ONE[:1],
    "read_files_outside": PLUS_ONE[:1],
    "native_extension": PLUS_ONE[:1],
    "native_calls": PLUS_ONE[:1],
    "thread_bomb": PLUS_ONE[:1],
    "disk_fill": PLUS_ONE[:1],
}


def test_every_fixture_is_exercised():
    assert {p.stem for p in HOSTILE.glob("*.py")} == set(HOSTILE_CASES)


def test_hostile_suite_starts_with_a_baseline(baseline_speed: float):
    assert baseline_speed > 0


def _assert_hostile_fails(name: str, tmp_path: Path, listener: Listener) -> None:
    outside = tmp_path / "outside" / "pwned.txt"
    outside.parent.mkdir()
    bait = tmp_path / "tests.json"  # what a scorer might keep on its disk: the answers
    bait.write_text(json.dumps({"tests": HOSTILE_CASES[name]}))
    bait_state = _metadata(bait)
    code = hostile(name, outside, listener.port, bait)
    tests = HOSTILE_CASES[name]
    host_ipc = _sysv_ipc_objects()
    affinity = os.sched_getaffinity(0)
    report = run_tests(code, tests, timeout_s=TIMEOUT, memory_mb=256)
    assert report.passed == 0, report
    assert report.per_test == [False] * len(tests)
    assert list(outside.parent.iterdir()) == [], "something was written outside the sandbox"
    assert _metadata(bait) == bait_state, "a file outside the sandbox was changed"
    assert (listener.connections, listener.received) == (0, b"")
    assert _sysv_ipc_objects() == host_ipc, "the job left SysV IPC objects behind"
    assert os.sched_getaffinity(0) == affinity, "the job changed the scorer's CPU affinity"
    zygote = fork.running()
    if zygote is not None:
        assert os.sched_getaffinity(zygote.pid) == affinity, "the job changed the fork server's CPU affinity"
    _assert_no_job_left()


def _metadata(path: Path) -> tuple[object, ...]:
    st = path.stat()
    return st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, tuple(os.listxattr(path)), path.read_bytes()


def _sysv_ipc_objects() -> dict[str, list[str]]:
    """The host's SysV message queues, shared-memory segments and semaphores (one line each)."""
    kinds = ("msg", "shm", "sem")
    return {kind: Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:] for kind in kinds}


def _job_processes(include_zombies: bool = False) -> dict[int, dict[str, str]]:
    """The processes running under a job's uid (live ones only, by default): pid -> the fields of
    its ``/proc/<pid>/status``."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _status(int(entry))) is not None:
            if int(fields["Uid"].split()[0]) >= namespaces.UID_BASE:
                if include_zombies or fields["State"][0] not in "ZX":
                    found[int(entry)] = fields
    return found


def _assert_no_job_left() -> None:
    deadline = time.monotonic() + 2.0  # a killed job may take a moment to be gone
    while (left := list(_job_processes())) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert left == [], f"job processes outlived their job: {left}"


@pytest.fixture(scope="module")
def host_queue():
    """A SysV message queue of the scorer's, holding a message, for the whole hostile suite."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    queue = libc.msgget(HOST_QUEUE_KEY, 0o1600)  # IPC_CREAT, owner only
    assert queue >= 0, os.strerror(ctypes.get_errno())
    message = ctypes.create_string_buffer(b"\x01\0\0\0\0\0\0\0" + SECRET_VALUE.encode())
    assert libc.msgsnd(queue, message, len(SECRET_VALUE), 0) == 0
    yield queue
    libc.msgctl(queue, 0, None)  # IPC_RMID


@pytest.mark.parametrize("name", sorted(HOSTILE_CASES))
def test_hostile_completion_fails_and_leaves_no_trace(
    name: str, tmp_path: Path, listener: Listener, monkeypatch: pytest.MonkeyPatch, host_queue: int
):
    monkeypatch.setenv(SECRET_NAME, SECRET_VALUE)
    zygote = fork.server()
    assert zygote is not None, "the fork server did not start"
    _assert_hostile_fails(name, tmp_path, listener)
    assert fork.running() is zygote, "the job reached the fork server"


@pytest.fixture
def per_process():
    """The per-process path (what runs when the fork server cannot start)."""
    fork.set_enabled(False)
    yield
    fork.set_enabled(True)


@pytest.mark.parametrize(
    "name",
    ["kill_parent", "fake_result_lines", "write_outside_dir_fd", "infinite_loop_signals_ignored",
     "network", "fork_bomb", "os_exit_in_function", "patch_builtins", "read_files_outside",
     "native_extension", "native_calls", "thread_bomb"],
)  # fmt: skip
def test_hostile_completion_fails_on_the_per_process_path(
    name: str,
    tmp_path: Path,
    listener: Listener,
    monkeypatch: pytest.MonkeyPatch,
    per_process: None,
    host_queue: int,
):
    monkeypatch.setenv(SECRET_NAME, SECRET_VALUE)
    _assert_hostile_fails(name, tmp_path, listener)
    assert running_job_lineage()[0] == os.getpid()  # a fresh child of ours, no zygote


@pytest.mark.parametrize(
    "name",
    ["sys_exit_at_import", "os_exit_in_function", "fake_result_lines", "forged_eq", "kill_parent"],
)
def test_hostile_codegen_completion_scores_zero(name: str, tmp_path: Path, listener: Listener):
    code = hostile(name, tmp_path / "pwned.txt", listener.port)
    item = {"family": "codegen", "entry": "f", "tests": PLUS_ONE}
    result = score_item(item, f"<answer>\n```python\n{code}\n```\n</answer>", timeout_s=TIMEOUT)
    assert result.reward == 0.0
    assert result.n_right == 0


# --------------------------------------------------------------------------------------------
# the fork server's own attack surface

ZYGOTE_ATTACKS = {  # function bodies; the job's parent is the zygote
    "kill": "os.kill(os.getppid(), signal.SIGKILL)",
    "kill_group": "os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)",
    "kill_everyone": "os.kill(-1, signal.SIGKILL)",
    "kill_own_old_group": "os.kill(0, signal.SIGKILL)",
    "stop": "os.kill(os.getppid(), signal.SIGSTOP)",
    "pidfd": "signal.pidfd_send_signal(os.pidfd_open(os.getppid()), signal.SIGKILL)",
    "proc_mem": "open(f'/proc/{os.getppid()}/mem', 'r+b').write(b'x')",
    "proc_fd": "os.listdir(f'/proc/{os.getppid()}/fd')",
    "ptrace": "__import__('ctypes').CDLL(None).ptrace(16, os.getppid(), 0, 0)",
    # Forged fork and release requests on every descriptor the job holds.
    "control_socket": (
        "for fd in range(3, 1024):\n"
        "    for msg in (b'R' + marshal.dumps(os.getppid()), b'U', b'F'):\n"
        "        try:\n"
        "            os.write(fd, msg)\n"
        "        except OSError:\n"
        "            pass"
    ),
    # The zygote's frames are below the job's: look for the lockdown's prctl (a ctypes function
    # built before the fork) anywhere up the stack and call it; finding none fails the test.
    "harness_frames": (
        "found = []\n"
        "frame = sys._getframe()\n"
        "while frame is not None:\n"
        "    for value in list(frame.f_locals.values()):\n"
        "        for held in [value, *getattr(value, '__dict__', {}).values()]:\n"
        "            for item in held if type(held) in (list, tuple) else [held]:\n"
        "                if type(item) is tuple and len(item) == 5 and callable(item[0]):\n"
        "                    found.append(item[0](4, 1, 0, 0, 0))  # PR_SET_DUMPABLE 1\n"
        "    frame = frame.f_back\n"
        "if not found:\n"
        "    raise LookupError('no prctl reachable')"
    ),
}


@pytest.mark.parametrize("attack", sorted(ZYGOTE_ATTACKS))
def test_a_job_cannot_reach_the_fork_server(attack: str):
    zygote = fork.server()
    assert zygote is not None
    body = "\n".join("    " + line for line in ZYGOTE_ATTACKS[attack].splitlines())
    code = f"import marshal, os, signal, sys\ndef f(x):\n{body}\n    return x + 1\n"
    report = run_tests(code, ["assert f(1) == 2"], timeout_s=TIMEOUT)
    assert report.passed == 0, report
    assert fork.running() is zygote and zygote.alive()
    with open(f"/proc/{zygote.pid}/stat") as fh:
        assert fh.read().rsplit(")", 1)[1].split()[0] in "RS", "the fork server was stopped"
    assert call_function("def f(x):\n    return x * 2\n", "f", (21,)).value == 42


def running_job_lineage() -> tuple[int, int, int, int, int]:
    """(the keeper's parent, the keeper, the job, the keeper's session, the job's process
    group), host pids, seen from here while a job runs:
    the job is the one live process with a uid of the jobs' range."""
    # An earlier job killed with its keeper lives on a moment as it dies, orphaned to init (the
    # per-process path) or to the fork server, a subreaper (zygote._reap_group): wait until such
    # stragglers are gone, and never take one for a keeper's child.
    _assert_no_job_left()
    src = "import time\ndef f(x):\n    time.sleep(1.0)\n    return x\n"
    worker = threading.Thread(target=call_function, args=(src, "f", (0,)))
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            zygote = fork.running()
            adopters = {"1", str(zygote.pid)} if zygote is not None else {"1"}
            for job, fields in _job_processes().items():
                if fields["PPid"] not in adopters:
                    keeper = int(fields["PPid"])
                    keeper_fields = _status(keeper)
                    assert keeper_fields is not None
                    group = (os.getsid(keeper), os.getpgid(job))  # while both run
                    return int(keeper_fields["PPid"]), keeper, job, *group
            time.sleep(0.01)
        raise AssertionError("no job seen")
    finally:
        worker.join()


def _status(pid: int) -> dict[str, str] | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return dict(line.rstrip("\n").split(":\t", 1) for line in fh if ":\t" in line)
    except OSError:
        return None


def test_jobs_are_forked_by_the_zygote_into_their_own_session():
    zygote = fork.server()
    assert zygote is not None
    src = (
        "import os\n"
        "def f(x):\n"
        "    fds = sorted(int(n) for n in os.listdir('/proc/self/fd'))\n"
        "    return [os.getppid(), os.getpid(), fds, os.getcwd()]\n"
    )
    ppid, pid, fds, cwd = call_function(src, "f", (0,)).value
    assert (ppid, pid) == (0, 1), "a job is PID 1 of its own PID namespace (its parent lies outside)"
    # stdin, stdout, stderr, the two pipes, and the directory listdir itself opened
    assert len(fds) == 6, fds
    assert os.path.basename(cwd).startswith("execverify-untrusted-")
    parent, keeper, _job, session, group = running_job_lineage()
    assert parent == zygote.pid
    assert session == keeper == group, "a job's keeper leads its session and the job's group"


def test_the_scorer_leaks_no_descriptors():
    call_function("def f(x):\n    return x\n", "f", (0,))
    before = sorted(os.listdir("/proc/self/fd"))
    for i in range(30):
        assert call_function("def f(x):\n    return x\n", "f", (i,)).value == i
        run_tests("import os\nos._exit(0)\ndef f(x):\n    return x\n", ["assert f(1) == 1"])
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_no_state_carries_from_one_job_to_the_next():
    poison = (
        "import builtins, collections, math, os, re, sys, random\n"
        "builtins.len = lambda x: 99\n"
        "builtins.sorted = None\n"
        "math.pi = 3\n"
        "re.compile = None\n"
        "collections.Counter = dict\n"
        "sys.setrecursionlimit(60)\n"
        "os.environ['POISON'] = '1'\n"
        "sys.modules['__main__'].PRELOAD = ()\n"
        "sys.modules['child']._exception_names = None\n"
        "open('left-behind.txt', 'w').write('x')\n"
        "def f(x):\n    return len([x]) + math.pi\n"
    )
    assert run_tests(poison, ["assert f(1) == 102"]).per_test == [True]  # it did poison itself
    check = (
        "import builtins, collections, math, os, re, sys\n"
        "def f(x):\n"
        "    return [len([1, 2]), sorted([2, 1]), math.pi, re.compile('a').pattern,\n"
        "            collections.Counter('aa')['a'], sys.getrecursionlimit() > 60,\n"
        "            'POISON' in os.environ, os.listdir('.'), x]\n"
    )
    value = call_function(check, "f", (7,)).value
    assert value == [2, [1, 2], math.pi, "a", 2, True, False, [], 7]


def test_a_job_leaves_no_thread_or_process_behind():
    src = (
        "import os, threading, time\n"
        "def spin():\n    while True:\n        time.sleep(0.01)\n"
        "def f(x):\n"
        "    threading.Thread(target=spin, daemon=False).start()\n"
        "    for make in (os.fork, lambda: os.posix_spawn('/bin/sleep', ['sleep', '60'], {})):\n"
        "        try:\n            make()\n        except BaseException:\n            pass\n"
        "    return x\n"
    )
    call_function(src, "f", (1,))
    assert not _sandbox_processes()


def test_the_kill_reaches_the_whole_process_group():
    """What ``Job.kill`` does, on a real process group with a grandchild (jobs cannot fork)."""
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE, start_new_session=True
    )
    grandchild = int(leader.stdout.readline())
    server = fork.server()
    assert server is not None
    job = fork.Job(leader.pid, server, os.pidfd_open(leader.pid))
    job.kill()
    assert leader.wait(timeout=5) == -9
    leader.stdout.close()
    deadline = time.monotonic() + 5
    while any(pid == grandchild for pid, _, _ in _live_processes()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(pid == grandchild for pid, _, _ in _live_processes())
    os.close(job.pidfd)


def test_a_dead_zygote_is_replaced():
    zygote = fork.server()
    assert zygote is not None
    os.kill(zygote.pid, 9)
    zygote.proc.wait(timeout=5)
    assert call_function("def f(x):\n    return x + 1\n", "f", (1,)).value == 2
    replacement = fork.running()
    assert replacement is not None and replacement.pid != zygote.pid


def test_a_job_in_flight_when_the_zygote_dies_fails():
    zygote = fork.server()
    assert zygote is not None
    code = "def f(x):\n    while True:\n        pass\n"
    out: list[runner.TestReport] = []
    thread = threading.Thread(target=lambda: out.append(run_tests(code, ["assert f(1) is None"])))
    start = time.monotonic()
    thread.start()
    time.sleep(0.5)
    os.kill(zygote.pid, 9)
    thread.join(10)
    assert out and out[0].passed == 0 and out[0].status == "died"
    assert time.monotonic() - start < 4, "the job outlived its zygote"
    assert call_function("def f(x):\n    return x + 1\n", "f", (1,)).value == 2


def test_a_zygote_that_cannot_start_falls_back_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    broken = tmp_path / "zygote.py"
    broken.write_text("raise SystemExit(3)\n")
    fork.shutdown()
    monkeypatch.setattr(fork, "ZYGOTE_SCRIPT", str(broken))
    monkeypatch.setattr(fork, "_warned", False)
    with pytest.warns(RuntimeWarning, match="fork server could not start"):
        assert running_job_lineage()[0] == os.getpid()  # a fresh child of ours
    assert run_tests("def f(x):\n    return x + 1\n", ["assert f(1) == 2"]).passed == 1
    monkeypatch.undo()
    fork.shutdown()
    assert call_function("def f(x):\n    return x\n", "f", (0,)).value == 0
    assert running_job_lineage()[0] == fork.running().pid


def test_the_zygote_exits_with_its_scorer():
    probe = (
        "import os, sys, time\n"
        "from factory.sandbox.untrusted import fork, runner\n"
        "assert runner.call_function('def f(x):\\n    return x\\n', 'f', (1,)).value == 1\n"
        "print(fork.running().pid, flush=True)\n"
        "os._exit(0)\n"  # no clean shutdown: the zygote must notice the closed socket
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    zygote = int(done.stdout.split()[0])
    deadline = time.monotonic() + 5
    while any(pid == zygote for pid, _, _ in _live_processes()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(pid == zygote for pid, _, _ in _live_processes())


def test_zz_scorer_survives_and_keeps_its_speed(baseline_speed: float):
    # Runs last in this module (pytest keeps file order): the hostile suite ran before it.
    after = _normal_call_seconds()
    assert after < max(3 * baseline_speed, baseline_speed + 0.25), (baseline_speed, after)


def test_a_result_built_to_be_costly_to_rebuild_costs_the_scorer_little(tmp_path: Path):
    # 38,000 complex numbers of one hash: rebuilding them as a set took the scorer's process about
    # 15 s of CPU before the literal reader counted hashes; parsing the 0.86 MB answer takes ~0.4 s.
    code = hostile("colliding_hashes", tmp_path / "pwned.txt", 0)
    start = time.process_time()
    report = run_tests(code, ["assert f(1) == 2"], timeout_s=30, memory_mb=512)
    assert time.process_time() - start < 3.0  # this process's CPU only: the job's own time is not in it
    assert report.per_test == [False]


# --------------------------------------------------------------------------------------------
# the layers in force, and the policy when one is missing


def test_the_kernel_layers_in_force_are_reported():
    layers = sandbox_layers()
    assert layers["in_force"][:3] == ["rlimits", "session", "audit_hook"]
    assert set(runner.KERNEL_LAYERS) <= set(layers["in_force"]), (
        "this machine has all four (see docs/design.md §6.2)"
    )
    assert layers["missing"] == [] and layers["weak_allowed"] is False


@pytest.mark.parametrize("layer", runner.KERNEL_LAYERS)
def test_a_missing_kernel_layer_refuses_untrusted_code_unless_allowed(
    layer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()\ndef f(x):\n    return x + 1\n"
    monkeypatch.setenv(SIMULATE_MISSING_ENV, layer)
    report = run_tests(code, PLUS_ONE, timeout_s=TIMEOUT)
    assert (report.passed, report.status) == (0, SANDBOX_INCOMPLETE)
    assert not marker.exists(), "the code ran although a layer was missing"
    assert call_function(code, "f", (1,)).status == SANDBOX_INCOMPLETE
    assert sandbox_layers()["missing"] == [layer]
    item = {"family": "codegen", "entry": "f", "tests": PLUS_ONE}
    assert score_item(item, f"```python\n{code}```", timeout_s=TIMEOUT).reward == 0.0

    monkeypatch.setenv(ALLOW_WEAK_ENV, "1")
    with caplog.at_level("WARNING", logger="factory.sandbox.untrusted.runner"):
        allowed = run_tests("def f(x):\n    return x + 1\n", PLUS_ONE, timeout_s=TIMEOUT)
    assert allowed.passed == 2
    assert any(layer in r.getMessage() and "without" in r.getMessage() for r in caplog.records) or (
        (layer,) in runner._warned  # warned once per process, maybe by an earlier test
    )


def test_a_job_whose_keeper_dies_first_is_reaped_by_the_fork_server():
    """A release kills the keeper's whole group, so the keeper may die before its job: the job
    is then handed to the fork server (a child subreaper), never to init, and reaped there."""
    _assert_no_job_left()
    # An earlier test's killed per-process jobs are orphans of init, zombies for good where init
    # does not reap (a container's): not this test's.
    earlier = set(_job_processes(include_zombies=True))
    zygote = fork.server()
    assert zygote is not None
    stop = threading.Event()
    parents: set[int] = set()

    def watch() -> None:
        while not stop.is_set():
            seen = _job_processes(include_zombies=True).items()
            parents.update(int(fields["PPid"]) for pid, fields in seen if pid not in earlier)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for i in range(30):
            assert call_function("def f(x):\n    return x\n", "f", (i,)).value == i
    finally:
        stop.set()
        watcher.join()
    assert parents, "no job was seen"
    assert 1 not in parents and 0 not in parents, parents
    _assert_no_job_left()
    deadline = time.monotonic() + 2.0  # the fork server reaps every 20 ms while jobs are dying
    while (
        zombies := set(_job_processes(include_zombies=True)) & _children(zygote.pid)
    ) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not zombies, "jobs left as zombies"


def _children(pid: int) -> set[int]:
    try:
        return {int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except OSError:
        return set()
