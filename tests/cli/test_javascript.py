"""The one-program commands on JavaScript files: the language follows the extension or
``--language``, the JSON has Python's keys, bad input is one line and exit code 2, and every output
is what a plain ``node`` prints."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import factory.languages.javascript as js
from factory.languages.javascript.runner import FIXED_ENV

CANONICAL_JS = Path(js.__file__).with_name("canonical.js")
NODE = shutil.which("node")

PROGRAM = """\
function f(xs) {
  const out = [];
  for (const x of xs) {
    out.push(x * 2);
  }
  return out;
}
"""
#: PROGRAM in Python: its commands' JSON has the keys the JavaScript one must have.
PYTHON_PROGRAM = """\
def f(xs):
    out = []
    for x in xs:
        out.append(x * 2)
    return out
"""

pytestmark = pytest.mark.skipif(NODE is None, reason="node (Node.js >= 20) is not on PATH")


def _run(execverify: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([execverify, *args], capture_output=True, text=True, timeout=600)


def _json(execverify: str, *args: str) -> object:
    proc = _run(execverify, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "double.js"
    path.write_text(PROGRAM)
    return path


def test_run_gives_the_canonical_text(execverify: str, program: Path) -> None:
    result = _json(execverify, "run", str(program), "--args", "[1, 2]")
    assert result == {"status": "ok", "output_repr": "[2, 4]", "output_type": "array", "detail": None}


def test_run_names_a_thrown_error(execverify: str, tmp_path: Path) -> None:
    (tmp_path / "p.js").write_text("function f(o) {\n  return o.a.b;\n}\n")
    result = _json(execverify, "run", str(tmp_path / "p.js"), "--args", "{}")
    assert result == {
        "status": "error:TypeError",
        "output_repr": None,
        "output_type": None,
        "detail": "Cannot read properties of undefined (reading 'b')",
    }


def test_trace_gives_the_steps_and_states(execverify: str, program: Path) -> None:
    result = _json(execverify, "trace", str(program), "--args", "[1, 2]")
    assert isinstance(result, dict)
    assert (result["status"], result["output_repr"], result["output_type"]) == ("ok", "[2, 4]", "array")
    # The for…of header is a step each time it asks for an item, the one that finds none included.
    assert result["steps"] == [
        {"step": n, "line": line, "func": "f"} for n, line in enumerate([2, 3, 4, 3, 4, 3, 6], 1)
    ]
    assert [(s["step"], s["var"], s["repr"], s["type"], s["literal"]) for s in result["states"]] == [
        (1, "out", "[]", "array", True),
        (2, "x", "1", "number", True),
        (3, "out", "[2]", "array", True),
        (4, "x", "2", "number", True),
        (5, "out", "[2, 4]", "array", True),
    ]


def test_questions_answer_in_javascript(execverify: str, program: Path) -> None:
    questions = _json(execverify, "questions", str(program), "--args", "[1, 2]")
    assert isinstance(questions, list)
    assert {"family": "output", "answer": "[2, 4]", "answer_type": "array"}.items() <= questions[0].items()
    asked = {(q["family"], q.get("line"), q.get("occurrence"), q.get("var")): q["answer"] for q in questions}
    assert asked[("state", 4, 1, "out")] == "[2]; array"
    assert asked[("next_line", 3, 3, None)] == 6
    assert asked[("coverage", 4, None, None)] == "YES"


def test_task_is_a_javascript_row(execverify: str, program: Path) -> None:
    item = _json(execverify, "task", str(program), "--args", "[1, 2]", "--family", "output")
    assert isinstance(item, dict)
    assert item["family"] == "output" and "JavaScript" in item["prompt"]
    assert "f([1, 2])" in item["prompt"]


@pytest.mark.parametrize(
    "command",
    [["run"], ["trace"], ["questions"], ["task", "--family", "white_box"]],
)
def test_the_json_has_pythons_keys(execverify: str, tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "p.js").write_text(PROGRAM)
    (tmp_path / "p.py").write_text(PYTHON_PROGRAM)
    out = {
        suffix: _json(execverify, command[0], str(tmp_path / f"p{suffix}"), *command[1:], "--args", "[1, 2]")
        for suffix in (".js", ".py")
    }
    js_out, py_out = out[".js"], out[".py"]
    if isinstance(js_out, list):
        assert isinstance(py_out, list)
        assert {tuple(q) for q in js_out} == {tuple(q) for q in py_out}
    else:
        assert isinstance(js_out, dict) and isinstance(py_out, dict)
        assert list(js_out) == list(py_out)


def test_an_entry_may_use_javascripts_identifier_characters(execverify: str, tmp_path: Path) -> None:
    (tmp_path / "dollar.js").write_text("function $double_it(x) {\n  return 2 * x;\n}\n")
    result = _json(execverify, "run", str(tmp_path / "dollar.js"), "--entry", "$double_it", "--args", "4")
    assert isinstance(result, dict) and result["output_repr"] == "8"


def test_language_option_wins_over_the_extension(execverify: str, tmp_path: Path) -> None:
    (tmp_path / "prog.txt").write_text(PROGRAM)
    result = _json(execverify, "run", str(tmp_path / "prog.txt"), "--language", "javascript", "--args", "[3]")
    assert result["output_repr"] == "[6]"
    (tmp_path / "python.js").write_text(PYTHON_PROGRAM)  # Python in a .js file
    result = _json(execverify, "trace", str(tmp_path / "python.js"), "--language", "python", "--args", "[3]")
    assert (result["output_repr"], result["output_type"]) == ("[6]", "list")


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["run", "{prog.txt}", "--args", "[1]"], "extension '.txt' names no language"),
        (["trace", "{prog}", "--args", "[1]"], "no extension names no language"),
        (["run", "{double.js}", "--language", "cobol", "--args", "[1]"], "unknown language 'cobol'"),
        (["run", "{bad.js}", "--args", "[1]"], "bad.js:2: syntax error"),
        (["trace", "{bad.js}", "--args", "[1]"], "bad.js:2: syntax error"),
        (["questions", "{bad.js}", "--args", "[1]"], "bad.js:2: syntax error"),
        (["run", "{double.js}", "--args", "[1, x]"], "not JavaScript literals"),
        (["run", "{double.js}", "--args", "[1], 'a"], "not JavaScript literals"),
        (["run", "{double.js}", "--entry", "g", "--args", "[1]"], "g"),
        (["trace", "{double.js}", "--entry", "g", "--args", "[1]"], "bad program"),
        (["run", "{double.js}", "--entry", "class", "--args", "[1]"], "--entry must be a function name"),
        (["run", "{double.js}", "--entry", "f-g", "--args", "[1]"], "--entry must be a function name"),
        (["questions", "{double.js}", "--args", "1"], "does not run"),
        (
            ["trace", "--batch", "{cruxeval.jsonl}", "--language", "javascript"],
            "cruxeval.jsonl:1: CRUXEval's",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    execverify: str, tmp_path: Path, args: list[str], expect: str
) -> None:
    (tmp_path / "double.js").write_text(PROGRAM)
    (tmp_path / "bad.js").write_text("function f(x) {\n  return x +;\n}\n")
    for name in ("prog.txt", "prog"):
        (tmp_path / name).write_text(PROGRAM)
    (tmp_path / "cruxeval.jsonl").write_text(json.dumps({"code": PROGRAM, "input": "[1]"}) + "\n")
    argv = [str(tmp_path / a[1:-1]) if a.startswith("{") else a for a in args]
    proc = _run(execverify, *argv)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and expect in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_batch_runs_and_traces_javascript_cases(execverify: str, tmp_path: Path) -> None:
    cases = [
        {"source": PROGRAM, "args": "[1, 2]"},
        {"source": 'function g(s) {\n  return s.split("");\n}\n', "entry": "g", "args": '"ab"'},
    ]
    batch = tmp_path / "cases.jsonl"
    batch.write_text("".join(json.dumps(c) + "\n" for c in cases))
    proc = _run(execverify, "run", "--batch", str(batch), "--language", "javascript", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line) for line in proc.stdout.splitlines()] == [
        {"status": "ok", "output_repr": "[2, 4]", "output_type": "array", "detail": None},
        {"status": "ok", "output_repr": '["a", "b"]', "output_type": "array", "detail": None},
    ]
    proc = _run(execverify, "trace", "--batch", str(batch), "--language", "javascript", "--json")
    assert proc.returncode == 0, proc.stderr
    traces = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [t["output_repr"] for t in traces] == ["[2, 4]", '["a", "b"]']
    assert [[s["line"] for s in t["steps"]] for t in traces] == [[2, 3, 4, 3, 4, 3, 6], [2]]
    assert traces[1]["steps"][0]["func"] == "g"


#: (program, args): what ``execverify run`` prints of each must be what a plain node prints.
NODE_CASES = [
    (PROGRAM, "[1, 2.5, -3]"),
    ("function f(s, n) {\n  return s.repeat(n).toUpperCase();\n}\n", '"ab", 3'),
    ("function f(o) {\n  o.z = 1;\n  o[2] = 0;\n  return o;\n}\n", '{"b": 1, a: [true, null]}'),
    ("function f(xs) {\n  return new Set(xs.map((x) => x % 3));\n}\n", "[1, 4, 2, 7]"),
    (
        "function f(xs) {\n  const m = new Map();\n"
        "  for (const x of xs) m.set(x, `${x}!`);\n  return m;\n}\n",
        '["a", 1]',
    ),
    ("function f(n) {\n  return [n / 3, 1e21 * n, 0.1 + 0.2, n.toFixed(2)];\n}\n", "7"),
    ("function f(x) {\n  return x === undefined ? [undefined] : null;\n}\n", ""),
    ("function f(s) {\n  return JSON.parse(s);\n}\n", '"{\\"k\\": [1, \\"\\\\u001b\\"]}"'),
    ("function f(xs) {\n  return xs.map((x) => x / 0);\n}\n", "[0, 1]"),  # NaN: no literal
    ("function f(xs) {\n  return xs.reduce((a, b) => a + b);\n}\n", "[]"),  # throws
]


def _node_prints(program: str, args: str) -> dict[str, str | None]:
    """What a plain ``node`` process gives for ``f(args)``: ``ok`` with canonical.js's text and type
    name, ``non_literal`` when canonical.js refuses the value, ``error:<name>`` when ``f`` throws."""
    assert NODE is not None
    script = (
        f"const {{ canonical, typeName, NotLiteral }} = require({json.dumps(str(CANONICAL_JS))});\n"
        f"{program}\n"
        "let out = {status: 'ok', output_repr: null, output_type: null};\n"
        f"try {{ const value = f({args});"
        " try { out.output_repr = canonical(value); out.output_type = typeName(value); }"
        " catch (e) { if (!(e instanceof NotLiteral)) throw e; out.status = 'non_literal'; } }"
        " catch (e) { if (e instanceof NotLiteral) throw e; out.status = 'error:' + e.name; }\n"
        "process.stdout.write(JSON.stringify(out));\n"
    )
    env = {"PATH": "/usr/bin:/bin", **FIXED_ENV}
    done = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    printed: dict[str, str | None] = json.loads(done.stdout)
    return printed


def test_every_output_is_what_a_plain_node_prints(execverify: str, tmp_path: Path) -> None:
    batch = tmp_path / "cases.jsonl"
    batch.write_text("".join(json.dumps({"source": s, "args": a}) + "\n" for s, a in NODE_CASES))
    proc = _run(execverify, "run", "--batch", str(batch), "--language", "javascript", "--json")
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    shown = [{k: r[k] for k in ("status", "output_repr", "output_type")} for r in results]
    assert shown == [_node_prints(s, a) for s, a in NODE_CASES]
    for (source, args), result in zip(NODE_CASES[:3], results[:3], strict=True):  # one file at a time too
        (tmp_path / "one.js").write_text(source)
        assert _json(execverify, "run", str(tmp_path / "one.js"), "--args", args) == result


def test_a_broken_case_of_a_batch_is_its_own_result(execverify: str, tmp_path: Path) -> None:
    """As for Python: ``run --batch`` reports a program that does not parse as that case's
    ``bad_program``; ``trace --batch`` refuses the batch in one line."""
    batch = tmp_path / "cases.jsonl"
    cases = [{"source": PROGRAM, "args": "[1]"}, {"source": "function f(a) { return a +; }", "args": "1"}]
    batch.write_text("".join(json.dumps(c) + "\n" for c in cases))
    proc = _run(execverify, "run", "--batch", str(batch), "--language", "javascript", "--json")
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["status"] for r in results] == ["ok", "bad_program"]
    assert "syntax error" in results[1]["detail"]
    proc = _run(execverify, "trace", "--batch", str(batch), "--language", "javascript", "--json")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "bad program" in proc.stderr
