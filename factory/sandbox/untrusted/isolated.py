"""Another program (``node``) as an untrusted job: the kernel isolation of ``runner``'s Python
child, then an exec (``exec_child``; docs/languages.md §6.6).

``run_isolated`` starts ``python -S -s -B -P exec_child.py`` in a session of its own, which
enters fresh namespaces under a private read-only root (the system's shared libraries and
``binds``: the program and the files it reads; no ``/etc`` but ``ld.so.cache``, no checkout, no
home, no other job), sets the rlimits (address space, CPU seconds, file size, open files,
threads), applies Landlock (file-system changes only beneath the job's own noexec tmpfs, exec of
the ``executables`` only, no TCP, no signals out of the job) and seccomp (``child.py``'s filter:
no sockets, no processes, no ptrace, mounts, namespaces, links, device nodes; only execve is let
through, for Landlock to judge), reports the layers in force and execs the program. The job's
stdin gets ``payload`` only once the layers are known to suffice (``runner.KERNEL_LAYERS``, the
same policy as Python's jobs); its stdout, at most ``max_output`` bytes, is the answer. The
parent kills the process group at the wall-clock deadline. A job of several ``calls`` (a codegen
item's tests) writes one line per call: each line it writes gives the next call ``timeout_s`` of
its own, and a job stopped by its deadline or its death returns the lines written before.
"""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from factory.sandbox.untrusted import fork, runner

EXEC_CHILD = str(Path(__file__).with_name("exec_child.py"))
STARTUP_GRACE_S = 2.0  # interpreter and program start-up are not charged to the job
MAX_OUTPUT_BYTES = 1 << 20


@dataclass(frozen=True)
class IsolatedRun:
    """What an isolated job gave: ``status`` (``ok``: it exited with ``stdout`` written;
    ``runner.TIMEOUT``, ``runner.DIED``, ``runner.PROTOCOL``: output past the limit or no layers
    line, ``runner.SANDBOX_INCOMPLETE``: not started), its output and exit code."""

    status: str
    stdout: bytes = b""
    returncode: int | None = None


def run_isolated(
    argv: Sequence[str],
    payload: bytes,
    *,
    binds: Sequence[str],
    executables: Sequence[str],
    env: dict[str, str],
    timeout_s: float,
    address_space_mb: int,
    max_output: int = MAX_OUTPUT_BYTES,
    calls: int = 1,
) -> IsolatedRun:
    """Run ``argv`` (``argv[0]`` an absolute path among ``executables``) in the untrusted sandbox
    with ``payload`` on its stdin; ``binds`` are shown read-only at their own paths. ``calls``:
    how many lines the job writes, each within ``timeout_s`` of the one before (the CPU rlimit
    covers them all)."""
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="execverify-isolated-"))
    config = {
        "tmp": tmp,
        "parent_pid": os.getpid(),
        "argv": list(argv),
        "env": env,
        "binds": list(binds),
        "executables": list(executables),
        "memory_mb": address_space_mb,
        "cpu_s": int(math.ceil(timeout_s * calls + STARTUP_GRACE_S)) + 1,
        "fsize_mb": runner.FSIZE_MB,
        "nofile": runner.NOFILE,
    }
    proc = subprocess.Popen(
        [sys.executable, "-S", "-s", "-B", "-P", EXEC_CHILD, json.dumps(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp,
        env={**fork.ZYGOTE_ENV, "HOME": tmp, "TMPDIR": tmp},
        close_fds=True,
        start_new_session=True,
    )
    try:
        step = timeout_s if calls > 1 else None
        return _serve(proc, payload, time.monotonic() + timeout_s + STARTUP_GRACE_S, max_output, step)
    finally:
        runner.kill_group(proc)
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)


def _serve(
    proc: subprocess.Popen[bytes], payload: bytes, deadline: float, max_output: int, step: float | None
) -> IsolatedRun:
    """The job's answer; with ``step``, each line of output moves the deadline to ``step`` seconds
    after it."""
    assert proc.stdout is not None and proc.stdin is not None
    out = bytearray()
    fd = proc.stdout.fileno()
    writer: threading.Thread | None = None
    layers_seen = False
    while True:
        if not layers_seen and b"\n" in out:
            line, _, rest = bytes(out).partition(b"\n")
            if not line.startswith(b"K"):
                return IsolatedRun(runner.PROTOCOL)
            missing = runner.missing_layers(runner.note_layers(line[1:].decode("ascii", "replace")))
            if missing and not runner.weak_sandbox_allowed():
                return IsolatedRun(runner.SANDBOX_INCOMPLETE)
            layers_seen = True
            out = bytearray(rest)
            writer = threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True)
            writer.start()
        left = deadline - time.monotonic()
        if left <= 0:
            return IsolatedRun(runner.TIMEOUT, bytes(out))
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        out += chunk
        if step is not None and layers_seen and b"\n" in chunk:
            deadline = time.monotonic() + step
        if len(out) > max_output + 4096:
            return IsolatedRun(runner.PROTOCOL)
    if not layers_seen:
        return IsolatedRun(runner.DIED)
    try:
        code = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return IsolatedRun(runner.TIMEOUT, bytes(out))
    return IsolatedRun(runner.OK if code == 0 else runner.DIED, bytes(out), code)


def _feed(pipe: object, payload: bytes) -> None:
    """Write the job to the program's stdin and close it (a thread: the pipe may fill)."""
    try:
        pipe.write(payload)  # type: ignore[attr-defined]
        pipe.close()  # type: ignore[attr-defined]
    except (OSError, ValueError):
        pass
