"""Fixtures for solver tests: a real local server (the embedded model is tests/conftest.py's)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.solvers.helpers import free_port, local_server


@pytest.fixture(scope="session")
def transformers_server(embedded_dir: Path) -> Iterator[str]:
    """A REAL OpenAI-compatible server: ``transformers serve`` with the embedded model on
    127.0.0.1, started for the session and stopped at the end (also on failure). It ignores
    ``n`` (one choice per request), which exercises the client's ask-again path."""
    exe = shutil.which("transformers", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("the `transformers` CLI is missing: pip install -e '.[solvers]'")
    port = free_port()
    # One torch thread: several threads that wait for each other are far slower on a busy CPU.
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    cmd = [exe, "serve", str(embedded_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    with local_server(cmd, port, embedded_dir.parent / f"serve-{port}.log", env, 240) as url:
        yield url
