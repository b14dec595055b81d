"""Bootstrap of one untrusted-code process: run as a script by ``runner`` (``main``), or called in
a job forked by the fork server (``serve``, see ``zygote``).

Standard library only (the interpreter runs with ``-S -s -B -P``: no site-packages, no bytecode
writes, no script directory on ``sys.path``), plus the sandboxes' shared ``os_helpers``, loaded
from its file in the directory above, and ``namespaces`` beside it. Order matters; nothing
untrusted exists before step 5:

1. namespaces (``namespaces``): new mount, PID, IPC, UTS and network namespaces under a private
   read-only root with a noexec, size-limited job directory, then no privilege (a uid of the
   job's own as root, or no capabilities); this forks, and the first process waits outside as
   the job's keeper;
2. rlimits (address space, CPU seconds, threads, file size, open files, no core files);
3. lockdown through ``ctypes`` (x86_64 and aarch64 Linux, best effort): parent-death signal,
   ``no_new_privs``, Landlock (file-system changes only beneath the temporary directory, no TCP,
   no signals out of the job; Linux ≥ 5.13) and a seccomp filter refusing sockets, process
   creation (threads allowed), exec, signals to other processes, ptrace, device nodes, links,
   namespaces and mounts, raised limits, real-time scheduling, CPU affinity, I/O priority and a
   few dangerous ioctls; then ``ctypes`` is dropped;
4. an audit hook refusing what seccomp cannot judge by path (writes outside the temporary
   directory, reads and listings of other processes' ``/proc`` entries) and, again, sockets, processes,
   signals, ``ctypes`` and introspection that could reach the hook. A refused event ends the
   process at once with ``VIOLATION_EXIT``: nothing to catch, no traceback that leads back here;
5. the job (code text) is read from the request pipe, executed, and then the process answers
   call requests ``(name, args, kwargs)`` with the ``repr`` of the result or the exception's type.

Nothing here is secret: the parent never trusts what this process says beyond "this call
returned this literal value" (see the threat model in ``factory.sandbox.untrusted.runner``).

argv: request_fd response_fd tmp_dir memory_mb cpu_s fsize_mb nofile parent_pid
Frames both ways (``os_helpers``: 4-byte little-endian length, then the payload). Requests are
``marshal`` data (written by the trusted parent). Responses are one kind byte plus UTF-8 text:
``R`` ready (callable names, one a line), ``L`` load error (exception type), ``V`` value (the
repr of a plain literal), ``O`` opaque value (not a literal; ``1`` or ``0``, its truthiness),
``E`` exception (type names of the MRO, one a line), ``X`` no usable answer.
"""

from __future__ import annotations

import marshal
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

# The OS helpers shared with the trusted worker (factory/sandbox/os_helpers.py), found in the
# directory above; the package itself is not importable here (mypy cannot follow the insertion).
_SHARED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _SHARED)
import os_helpers  # type: ignore[import-not-found]  # noqa: E402

sys.path.remove(_SHARED)  # a completion's ``import trusted`` must not find the package's modules
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
import namespaces  # type: ignore[import-not-found]  # noqa: E402

sys.path.remove(_HERE)

VIOLATION_EXIT = 86
# The job directory's quota (a tmpfs in the job's own root; one file is also capped at the
# caller's fsize) and its inodes (the audit hook also counts creations, up to 64).
JOB_DISK_MB = 16
JOB_INODES = 128
# Threads a job may run at once (the main thread included), where it has a uid of its own.
JOB_TASKS = 16
_FRAME_MAX = 1 << 26

# seccomp / BPF constants (linux/seccomp.h, linux/filter.h, linux/audit.h)
_LD_ABS_W = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL = 0x80000000
_EPERM = 1
_ENOSYS = 38
_RET_EPERM = 0x00050000 | _EPERM
_RET_ENOSYS = 0x00050000 | _ENOSYS
_CLONE_THREAD = 0x00010000
_AT_FDCWD = 0xFFFFFF9C  # -100 as u32
_OPEN_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# ioctl requests refused: FS_IOC_SETFLAGS (64/32-bit), FS_IOC_FSSETXATTR, TIOCSTI, TIOCLINUX.
_DENIED_IOCTLS = (0x40086602, 0x40046602, 0x401C5820, 0x5412, 0x541C)

