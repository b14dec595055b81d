"""``execverify score`` through the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

WHITE_BOX = {
    "family": "white_box",
    "source": "def f(a):\n    x = a * 2\n    return x\n",
    "entry": "f",
    "args": "3",
    "questions": json.dumps(
        [
            {"family": "output", "answer": "6", "answer_type": "int"},
            {"family": "next_line", "line": 2, "occurrence": 1, "answer": 3},
            {"family": "state", "line": 2, "occurrence": 1, "var": "x", "answer": "6; int"},
        ]
    ),
}


def run(execverify: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([execverify, *args], capture_output=True, text=True, timeout=120)


def write(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_white_box_json(execverify: str, tmp_path: Path):
    task = write(tmp_path, "task.json", WHITE_BOX)
    completion = write(tmp_path, "c.txt", "<answer>\nassert f(3) == 6\nreturn x\n[6]; list\n</answer>")
    done = run(execverify, "score", "--task", str(task), "--completion", str(completion), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert list(data)[0] == "reward"
    assert data["reward"] == 1.5
    assert (data["r_io"], data["r_wb"]) == (1.0, 0.5)
    assert [q["verdict"] for q in data["per_question"]] == ["right", "right", "wrong"]


def test_gated_and_alpha_options(execverify: str, tmp_path: Path):
    task = write(tmp_path, "task.json", WHITE_BOX)
    completion = write(tmp_path, "c.txt", "<answer>\nassert f(3) == 7\nreturn x\n6; int\n</answer>")
    base = ["score", "--task", str(task), "--completion", str(completion), "--json"]
    assert json.loads(run(execverify, *base).stdout)["reward"] == 1.0
    assert json.loads(run(execverify, *base, "--gated").stdout)["reward"] == 0.0
    assert json.loads(run(execverify, *base, "--alpha", "1").stdout)["reward"] == 2.0


def test_conversation_completion(execverify: str, tmp_path: Path):
    task = write(tmp_path, "task.json", WHITE_BOX)
    messages = [
        {"role": "user", "content": "trace it"},
        {"role": "assistant", "content": "<answer>\nassert f(3) == 6\nreturn x\n6; int\n</answer>"},
    ]
    completion = write(tmp_path, "c.json", messages)
    done = run(execverify, "score", "--task", str(task), "--completion", str(completion), "--json")
    assert json.loads(done.stdout)["reward"] == 2.0


def test_codegen_task(execverify: str, tmp_path: Path):
    task = write(
        tmp_path,
        "task.json",
        {"family": "codegen", "entry": "f", "tests": ["assert f(1) == 2", "assert f(2) == 4"]},
    )
    completion = write(tmp_path, "c.py", "def f(x):\n    return x + 1\n")
    done = run(execverify, "score", "--task", str(task), "--completion", str(completion), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["reward"] == 0.5
    assert data["status"] == "ok"
    assert [q["test"] for q in data["per_question"]] == ["assert f(1) == 2", "assert f(2) == 4"]
    kernel = {"namespaces", "unprivileged", "seccomp", "landlock"}
    assert {"audit_hook", *kernel} <= set(data["sandbox"]["in_force"])


def test_a_missing_kernel_layer_is_refused_unless_allowed(execverify: str, tmp_path: Path):
    task = write(tmp_path, "task.json", {"family": "codegen", "entry": "f", "tests": ["assert f(1) == 2"]})
    completion = write(tmp_path, "c.py", "def f(x):\n    return x + 1\n")
    env = {**os.environ, "EXECVERIFY_SANDBOX_SIMULATE_MISSING": "landlock"}
    args = [execverify, "score", "--task", str(task), "--completion", str(completion), "--json"]
    refused = json.loads(subprocess.run(args, capture_output=True, text=True, env=env).stdout)
    assert (refused["reward"], refused["sandbox"]["missing"]) == (0.0, ["landlock"])
    allowed = subprocess.run([*args, "--allow-weak-sandbox"], capture_output=True, text=True, env=env)
    assert json.loads(allowed.stdout)["reward"] == 1.0
    assert "without landlock" in allowed.stderr
    table = subprocess.run(args[:-1], capture_output=True, text=True, env=env)  # no --json
    assert "not run: the sandbox lacks landlock" in " ".join(table.stderr.split())
    assert "--allow-weak-sandbox" in table.stderr


def test_table_output(execverify: str, tmp_path: Path):
    task = write(tmp_path, "task.json", WHITE_BOX)
    completion = write(tmp_path, "c.txt", "<answer>\nassert f(3) == 6\nreturn x\n[bold]x; int\n</answer>")
    done = run(execverify, "score", "--task", str(task), "--completion", str(completion))
    assert done.returncode == 0, done.stderr
    assert "reward 1.5" in done.stdout
    assert "[bold]x; int" in done.stdout  # answers are shown as text, never as markup
    assert "right 2, wrong 1, unparsed 0" in done.stdout


@pytest.mark.parametrize(
    ("task", "message"),
    [
        (None, "task file not found"),
        ("{not json", "not valid JSON"),
        ([1, 2], "expected a JSON object"),
        ({"entry": "f"}, "no 'family'"),
        ({"family": "oracle", "entry": "f"}, "unknown family"),
        ({"family": "output", "entry": "f", "source": "x"}, "needs 'questions'"),
        ({"family": "codegen", "entry": "f"}, "needs 'tests'"),
        ({**WHITE_BOX, "args": "undefined_name"}, "not literals"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(execverify: str, tmp_path: Path, task, message: str):
    task_path = tmp_path / "missing.json" if task is None else write(tmp_path, "task.json", task)
    completion = write(tmp_path, "c.txt", "<answer>x</answer>")
    done = run(execverify, "score", "--task", str(task_path), "--completion", str(completion))
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_missing_completion_file(execverify: str, tmp_path: Path):
    task = write(tmp_path, "task.json", WHITE_BOX)
    done = run(execverify, "score", "--task", str(task), "--completion", str(tmp_path / "no.txt"))
    assert done.returncode == 2
    assert "completion file not found" in done.stderr


def test_the_expected_answer_is_shown(execverify: str, tmp_path: Path):
    task = write(tmp_path, "task.json", WHITE_BOX)
    completion = write(tmp_path, "c.txt", "<answer>\nassert f(3) == 7\nreturn x\n[6]; list\n</answer>")
    base = ["score", "--task", str(task), "--completion", str(completion)]
    data = json.loads(run(execverify, *base, "--json").stdout)
    assert [(q["answer"], q["gold"], q["verdict"]) for q in data["per_question"]] == [
        ("assert f(3) == 7", "assert f(3) == 6", "wrong"),
        ("return x", "return x", "right"),
        ("[6]; list", "6; int", "wrong"),
    ]
    done = run(execverify, *base)
    assert done.returncode == 0, done.stderr
    assert "expected" in done.stdout
    for row in done.stdout.splitlines():
        if "assert f(3) == 7" in row:
            assert "assert f(3) == 6" in row and "wrong" in row  # on the same row
    assert "6; int" in done.stdout


def test_the_expected_answer_of_an_unparsed_completion(execverify: str, tmp_path: Path):
    task = write(tmp_path, "task.json", WHITE_BOX)
    completion = write(tmp_path, "c.txt", "no answer block")
    done = run(execverify, "score", "--task", str(task), "--completion", str(completion), "--json")
    per_question = json.loads(done.stdout)["per_question"]
    assert [q["verdict"] for q in per_question] == ["unparsed"] * 3
    assert [q["gold"] for q in per_question] == ["assert f(3) == 6", "return x", "6; int"]


def test_the_expected_answer_of_input_and_codegen_tasks(execverify: str, tmp_path: Path):
    questions = [{"family": "input", "answer": "6", "answer_type": "int"}]
    item = {**WHITE_BOX, "family": "input", "questions": questions}
    task = write(tmp_path, "task.json", item)
    completion = write(tmp_path, "c.txt", "<answer>\nassert f(2) == 6\n</answer>")
    done = run(execverify, "score", "--task", str(task), "--completion", str(completion), "--json")
    [q] = json.loads(done.stdout)["per_question"]
    assert (q["verdict"], q["gold"]) == ("wrong", "assert f(3) == 6")
    codegen = {"family": "codegen", "entry": "f", "tests": ["assert f(1) == 2"]}
    task = write(tmp_path, "task.json", codegen)
    completion = write(tmp_path, "c.py", "def f(x):\n    return 2 * x\n")
    done = run(execverify, "score", "--task", str(task), "--completion", str(completion), "--json")
    [q] = json.loads(done.stdout)["per_question"]
    assert (q["verdict"], q["test"], q["gold"]) == ("right", "assert f(1) == 2", None)


JS_WHITE_BOX = {
    "family": "white_box",
    "language": "javascript",
    "source": "function f(a) {\n  const x = [a, a * 2];\n  return x;\n}\n",
    "entry": "f",
    "args": "3",
    "questions": [
        {"family": "output", "answer": "[3, 6]", "answer_type": "array"},
        {"family": "state", "line": 2, "occurrence": 1, "var": "x", "answer": "[3, 6]; array"},
    ],
}


def test_a_javascript_task_is_scored_and_shown_in_javascript(execverify: str, tmp_path: Path):
    task = write(tmp_path, "task.json", JS_WHITE_BOX)
    right = "<answer>\nassert.deepStrictEqual(f(3), [3, 6]);\n[3, 6]; array\n</answer>"
    completion = write(tmp_path, "c.txt", right)
    done = run(execverify, "score", "--task", str(task), "--completion", str(completion), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(q["verdict"], q["gold"]) for q in data["per_question"]] == [
        ("right", "assert.deepStrictEqual(f(3), [3, 6]);"),
        ("right", "[3, 6]; array"),
    ]
    python_style = write(tmp_path, "p.txt", "<answer>\nassert f(3) == [3, 6]\n[3, 6]; array\n</answer>")
    done = run(execverify, "score", "--task", str(task), "--completion", str(python_style), "--json")
    assert json.loads(done.stdout)["per_question"][0]["verdict"] == "unparsed"
