"""A real Ray cluster on 127.0.0.1 for the tests: a head and a second node, each a ``ray start``
of its own (its own session, one CPU, a small object store), in a temp dir of its own.

It is stopped at the end, also on failure, process by process: ``ray stop`` would stop every
Ray of this user on the machine, not only this one. Each node's processes (the raylet, its
agents, its workers: the actors, in process groups of their own) are in the session of its
``ray start``, which is how they are found.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

OBJECT_STORE_BYTES = 200_000_000
ACTOR_TITLE = "ray::ShardActor"  # the process title Ray gives a ShardActor (".run" while it works)


def ray_env() -> dict[str, str]:
    """The environment of the Ray processes and of the drivers: no usage stats."""
    return {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}


@dataclass
class RayCluster:
    """A running cluster: its address (``HOST:PORT`` of the head) and a session per node."""

    address: str
    temp_dir: Path
    sessions: list[int]

    def processes(self, node: int | None = None) -> dict[int, str]:
        """pid -> command line of the cluster's processes (of node ``node``, or of all)."""
        sessions = set(self.sessions if node is None else [self.sessions[node]])
        found = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if os.getsid(int(entry)) not in sessions:
                    continue
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    found[int(entry)] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except (OSError, ProcessLookupError):
                continue
        return found

    def actor_pids(
        self, node: int | None = None, busy: bool = False, title: str = ACTOR_TITLE, method: str = "run"
    ) -> list[int]:
        """The actor processes titled ``title`` (ShardActors by default) of node ``node`` (or of
        every node); ``busy``: only those running ``method`` now (Ray titles them
        ``TITLE.method`` meanwhile: ``ray::ShardActor.run``; ``TITLE.__init__`` while it starts)."""
        prefix = f"{title}.{method}" if busy else title
        return sorted(pid for pid, cmd in self.processes(node).items() if cmd.startswith(prefix))

    def stop(self) -> None:
        """SIGTERM every process of the cluster, then SIGKILL what is left; remove the temp dir."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.processes():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 15
            while self.processes() and time.monotonic() < deadline:
                time.sleep(0.2)
            if not self.processes():
                break
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _ray_start(args: list[str], temp_dir: Path) -> tuple[int, str]:
    """Run one ``ray start`` in a session of its own (its pid), which the node's processes keep;
    returns that pid and what it printed."""
    ray = str(Path(sys.executable).with_name("ray"))
    cmd = [
        ray, "start", *args, "--node-ip-address=127.0.0.1", "--num-cpus=1",
        f"--object-store-memory={OBJECT_STORE_BYTES}", "--disable-usage-stats", f"--temp-dir={temp_dir}",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=ray_env(), start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    out, _ = proc.communicate(timeout=120)
    text = out.decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{text[-3000:]}")
    return proc.pid, text


@contextlib.contextmanager
def ray_cluster(nodes: int = 2) -> Iterator[RayCluster]:
    """A head and ``nodes - 1`` more nodes on 127.0.0.1, one CPU each; stopped on exit."""
    temp_dir = Path(tempfile.mkdtemp(prefix="evray-", dir="/tmp"))  # Ray's socket paths must be short
    cluster = RayCluster("", temp_dir, [])
    try:
        # Port 0: the head takes a free port itself (no race with another process for one picked here).
        head, text = _ray_start(["--head", "--port=0", "--include-dashboard=false"], temp_dir)
        cluster.sessions.append(head)
        port = re.search(r"ray start --address='[^':]+:(\d+)'", text)
        if port is None:
            raise RuntimeError(f"no address in the output of the head's ray start:\n{text[-3000:]}")
        cluster.address = f"127.0.0.1:{port.group(1)}"
        for _ in range(nodes - 1):
            cluster.sessions.append(_ray_start([f"--address={cluster.address}"], temp_dir)[0])
        _wait_for_nodes(cluster.address, nodes)
        yield cluster
    finally:
        cluster.stop()


def _wait_for_nodes(address: str, nodes: int, timeout_s: float = 60) -> None:
    """Until the cluster reports ``nodes`` live nodes (a node registers after its ``ray start``)."""
    code = (
        "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False, logging_level='ERROR'); "
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    deadline = time.monotonic() + timeout_s
    while True:
        out = subprocess.run(
            [sys.executable, "-c", code, address], env=ray_env(), capture_output=True, text=True, timeout=120
        )
        if out.returncode == 0 and out.stdout.strip().splitlines()[-1:] == [str(nodes)]:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{address}: not {nodes} live nodes after {timeout_s} s: {out.stdout}{out.stderr}"
            )
        time.sleep(1)
