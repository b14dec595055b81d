"""Shared test pieces: CRUXEval task rows, a tasks folder, a scripted solver (a test double), and a
local server's start and stop."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from factory.contracts import TASKS_SCHEMA
from factory.io import ShardWriter
from factory.params import TasksParams
from factory.solvers.base import BaseSolver, Sampling
from factory.tasks.items import build_items_for_case
from factory.tasks.prompts import gold_completion


def cruxeval_task_rows(
    traced: list[tuple[int, dict[str, Any], dict[str, Any]]], cases: int
) -> list[dict[str, Any]]:
    """Task rows of every family from the first ``cases`` traced CRUXEval cases."""
    rows: list[dict[str, Any]] = []
    for index, record, trace in traced[:cases]:
        case = {"source": record["code"], "entry": "f", "args": record["input"], "case_id": f"crux{index}"}
        for row in build_items_for_case(case, trace, seed=0, params=TasksParams()):
            rows.append({**row, "tier": index % 3 + 1})
    return rows


def write_tasks(rows: list[dict[str, Any]], folder: Path) -> Path:
    with ShardWriter(folder, TASKS_SCHEMA) as writer:
        writer.write_many(rows)
    return folder


class ScriptedSolver(BaseSolver):
    """A TEST DOUBLE, not a model: answers a prompt with the gold completion for the first
    ``right(prompt)`` samples and with unparseable text for the rest; counts its calls."""

    model_id = "scripted-test-double"

    def __init__(self, rows: Sequence[dict[str, Any]], right: Callable[[str], int]):
        self.gold = {row["prompt"]: gold_completion(row) for row in rows}
        self.right = right
        self.calls = 0
        self.prompts: list[str] = []

    def _generate(self, prompts: list[str], n: int, sampling: Sampling) -> list[list[str]]:
        self.calls += 1
        self.prompts += list(prompts)
        return [[self.gold[p] if i < self.right(p) else "I do not know." for i in range(n)] for p in prompts]


@contextlib.contextmanager
def local_server(
    cmd: list[str], port: int, log_path: Path, env: dict[str, str], wait_s: float
) -> Iterator[str]:
    """Run ``cmd`` (a server on 127.0.0.1:``port``) until its ``/health`` answers 200; yield its
    ``/v1`` base URL; stop it at the end (also on failure): SIGTERM to its process group, then
    SIGKILL."""
    log = open(log_path, "w")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                tail = log_path.read_text()[-2000:]
                pytest.fail(
                    f"{' '.join([Path(cmd[0]).name, *cmd[1:3]])} did not come up (rc={proc.poll()}):\n{tail}"
                )
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: The vLLM engine of the tests on a shared CPU: a short context (and a 1 GiB KV cache:
#: VLLM_CPU_KVCACHE_SPACE=1). Eager mode: torch.compile of the model made the engine's start-up
#: 253 s instead of 54.5 s (measured side by side at load 3 on 2 cores), past the tests' time
#: limit on a loaded CI machine, for ~25% faster generation.
VLLM_CPU_ENGINE = {"max_model_len": 1024, "dtype": "bfloat16", "seed": 0, "enforce_eager": True}

#: Marks of the tests that need vLLM's CPU build (they run in its own venv, see README).
VLLM_TESTS = [
    pytest.mark.vllm,
    # The first test of a module also waits for its engine or server to start (about a minute,
    # several on a loaded machine): more time than the suite's default limit.
    pytest.mark.timeout(600),
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vllm is not installed in this venv: build it with `bash .ci/vllm-venv`, then run "
        "`.venv-vllm/bin/pytest -m vllm tests/solvers tests/backend`",
    ),
]
