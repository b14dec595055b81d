"""JavaScript code-generation items (docs/languages.md §6.6): their text, and their scoring in the
untrusted sandbox, where each hidden test's call runs in node and its value is compared here.

The gold completion scores 1; a memorizer of the shown examples, hostile completions (an early
``process.exit``, ``require``, files, network, endless loops, heap bombs, patched builtins,
Proxies, getters) score 0 and leave nothing behind.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.contracts import PROGRAMS_SCHEMA, SPARES_SCHEMA
from factory.inputs.pool_table import write_pools
from factory.inputs.pools import signature_key
from factory.io import read_table
from factory.languages.javascript import codegen, untrusted
from factory.params import ExecuteParams, InputsParams, Phase2Params
from factory.phase2.items import gold_completion, memorizer_source
from factory.phase2.stage import _item, choose_hidden, memorizer_fails, run_phase2_stage
from factory.scoring import score_item

SOURCE = (
    "function f(words, limit) {\n"
    "  const out = [];\n"
    "  for (const w of words) {\n"
    "    if (w.length > limit) {\n"
    "      out.push(w.toUpperCase());\n"
    "    }\n"
    "  }\n"
    "  return out;\n"
    "}\n"
)
PROGRAM = {
    "program_id": "p1",
    "language": "javascript",
    "source": SOURCE,
    "entry": "f",
    "param_types": json.dumps([["words", "array[string]"], ["limit", "number"]]),
    "tier": 3,
    "target": "t",
    "grammar_hash": "g",
}
SHOWN = [
    ('["apple", "fig"], 3', '["APPLE"]', "array"),
    ('["a", "bb", "ccc"], 0', '["A", "BB", "CCC"]', "array"),
    ("[], 2", "[]", "array"),
]
RAN = [  # spares: candidates run and not kept (outputs from a plain node)
    ('["kiwi", "banana", "plum"], 4', '["BANANA"]', "array"),
    ('["x", "yy"], 1', '["YY"]', "array"),
    ('["hello"], 5', "[]", "array"),
    ('["hello"], 4', '["HELLO"]', "array"),
    ('["one", "three", "seven"], 3', '["THREE", "SEVEN"]', "array"),
    ('["a"], 0', '["A"]', "array"),
    ('["to", "be", "or"], 1', '["TO", "BE", "OR"]', "array"),
    ('["zebra", "ox"], 2', '["ZEBRA"]', "array"),
    ('["apple", "fig"], 3', '["APPLE"]', "array"),  # a shown call: never hidden
]


@pytest.fixture(scope="module")
def item() -> dict[str, Any]:
    hidden = choose_hidden(SHOWN, RAN, Phase2Params().hidden_tests, "javascript")
    built, reason = _item(PROGRAM, SHOWN, hidden, Phase2Params(), "javascript")
    assert built is not None and reason == "memorizer_fails"
    return built


def completion(code: str, fence: str = "javascript") -> str:
    return f"<reasoning>\n...\n</reasoning>\n<answer>\n```{fence}\n{code}\n```\n</answer>"


def test_item_text_is_javascript(item: dict[str, Any]) -> None:
    assert item["language"] == "javascript" and item["family"] == "codegen"
    assert item["signature"] == "function f(words, limit)"
    prompt = item["prompt"]
    assert prompt.startswith("Write the JavaScript function `f` that behaves like the examples below.")
    assert "- Use exactly this signature: `function f(words, limit)`" in prompt
    assert "- The parameters' types (TypeScript notation): `words: string[]`, `limit: number`." in prompt
    assert "as one ```javascript code block." in prompt and "Python" not in prompt
    assert '> f(["apple", "fig"], 3)\n["APPLE"]' in prompt
    tests, examples = json.loads(item["tests"]), json.loads(item["examples"])
    assert examples[0] == 'assert.deepStrictEqual(f(["apple", "fig"], 3), ["APPLE"]);'
    assert len(tests) == item["n_tests"] == 8 and len(examples) == item["n_examples"] == 3
    assert 'assert.deepStrictEqual(f(["kiwi", "banana", "plum"], 4), ["BANANA"]);' in tests
    for test in tests:
        call = test.split("(", 1)[1].split("), ", 1)[0]
        assert f"> {call})" not in prompt  # hidden means not shown
    assert gold_completion(item).count("```javascript\n") == 1


def test_type_notation() -> None:
    params = [["m", "map[string, array[number]]"], ["o", "object[string, set[number]]"]]
    rule = codegen.type_rule([*params, ["p", "pair[string, number]"]])
    assert rule == (
        "- The parameters' types (TypeScript notation): `m: Map<string, number[]>`, "
        "`o: Record<string, Set<number>>`, `p: [string, number]`."
    )
    assert codegen.type_rule([]) is None


def test_gold_scores_one_and_fast(item: dict[str, Any]) -> None:
    start = time.monotonic()
    result = score_item(item, gold_completion(item))
    elapsed = time.monotonic() - start
    print(f"one JavaScript codegen item, {item['n_tests']} tests: {elapsed:.2f} s")
    assert result.reward == 1.0 and result.n_right == 8 and result.status == "ok"
    for fence in ("js", "JavaScript", ""):  # other fences are read too
        assert score_item(item, completion(SOURCE, fence)).reward == 1.0


def test_memorizer_passes_the_shown_examples_only(item: dict[str, Any]) -> None:
    shown = [(args, output) for args, output, _ in SHOWN]
    source = memorizer_source("f", shown, "javascript")
    on_shown = score_item({**item, "tests": item["examples"]}, completion(source))
    assert on_shown.reward == 1.0
    hidden = score_item(item, completion(source))
    assert hidden.reward < 1.0
    # Elsewhere it answers the first shown output, ["APPLE"], which no hidden test expects.
    assert hidden.n_right == 0
    assert memorizer_fails(SHOWN, RAN[:8], "javascript")


def test_memorizer_compares_arguments_as_the_value_model() -> None:
    shown = [('new Set([1, 2]), {"a": 1, "b": 2}', "1", "number"), ("new Set(), {}", "2", "number")]
    hidden = [
        ('new Set([2, 1]), {"b": 2, "a": 1}', "1", "number"),
        ("new Set([3]), {}", "1", "number"),  # not shown: the first shown output
    ]
    assert not memorizer_fails(shown, hidden, "javascript")  # a Set and an object in another order
    source = memorizer_source("g", [(a, o) for a, o, _ in shown], "javascript")
    tests = [f"assert.deepStrictEqual(g({a}), {o});" for a, o, _ in hidden]
    item = {"family": "codegen", "language": "javascript", "entry": "g", "tests": tests}
    assert score_item(item, completion(source)).reward == 1.0


def test_syntax_error_is_pythons_status(item: dict[str, Any]) -> None:
    result = score_item(item, completion("function f(words, limit) { return [ }"))
    assert result.reward == 0.0 and result.status == "syntax_error" and result.n_unparsed == 8
    assert score_item(item, "no code at all").reward == 0.0


def test_one_endless_call_fails_alone(item: dict[str, Any]) -> None:
    looping = SOURCE.replace("const out = [];", "const out = [];\n  if (limit === 4) for (;;) {}")
    result = score_item(item, completion(looping), timeout_s=1.0)
    assert result.status == "timeout"
    assert result.n_right == 6 and result.n_wrong == 2  # the two calls with limit 4 fail, the rest run


def test_expected_values_never_enter_the_sandbox(
    item: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[bytes] = []
    run_node = untrusted.run_node

    def spy(script: list[str], payload: bytes, **kwargs: Any) -> Any:
        sent.append(payload)
        return run_node(script, payload, **kwargs)

    monkeypatch.setattr(untrusted, "run_node", spy)
    tests = ['assert.deepStrictEqual(f(["kiwi"], 1), "EXPECTED-SECRET");']
    result = score_item({**item, "tests": tests}, completion(SOURCE))
    assert result.reward == 0.0 and len(sent) == 1
    assert b"EXPECTED-SECRET" not in sent[0] and b"deepStrictEqual" not in sent[0]


HOSTILE = {
    "exit_top_level": "process.exit(0);\nfunction f() { return []; }",
    "exit_in_f": "function f() { process.exit(0); }",
    "child_process": (
        "const cp = require('child_process');\nfunction f() { return cp.execSync('id').toString(); }"
    ),
    "child_process_in_f": "function f() { return require('child_process').execSync('id').toString(); }",
    "etc_passwd": "function f() { return require('fs').readFileSync('/etc/passwd', 'utf8'); }",
    "test_file_via_realm": (
        "function f() {\n"
        "  const p = this.constructor.constructor('return process')();\n"
        "  return p.mainModule.require('fs').readFileSync(p.argv[1], 'utf8');\n"
        "}"
    ),
    "escape_via_function": "function f() { return (() => 0).constructor('return process')().pid; }",
    "network": "function f() { fetch('http://127.0.0.1:9/'); return []; }",
    "endless_loop": "function f() { for (;;) {} }",
    "endless_top_level": "while (true) {}\nfunction f() { return []; }",
    "heap_bomb": "function f() { const a = []; for (;;) a.push(new Array(1e6).fill(7)); }",
    "patched_builtins": (
        "Object.prototype.toString = () => '[object Array]';\n"
        "Array.isArray = () => true;\n"
        "JSON.stringify = () => '[\"BANANA\"]';\n"
        "Object.keys = () => [];\n"
        "function f() { return {}; }"
    ),
    "patched_array_prototype": (
        "Array.prototype.every = () => true; Array.prototype.map = () => ['BANANA'];\n"
        "Array.prototype.join = () => 'BANANA';\n"
        "function f() { return [1]; }"
    ),
    "proxy_equal_to_anything": (
        "function f() {\n"
        "  return new Proxy([], { get: (t, k) => (k === 'length' ? 1 : 'BANANA'),\n"
        "    ownKeys: () => { throw new Error('no'); } });\n"
        "}"
    ),
    "proxy_that_loops": "function f() { return new Proxy([], { ownKeys: () => { for (;;) {} } }); }",
    "throwing_getter": "function f() { return { get a() { throw new Error('no'); } }; }",
    "looping_getter": "function f() { return { get a() { for (;;) {} } }; }",
    "array_getter": (
        "function f() { const a = []; Object.defineProperty(a, 0, { get() { for (;;) {} } }); return a; }"
    ),
    "thrown_forgery": "function f() { throw { status: 'ok', output_repr: '[\"BANANA\"]' }; }",
    "to_string_forgery": (
        "function f() { return { toString: () => '[\"BANANA\"]', toJSON: () => ['BANANA'] }; }"
    ),
    "not_a_function": "const f = 5;",
    "no_entry": "function g() { return []; }",
}


#: The sandbox's status of each (``ok``: node answered every call, with an error or a wrong value).
STATUS = {
    "exit_top_level": "load_error",
    "child_process": "load_error",
    "endless_loop": "timeout",
    "endless_top_level": "timeout",
    "proxy_that_loops": "timeout",
    "heap_bomb": "died",
}


def _job_dirs() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("execverify-isolated-")}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_completion_scores_zero_and_changes_nothing(
    name: str, item: dict[str, Any], tmp_path: Any
) -> None:
    sentinel = tmp_path / "sentinel"
    sentinel.write_text("untouched")
    before = _job_dirs()
    tests = json.loads(item["tests"])[:3]  # BANANA, YY, []: `[]` only for a f that returns []
    tests = [t for t in tests if not t.endswith(", []);")][:2]
    result = score_item({**item, "tests": tests}, completion(HOSTILE[name]), timeout_s=1.0, memory_mb=128)
    assert result.reward == 0.0, result.to_dict()
    assert result.status == STATUS.get(name, "ok")
    assert sentinel.read_text() == "untouched"
    assert _job_dirs() <= before  # every job directory is gone


SETS = "function g(seen, extra) {\n  const out = new Set(seen);\n  out.add(extra);\n  return out.size;\n}\n"


def _write(folder: Path, rows: list[dict[str, Any]], schema: pa.Schema | None = None) -> None:
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-00000.parquet")


def test_the_stage_builds_javascript_items(tmp_path: Path) -> None:
    """The phase2 stage on hand-built tables of two JavaScript programs: the items are
    JavaScript's, their hidden tests come from the spares (confirmed by a second run in node: a
    spare whose recorded output is wrong is left out), the gold scores 1 and the stage's memorizer
    count is what running the memorizer gives."""
    programs = [
        {**PROGRAM, "index": 0, "n_lines": 9, "reserve": False},
        {
            **PROGRAM,
            "program_id": "p2",
            "index": 1,
            "source": SETS,
            "entry": "g",
            "param_types": json.dumps([["seen", "set[number]"], ["extra", "number"]]),
            "n_lines": 5,
            "reserve": False,
        },
    ]
    _write(tmp_path / "programs", programs, PROGRAMS_SCHEMA)
    shown_sets = [("new Set([1, 2]), 3", "3"), ("new Set(), 1", "1"), ("new Set([4]), 4", "1")]
    executions = [
        {"program_id": "p1", "args": a, "status": "ok", "output_repr": o, "output_type": t}
        for a, o, t in SHOWN
    ] + [
        {"program_id": "p2", "args": a, "status": "ok", "output_repr": o, "output_type": "number"}
        for a, o in shown_sets
    ]
    _write(tmp_path / "executions", executions)
    wrong = ('["hello"], 0', '["WRONG"]', "array")  # recorded output no run gives
    sets = [  # {k, ..., k+n-1} and e, and the size of their union
        (f"new Set([{', '.join(map(str, range(k, k + n)))}]), {e}", str(len({*range(k, k + n), e})), "number")
        for k in range(4)
        for n in range(4)
        for e in (0, 9)
    ]
    spares = [("p1", *case) for case in [wrong, *RAN]] + [
        ("p2", args.replace("new Set([])", "new Set()"), out, t) for args, out, t in sets
    ]
    columns = ("program_id", "args", "output_repr", "output_type")
    _write(
        tmp_path / "spares",
        [{"language": "javascript", **dict(zip(columns, row, strict=True))} for row in spares],
        SPARES_SCHEMA,
    )
    write_pools({"javascript": {signature_key(p): [] for p in programs}}, tmp_path / "pools")
    stats = run_phase2_stage(
        0, Phase2Params(), InputsParams(), ExecuteParams(workers=1), "grammars/javascript",
        tmp_path / "programs", tmp_path / "executions", tmp_path / "spares",
        tmp_path / "phase2", tmp_path / "phase2.json", tmp_path / "pools",
    )  # fmt: skip
    items = read_table(tmp_path / "phase2").to_pylist()
    assert {item["language"] for item in items} == {"javascript"}
    assert stats.extra["run_status"] == {"confirm:nondeterministic": 1, "confirm:ok": 15}
    assert stats.extra["topped_up"] == 0
    assert not any("WRONG" in test for test in json.loads(items[0]["tests"]))
    assert [i["program_id"] for i in items] == ["p1", "p2"] and stats.items_out == 2
    assert items[1]["signature"] == "function g(seen, extra)"
    assert "`seen: Set<number>`, `extra: number`" in items[1]["prompt"]
    assert all(t.startswith("assert.deepStrictEqual(g(new Set(") for t in json.loads(items[1]["tests"]))
    assert [score_item(i, gold_completion(i)).reward for i in items] == [1.0, 1.0]
    fails = 0
    for item, shown in zip(items, [[(a, o) for a, o, _ in SHOWN], shown_sets], strict=True):
        source = memorizer_source(item["entry"], shown, "javascript")
        fails += score_item(item, completion(source)).reward < 1.0
    recorded = json.loads((tmp_path / "phase2.json").read_text())["memorizer"]
    assert recorded["items_where_it_fails_a_hidden_test"] == fails == 2


def test_python_items_are_unchanged() -> None:
    """A Python item the phase2 stage built before the codegen facets (data/phase2 of the default
    pipeline, a pair-typed program), rebuilt from its program and cases: byte-identical."""
    golden = json.loads((Path(__file__).parent / "data" / "python_item.json").read_text())
    shown = [tuple(c) for c in golden["shown"]]
    hidden = [tuple(c) for c in golden["hidden"]]
    item, reason = _item(golden["program"], shown, hidden, Phase2Params(), "python")
    assert item is not None and reason == "memorizer_fails"
    assert item.pop("language") == "python"
    assert item == golden["row"]
