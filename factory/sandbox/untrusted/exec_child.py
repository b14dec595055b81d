"""Bootstrap of one untrusted job that runs another program (``node``): run as a script by
``isolated`` (``python -S -s -B -P exec_child.py <config>``), standard library only.

The same set-up as ``child.py``'s steps 1-3, from its own functions: namespaces under a private
read-only root that also shows the program's files (``binds``), rlimits, then the lockdown
(parent-death signal, no_new_privs, Landlock, seccomp). Two things differ, both for the exec:
seccomp does not refuse execve, and Landlock then handles exec too and allows it for the
``executables`` alone (the program and its loader), so nothing else can ever be started, by this
process or by the program. The layers in force are written to stdout as one line
(``K <names>``) before the exec; the parent sends the job on stdin only when they suffice. Then
the process becomes the program (``os.execve``), with a fixed environment, inheriting the
namespaces, limits, Landlock domain and seccomp filter, which no process can drop.

config (JSON): ``tmp``, ``parent_pid``, ``argv`` (``argv[0]`` the program's absolute path),
``env``, ``binds`` (extra read-only paths), ``executables``, ``memory_mb`` (address space),
``cpu_s``, ``fsize_mb``, ``nofile``.
"""

from __future__ import annotations

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
import child  # type: ignore[import-not-found]  # noqa: E402

sys.path.remove(_HERE)


def _with_binds(binds: list[str], extra: list[str]) -> list[str]:
    """``binds`` and the ``extra`` paths that no bound directory already shows."""
    shown = [p for p in binds if os.path.isdir(p) and not os.path.islink(p)]
    return binds + [p for p in extra if not any(p.startswith(d + "/") for d in shown)]


def main() -> None:
    config = json.loads(sys.argv[1])
    tmp, parent_pid = config["tmp"], int(config["parent_pid"])
    try:
        prepared = child.prepare_lockdown(tuple(config["executables"]))
        if prepared is not None and prepared[5] is not None:
            prepared[5].binds = _with_binds(prepared[5].binds, config["binds"])
        limits = (config["memory_mb"], config["cpu_s"], config["fsize_mb"], config["nofile"])
        layers = child.confine(prepared, parent_pid, tmp, limits)
        del prepared
        os.write(1, f"K {layers}\n".encode())
        os.chdir(tmp)
        os.execve(config["argv"][0], config["argv"], config["env"])
    finally:
        os._exit(child.VIOLATION_EXIT)  # the exec failed


if __name__ == "__main__":
    main()