# Syscalls refused outright (EPERM), by name; names a platform lacks are skipped.
_DENIED = (
    "socket socketpair fork vfork execve execveat tkill pidfd_send_signal pidfd_open pidfd_getfd "
    "ptrace process_vm_readv process_vm_writev mknod mknodat link symlink linkat symlinkat "
    "setrlimit unshare setns mount umount2 pivot_root chroot open_tree move_mount fsopen fsconfig "
    "fsmount fspick mount_setattr reboot swapon swapoff init_module finit_module delete_module "
    "kexec_load kexec_file_load bpf perf_event_open add_key request_key keyctl userfaultfd "
    "io_uring_setup io_uring_enter io_uring_register name_to_handle_at open_by_handle_at acct "
    "settimeofday clock_settime adjtimex clock_adjtime sethostname setdomainname iopl ioperm "
    "quotactl syslog vhangup fanotify_init openat2 setpriority sched_setparam "
    "sched_setscheduler sched_setattr"
).split()
# Syscalls allowed only when the target pid (argument 0) is this process.
_KILL_LIKE = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")

_SYSCALLS = {
    "x86_64": {
        "socket": 41, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58, "execve": 59,
        "kill": 62, "ptrace": 101, "syslog": 103, "rt_sigqueueinfo": 129, "mknod": 133,
        "link": 86, "symlink": 88, "setpriority": 141, "sched_setparam": 142,
        "sched_setscheduler": 144, "vhangup": 153, "pivot_root": 155, "adjtimex": 159,
        "setrlimit": 160, "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165,
        "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170,
        "setdomainname": 171, "iopl": 172, "ioperm": 173, "init_module": 175,
        "delete_module": 176, "quotactl": 179, "tkill": 200, "clock_settime": 227,
        "tgkill": 234, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250,
        "openat": 257, "mknodat": 259, "linkat": 265, "symlinkat": 266, "unshare": 272,
        "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "fanotify_init": 300,
        "prlimit64": 302, "name_to_handle_at": 303, "open_by_handle_at": 304,
        "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311,
        "finit_module": 313, "sched_setattr": 314, "kexec_file_load": 320, "bpf": 321,
        "execveat": 322, "userfaultfd": 323, "ioctl": 16, "sched_setaffinity": 203,
        "ioprio_set": 251,
    },
    "aarch64": {
        "ioctl": 29, "mknodat": 33, "symlinkat": 36, "linkat": 37, "umount2": 39, "mount": 40,
        "pivot_root": 41, "chroot": 51, "openat": 56, "vhangup": 58, "quotactl": 60, "acct": 89,
        "unshare": 97, "kexec_load": 104, "init_module": 105, "delete_module": 106,
        "clock_settime": 112, "syslog": 116, "ptrace": 117, "sched_setparam": 118,
        "sched_setscheduler": 119, "kill": 129, "tkill": 130, "tgkill": 131,
        "rt_sigqueueinfo": 138, "setpriority": 140, "reboot": 142, "sethostname": 161,
        "setdomainname": 162, "setrlimit": 164, "settimeofday": 170, "adjtimex": 171,
        "socket": 198, "socketpair": 199, "add_key": 217, "request_key": 218, "keyctl": 219,
        "clone": 220, "execve": 221, "swapon": 224, "swapoff": 225, "rt_tgsigqueueinfo": 240,
        "perf_event_open": 241, "prlimit64": 261, "fanotify_init": 262,
        "name_to_handle_at": 264, "open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268,
        "process_vm_readv": 270, "process_vm_writev": 271, "finit_module": 273,
        "sched_setattr": 274, "bpf": 280, "execveat": 281, "userfaultfd": 282,
        "kexec_file_load": 294, "sched_setaffinity": 122, "ioprio_set": 30,
    },
}  # fmt: skip
# Syscalls numbered alike on every architecture (added after the tables were unified).
_COMMON = {
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_open": 434, "clone3": 435,
    "openat2": 437, "pidfd_getfd": 438, "mount_setattr": 442,
}  # fmt: skip
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_SYSCALL_BIT = 0x40000000


