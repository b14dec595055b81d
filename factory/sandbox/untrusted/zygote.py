"""The fork server (zygote) of the untrusted sandbox; run as a script by ``fork``.

Standard library only. Started once per scoring process as ``python -S -s -B -P
zygote.py CONTROL_FD PARENT_PID`` in a scrubbed environment, with stdin, stdout and
stderr on /dev/null and no other descriptor than its end of the control socket. It makes
itself non-dumpable (no same-user ``ptrace`` or
``/proc/<pid>/mem``), pre-imports the job bootstrap (``child``, ``ctypes`` for its
lockdown) and modules that completions often import, freezes the garbage collector's view of
them (fewer copy-on-write faults per job), and serves one request at a time. It never runs
untrusted code itself and is never under seccomp or an audit hook. When the scorer closes its
end of the socket (or dies), it kills its jobs and exits.

Control messages (a ``SOCK_SEQPACKET`` socket pair: one message each, descriptors attached):

- ``F`` + marshal ``(tmp, (memory_mb, cpu_s, fsize_mb, nofile))`` with two descriptors (the
  job's request read end and response write end): fork a job; answers ``P`` + marshal ``pid``,
  with a pidfd of the job attached where the kernel has ``pidfd_open``, or ``E`` + the reason
  when the fork failed.
- ``W`` + marshal ``pid``: the job's exit code (negative: killed by that signal) or None while it
  runs, answered as ``S`` + marshal; it peeks (``WNOWAIT``) and never reaps.
- ``R`` + marshal ``pid``: release; the parent is done and has killed the job's process group.
  The job is reaped only now, so until then its pid (and so its process group id) cannot be
  reused: the parent's ``killpg`` can never reach a stranger. No answer.
- ``U``: CPU seconds of this process and of its reaped jobs, answered as ``U`` + marshal.

A job child, before any untrusted byte is read, does what a fresh sandbox process does: a new
session (its pid is its process group id), every descriptor closed but stdio and its two pipes
(the control socket first of all), the temporary directory as working directory and ``HOME``/
``TMPDIR``, then ``child.serve``: its namespaces (the forked process becomes the job's keeper and
the job its child, PID 1 of a PID namespace of its own, in the same process group), rlimits,
parent-death signal, seccomp, Landlock, the audit hook, the code. The job cannot see, signal,
``ptrace`` or open the zygote (its PID namespace holds only itself; seccomp and the hook allow
signals to itself only), cannot write to the control socket (closed) and cannot change the
zygote's memory (its own is a copy): each job starts from the same pristine state, whatever
the previous one did.
"""

from __future__ import annotations

import gc
import marshal
import os
import select
import signal
import socket
import sys
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
# The job bootstrap, found beside this file (mypy cannot follow the sys.path insertion above).
import child  # type: ignore[import-not-found]  # noqa: E402

sys.path.remove(_HERE)  # a completion's ``import runner`` must not find the package's modules
os_helpers = child.os_helpers  # the sandboxes' shared OS helpers, as the bootstrap loaded them

# Modules completions commonly import, loaded once here instead of once per job.
PRELOAD = (
    "ctypes", "collections", "collections.abc", "re", "math", "itertools", "functools", "heapq",
    "bisect", "string", "operator", "copy", "typing", "random",
)  # fmt: skip
_MAX_MESSAGE = 1 << 16


_PR_SET_CHILD_SUBREAPER = 36


def _not_dumpable() -> None:
    """PR_SET_DUMPABLE 0: no same-user ``ptrace`` or ``/proc/<pid>/mem`` of this process (its
    jobs inherit it); and PR_SET_CHILD_SUBREAPER: a job whose keeper is killed first (a release
    kills the keeper's whole process group) is handed to this process, which reaps it, instead
    of to init (a scorer that is a container's PID 1 would collect every one as a zombie). Best
    effort off Linux.

    No parent-death signal here: the kernel sends it when the *thread* that started this process
    ends, and scorers start it from short-lived pool threads. The scorer's death closes the
    control socket instead, and the serving loop then kills its jobs and exits.
    """
    try:
        import ctypes

        prctl = os_helpers.typed_prctl(ctypes.CDLL(None, use_errno=True))
        prctl(os_helpers.PR_SET_DUMPABLE, 0, 0, 0, 0)
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass


def _close_all_but(keep: tuple[int, ...]) -> None:
    """Close every descriptor from 3 up except those in ``keep``."""
    low = 3
    for fd in sorted(set(keep)):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, max(low + 1, os.sysconf("SC_OPEN_MAX")))


