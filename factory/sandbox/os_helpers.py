"""OS-level helpers shared by both sandboxes' processes: resource limits, the parent-death signal,
frames (a u32 little-endian length, then the payload), and how many workers the CPUs allow.

Standard library only and no package imports: the untrusted child (``untrusted/child.py``) runs
with ``-S -s -B -P``, without the package on ``sys.path``, and loads this file as the top-level
module ``os_helpers``; the trusted worker imports it as ``factory.sandbox.os_helpers``.

The functions a process keeps using once untrusted code runs in it (``frame``, ``write_all``,
``read_frame``) bind what they use as default arguments, so that code which patches builtins or
modules cannot change what they do.
"""

from __future__ import annotations

import os
import resource
import struct
from collections.abc import Callable, Iterable
from typing import Any

#: A frame's header: the payload's length, u32 little-endian.
HEADER = struct.Struct("<I")

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
SIGKILL = 9  # its number on Linux, the one platform with PR_SET_PDEATHSIG (no ``signal`` import)


# --- frames --------------------------------------------------------------------------------------


def frame(
    payload: bytes, _pack: Callable[[int], bytes] = HEADER.pack, _len: Callable[[Any], int] = len
) -> bytes:
    """``payload`` with its header."""
    return _pack(_len(payload)) + payload


def write_all(
    fd: int,
    data: bytes | bytearray,
    _write: Callable[[int, Any], int] = os.write,
    _view: type[memoryview] = memoryview,
) -> None:
    """Write all of ``data`` to the (blocking) descriptor ``fd``."""
    view = _view(data)
    while view:
        view = view[_write(fd, view) :]


def read_exact(
    fd: int,
    n: int,
    _read: Callable[[int, int], bytes] = os.read,
    _len: Callable[[Any], int] = len,
    _min: Callable[..., int] = min,
    _join: Callable[[Iterable[bytes]], bytes] = b"".join,
) -> bytes | None:
    """Exactly ``n`` bytes from the (blocking) descriptor ``fd``; None at end of file."""
    chunks = []
    while n:
        chunk = _read(fd, _min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= _len(chunk)
    return _join(chunks)


def read_frame(
    fd: int,
    max_size: int,
    _read_exact: Callable[[int, int], bytes | None] = read_exact,
    _unpack: Callable[[bytes], tuple[int]] = HEADER.unpack,
    _header_size: int = HEADER.size,
) -> bytes | None:
    """The payload of the next frame on the (blocking) descriptor ``fd``; None at end of file or
    when the frame is longer than ``max_size``."""
    head = _read_exact(fd, _header_size)
    if head is None:
        return None
    (size,) = _unpack(head)
    if size > max_size:
        return None
    return _read_exact(fd, size)


# --- limits --------------------------------------------------------------------------------------


def set_limits(limits: Iterable[tuple[str, int]], *, best_effort: bool) -> None:
    """Set each named resource limit (``("RLIMIT_AS", bytes)``...) to its value, soft and hard
    alike, in order. ``best_effort``: skip a limit this platform lacks or refuses; else raise."""
    for name, value in limits:
        limit = getattr(resource, name, None)
        if limit is None:
            if best_effort:
                continue
            raise ValueError(f"this platform has no resource limit {name}")
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            if not best_effort:
                raise


def typed_prctl(libc: Any) -> Callable[..., int]:
    """``libc.prctl`` (``libc``: a ``ctypes.CDLL``) with its argument types set: an int option and
    four unsigned longs."""
    import ctypes  # the caller has it loaded already: it made ``libc``

    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    prctl.restype = ctypes.c_int
    return prctl


def die_with_parent(prctl: Callable[..., int] | None, parent_pid: int | None, exit_code: int) -> None:
    """Linux: get SIGKILL when the parent dies (``PR_SET_PDEATHSIG`` through ``prctl``, skipped
    when None), then exit with ``exit_code`` if it died before that took effect: when the
    parent is no longer ``parent_pid`` or, with None, when it is init (pid 1)."""
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    parent = os.getppid()
    if (parent == 1) if parent_pid is None else (parent != parent_pid):
        os._exit(exit_code)


# --- workers -------------------------------------------------------------------------------------


def default_workers() -> int:
    """CPUs this process may run on (the affinity mask, which containers narrow), at least 1: the
    trusted pool's workers and the untrusted scoring's threads."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)