def _bpf_program(machine: str, pid: int, allow_exec: bool = False) -> list[tuple[int, int, int, int]]:
    """A seccomp filter for ``machine`` as (code, jt, jf, k) tuples, jumps resolved from labels;
    ``allow_exec``: execve is not refused (``exec_child``, whose Landlock allows only its executables)."""
    nr = {**_SYSCALLS[machine], **_COMMON}
    prog: list[list] = []  # [code, jt, jf, k] with jt/jf possibly labels

    def ld(offset: int) -> None:
        prog.append([_LD_ABS_W, 0, 0, offset])

    def jeq(k: int, jt, jf) -> None:
        prog.append([_JEQ_K, jt, jf, k])

    def ret(k: int) -> None:
        prog.append([_RET_K, 0, 0, k])

    labels: dict[str, int] = {}
    ld(4)
    jeq(_AUDIT_ARCH[machine], 0, "kill")
    ld(0)
    if machine == "x86_64":
        prog.append([0x35, "deny", 0, _X32_SYSCALL_BIT])  # JGE: the x32 ABI is refused
    for name in _DENIED:
        if name in nr and not (allow_exec and name in ("execve", "execveat")):
            jeq(nr[name], "deny", 0)
    jeq(nr["clone"], "clone", 0)
    jeq(nr["clone3"], "enosys", 0)  # the C library falls back to clone, which is checked
    for name in _KILL_LIKE:
        jeq(nr[name], "kill_like", 0)
    jeq(nr["prlimit64"], "prlimit", 0)
    jeq(nr["openat"], "openat", 0)
    jeq(nr["ioctl"], "ioctl", 0)
    ret(_RET_ALLOW)
    labels["clone"] = len(prog)
    ld(16)  # args[0] low word: clone flags
    prog.append([_JSET_K, "allow", "deny", _CLONE_THREAD])
    labels["kill_like"] = len(prog)
    ld(16)  # args[0] low word: the target pid (the kernel reads a 32-bit pid_t)
    jeq(pid, "allow", "deny")
    labels["prlimit"] = len(prog)
    ld(16 + 2 * 8)  # args[2]: new limits pointer, both halves must be NULL
    jeq(0, 0, "deny")
    ld(16 + 2 * 8 + 4)
    jeq(0, "allow", "deny")
    labels["openat"] = len(prog)
    ld(16)  # args[0] low word: dirfd; writes relative to another directory are refused
    jeq(_AT_FDCWD, "allow", 0)
    ld(16 + 2 * 8)  # args[2]: flags
    prog.append([_JSET_K, "deny", "allow", _OPEN_WRITE_FLAGS])
    labels["ioctl"] = len(prog)
    ld(16 + 8)  # args[1] low word: the request (the kernel reads an unsigned int)
    for req in _DENIED_IOCTLS:
        jeq(req, "deny", 0)
    ret(_RET_ALLOW)
    labels["allow"] = len(prog)
    ret(_RET_ALLOW)
    labels["deny"] = len(prog)
    ret(_RET_EPERM)
    labels["enosys"] = len(prog)
    ret(_RET_ENOSYS)
    labels["kill"] = len(prog)
    ret(_RET_KILL)

    out = []
    for i, (code, jt, jf, k) in enumerate(prog):
        jt = labels[jt] - i - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - i - 1 if isinstance(jf, str) else jf
        if not (0 <= jt < 256 and 0 <= jf < 256):
            raise ValueError("seccomp jump out of range")
        out.append((code, jt, jf, k))
    return out


