"""The untrusted sandbox's namespaces and private root (``factory/sandbox/untrusted/namespaces``),
entered by a bare interpreter as the fork server's jobs do, both ways: as root switching to a uid
of the job's own, and in a user namespace (the way a non-root scorer goes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from factory.sandbox.untrusted import namespaces

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or os.uname().machine not in ("x86_64", "aarch64"),
    reason="namespaces are Linux's; the sandbox binds x86_64 and aarch64",
)

# Enters the namespaces in a bare interpreter (as the zygote's jobs run), then reports what the
# job sees as one JSON line on stdout.
PROBE = r"""
import ctypes, errno, importlib.util, json, mmap, os, sys
spec = importlib.util.spec_from_file_location("namespaces", sys.argv[1])
namespaces = importlib.util.module_from_spec(spec)
spec.loader.exec_module(namespaces)
tmp, user_namespace = sys.argv[2], {"0": False, "1": True, "": None}[sys.argv[3]]
if sys.argv[4] == "drop_sys_admin":  # as in a container: root without CAP_SYS_ADMIN (bit 21)
    header, data = (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)()
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.capget(header, data) == 0
    data[0] &= ~(1 << 21)
    data[1] &= ~(1 << 21)
    assert libc.capset(header, data) == 0
    assert libc.unshare(0x00020000) != 0, "CAP_SYS_ADMIN is gone: no mount namespace without a user one"
host_ns = {n: os.readlink(f"/proc/self/ns/{n}") for n in ("ipc", "mnt", "net", "pid", "uts")}
isolated, unprivileged = namespaces.Namespaces(ctypes).enter(tmp, 1, 16, user_namespace)
out = {"isolated": isolated, "unprivileged": unprivileged, "pid": os.getpid(), "uid": os.getuid(),
       "cwd": os.getcwd(), "root": sorted(os.listdir("/")), "dev": sorted(os.listdir("/dev")),
       "tmp": os.listdir(os.path.dirname(tmp)),
       "procs": sorted(p for p in os.listdir("/proc") if p.isdigit()),
       "same_ns": [n for n, link in host_ns.items() if os.readlink(f"/proc/self/ns/{n}") == link]}
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
out["caps"] = [status[k].strip() for k in ("CapEff", "CapPrm")]
def attempt(name, fn):
    try:
        fn()
        out[name] = "allowed"
    except OSError as exc:
        out[name] = errno.errorcode.get(exc.errno, str(exc.errno))
with open("code.bin", "wb") as fh:
    fh.write(b"\xc3" * 4096)
def map_as_code():
    with open("code.bin", "rb") as fh:
        mmap.mmap(fh.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
attempt("exec_map", map_as_code)
attempt("write_root", lambda: open("/new-file", "w"))
attempt("write_stdlib", lambda: open(os.__file__, "a"))
def fill():
    with open("big.bin", "wb") as fh:
        fh.write(b"\0" * (2 << 20))
attempt("fill", fill)
def many_files():
    for i in range(40):
        open(f"f{i}", "w").close()
attempt("many_files", many_files)
attempt("stdlib_import", lambda: [__import__(m) for m in ("json.decoder", "sqlite3", "decimal", "zlib")])
print(json.dumps(out), flush=True)
"""


@pytest.fixture
def job_dir():
    path = os.path.realpath(tempfile.mkdtemp(prefix="execverify-ns-test-"))
    yield path
    os.rmdir(path)


def enter(job_dir: str, user_namespace: bool | None, before: str = "") -> dict:
    """What a job sees after entering its namespaces; ``before``: ``drop_sys_admin`` to enter
    as root without CAP_SYS_ADMIN."""
    flag = "" if user_namespace is None else str(int(user_namespace))
    bare = [sys.executable, "-S", "-s", "-B", "-P"]
    command = [*bare, "-c", PROBE, str(Path(namespaces.__file__)), job_dir, flag, before]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=job_dir)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to a uid of the job's own needs root")
def test_as_root_the_job_gets_a_uid_of_its_own(job_dir: str):
    seen = enter(job_dir, user_namespace=False)
    assert seen["uid"] >= namespaces.UID_BASE
    assert_isolated(seen, job_dir)


@pytest.mark.skipif(os.geteuid() != 0, reason="a root scorer without CAP_SYS_ADMIN")
def test_root_without_cap_sys_admin_falls_back_to_a_user_namespace(job_dir: str):
    seen = enter(job_dir, user_namespace=None, before="drop_sys_admin")
    assert seen["uid"] == 0, "kept, mapped to itself, with no capability left"
    assert_isolated(seen, job_dir)


def test_in_a_user_namespace_the_job_keeps_the_uid_and_no_capability(job_dir: str):
    seen = enter(job_dir, user_namespace=True)
    assert seen["uid"] == os.geteuid()
    assert_isolated(seen, job_dir)


def assert_isolated(seen: dict, job_dir: str) -> None:
    assert (seen["isolated"], seen["unprivileged"]) == (True, True)
    assert seen["caps"] == ["0000000000000000", "0000000000000000"]
    assert seen["pid"] == 1 and seen["procs"] == ["1"], "PID 1 of its own PID namespace, alone"
    assert seen["same_ns"] == [], "every namespace is new"
    assert seen["cwd"] == job_dir, "the job directory keeps its path"
    assert seen["tmp"] == [os.path.basename(job_dir)], "no other job's directory, nothing of the host's /tmp"
    assert "etc" in seen["root"] and "work" not in seen["root"] and "home" not in seen["root"]
    assert seen["dev"] == sorted(namespaces.DEVICES)
    assert seen["exec_map"] == "EPERM", "the job directory is noexec"
    assert seen["write_root"] == "EROFS" and seen["write_stdlib"] in ("EROFS", "EACCES")
    assert seen["fill"] == "ENOSPC", "the job directory's quota (1 MB here) holds"
    assert seen["many_files"] == "ENOSPC", "its inode cap (16 here) holds"
    assert seen["stdlib_import"] == "allowed"


def test_the_root_shows_only_the_interpreter_and_the_system_libraries():
    paths = namespaces._read_only_paths()  # here sys.path also holds the checkout and site-packages
    system = [p for p in paths if not p.startswith(sys.base_prefix + "/")]
    assert all(p in namespaces.SYSTEM_LIBRARIES or p.startswith("/usr/lib") for p in system), paths
    stdlib = [p for p in paths if p.startswith(sys.base_prefix + "/")]
    assert os.path.dirname(os.__file__) in stdlib
    assert not any("site-packages" in p for p in paths), paths