def _job(
    req_fd: int, resp_fd: int, tmp: str, limits: tuple[int, int, int, int], zygote_pid: int, box: list[Any]
) -> None:
    """The forked child: set up like a fresh sandbox process, then serve; never returns."""
    _exit = os._exit
    try:
        os.setsid()
        _close_all_but((req_fd, resp_fd))
        os.chdir(tmp)
        os.environ["HOME"] = tmp
        os.environ["TMPDIR"] = tmp
        child.serve(req_fd, resp_fd, tmp, limits, zygote_pid, box)
    finally:
        _exit(0)


class Zygote:
    """The serving loop and the jobs this process forked and has not reaped yet."""

    def __init__(self, ctrl: socket.socket, lockdown_box: list[Any]) -> None:
        self.ctrl = ctrl
        # [prepare_lockdown()]: each job writes its pid into its copy and empties the box, so
        # the job's code finds no reference to ctypes' prctl anywhere (not up the stack either).
        self.lockdown_box = lockdown_box
        self.live: set[int] = set()  # forked, not released
        self.released: set[int] = set()  # released, not reaped yet

    def serve(self) -> None:
        poller = select.poll()
        poller.register(self.ctrl.fileno(), select.POLLIN)
        while True:
            self._reap()
            if not poller.poll(20 if self.released else None):
                continue
            try:
                msg, fds, _flags, _addr = socket.recv_fds(self.ctrl, _MAX_MESSAGE, 2)
            except OSError:
                msg, fds = b"", []
            if not msg:
                break  # the scorer closed its end or died
            try:
                self._handle(msg[:1], msg[1:], fds)
            finally:
                for fd in fds:
                    os.close(fd)
        self._shutdown()

    def _handle(self, kind: bytes, body: bytes, fds: list[int]) -> None:
        if kind == b"F" and len(fds) == 2:
            tmp, limits = marshal.loads(body)
            try:
                pid = os.fork()
            except OSError as exc:  # out of processes or memory: this job fails, not the server
                self.ctrl.send(b"E" + str(exc).encode()[:200])
                return
            if pid == 0:
                self.ctrl.close()
                _job(fds[0], fds[1], tmp, tuple(limits), os.getppid(), self.lockdown_box)
            self.live.add(pid)
            extra: list[int] = []
            try:
                extra.append(os.pidfd_open(pid))
            except (AttributeError, OSError):
                pass
            try:
                socket.send_fds(self.ctrl, [b"P" + marshal.dumps(pid)], extra)
            finally:
                for fd in extra:
                    os.close(fd)
        elif kind == b"W":
            pid = marshal.loads(body)
            code = None
            if pid in self.live:
                try:
                    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                except ChildProcessError:
                    info = None
                if info is not None:
                    killed = info.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
                    code = -info.si_status if killed else info.si_status
            self.ctrl.send(b"S" + marshal.dumps(code))
        elif kind == b"R":
            pid = marshal.loads(body)
            if pid in self.live:
                self.live.discard(pid)
                _kill(pid)
                self.released.add(pid)
        elif kind == b"U":
            me = os.times()
            self.ctrl.send(b"U" + marshal.dumps((me.user + me.system, me.children_user + me.children_system)))
        else:
            self.ctrl.send(b"E" + b"bad request")

    def _reap(self) -> None:
        for pid in list(self.released):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done and _reap_group(pid):
                self.released.discard(pid)

    def _shutdown(self) -> None:
        for pid in self.live | self.released:
            _kill(pid)
        for pid in self.live | self.released:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            while True:  # the orphaned jobs of its group (see _reap_group)
                try:
                    os.waitpid(-pid, 0)
                except ChildProcessError:
                    break


def _reap_group(pgid: int) -> bool:
    """Reap the orphans of a released job's process group (its keeper's pid): the job itself,
    handed here when the keeper died first. True when none is left; until then the group, and
    so the pid, stays in use."""
    while True:
        try:
            done, _status = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return True
        if not done:
            return False  # still dying


def _kill(pid: int) -> None:
    """SIGKILL a job and its process group; safe because the job is not reaped yet."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main() -> None:
    """Arguments: the control socket's descriptor and the scorer's pid."""
    ctrl_fd, parent_pid = int(sys.argv[1]), int(sys.argv[2])
    if os.getppid() != parent_pid:
        os._exit(1)
    _not_dumpable()
    ctrl = socket.socket(fileno=ctrl_fd)
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    zygote = Zygote(ctrl, [child.prepare_lockdown()])
    gc.collect()
    gc.freeze()
    ctrl.send(b"ready")
    zygote.serve()


if __name__ == "__main__":
    main()