def prepare_lockdown(executables: tuple[str, ...] = ()) -> tuple[Any, ...] | None:
    """What ``_isolate`` and ``_lockdown`` need, built once: (prctl, filter array or None, address
    of the filter program, index of the instruction that holds this process's pid, Landlock or
    None, ``namespaces.Namespaces`` or None), or None without ctypes. ``executables``: files the
    job may exec (``exec_child``: node and its loader); seccomp then allows exec and Landlock
    allows only these.

    A fresh process builds it in ``serve``; the fork server builds it before forking, and
    each job only writes its own pid into its copy of the array.
    """
    try:
        import ctypes
    except ImportError:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = os_helpers.typed_prctl(libc)
    machine = os.uname().machine
    if machine not in _SYSCALLS:
        return prctl, None, 0, 0, None, None
    allow_exec = bool(executables)
    program = _bpf_program(machine, 0, allow_exec)
    other = _bpf_program(machine, 1, allow_exec)
    pid_at = next(i for i, (a, b) in enumerate(zip(program, other, strict=True)) if a != b)

    class SockFilter(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_ushort),
            ("jt", ctypes.c_ubyte),
            ("jf", ctypes.c_ubyte),
            ("k", ctypes.c_uint),
        ]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    filters = (SockFilter * len(program))(*[SockFilter(*ins) for ins in program])
    fprog = SockFprog(len(program), filters)
    # The program structure must outlive its address: keep it on the array (ctypes objects take
    # attributes at run time; their stub declares none).
    filters._execverify_fprog = fprog  # type: ignore[attr-defined]
    try:
        isolation = namespaces.Namespaces(ctypes)
    except (OSError, AttributeError):
        isolation = None
    landlock = _prepare_landlock(ctypes, libc, executables)
    if executables and landlock is None:
        # No exec without the Landlock rule that limits it: no seccomp either, reported missing.
        return prctl, None, 0, 0, None, isolation
    return prctl, filters, ctypes.addressof(fprog), pid_at, landlock, isolation


# Landlock (linux/landlock.h): syscalls numbered alike on every architecture, access rights.
_LANDLOCK_CREATE, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT = 444, 445, 446
_LL_EXECUTE = 1 << 0
_LL_WRITES = (1 << 1) | sum(1 << b for b in range(4, 13))  # write file; remove, make anything
_LL_REFER, _LL_TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
_LL_NET_TCP = (1 << 0) | (1 << 1)  # bind, connect (ABI 4)
_LL_SCOPES = (1 << 0) | (1 << 1)  # abstract unix sockets, signals (ABI 6)


class _Landlock:
    """A Landlock ruleset, prepared once: file-system changes only beneath one directory, no TCP,
    no signals or abstract sockets outside the domain. It holds in the kernel whatever the
    process does afterwards, ctypes included (the audit hook is Python-level)."""

    def __init__(self, ctypes: Any, libc: Any, executables: tuple[str, ...] = ()) -> None:
        syscall = libc.syscall
        syscall.restype = ctypes.c_long
        syscall.argtypes = [ctypes.c_long] * 5
        abi = syscall(_LANDLOCK_CREATE, 0, 0, 1, 0)  # LANDLOCK_CREATE_RULESET_VERSION
        if abi < 1:
            raise OSError("Landlock is not available")
        fs = _LL_WRITES | (_LL_REFER if abi >= 2 else 0) | (_LL_TRUNCATE if abi >= 3 else 0)

        class RulesetAttr(ctypes.Structure):
            _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]

        class PathBeneath(ctypes.Structure):
            _pack_ = 1
            _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

        # With executables, exec is handled too: allowed for them alone.
        handled = fs | (_LL_EXECUTE if executables else 0)
        self.attr = RulesetAttr(handled, _LL_NET_TCP if abi >= 4 else 0, _LL_SCOPES if abi >= 6 else 0)
        self.executables = executables
        self.exec_rule = PathBeneath(_LL_EXECUTE, -1)
        self.exec_rule_address = ctypes.addressof(self.exec_rule)
        self.attr_size = 8 if abi < 4 else 16 if abi < 6 else 24
        self.rule = PathBeneath(fs, -1)
        self.attr_address = ctypes.addressof(self.attr)
        self.rule_address = ctypes.addressof(self.rule)
        self.syscall = syscall

    def apply(self, directory: str) -> bool:
        """Restrict this process (needs no_new_privs); False when the kernel refused."""
        ruleset = self.syscall(_LANDLOCK_CREATE, self.attr_address, self.attr_size, 0, 0)
        if ruleset < 0:
            return False
        try:
            self.rule.parent_fd = os.open(directory, os.O_PATH | os.O_CLOEXEC)
            try:
                if self.syscall(_LANDLOCK_ADD_RULE, ruleset, 1, self.rule_address, 0) != 0:
                    return False  # 1: LANDLOCK_RULE_PATH_BENEATH
            finally:
                os.close(self.rule.parent_fd)
            for path in self.executables:
                self.exec_rule.parent_fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                try:
                    if self.syscall(_LANDLOCK_ADD_RULE, ruleset, 1, self.exec_rule_address, 0) != 0:
                        return False
                finally:
                    os.close(self.exec_rule.parent_fd)
            return self.syscall(_LANDLOCK_RESTRICT, ruleset, 0, 0, 0) == 0
        finally:
            os.close(ruleset)


