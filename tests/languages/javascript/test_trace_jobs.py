"""JavaScript's ``tracer`` facet: its job kinds on the node worker pool, as the trace stage runs them
(``Executor.from_params(..., kinds=facet("tracer").KINDS)``), and one naming of a thrown value for
the runner and the tracer (docs/languages.md §6.3)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from factory import languages
from factory.execute.runner import Executor
from factory.languages.javascript import tracer
from factory.languages.javascript.runner import WORKER
from factory.languages.javascript.trace_calls import trace_call_js, trace_calls_js
from factory.params import ExecuteParams, TraceParams
from factory.sandbox.trusted.pool import WorkerPool
from factory.trace.jobs import trace_row_job
from factory.trace.stage import trace_executor, trace_rows
from tests.languages.javascript.test_runner import JavaScriptStub

PROGRAM = (
    "function g(x) {\n  return x * 2;\n}\n"
    "function f(xs) {\n  let t = 0;\n  for (const x of xs) t += g(x);\n  return t;\n}\n"
)
UNICODE = 'function f(s) {\n  const t = s + "é😀";\n  return t;\n}\n'


def test_the_trace_stage_traces_javascript_with_the_facets_kinds() -> None:
    rows = [
        {"source": PROGRAM, "entry": "f", "args": "[1, 2]", "output_repr": "6"},
        {"source": PROGRAM, "entry": "f", "args": "[]", "output_repr": "0"},
        {"source": UNICODE, "entry": "f", "args": '"\\ud800a"', "output_repr": None},
        {"source": PROGRAM, "entry": "f", "args": "[1]", "output_repr": "3"},  # traced: 2
        {"source": "function f() {\n  throw new TypeError('no');\n}\n", "entry": "f", "args": ""},
        {"source": "class A {}\nfunction f() {}\n", "entry": "f", "args": ""},
    ]
    params = ExecuteParams(workers=1, memory_mb=256)
    with Executor.from_params(params, kinds=tracer.KINDS, language=JavaScriptStub()) as executor:
        assert [pool.spec for pool in executor.pools] == [WORKER] * 2
        out = list(trace_rows(rows, executor, TraceParams()))
    assert [reason for _, reason in out] == [
        None,
        None,
        None,
        "trace_output_differs",
        "error:TypeError",
        "bad_program",
    ]
    for (row, _), case in zip(out[:3], rows, strict=False):
        assert row is not None
        expected = trace_call_js(case["source"], "f", case["args"])
        stored = {k: expected[k] for k in ("status", "output_repr", "output_type", "steps", "states")}
        # byte for byte the JSON Python's trace_row job stores (factory/trace/stored.py)
        assert row["trace"] == json.dumps(stored, separators=(",", ":"))
        assert (row["trace_length"], row["n_states"]) == (len(expected["steps"]), len(expected["states"]))
    assert out[2][0] is not None and out[2][0]["output_repr"] == '"\\ud800aé😀"'


def test_javascript_is_traced_once_on_every_core_with_the_same_rows() -> None:
    """Its steps cannot depend on the hash seed (``hash_seed_matters``): the trace stage's
    Executor has one pool, of the first seed, with a worker per core, and keeps what two seeds
    keep, byte for byte."""
    javascript = languages.language("javascript")
    assert not javascript.hash_seed_matters and languages.language("python").hash_seed_matters
    rows = [
        {"source": PROGRAM, "entry": "f", "args": f"[{i}, {i + 1}]", "output_repr": str(4 * i + 2)}
        for i in range(6)
    ]
    params = ExecuteParams(memory_mb=256)
    with trace_executor(params, javascript, cpus=2) as once:
        assert [pool.spec for pool in once.pools] == [WORKER] and len(once.pools[0].pids()) == 2
        assert once.hash_seeds == params.hash_seeds[:1]
        traced_once = list(trace_rows(rows, once, TraceParams()))
    with Executor.from_params(params, kinds=tracer.KINDS, language=javascript) as both:
        traced_twice = list(trace_rows(rows, both, TraceParams()))
    assert traced_once == traced_twice and all(reason is None for _, reason in traced_once)
    with trace_executor(params, languages.language("python"), cpus=2) as python:
        assert len(python.pools) == 2


def test_the_kinds_give_the_python_kinds_result_shapes() -> None:
    limits = {"max_steps": 100, "max_repr": 50, "max_state_bytes": 10_000}
    payloads = [
        {"source": PROGRAM, "entry": "f", "args": "[3]", **limits},
        {"source": PROGRAM, "entry": "f", "args": "[3]", "one_line": True, "code": b"ignored", **limits},
        {"source": PROGRAM, "entry": "f", "args": "xs", **limits},  # not a literal
        {"source": PROGRAM, "entry": "f", "args": "[3]", **{**limits, "max_steps": 0}},
        {"source": "function f( {", "entry": "f", "args": "", **limits},
        {"source": PROGRAM, "entry": "f", "args": "[NaN]", **limits},  # a value with no literal
    ]
    python = trace_row_job({"source": "def f(x):\n    return x\n", "entry": "f", "args": "1", **limits})
    payloads[1].pop("code")  # JSON frames carry no bytes; the Python-only key is ignored anyway
    with WorkerPool(workers=1, worker=WORKER, kinds=tracer.KINDS, memory_mb=256) as pool:
        rows = list(pool.map("trace_row", payloads))
        digests = list(pool.map("trace_digest", payloads[:2]))
        traces = list(pool.map("trace", payloads))
    assert rows[0].keys() == python.keys()
    assert rows[0] == rows[1]
    assert digests[0] == {k: rows[0][k] for k in ("status", "output_repr", "output_type", "error", "digest")}
    assert [r["status"] for r in rows[2:]] == ["bad_args", "bad_args", "bad_program", "bad_args"]
    assert rows[5]["error"] == "the args are not literals: NaN has no literal"
    assert all(r["digest"] is None and "trace" not in r for r in rows[2:])
    assert traces[0].keys() == {"status", "output_repr", "output_type", "steps", "states", "error"}
    assert traces[0]["output_repr"] == "6" and traces[2]["status"] == "bad_args"


def test_a_refused_payload_never_reaches_node_as_a_program() -> None:
    refused = tracer.job_payload(
        {
            "source": "function f() {\n  const $$ev = 1;\n}\n",
            "args": "",
            "max_steps": 1,
            "max_repr": 1,
            "max_state_bytes": 1,
        }
    )
    assert refused["refused"]["status"] == "bad_program" and "reserved" in refused["refused"]["error"]


# --- one naming of a thrown value ---------------------------------------------------------------

THROWING: list[tuple[str, str, str, str]] = [
    # (body of f, args, status, text)
    ("throw new TypeError(`bad ${x}`);", "1", "error:TypeError", "TypeError: bad 1"),
    (
        "return x.y.z;",
        "{}",
        "error:TypeError",
        "TypeError: Cannot read properties of undefined (reading 'z')",
    ),
    ("throw new Error();", "0", "error:Error", "Error"),
    ("throw 'plain';", "0", "error:string", 'string: "plain"'),
    ("throw 3;", "0", "error:number", "number: 3"),
    ("throw {code: 1};", "0", "error:object", 'object: {"code": 1}'),
    ("throw [x];", "2", "error:array", "array: [2]"),
    ("throw null;", "0", "error:null", "null: null"),
    ("const e = new RangeError('r'); e.name = 'Other'; throw e;", "0", "error:RangeError", "RangeError: r"),
    ("return f(x + 1);", "0", "recursion", "RangeError: Maximum call stack size exceeded"),
    # a revoked Proxy (its tag cannot be read), made where no traced variable holds it
    ("throw ((r) => (r.revoke(), r.proxy))(Proxy.revocable({}, {}));", "0", "error:object", "object"),
]


@pytest.mark.parametrize(("body", "args", "status", "text"), THROWING)
def test_a_thrown_value_gets_one_status_from_the_runner_and_the_tracer(
    body: str, args: str, status: str, text: str
) -> None:
    source = f"function f(x) {{\n  {body}\n}}\n"
    with WorkerPool(workers=1, worker=WORKER, memory_mb=256) as pool:
        run = next(pool.map("run", [{"source": source, "entry": "f", "args": args}]))
    trace = trace_calls_js([(source, "f", args)], max_steps=1_000_000)[0]
    assert (run["status"], run["detail"]) == (status, text)
    assert (trace["status"], trace["error"]) == (status, text)


def test_the_text_is_bounded_and_the_traces_is_its_first_line() -> None:
    source = "function f(x) {\n  throw new Error('a\\nb' + 'c'.repeat(500));\n}\n"
    with WorkerPool(workers=1, worker=WORKER, memory_mb=256) as pool:
        run: dict[str, Any] = next(pool.map("run", [{"source": source, "entry": "f", "args": "0"}]))
    trace = trace_call_js(source, "f", "0")
    assert run["status"] == trace["status"] == "error:Error"
    assert run["detail"] == ("Error: a\nb" + "c" * 500)[:300] and trace["error"] == "Error: a"
