"""Start a worker that is not Python (``node``) with the limits the Python worker sets on itself.

``python -m factory.sandbox.trusted.launch '<json>'``: the JSON holds ``argv`` (the command, its
first word looked up on PATH), ``limits`` (``[["RLIMIT_CORE", 0], ...]``, soft and hard) and
``quiet`` (send its stderr to /dev/null once the command is found: a Node.js worker that runs out of
heap prints a long report there). It asks for SIGKILL when the pool dies (Linux), then execs the
command, which keeps both, in the same process: the pool's child.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

from factory.sandbox.os_helpers import die_with_parent, set_limits, typed_prctl


def main() -> None:
    spec = json.loads(sys.argv[1])
    argv = list(spec["argv"])
    program = shutil.which(argv[0])
    if program is None:
        print(f"launch: {argv[0]} is not on PATH", file=sys.stderr)
        os._exit(127)
    set_limits([(name, value) for name, value in spec.get("limits", [])], best_effort=True)
    if sys.platform.startswith("linux"):
        import ctypes

        die_with_parent(typed_prctl(ctypes.CDLL(None, use_errno=True)), None, 1)
    if spec.get("quiet"):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    os.execv(program, argv)


if __name__ == "__main__":
    main()