def _prepare_landlock(ctypes: Any, libc: Any, executables: tuple[str, ...] = ()) -> _Landlock | None:
    try:
        return _Landlock(ctypes, libc, executables)
    except (OSError, AttributeError):
        return None


def _isolate(prepared: tuple[Any, ...] | None, parent_pid: int, tmp: str) -> tuple[bool, bool]:
    """Parent-death signal, then the job's namespaces and private root (``namespaces``): returns
    in the job, with whether (the namespaces, no privilege) are in force. Forks: the process
    that called it waits outside and ends as the job ends."""
    if prepared is None:
        return False, False
    prctl, isolation = prepared[0], prepared[5]
    os_helpers.die_with_parent(prctl, parent_pid, VIOLATION_EXIT)
    if isolation is None:
        return False, False
    return isolation.enter(tmp, JOB_DISK_MB, JOB_INODES)


def _lockdown(parent_pid: int, prepared: tuple[Any, ...] | None, tmp: str | None = None) -> tuple[bool, bool]:
    """Parent-death signal, no_new_privs, Landlock beneath ``tmp`` (when given and the kernel
    has it) and the seccomp filter; returns whether (seccomp, Landlock) are active.

    ``parent_pid`` is 0 in a job of its own PID namespace (its parent lies outside)."""
    try:
        if prepared is None:
            return False, False
        prctl, filters, fprog_address, pid_at, landlock, _isolation = prepared
        os_helpers.die_with_parent(prctl, parent_pid, VIOLATION_EXIT)
        if filters is None:
            return False, False
        filters[pid_at].k = os.getpid()
        if prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            return False, False
        landlocked = landlock is not None and tmp is not None and landlock.apply(tmp)
        return prctl(22, 2, fprog_address, 0, 0) == 0, landlocked  # PR_SET_SECCOMP, MODE_FILTER
    finally:
        prepared = landlock = _isolation = None
        for name in [m for m in sys.modules if m.split(".")[0] in ("ctypes", "_ctypes")]:
            del sys.modules[name]


