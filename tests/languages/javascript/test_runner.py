"""JavaScript's runner: the ``node`` worker of the trusted pool against a real ``node`` (outputs equal a
plain node process's, the sandbox's builtins, limits, isolation between jobs, crash blame, the two
runs of the Executor)."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from factory.execute.runner import NONDETERMINISTIC, Executor
from factory.languages.base import Language
from factory.languages.javascript import runner as js_runner
from factory.languages.javascript import values as js
from factory.sandbox.trusted.pool import WorkerPool

CANONICAL_JS = Path(js.__file__).with_name("canonical.js")
NODE = shutil.which("node")

#: (program, args): the programs generated JavaScript is made of, and the corners of the value model.
CASES: list[tuple[str, str]] = [
    ("function f(a, b) { return a.map((x) => x * b).filter((x) => x % 3 !== 0); }", "[1, 2, 3, 4], 2"),
    ("function f(s) { let out = ''; for (const c of s) { out = c + out; } return out; }", '"héllo 😀"'),
    ("function f(a) { return a.sort(); }", "[10, 9, 1, 100, -2]"),
    ("function f(a) { return [...a].sort((x, y) => x - y); }", "[10, 9, 1, 100, -2]"),
    ("function f(o) { o.b = 1; o[2] = 'x'; o.a = [0.1 + 0.2]; return o; }", '{"z": null, "10": true}'),
    ("function f(s) { return s.split(',').map(Number).reduce((x, y) => x + y, 0); }", '"1,2.5,3e2"'),
    ("function f(a) { return new Set(a.concat([1, '1'])); }", "[1, 2, 2]"),
    (
        "function f(s) { const m = new Map(); for (const c of s) m.set(c, (m.get(c) || 0) + 1); return m; }",
        '"abca"',
    ),
    ("function f(n) { return [n / 3, n * 1e21, 1 / n, 2 ** 53 + 1, -n]; }", "7"),
    (
        "function f(x) { return Object.entries(x).map(([k, v]) => `${k}=${v}`).join('&'); }",
        '{"a": 1, "b": [2, 3]}',
    ),
    (
        "function f(s) { return [s.padStart(6, '*'), s.at(-1), s.replaceAll('a', 'b'), s.toUpperCase()]; }",
        '"banana"',
    ),
    ("function f(n) { let i = 0; let t = 0; while (i < n) { t += i * i; i += 1; } return t; }", "1000"),
    ("const g = (x) => x + 1;\nfunction f(a) { return a.map(g).includes(3) ? 'yes' : 'no'; }", "[1, 2]"),
    ("function f(a) { const [x, y = 5, ...rest] = a; return {x, y, rest}; }", "[1]"),
    ("function f(s) { return parseInt(s, 16) + Math.max(...[1, 7, 3]) + Math.trunc(-4.7); }", '"ff"'),
    ("function f(a) { return a.flat(2).findIndex((x) => x > 2); }", "[[1, [2, [3]]], 4]"),
    ("function f(s) { return 'b'.localeCompare(s) + (1234.5).toLocaleString().length; }", '"a"'),
    ("function f(a) { return a[10].x; }", "[1]"),
    ("function f(a) { return [NaN, a]; }", "1"),
    ("function f() { return -0; }", ""),
    ("function f(a) { a.push(a); return a; }", "[]"),
    ("function f() { return () => 1; }", ""),
    ("function f(s) { return JSON.stringify({s, n: [1, null]}); }", '"q\\"\\n"'),
    ("function f(x) { undefinedName(x); }", "1"),
    ("function f(x) { return x.toFixed(2) + String(x ** 0.5); }", "2"),
    (
        "function f(a) { return a.slice(1, -1).reverse().concat(a.indexOf(3), a.lastIndexOf(9)); }",
        "[1, 2, 3, 4]",
    ),
    (
        "function f(o) { delete o.a; return [Object.keys(o), 'a' in o, o.hasOwnProperty('b')]; }",
        '{"a": 1, "b": 2}',
    ),
    (
        "function f(n) { if (n > 2) { return 'big'; } else if (n > 0) { return 'small'; } return null; }",
        "-1",
    ),
]


def _node_prints(program: str, args: str) -> str:
    """What a plain ``node`` process prints for the program called on the args: the canonical text of
    the value, or what the value model refuses, or the name of the error it throws."""
    assert NODE is not None, "node (Node.js >= 20) is not on PATH: the JavaScript language needs it"
    script = (
        f"const {{ canonical, NotLiteral }} = require({json.dumps(str(CANONICAL_JS))});\n"
        f"{program}\n"
        "let out;\n"
        f"try {{ const value = f({args}); try {{ out = 'ok ' + canonical(value); }}"
        " catch (e) { out = e instanceof NotLiteral ? 'non_literal' : 'canonical failed'; } }"
        " catch (e) { out = 'error:' + e.name; }\n"
        "process.stdout.write(out);\n"
    )
    env = {"PATH": "/usr/bin:/bin", **js_runner.FIXED_ENV}
    done = subprocess.run(
        [NODE, "-e", script], capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _shown(result: dict[str, Any]) -> str:
    if result["status"] == "ok":
        return f"ok {result['output_repr']}"
    return result["status"]


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(workers=2, worker=js_runner.WORKER, timeout_s=1.0, memory_mb=64) as p:
        yield p


def _run(pool: WorkerPool, source: str, args: str = "", entry: str = "f") -> dict[str, Any]:
    (result,) = pool.map("run", [{"source": source, "entry": entry, "args": args}])
    return result


def test_outputs_are_what_a_plain_node_prints(pool: WorkerPool) -> None:
    results = list(pool.map("run", [{"source": s, "entry": "f", "args": a} for s, a in CASES]))
    with ThreadPoolExecutor(4) as threads:
        expected = list(threads.map(lambda case: _node_prints(*case), CASES))
    for case, result, plain in zip(CASES, results, expected, strict=True):
        assert _shown(result) == plain, (case, result)
    assert {_shown(r).split(" ")[0] for r in results} >= {"ok", "non_literal", "error:TypeError"}


def test_ok_results_carry_the_type_name_and_read_back(pool: WorkerPool) -> None:
    result = _run(pool, "function f(a) { return new Map([[a, {k: [1.5, 'x']}]]); }", "null")
    assert result == {
        "status": "ok",
        "output_repr": 'new Map([[null, {"k": [1.5, "x"]}]])',
        "output_type": "Map",
    }
    value = js.literal_value(result["output_repr"])
    assert js.type_name(value) == result["output_type"]


def test_the_sandbox_has_the_language_builtins_only(pool: WorkerPool) -> None:
    names = [
        "require", "process", "module", "Buffer", "setTimeout", "setInterval", "setImmediate",
        "queueMicrotask", "Date", "Intl", "WeakRef", "FinalizationRegistry", "SharedArrayBuffer",
        "Atomics", "WebAssembly", "ArrayBuffer", "Uint8Array", "fetch", "globalThis.process",
    ]  # fmt: skip
    probe = "function f() { return [" + ", ".join(f"typeof {n}" for n in names) + ", typeof Math.random]; }"
    result = _run(pool, probe)
    assert js.literal_value(result["output_repr"]) == ["undefined"] * (len(names) + 1)
    kept = (
        "function f() { return [typeof Math.max, typeof JSON.parse, typeof Map, typeof Set,"
        " typeof parseInt, typeof console.log]; }"
    )
    assert js.literal_value(_run(pool, kept)["output_repr"]) == ["function"] * 6
    for refused in ("eval('1')", "Function('return 1')()", "(() => 1).constructor('return 1')()"):
        result = _run(pool, f"function f() {{ return {refused}; }}")
        assert result["status"] == "error:EvalError", (refused, result)
        assert "Code generation from strings disallowed" in result["detail"]
    assert _run(pool, "function f() { return new Date(); }")["status"] == "error:ReferenceError"
    assert _run(pool, "function f() { return Math.random(); }")["status"] == "error:TypeError"
    escape = "function f() { return this.constructor.constructor('return typeof process')(); }"
    assert _run(pool, escape)["status"] == "error:EvalError"


def test_a_thrown_error_gives_its_name_and_message(pool: WorkerPool) -> None:
    result = _run(pool, "function f(x) { throw new TypeError(`bad ${x}`); }", '"v"')
    assert result == {
        "status": "error:TypeError",
        "output_repr": None,
        "output_type": None,
        "detail": "TypeError: bad v",
    }
    class_error = (
        "class Oops extends Error { constructor() { super('m'); this.name = 'Oops'; } }\n"
        "function f() { throw new Oops(); }"
    )
    assert _run(pool, class_error)["status"] == "error:Oops"
    assert _run(pool, "function f() { throw 'plain'; }")["status"] == "error:string"
    long = _run(pool, "function f() { throw new Error('x'.repeat(5000)); }")
    assert long["status"] == "error:Error" and len(long["detail"]) <= 300
    assert _run(pool, "function f(n) { return f(n + 1); }", "0")["status"] == "recursion"
    assert _run(pool, "throw new RangeError('top');\nfunction f() {}")["status"] == "error:RangeError"


def test_bad_programs_and_args(pool: WorkerPool) -> None:
    assert _run(pool, "function f( {")["detail"].startswith("syntax error")
    assert _run(pool, "function g() {}")["detail"] == "the entry function f is not defined by the program"
    assert _run(pool, "const f = 3;")["detail"] == "the entry f is not a function"
    assert _run(pool, "const f = (a) => a;", "[1]")["output_repr"] == "[1]"  # a lexical binding
    assert _run(pool, "function f(a) { return a; }", "NaN")["status"] == "bad_program"
    assert _run(pool, "function f(a) { return a; }", "1, (")["status"] == "bad_program"
    assert _run(pool, "function f() {}", entry="f; process")["status"] == "bad_program"


def test_long_outputs_are_refused_without_printing_them_whole(pool: WorkerPool) -> None:
    for program in (
        "function f() { return 'x'.repeat(1999); }",  # 2,001 characters with its quotes
        "function f() { return new Array(5e6).fill(1); }",
        "function f() { return new Set(Array.from({length: 1000}, (_, i) => i)); }",
        "function f() { return {a: 'x'.repeat(1994)}; }",  # 2,001 too
        "function f() { console.log('x'.repeat(70000)); return 1; }",
        "function f() { try { for (;;) console.log('x'.repeat(100)); } catch (e) {} return 1; }",
    ):
        assert _run(pool, program)["status"] == "output_too_long", program
    assert _run(pool, "function f() { return 'x'.repeat(1998); }")["status"] == "ok"
    assert _run(pool, "function f() { console.log('x'.repeat(100)); return 1; }")["status"] == "ok"


def test_the_length_bound_is_the_texts_length() -> None:
    """``canonical(value, limit)`` prints a text of exactly ``limit`` characters and refuses one more."""
    texts = [
        '[1, "ab", [true, null], {}]', '{"b": [], "2": {"x": undefined}}', 'new Set([1, "1", [2]])',
        'new Map([["k", new Set()], [null, new Map()]])', '"\\u0001\\n😀"', "[[[]], -1.5e-7]",
    ]  # fmt: skip
    script = (
        f"const {{ canonical, TooLong }} = require({json.dumps(str(CANONICAL_JS))});"
        "const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(texts.map((t) => { const v = eval('(' + t + ')');"
        " const text = canonical(v, canonical(v).length);"
        " try { canonical(v, text.length - 1); return 'not refused'; }"
        " catch (e) { return e instanceof TooLong ? text : 'other ' + e.message; } })));"
    )
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", script], input=json.dumps(texts), capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == [js.literal(js.literal_value(t)) for t in texts]


def test_a_program_cannot_change_what_the_next_one_sees() -> None:
    patch = (
        "Array.prototype.map = function () { return 'patched'; };\n"
        "Object.prototype.extra = 1; globalThis.leak = 1; var v = 2; Math.max = () => 0;\n"
        "function f() { return [].map((x) => x); }"
    )
    check = (
        "function f(a) { return [a.map((x) => x + 1), typeof leak, typeof v, 'extra' in {},"
        " Math.max(1, 2)]; }"
    )
    with WorkerPool(workers=1, worker=js_runner.WORKER, timeout_s=1.0, memory_mb=64) as one:
        first, second = one.map("run", [{"source": patch, "args": ""}, {"source": check, "args": "[1]"}])
    assert first["output_repr"] == '"patched"'
    assert second["output_repr"] == '[[2], "undefined", "undefined", false, 2]'


def test_an_infinite_loop_times_out_and_the_worker_is_replaced() -> None:
    loop = {"source": "function f() { for (;;) {} }", "args": ""}
    fine = {"source": "function f(x) { return x * 2; }", "args": "21"}
    with WorkerPool(workers=1, worker=js_runner.WORKER, timeout_s=0.5, memory_mb=64) as one:
        before = one.pids()
        results = list(one.map("run", [fine, loop, fine, loop, fine]))
        assert one.restarts == 2 and one.pids() != before
    assert [r["status"] for r in results] == ["ok", "resource_limit", "ok", "resource_limit", "ok"]
    assert results[1]["detail"] == "timeout" and results[2]["output_repr"] == "42"


def test_the_timeout_counts_the_jobs_cpu_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the wall-clock timeout, a job that has used less CPU than that is left to run."""
    slow = {"source": "function f() { let t = 0; for (let i = 0; i < 3e7; i++) t += i % 7; return t > 0; }"}
    with WorkerPool(workers=1, worker=js_runner.WORKER, timeout_s=5.0, memory_mb=64) as one:
        (ok,) = one.map("run", [{**slow, "args": ""}])
        assert ok["status"] == "ok"
        pid = one.pids()[0]
        cpu = js_runner.proc_cpu_seconds(pid)
        assert cpu is not None and cpu > 0
        # The worker's own count (shared memory) is where the job's CPU time starts.
        (worker,) = [w for w in one._workers if w is not None]
        jobs, started_at = js_runner.NODE_PROGRESS.unpack_from(worker.progress, 0)
        assert jobs == 1 and 0 < started_at <= cpu
        assert js_runner.WORKER.over_time(pid, worker.progress, 100.0) > 1.0  # far from the limit
        assert js_runner.WORKER.over_time(pid, worker.progress, 1e-9) == 0.0  # past it


