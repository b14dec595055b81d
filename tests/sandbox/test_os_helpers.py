"""The OS-level helpers both sandboxes share: frames, resource limits, the parent-death check."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading

import pytest

from factory.sandbox import os_helpers
from factory.sandbox.os_helpers import HEADER, frame, read_frame, set_limits, write_all


def _run(code: str) -> str:
    """The stdout of ``code`` run in a fresh interpreter (limits set there stay there)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    ).stdout


def test_frames_round_trip_through_a_pipe() -> None:
    r, w = os.pipe()
    payloads = [b"", b"x", bytes(range(256)) * 4000]  # the last one is bigger than the pipe
    writer = threading.Thread(target=lambda: [write_all(w, frame(p)) for p in payloads])
    writer.start()
    try:
        assert [read_frame(r, 1 << 20) for _ in payloads] == payloads
    finally:
        writer.join()
        os.close(w)
    assert read_frame(r, 1 << 20) is None  # end of file
    os.close(r)


def test_a_frame_over_the_bound_or_cut_short_reads_as_none() -> None:
    r, w = os.pipe()
    os.write(w, frame(b"12345"))
    assert read_frame(r, 4) is None
    os.write(w, HEADER.pack(10) + b"abc")
    os.close(w)
    assert read_frame(r, 100) is None
    os.close(r)


def test_frame_header_is_a_little_endian_u32() -> None:
    assert frame(b"ab") == (2).to_bytes(4, "little") + b"ab"


def test_set_limits_in_a_child() -> None:
    """Strict mode raises on an unknown limit; best effort skips it and sets the others."""
    code = (
        "import resource\n"
        "from factory.sandbox.os_helpers import set_limits\n"
        "set_limits([('RLIMIT_NOT_A_LIMIT', 1), ('RLIMIT_NOFILE', 50)], best_effort=True)\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE))\n"
        "try:\n"
        "    set_limits([('RLIMIT_NOT_A_LIMIT', 1)], best_effort=False)\n"
        "except ValueError:\n"
        "    print('refused')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.split("\n")[:2] == ["(50, 50)", "refused"]


def test_best_effort_ignores_a_limit_the_kernel_refuses() -> None:
    # More open files than fs.nr_open allows: refused even to root.
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    set_limits([("RLIMIT_NOFILE", 1 << 40)], best_effort=True)
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before
    with pytest.raises((ValueError, OSError)):
        set_limits([("RLIMIT_NOFILE", 1 << 40)], best_effort=False)


def test_die_with_parent_exits_when_the_parent_is_not_the_expected_one() -> None:
    code = (
        "import os\n"
        "from factory.sandbox.os_helpers import die_with_parent\n"
        "die_with_parent(None, os.getppid(), 3)\n"  # the parent it expects: goes on
        "die_with_parent(None, os.getppid() + 1, 7)\n"  # another one: exits with the code
        "raise SystemExit(0)\n"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 7


def test_typed_prctl_sets_the_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    code = (
        "import ctypes\n"
        "from factory.sandbox import os_helpers\n"
        "prctl = os_helpers.typed_prctl(ctypes.CDLL(None, use_errno=True))\n"
        "os_helpers.die_with_parent(prctl, None, 1)\n"
        "signal = ctypes.c_int()\n"
        "prctl(2, ctypes.addressof(signal), 0, 0, 0)\n"  # PR_GET_PDEATHSIG
        "print(signal.value)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.strip() == str(os_helpers.SIGKILL)