def _make_hook(tmp: str, pid: int, seccomp: bool):
    """The audit hook. Everything it uses is bound as a default argument (an immutable tuple),
    so patching modules or builtins cannot change its behaviour; it only calls C functions on
    objects of exact built-in types, so no completion code ever runs inside it."""
    import posix

    denied = frozenset(
        {
            "os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn", "os.system",
            "os.startfile", "subprocess.Popen", "pty.spawn", "os.killpg", "os.link",
            "os.symlink", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
            "sys._current_frames", "sys._current_exceptions", "resource.setrlimit",
            "resource.prlimit", "sqlite3.enable_load_extension", "sqlite3.load_extension",
            "syslog.openlog", "syslog.syslog", "webbrowser.open", "os.add_dll_directory",
        }
    )  # fmt: skip
    denied_prefixes = ("socket.", "ctypes.", "_ctypes.", "winreg.", "_winapi.", "msvcrt.")
    # Native modules that act on the system without audit events. ``_posixsubprocess`` forks
    # unaudited, so it is refused where seccomp cannot stop the fork itself.
    imports_denied = {
        "ctypes", "_ctypes", "_dbm", "_gdbm", "readline", "_posixshmem", "_multiprocessing",
        "_tkinter", "_curses",
    }  # fmt: skip
    if not seccomp:
        imports_denied.add("_posixsubprocess")
    denied_imports = frozenset(imports_denied)
    # event -> (positions of path arguments, positions of dir_fd arguments, int paths allowed)
    path_events = {
        "os.remove": ((0,), (1,), False),
        "os.rmdir": ((0,), (1,), False),
        "os.mkdir": ((0,), (2,), False),
        "os.rename": ((0, 1), (2, 3), False),
        "os.chmod": ((0,), (2,), False),
        "os.chown": ((0,), (3,), False),
        "os.utime": ((0,), (3,), False),
        "os.truncate": ((0,), (), True),
        "os.setxattr": ((0,), (), False),
        "os.removexattr": ((0,), (), False),
        "os.chflags": ((0,), (), False),
        "os.lchflags": ((0,), (), False),
        "sqlite3.connect": ((0,), (), False),
    }
    read_ok = frozenset(
        {
            "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full",
            "/proc/self/status", "/proc/self/stat", "/proc/self/statm", "/proc/self/maps",
            "/proc/self/limits", "/proc/self/cmdline", "/proc/cpuinfo", "/proc/meminfo",
            "/proc/version", "/proc/loadavg", "/proc/uptime", "/proc/stat",
        }
    )  # fmt: skip
    max_creations = 64

    def norm(p, strict=False, _getcwd=posix.getcwd, _type=type, _str=str, _bytes=bytes):
        # Absolute, lexically normalised text of an exact str/bytes path, else None. ``strict``
        # (paths written to) also refuses ``..``: another thread could move a directory between
        # this check and the kernel's own walk, and ``..`` would then climb somewhere else.
        t = _type(p)
        if t is _bytes:
            p = p.decode("utf-8", "surrogateescape")
        elif t is not _str:
            return None
        if not p.startswith("/"):
            p = _getcwd() + "/" + p
        parts: list[str] = []
        for seg in p.split("/"):
            if seg == "" or seg == ".":
                continue
            if seg == "..":
                if strict:
                    return None
                if parts:
                    parts.pop()
                continue
            parts.append(seg)
        return "/" + "/".join(parts)

    def hook(
        event,
        args,
        _tmp_prefix=tmp + "/",
        _pid=pid,
        _seccomp=seccomp,
        _norm=norm,
        _exit=posix._exit,
        _type=type,
        _str=str,
        _int=int,
        _tuple=tuple,
        _len=len,
        _denied=denied,
        _denied_prefixes=denied_prefixes,
        _denied_imports=denied_imports,
        _path_events=path_events,
        _read_ok=read_ok,
        _list_ok=("/proc/self/fd", f"/proc/{pid}/fd"),
        _write_flags=_OPEN_WRITE_FLAGS,
        _creat=os.O_CREAT,
        _count=[0],  # noqa: B006 - the hook's own counter, unreachable from outside
        _max=max_creations,
        _code=VIOLATION_EXIT,
    ):
        # Events raised by the interpreter have an exact str name and a tuple of arguments;
        # anything else was faked through sys.audit and has no effect, so it is ignored.
        if _type(event) is not _str or _type(args) is not _tuple:
            return
        try:
            if event == "open":
                path, flags = args[0], args[2]
                if _type(path) is _int:
                    return
                if _type(flags) is not _int:
                    _exit(_code)
                if flags & _write_flags:
                    n = _norm(path, True)
                    # The directory itself appears when an opener makes the file (tempfile);
                    # the kernel refuses to open a directory for writing anyway.
                    if n is None or not (n.startswith(_tmp_prefix) or n == _tmp_prefix[:-1]):
                        _exit(_code)
                    if not _seccomp and not (_type(path) is _str and path.startswith("/")):
                        _exit(_code)  # without seccomp, an open relative to a dir_fd looks alike
                    if flags & _creat:
                        _count[0] += 1
                        if _count[0] > _max:
                            _exit(_code)
                    return
                n = _norm(path)
                if n is None:
                    _exit(_code)
                if (n.startswith("/proc/") or n.startswith("/dev/")) and n not in _read_ok:
                    _exit(_code)  # other processes' entries, devices, /proc/self/root links
                return
            if event in _denied or event.startswith(_denied_prefixes):
                _exit(_code)
            if event == "import":
                name = args[0]
                if _type(name) is not _str or name.split(".", 1)[0] in _denied_imports:
                    _exit(_code)
                return
            if event == "os.chdir":
                # The working directory stays inside, so relative paths resolve inside.
                n = _norm(args[0], True)
                if n is None or not (n == _tmp_prefix[:-1] or n.startswith(_tmp_prefix)):
                    _exit(_code)
                return
            if event == "os.kill":
                if _type(args[0]) is not _int or args[0] != _pid:
                    _exit(_code)
                return
            if event == "os.listdir" or event == "os.scandir":
                # Listing /proc itself is fine; inside it, only this process's descriptors.
                p = args[0] if _len(args) else None
                if _type(p) is _int:
                    return  # a descriptor, opened (and so checked) before
                n = _norm("." if p is None else p)
                if n is None or (n.startswith("/proc/") and n not in _list_ok):
                    _exit(_code)
                return
            spec = _path_events.get(event)
            if spec is None:
                return
            paths, dir_fds, int_ok = spec
            for i in dir_fds:
                if i < _len(args) and not (_type(args[i]) is _int and args[i] == -1):
                    _exit(_code)
            for i in paths:
                p = args[i]
                if _type(p) is _int and int_ok:
                    continue
                if event == "sqlite3.connect" and _type(p) is _str and p == ":memory:":
                    continue
                n = _norm(p, True)
                if n is None or not n.startswith(_tmp_prefix):
                    _exit(_code)
            if event == "os.mkdir":
                _count[0] += 1
                if _count[0] > _max:
                    _exit(_code)
        except BaseException:  # noqa: BLE001 - a malformed event never leaves this frame
            _exit(_code)

    return hook