def test_a_heap_bomb_is_a_memory_limit_blamed_on_its_own_job() -> None:
    """Answers held back to be sent together are not lost when a later job kills the worker."""
    bomb = {"source": "function f() { const a = []; for (;;) a.push(new Array(1e6).fill(1.5)); }", "args": ""}
    jobs = [{"source": "function f(i) { return i * i; }", "args": str(i)} for i in range(40)]
    jobs[25] = bomb
    with WorkerPool(workers=1, worker=js_runner.WORKER, timeout_s=5.0, memory_mb=64, window=64) as one:
        results = list(one.map("run", jobs))
        assert one.restarts == 1
    for i, result in enumerate(results):
        if i == 25:
            assert (result["status"], result["detail"]) == ("resource_limit", "memory")
        else:
            assert result["output_repr"] == str(i * i), (i, result)


class JavaScriptStub(Language):
    """As much of the JavaScript language as the Executor uses (the language is not registered yet)."""

    name = "javascript-runner-test"
    display_name = "JavaScript"

    def facet(self, name: str) -> Any:
        return importlib.import_module(f"factory.languages.javascript.{name}")

    def literal_value(self, text: str) -> Any:
        return js.literal_value(text)

    def literal(self, value: Any) -> str:
        return js.literal(value)

    def parse_args(self, text: str) -> tuple[Any, ...]:
        return js.parse_args(text)

    def strict_equal(self, a: Any, b: Any) -> bool:
        return js.strict_equal(a, b)

    def template_error(self, text: str, *, statement: bool) -> str | None:
        raise NotImplementedError

    def fill(self, template: str, values: Any) -> str:
        raise NotImplementedError

    def is_signed_number(self, code: str) -> bool:
        raise NotImplementedError

    def constant_condition(self, code: str) -> bool:
        raise NotImplementedError

    def render(self, program: Any) -> str:
        raise NotImplementedError


def test_the_executor_runs_every_case_twice_in_node_and_keeps_what_agrees() -> None:
    cases = [{"source": s, "entry": "f", "args": a} for s, a in CASES[:6]]
    with Executor(language=JavaScriptStub(), workers=1, timeout_s=1.0, memory_mb=64) as executor:
        assert [pool.spec for pool in executor.pools] == [js_runner.WORKER] * 2
        seeds = {
            str(pool.spec.argv({**pool._config, "progress_fd": 3}, pool.hash_seed)) for pool in executor.pools
        }
        assert len(seeds) == 2 and all("--hash-seed=" in s for s in seeds)
        results = list(executor.run(cases))
        disagreeing = list(executor.run(cases[:2], agree=lambda a, b: False))
    assert [_shown(r) for r in results] == [_node_prints(s, a) for s, a in CASES[:6]]
    assert [r["status"] for r in disagreeing] == [NONDETERMINISTIC] * 2
