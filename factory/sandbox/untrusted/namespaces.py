"""Kernel namespaces and a private root file system for one untrusted job (Linux).

Standard library only, loaded by ``child`` beside it. What ``Namespaces.enter`` builds, in the
way bubblewrap and nsjail do, before any untrusted byte is read:

- new mount, PID, IPC, UTS and network namespaces (and a user namespace when the scorer is not
  root: it is what lets an unprivileged process make the others). The job is PID 1 of its PID
  namespace, so everything it starts dies with it; its SysV IPC objects die with it; it has no
  network interface but a loopback that is down;
- a root file system of its own, on a small read-only tmpfs: the interpreter's standard library
  and the system's shared libraries bind-mounted read-only, ``/dev`` with five harmless devices,
  a ``/proc`` of its PID namespace, and the job directory (at the same path as on the host) a
  size- and inode-limited tmpfs mounted ``noexec``: no file of the host is visible (no tests, no
  other job, no ``/etc``), and nothing written there can be mapped as code, so a compiled
  extension cannot be loaded;
- no privilege: as root, the job switches to a uid and gid of its own (``UID_BASE`` plus its
  host pid: unique among live jobs, owned by nothing on the host), which empties its capability
  sets and makes ``RLIMIT_NPROC`` a per-job thread cap; otherwise it drops every capability the
  user namespace gave it.

``enter`` forks. The first process (the *keeper*) stays outside the PID namespace, waits for the
job and exits as it did (same code, same signal), so the caller's bookkeeping is unchanged; it
never runs untrusted code. The job returns from ``enter``.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_MNT_DETACH = 2
# statvfs flag -> mount flag: a bind remount must repeat these (the kernel locks them in a user
# namespace, and refuses a remount that would clear one).
_KEPT_FLAGS = (
    (2, _MS_NOSUID), (4, _MS_NODEV), (8, _MS_NOEXEC), (1024, _MS_NOATIME), (2048, _MS_NODIRATIME),
    (4096, _MS_RELATIME),
)  # fmt: skip
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_CAPGET = {"x86_64": 125, "aarch64": 90}
_CAPSET = {"x86_64": 126, "aarch64": 91}
_CAPABILITY_VERSION_3 = 0x20080522

#: The job's uid and gid as root: this plus the keeper's host pid (pids are below 2**22).
UID_BASE = 1 << 30
#: Devices the job sees (bind-mounted from the host's ``/dev``).
DEVICES = ("null", "zero", "full", "random", "urandom")
#: System library directories shown read-only (the shared objects extension modules link to).
SYSTEM_LIBRARIES = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/etc/ld.so.cache")
#: Inodes of the root tmpfs (the directories and mount points built on it).
_ROOT_INODES = 4096


class SetupError(OSError):
    """A namespace or mount step failed (the message names it and the kernel's reason)."""


class Namespaces:
    """The system calls ``enter`` needs, bound once (in the fork server, before any job)."""

    def __init__(self, ctypes: Any) -> None:
        libc = ctypes.CDLL(None, use_errno=True)  # its own function objects: no shared argtypes
        machine = os.uname().machine
        if machine not in _PIVOT_ROOT:
            raise OSError(f"no namespace support for {machine}")
        self.ctypes = ctypes
        self.unshare = libc.unshare
        self.unshare.argtypes = [ctypes.c_int]
        self.mount = libc.mount
        text = ctypes.c_char_p
        self.mount.argtypes = [text, text, text, ctypes.c_ulong, text]
        self.umount2 = libc.umount2
        self.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.syscall = libc.syscall  # untyped: ints, bytes and arrays (passed as pointers)
        self.pivot_root_nr = _PIVOT_ROOT[machine]
        self.capget_nr, self.capset_nr = _CAPGET[machine], _CAPSET[machine]
        self.binds = _read_only_paths()

    def enter(
        self, tmp: str, disk_mb: int, max_files: int, user_namespace: bool | None = None
    ) -> tuple[bool, bool]:
        """Put this process's job in fresh namespaces under a private root (see the module's
        docstring); returns in the job only, with (namespaces in force, no privilege left).

        ``user_namespace``: make one (and keep the uid, dropping capabilities) instead of
        switching uid as root; by default only when not root, or as root when the kernel
        refuses the namespaces without one (no ``CAP_SYS_ADMIN``). (False, False) when the
        namespaces could not be made (then there is no fork, no keeper). A failure while the
        root is built leaves the job in its namespaces but reports them missing.
        """
        if user_namespace is None:
            user_namespace = os.geteuid() != 0
        flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET
        uid, gid = os.geteuid(), os.getegid()
        if self.unshare(flags | CLONE_NEWUSER if user_namespace else flags) != 0:
            # Root without CAP_SYS_ADMIN (a container's default) may still make a user namespace.
            if user_namespace or self.unshare(flags | CLONE_NEWUSER) != 0:
                return False, False
            user_namespace = True
        try:
            if user_namespace:
                _write("/proc/self/setgroups", "deny")
                _write("/proc/self/uid_map", f"{uid} {uid} 1")
                _write("/proc/self/gid_map", f"{gid} {gid} 1")
            else:
                uid = gid = UID_BASE + os.getpid()
        except OSError:
            return False, False
        job = os.fork()  # the job: PID 1 of the new PID namespace
        if job != 0:
            _keep(job)  # never returns
        try:
            self._build_root(tmp, uid, gid, disk_mb, max_files)
        except OSError:  # SetupError, or a directory or link the root could not hold
            return False, self._drop_privilege(user_namespace, uid, gid)
        return True, self._drop_privilege(user_namespace, uid, gid)

    def _build_root(self, tmp: str, uid: int, gid: int, disk_mb: int, max_files: int) -> None:
        # The new root is a tmpfs mounted over the job's host directory (empty, ours alone); the
        # job directory reappears at the same path inside it, so paths the job is told hold.
        root = tmp
        self._mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)  # nothing leaks back out
        root_options = f"size=1m,nr_inodes={_ROOT_INODES},mode=0755"
        self._mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, root_options)
        for path in self.binds:
            target = root + path
            if os.path.islink(path):
                _makedirs(os.path.dirname(target))
                os.symlink(os.readlink(path), target)
                continue
            if os.path.isdir(path):
                _makedirs(target)
            else:
                _makedirs(os.path.dirname(target))
                os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
            self._bind(path, target, _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        _makedirs(root + "/dev")
        for name in DEVICES:
            target = f"{root}/dev/{name}"
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
            # No remount: nosuid and noexec mean nothing on a device node.
            self._mount("/dev/" + name, target, None, _MS_BIND, None)
        _makedirs(root + "/proc")
        try:  # refused in a user namespace where the host's /proc is partly masked (containers)
            self._mount("proc", root + "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
        except SetupError:
            pass  # the job then has no /proc at all
        _makedirs(root + tmp)
        options = f"size={disk_mb}m,nr_inodes={max_files},mode=0700,uid={uid},gid={gid}"
        self._mount("tmpfs", root + tmp, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, options)
        self._mount(None, root, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, None)
        os.chdir(root)
        # pivot_root(".", "."): the old root ends up stacked under the new one, then detached
        # (as runc does); no directory for it is needed.
        if self.syscall(self.pivot_root_nr, b".", b".") != 0:
            raise SetupError(f"pivot_root: {os.strerror(self.ctypes.get_errno())}")
        if self.umount2(b".", _MNT_DETACH) != 0:
            raise SetupError(f"detaching the host's root: {os.strerror(self.ctypes.get_errno())}")
        os.chdir(tmp)

    def _bind(self, source: str, target: str, flags: int) -> None:
        self._mount(source, target, None, _MS_BIND | _MS_REC, None)
        kept = os.statvfs(source).f_flag
        flags |= sum(ms for st, ms in _KEPT_FLAGS if kept & st)
        self._mount(None, target, None, _MS_BIND | _MS_REMOUNT | flags, None)

    def _mount(
        self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None
    ) -> None:
        def b(text: str | None) -> bytes | None:
            return None if text is None else os.fsencode(text)

        if self.mount(b(source), b(target), b(fstype), flags, b(data)) != 0:
            raise SetupError(f"mount {source or ''} {target}: {os.strerror(self.ctypes.get_errno())}")

    def _drop_privilege(self, user_namespace: bool, uid: int, gid: int) -> bool:
        """Without a user namespace (as root): become ``uid``/``gid`` with no groups (the kernel
        then clears every capability). In one: clear the capabilities it gave. True when no
        capability is left."""
        try:
            if not user_namespace:
                os.setgroups([])
                os.setresgid(gid, gid, gid)
                os.setresuid(uid, uid, uid)
            elif self._capabilities(self.capset_nr) is None:  # all three sets emptied
                return False
        except OSError:
            return False
        data = self._capabilities(self.capget_nr)
        return data is not None and not any(data)

    def _capabilities(self, call: int) -> list[int] | None:
        """capget (the thread's effective, permitted and inheritable sets, two words each) or
        capset with all of them empty; None when the kernel refused."""
        c = self.ctypes
        header = (c.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)  # this thread
        data = (c.c_uint32 * 6)()
        if self.syscall(call, header, data) != 0:
            return None
        return list(data)


def _keep(job: int) -> None:
    """The keeper: wait for the job, then end as it ended; never returns."""
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the job's pipes: its death must read as EOF
    try:
        _pid, status = os.waitpid(job, 0)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig != signal.SIGKILL:
                signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)
    finally:
        os._exit(1)


def _read_only_paths() -> list[str]:
    """What the job's root shows read-only: the interpreter's standard library (the existing
    directories on ``sys.path`` inside its installation, site-packages aside) and the system's
    shared libraries; symlinks (``/lib`` on merged-/usr systems) are copied as symlinks."""
    prefixes = tuple({sys.base_prefix + "/", sys.base_exec_prefix + "/"})
    stdlib = [
        p
        for p in sys.path
        if p.startswith(prefixes)
        and os.path.isdir(p)
        and os.path.basename(p) not in ("site-packages", "dist-packages")
    ]
    system = [p for p in SYSTEM_LIBRARIES if os.path.lexists(p)]
    paths: list[str] = []
    for path in sorted(set(stdlib + system)):
        if not any(path.startswith(kept + "/") for kept in paths if not os.path.islink(kept)):
            paths.append(path)
    return paths


def _makedirs(path: str) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
