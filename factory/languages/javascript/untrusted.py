"""JavaScript's ``untrusted`` facet: one call of a program in the untrusted sandbox, as the scorer
runs an input answer (docs/languages.md §6.6).

``call_function(source, entry, args)`` runs ``node untrusted.js`` under
``factory.sandbox.untrusted.isolated`` (namespaces, rlimits, Landlock, seccomp, then exec): the
root shows node, the system's shared libraries and the five JavaScript files the call needs,
nothing else. ``args`` are values (the answer's literals, read by ``values``): node gets their
canonical text, which the worker's ``run`` evaluates in the program's fresh context as the trusted
pool's jobs do, each checked to be a literal. The result is the runner's ``CallResult``.

``run_tests(code, tests, entry)`` scores a codegen completion: each test is our own
``assert.deepStrictEqual(f(<args>), <value>);`` line, read here (``prompts.read_assertion``) into
argument values and the expected value; ``node untrusted_calls.js`` loads the code once, then makes
every call in a fresh context, one result line each; the parent compares each returned value with
the expected one (``values.strict_equal``), so no expected value enters the sandbox. A call that
times out or kills node fails its test, and a fresh node runs the tests left.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from factory.languages.base import NO_VALUE, Assertion
from factory.languages.javascript import JAVASCRIPT, values
from factory.languages.javascript.node_env import FIXED_ENV
from factory.languages.javascript.prompts import read_assertion
from factory.sandbox.untrusted import runner
from factory.sandbox.untrusted.isolated import IsolatedRun, run_isolated
from factory.sandbox.untrusted.runner import CallResult, TestReport

HERE = Path(__file__).parent
#: The files node reads: the one-shot script, the tests' script and what they require.
FILES = tuple(
    str(HERE / name)
    for name in (
        "untrusted.js",
        "untrusted_calls.js",
        "worker.js",
        "context.js",
        "canonical.js",
        "thrown.js",
    )
)
CALLS_SCRIPT = FILES[1]
TEST_SYNTAX_ERROR = "test_syntax_error"  # a test that is not an assertion on literals (ours: a bug)
WRONG_VALUE = "AssertionError"  # the call returned another value
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


def run_node(
    script: list[str], payload: bytes, *, timeout_s: float, memory_mb: int, calls: int = 1
) -> IsolatedRun:
    """node with ``script`` (its arguments after the flags) in the sandbox (``calls``: as
    ``run_isolated``'s)."""
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
        calls=calls,
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


def run_tests(
    code: str, tests: list[str], entry: str, *, timeout_s: float = 5.0, memory_mb: int = 512
) -> TestReport:
    """Run a completion's ``code`` on the calls of ``tests`` (assertion lines) in the sandbox;
    ``per_test[i]`` is True when call i returned a value strictly equal to test i's expected one.

    ``timeout_s`` bounds loading the code and, separately, each call. The status is ``ok``, or
    ``syntax_error`` / ``load_error`` (nothing was called) or the first call's failure that ended
    a node (``timeout``, ``died``, ``protocol_error``), as Python's ``runner.run_tests``.
    """
    runner.check_limits(timeout_s, memory_mb)
    total = len(tests)
    per_test = [False] * total
    errors: list[str | None] = [None] * total
    calls: dict[int, tuple[str, Any]] = {}  # test index -> (argument text, expected value)
    for i, test in enumerate(tests):
        read = _read_test(test, entry)
        if read is None:
            errors[i] = TEST_SYNTAX_ERROR
        else:
            calls[i] = read
    status = runner.OK
    left = list(calls)
    while left:
        payload = {"source": code, "entry": entry, "calls": [calls[i][0] for i in left]}
        run = run_node(
            [CALLS_SCRIPT], json.dumps(payload).encode(), timeout_s=timeout_s, memory_mb=memory_mb,
            calls=len(left) + 1,
        )  # fmt: skip
        lines = run.stdout.decode("utf-8", "replace").splitlines()
        loaded = _load_status(lines[0] if lines else None, run)
        if loaded != runner.OK:
            status = loaded if status == runner.OK else status
            for i in left:
                errors[i] = loaded
            break
        answered = lines[1 : len(left) + 1]
        if run.status == runner.OK and len(answered) < len(left):
            run = IsolatedRun(runner.PROTOCOL)  # node exited without answering every call
        for i, text in zip(left, answered, strict=False):
            per_test[i], errors[i] = _judge(text, calls[i][1])
        left = left[len(answered) :]
        if left and run.status != runner.OK:
            errors[left[0]] = run.status  # the call that was running when node stopped
            status = run.status if status == runner.OK else status
            left = left[1:]
    return TestReport(sum(per_test), total, per_test, status, errors)


def _read_test(test: str, entry: str) -> tuple[str, Any] | None:
    """(the call's canonical argument text, the expected value) of a test line, or None when it is
    not an assertion on literals."""
    read = read_assertion(test, entry, JAVASCRIPT)
    if not isinstance(read, Assertion) or read.args is None or read.expected is NO_VALUE:
        return None
    try:
        return ", ".join(values.literal(v) for v in read.args), read.expected
    except (TypeError, ValueError):
        return None


def _load_status(first: str | None, run: IsolatedRun) -> str:
    """How loading the code went: ``ok``, ``syntax_error``, ``load_error``, or why node gave no
    load line (its run's status)."""
    if first is None:
        return run.status if run.status != runner.OK else runner.PROTOCOL
    try:
        status = json.loads(first)["status"]
    except (ValueError, KeyError, TypeError):
        return runner.PROTOCOL
    if status == "ok":
        return runner.OK
    return runner.SYNTAX_ERROR if status == "syntax_error" else runner.LOAD_ERROR


def _judge(line: str, expected: Any) -> tuple[bool, str | None]:
    """(passed, why not) for one result line of node and the test's expected value."""
    try:
        result = json.loads(line)
        if result["status"] != "ok":
            return False, str(result["status"])[:100]
        value = values.literal_value(result["output_repr"])
    except (ValueError, KeyError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False, runner.PROTOCOL
    if values.strict_equal(value, expected):
        return True, None
    return False, WRONG_VALUE