# The harness's I/O binds what it uses as default arguments (as ``os_helpers`` does), so a
# completion that patches builtins or this module (it is ``__main__``) breaks only its own
# answers, not the framing.
def _read_frame(fd: int, _read=os_helpers.read_frame, _max=_FRAME_MAX) -> bytes | None:
    return _read(fd, _max)


def _send(
    fd: int,
    kind: bytes,
    text: str,
    _frame=os_helpers.frame,
    _write=os_helpers.write_all,
    _str=str,
    _type=type,
) -> None:
    if _type(text) is not _str:
        text = ""
    _write(fd, _frame(kind + text.encode("utf-8", "backslashreplace")))


def _set_limits(memory_mb: int, cpu_s: int, fsize_mb: int, nofile: int, tasks: int) -> None:
    mb = 1 << 20
    limits = [
        ("RLIMIT_AS", memory_mb * mb),
        ("RLIMIT_CPU", cpu_s),
        ("RLIMIT_FSIZE", fsize_mb * mb),
        ("RLIMIT_NOFILE", nofile),
        ("RLIMIT_CORE", 0),
        # Counted per uid, and not enforced for root: a thread cap where the job has a uid of
        # its own, else none (0; seccomp and the audit hook stop forks).
        ("RLIMIT_NPROC", tasks),
    ]
    os_helpers.set_limits(limits, best_effort=True)


def _exception_names(exc: BaseException) -> str:
    try:
        return "\n".join(str(c.__name__) for c in type(exc).__mro__)[:4096]
    except BaseException:
        return "BaseException"


def main() -> None:
    """The per-process path: arguments from argv, then ``serve``."""
    req_fd, resp_fd = int(sys.argv[1]), int(sys.argv[2])
    memory_mb, cpu_s, fsize_mb, nofile = (int(x) for x in sys.argv[4:8])
    serve(req_fd, resp_fd, sys.argv[3], (memory_mb, cpu_s, fsize_mb, nofile), int(sys.argv[8]))


def serve(
    req_fd: int,
    resp_fd: int,
    tmp: str,
    limits: tuple[int, int, int, int],
    parent_pid: int,
    lockdown_box: list[Any] | None = None,
    _exit=os._exit,
) -> None:
    """Set up the limits, the lockdown and the hook, then serve the job; never returns.

    ``limits`` is (memory_mb, cpu_s, fsize_mb, nofile). The caller has already made this process
    the leader of a new session, with ``tmp`` as its working directory and only stdin, stdout,
    stderr (all /dev/null) and the two pipes open. ``parent_pid`` is the process whose death
    must end this one (the scorer, or the fork server). ``lockdown_box`` holds
    ``prepare_lockdown()``'s result when the caller built it in advance; it is emptied, so that
    once the lockdown is done nothing in this process refers to its ``prctl`` any more.
    """
    try:
        prepared = lockdown_box.pop() if lockdown_box else prepare_lockdown()
        layers = confine(prepared, parent_pid, tmp, limits)
        del prepared
        # The layers in force, told before any of the job's code runs (the parent's policy).
        _send(resp_fd, b"K", layers)
        frame = _read_frame(req_fd)
        if frame is None:
            os._exit(0)
        job = marshal.loads(frame)
        code_text, loose = job["code"], bool(job.get("loose"))
        del frame, job
        _serve_job(req_fd, resp_fd, tmp, "seccomp" in layers.split(), code_text, loose)
    finally:
        _exit(0)  # bound at definition: a completion that patches ``os`` cannot make this return


