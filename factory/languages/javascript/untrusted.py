"""JavaScript's ``untrusted`` facet: one call of a program in the untrusted sandbox, as the scorer
runs an input answer (docs/languages.md §6.6).

``call_function(source, entry, args)`` runs ``node untrusted.js`` under
``factory.sandbox.untrusted.isolated`` (namespaces, rlimits, Landlock, seccomp, then exec): the
root shows node, the system's shared libraries and the five JavaScript files the call needs,
nothing else. ``args`` are values (the answer's literals, read by ``values``): node gets their
canonical text, which the worker's ``run`` evaluates in the program's fresh context as the trusted
pool's jobs do, each checked to be a literal. The result is the runner's ``CallResult``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from factory.languages.javascript import values
from factory.languages.javascript.node_env import FIXED_ENV
from factory.sandbox.untrusted import runner
from factory.sandbox.untrusted.isolated import run_isolated
from factory.sandbox.untrusted.runner import CallResult

HERE = Path(__file__).parent
#: The files node reads: the one-shot script and what it requires.
FILES = tuple(
    str(HERE / name) for name in ("untrusted.js", "worker.js", "context.js", "canonical.js", "thrown.js")
)
#: Address space beyond the V8 heap: code space, thread stacks, the binary's own mappings.
ADDRESS_SPACE_EXTRA_MB = 1024
_LOADERS = ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")


def node_binary() -> str:
    """The real path of ``node`` on PATH; RuntimeError when there is none."""
    found = shutil.which("node")
    if found is None:
        raise RuntimeError("node (Node.js >= 20) is not on PATH: JavaScript programs need it")
    return os.path.realpath(found)


def node_argv(script: list[str], memory_mb: int) -> list[str]:
    """node's command line in the sandbox: the heap capped, no code from strings, ``script``."""
    return [
        node_binary(),
        f"--max-old-space-size={memory_mb}",
        "--single-threaded-gc",
        "--disallow-code-generation-from-strings",
        *script,
    ]


def run_node(script: list[str], payload: bytes, *, timeout_s: float, memory_mb: int) -> Any:
    """node with ``script`` (its arguments after the flags) in the sandbox: an ``IsolatedRun``."""
    node = node_binary()
    loaders = [os.path.realpath(p) for p in _LOADERS if os.path.exists(p)]
    return run_isolated(
        node_argv(script, memory_mb),
        payload,
        binds=[node, *FILES],
        executables=[node, *loaders],
        env=dict(FIXED_ENV),
        timeout_s=timeout_s,
        address_space_mb=memory_mb + ADDRESS_SPACE_EXTRA_MB,
    )


def call_function(
    source: str, entry: str, args: tuple[Any, ...], *, timeout_s: float = 5.0, memory_mb: int = 512
) -> CallResult:
    """Run ``entry(*args)`` of the JavaScript ``source`` in the sandbox; ``args`` are values of
    the value model. The result's value is the returned value read back by ``values``."""
    runner.check_limits(timeout_s, memory_mb)
    try:
        text = ", ".join(values.literal(v) for v in args)
    except (TypeError, ValueError):
        return CallResult(runner.BAD_ARGS)
    payload = json.dumps({"source": source, "entry": entry, "args": text}).encode()
    run = run_node([FILES[0]], payload, timeout_s=timeout_s, memory_mb=memory_mb)
    if run.status != runner.OK:
        return CallResult(run.status)
    try:
        result = json.loads(run.stdout)
        status = result["status"]
        if status != "ok":
            return CallResult(status, error=result.get("detail"))
        value = values.literal_value(result["output_repr"])
    except (ValueError, KeyError, TypeError, SyntaxError, RecursionError):
        return CallResult(runner.PROTOCOL)
    return CallResult(runner.OK, value=value, value_repr=result["output_repr"])
