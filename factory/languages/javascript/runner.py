"""JavaScript's ``runner`` facet: the Node.js worker of the trusted pool (``WORKER``) and its job kinds
(``KINDS``: ``run``), docs/languages.md §6.

``WorkerPool(worker=WORKER)`` drives persistent ``node`` processes running ``worker.js``; an
``Executor`` of the JavaScript language makes two such pools (V8's ``--hash-seed`` differs between
them, as PYTHONHASHSEED does for Python) and keeps a case only when both runs agree.

Timeouts count CPU seconds, not wall seconds, as Python's do, but the count is kept by the parent:
a program's synchronous loop never lets the worker look at a clock, and node has no interval timer
that would stop it. Before each job the worker writes its process CPU time (``process.cpuUsage``)
to the shared memory; once the job has run ``timeout_s`` of wall time, the parent reads the
worker's CPU time from ``/proc/<pid>/stat`` and kills it when the job has used ``timeout_s`` of CPU,
else looks again when it could have. V8 runs its garbage collector on the main thread only
(``--single-threaded-gc``), so the count is the job's own work, not a share of helper threads that
varies with the machine's cores.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import signal
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from factory.languages.javascript.node_env import FIXED_ENV
from factory.sandbox.trusted.pool import (
    RECHECK_S,
    WorkerSpec,
    json_frame_payload,
    package_path,
    proc_cpu_seconds,
)
from factory.sandbox.trusted.worker import CRASH, MEMORY, TIMEOUT

WORKER_JS = Path(__file__).with_name("worker.js")

#: The job kinds of the node worker: kind -> "file.js:function" (the file next to worker.js).
KINDS: dict[str, str] = {
    "run": "worker.js:run",
    "run_batch": "worker.js:runBatch",
    "run_batch_reversed": "worker.js:runBatchReversed",
}

#: The kinds an ``Executor`` runs a program's cases with, a few per job (``factory.execute.batch``):
#: in the given order on the first hash seed's pool, in the reverse order on the others.
BATCH_KINDS = ("run_batch", "run_batch_reversed")

#: Job kinds whose worker payload the parent makes from the stage's before sending the job (kind ->
#: function): the tracer facet (``tracer.py``) adds its kinds when it is imported, which it is to
#: give its ``KINDS``; their payload maker instruments the program (node cannot parse it with
#: tree-sitter). The runner's own kinds send the stage's payload as it is.
PAYLOAD_MAKERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}

#: The shared memory the worker writes before each job: jobs started, its CPU seconds then.
NODE_PROGRESS = struct.Struct("<Qd")

#: The environment of the worker: a fixed time zone and locale (``node_env``), and nothing that
#: node reads to change what it runs.
DROPPED_ENV = ("NODE_OPTIONS", "NODE_PATH", "NODE_EXTRA_CA_CERTS", "NODE_V8_COVERAGE", "NODE_REPL_HISTORY")


class NodeWorker(WorkerSpec):
    """``node worker.js``, started through ``factory.sandbox.trusted.launch`` (no core dumps, killed
    with the pool), JSON frames, the heap capped by ``--max-old-space-size``, the job's CPU time
    judged by the parent (module docstring)."""

    kinds = KINDS
    progress_size = NODE_PROGRESS.size
    stderr = None  # the launcher sends node's to /dev/null once node is found

    def __init__(self, node: str = "node") -> None:
        self.node = node

    def argv(self, config: dict[str, Any], hash_seed: int) -> list[str]:
        if shutil.which(self.node) is None:
            raise RuntimeError(f"{self.node} (Node.js >= 20) is not on PATH: JavaScript programs need it")
        worker_config = {
            "max_output_repr": config["max_output_repr"],
            "max_output_bytes": config["max_output_bytes"],
            "kinds": config["kinds"],
            "progress_fd": config["progress_fd"],
        }
        node = [
            self.node,
            f"--max-old-space-size={config['memory_mb']}",
            f"--hash-seed={hash_seed}",
            "--single-threaded-gc",
            "--disallow-code-generation-from-strings",
            str(WORKER_JS),
            _json(worker_config),
        ]
        launch = {"argv": node, "limits": [["RLIMIT_CORE", 0]], "quiet": True}
        return [sys.executable, "-m", "factory.sandbox.trusted.launch", _json(launch)]

    def env(self, hash_seed: int) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        env.update(FIXED_ENV)
        env["PYTHONPATH"] = package_path(env)  # for the launcher
        return env

    def encode(self, kind: str, payload: dict[str, Any]) -> bytes:
        make = PAYLOAD_MAKERS.get(kind)
        return json_frame_payload(kind, payload if make is None else make(payload))

    def decode(self, data: bytes) -> dict[str, Any]:
        return _loads(data)

    def death_status(self, rc: int) -> str:
        # V8 aborts when the heap passes --max-old-space-size; SIGKILL that the pool did not send is
        # the kernel's OOM killer.
        if rc in (-signal.SIGABRT, -signal.SIGKILL, 134):
            return MEMORY
        if rc in (-signal.SIGXCPU, -signal.SIGPROF):
            return TIMEOUT
        return CRASH

    def over_time(self, pid: int, progress: mmap.mmap, timeout_s: float) -> float:
        now = proc_cpu_seconds(pid)
        if now is None:
            return 0.0  # not Linux, or gone: the wall clock decides
        used = now - NODE_PROGRESS.unpack_from(progress, 0)[1]
        return 0.0 if used >= timeout_s else max(RECHECK_S, timeout_s - used)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _loads(data: bytes) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(data)
    return result


WORKER = NodeWorker()

__all__ = ["BATCH_KINDS", "FIXED_ENV", "KINDS", "NODE_PROGRESS", "PAYLOAD_MAKERS", "WORKER", "NodeWorker"]