def confine(
    prepared: tuple[Any, ...] | None, parent_pid: int, tmp: str, limits: tuple[int, int, int, int]
) -> str:
    """Steps 1-3 (module docstring): namespaces, rlimits, lockdown; returns in the job, with the
    names of the kernel layers in force, space-separated (``serve``'s and ``exec_child``'s)."""
    isolated, unprivileged = _isolate(prepared, parent_pid, tmp)
    in_own_pid_namespace = os.getpid() == 1
    own_uid = unprivileged and os.getuid() >= namespaces.UID_BASE
    _set_limits(*limits, JOB_TASKS if own_uid else 0)
    seccomp, landlock = _lockdown(0 if in_own_pid_namespace else parent_pid, prepared, tmp)
    layers = {"namespaces": isolated, "unprivileged": unprivileged, "seccomp": seccomp, "landlock": landlock}
    return " ".join(name for name, on in layers.items() if on)


def _serve_job(req_fd: int, resp_fd: int, tmp: str, seccomp: bool, code_text: str, loose: bool) -> None:
    import builtins

    namespace: dict[str, Any] = {"__name__": "__solution__", "__builtins__": builtins}
    sys.addaudithook(_make_hook(tmp, os.getpid(), seccomp))
    sys.argv = ["solution"]
    try:
        exec(compile(code_text, "<solution>", "exec"), namespace)
    except BaseException as exc:  # noqa: BLE001 - anything at load time means "did not load"
        _send(resp_fd, b"L", _exception_names(exc))
        os._exit(0)
    names = []
    for key, value in list(namespace.items()):
        try:
            if type(key) is str and callable(value):
                names.append(key)
        except BaseException:
            pass
    _send(resp_fd, b"R", "\n".join(names))
    while True:
        frame = _read_frame(req_fd)
        if frame is None:
            os._exit(0)
        name, args, kwargs = marshal.loads(frame)
        try:
            value = namespace[name](*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001
            _send(resp_fd, b"E", _exception_names(exc))
            continue
        try:
            text = repr(_plain(value, 0, loose))
        except _NotPlain:
            try:
                _send(resp_fd, b"O", "1" if value else "0")
            except BaseException:  # noqa: BLE001
                _send(resp_fd, b"X", "")
            continue
        except BaseException:  # noqa: BLE001
            _send(resp_fd, b"X", "")
            continue
        _send(resp_fd, b"V", text)


class _NotPlain(Exception):
    """The value is not made of built-in literal types."""


_SCALARS = (type(None), bool, int, float, complex, str, bytes)
# Base-class conversions that read the underlying data, never an overridden method.
_BASES: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (int, int.__int__),
    (float, float.__float__),
    (complex, complex.__complex__),
    (str, str.__str__),
    (bytes, bytes.__bytes__),
    (list, lambda v: list(list.__iter__(v))),
    (tuple, lambda v: tuple(tuple.__iter__(v))),
    (dict, lambda v: dict(dict.items(v))),
    (set, lambda v: set(set.__iter__(v))),
    (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
)


def _plain(value, depth: int, loose: bool):
    """``value`` rebuilt from exact built-in literal types; raises _NotPlain otherwise.

    Strict mode (``call_function``) accepts exact types only. Loose mode (unit tests) also
    turns instances of built-in subclasses (Counter, OrderedDict, namedtuple) into their base
    type, which compares equal to literals just as the original would.
    """
    if depth > 100:
        raise _NotPlain
    t = type(value)
    if t in _SCALARS:
        return value
    if t is list or t is tuple or t is set or t is frozenset:
        return t(_plain(v, depth + 1, loose) for v in value)
    if t is dict:
        return {_plain(k, depth + 1, loose): _plain(v, depth + 1, loose) for k, v in value.items()}
    if loose:
        for base, convert in _BASES:
            if isinstance(value, base):
                return _plain(convert(value), depth + 1, loose)
    raise _NotPlain


if __name__ == "__main__":
    main()
