"""Fixtures for solver tests: the embedded model (converted once) and a real local server."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def embedded_dir() -> Path:
    """The embedded SmolLM2-135M-Instruct as safetensors (converted from the wheel's GGUF once)."""
    from factory.solvers.embedded import ensure_converted

    return ensure_converted()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def transformers_server(embedded_dir: Path) -> Iterator[str]:
    """A REAL OpenAI-compatible server: ``transformers serve`` with the embedded model on
    127.0.0.1, started for the session and stopped at the end (also on failure). It ignores
    ``n`` (one choice per request), which exercises the client's ask-again path."""
    exe = shutil.which("transformers", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("the `transformers` CLI is missing: pip install -e '.[solvers]'")
    port = _free_port()
    # One torch thread: several threads that wait for each other are far slower on a busy CPU.
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    cmd = [exe, "serve", str(embedded_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    log = open(embedded_dir.parent / f"serve-{port}.log", "w")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                tail = Path(log.name).read_text()[-2000:]
                pytest.fail(f"transformers serve did not come up (rc={proc.poll()}):\n{tail}")
            time.sleep(1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
