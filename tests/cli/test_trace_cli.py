"""``execverify trace`` and ``execverify questions`` through the installed console script."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest

from factory.literals import strict_equal

PROGRAM = """\
def f(nums):
    total = 0
    for n in nums:
        if n > 1:
            total += n
    return total
"""


def _run(execverify: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([execverify, *args], capture_output=True, text=True, input=stdin, timeout=600)


def test_trace_json_follows_the_contract(execverify: str, tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text(PROGRAM)
    proc = _run(execverify, "trace", str(tmp_path / "p.py"), "--entry", "f", "--args", "[1, 2, 3]", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["status"], result["output_repr"], result["output_type"]) == ("ok", "5", "int")
    assert [s["line"] for s in result["steps"]] == [2, 3, 4, 3, 4, 5, 3, 4, 5, 3, 6]
    assert {"step": 1, "line": 2, "func": "f"} == result["steps"][0]
    changed = [(s["step"], s["var"], s["repr"], s["type"]) for s in result["states"]]
    assert changed == [
        (1, "total", "0", "int"),
        (2, "n", "1", "int"),
        (4, "n", "2", "int"),
        (6, "total", "2", "int"),
        (7, "n", "3", "int"),
        (9, "total", "5", "int"),
    ]
    table = _run(execverify, "trace", str(tmp_path / "p.py"), "--entry", "f", "--args", "[1, 2, 3]")
    assert table.returncode == 0 and "total += n" in table.stdout


def test_questions_json_lists_every_family(execverify: str, tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text(PROGRAM)
    proc = _run(execverify, "questions", str(tmp_path / "p.py"), "--entry", "f", "--args", "[1, 2]", "--json")
    assert proc.returncode == 0, proc.stderr
    questions = json.loads(proc.stdout)
    families = {q["family"] for q in questions}
    assert {"output", "next_line", "state", "coverage"} <= families
    assert {"family": "next_line", "line": 4, "occurrence": 1, "answer": 3} in [
        {k: q[k] for k in ("family", "line", "occurrence", "answer")}
        for q in questions
        if q["family"] == "next_line"
    ]
    states = {
        (q["line"], q["occurrence"], q["var"]): q["answer"] for q in questions if q["family"] == "state"
    }
    assert states[(5, 1, "total")] == "2; int"


def test_trace_batch_reproduces_every_cruxeval_output(
    execverify: str, cruxeval_path: Path, cruxeval_records: list[dict]
) -> None:
    records = cruxeval_records
    proc = _run(execverify, "trace", "--batch", str(cruxeval_path), "--json")
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(records) == 800
    bad = [
        r["id"]
        for r, t in zip(records, results, strict=True)
        if t["status"] != "ok"
        or not strict_equal(ast.literal_eval(t["output_repr"]), ast.literal_eval(r["output"]))
    ]
    assert bad == []
    assert all(t["steps"] and t["steps"][-1]["func"] == "f" for t in results)


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["trace", "{missing}", "--args", "1"], "file not found"),
        (["trace", "{bad}", "--args", "1"], "syntax error"),
        (["trace", "{good}", "--args", "[1, x]"], "not literals"),
        (["trace", "{good}"], "missing --args"),
        (["questions", "{good}", "--args", "'a'"], "does not run"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    execverify: str, tmp_path: Path, args: list[str], expect: str
) -> None:
    (tmp_path / "good.py").write_text(PROGRAM)
    (tmp_path / "bad.py").write_text("def f(:\n")
    paths = {
        "missing": str(tmp_path / "nope.py"),
        "bad": str(tmp_path / "bad.py"),
        "good": str(tmp_path / "good.py"),
    }
    proc = _run(execverify, *[a.format(**paths) for a in args])
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and expect in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("family", ["white_box", "output", "input", "coverage"])
def test_task_is_a_dataset_row_that_scores_through_the_cli(
    execverify: str, tmp_path: Path, family: str
) -> None:
    from factory.contracts import TASKS_SCHEMA
    from factory.scoring.parse import split_answers
    from factory.tasks.prompts import gold_completion

    (tmp_path / "p.py").write_text(PROGRAM)
    args = [
        "task",
        str(tmp_path / "p.py"),
        "--entry",
        "f",
        "--args",
        "[1, 2, 0]",
        "--family",
        family,
        "--json",
    ]
    proc = _run(execverify, *args)
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)
    assert set(row) == set(TASKS_SCHEMA.names)  # exactly the columns of the released dataset
    assert row["family"] == family and "  1 | def f(nums):" in row["prompt"]
    assert isinstance(json.loads(row["answer"]), list)
    # The row scores through `execverify score` as a task file: gold gets the maximum.
    (tmp_path / "task.json").write_text(json.dumps(row))

    def score(completion: str) -> float:
        (tmp_path / "completion.txt").write_text(completion)
        task, answer = tmp_path / "task.json", tmp_path / "completion.txt"
        scored = _run(execverify, "score", "--task", str(task), "--completion", str(answer), "--json")
        assert scored.returncode == 0, scored.stderr
        return json.loads(scored.stdout)["reward"]

    assert score(gold_completion(row)) == (2.0 if family == "white_box" else 1.0)
    # `score` shows, per question, the gold line of the row's gold completion.
    task, answer = tmp_path / "task.json", tmp_path / "completion.txt"
    scored = _run(execverify, "score", "--task", str(task), "--completion", str(answer), "--json")
    gold_lines = split_answers(gold_completion(row), len(json.loads(row["questions"])))
    assert [q["gold"] for q in json.loads(scored.stdout)["per_question"]] == gold_lines
    assert score("<answer>\nnonsense\n</answer>") == 0.0


def test_task_with_an_unknown_family_is_exit_2(execverify: str, tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text(PROGRAM)
    proc = _run(execverify, "task", str(tmp_path / "p.py"), "--args", "[1]", "--family", "bogus")
    assert proc.returncode == 2 and "unknown --family" in proc.stderr and "Traceback" not in proc.stderr


def test_task_shows_the_prompt_verbatim_and_the_gold_lines(execverify: str, tmp_path: Path) -> None:
    """The human output holds the prompt exactly as stored (no re-wrapping of long lines, no
    markup), then the gold answer lines as a right completion writes them."""
    from factory.tasks.prompts import gold_completion

    long_line = "    total = [x * 2 for x in xs if x > 0] + [len(s)] + [x - 1 for x in xs if x < 0] + [9]"
    (tmp_path / "p.py").write_text(f"def f(xs, s):\n{long_line}\n    return total\n")
    base = ["task", str(tmp_path / "p.py"), "--args", "[1, -2, 3], '[bold]'"]
    as_json = _run(execverify, *base, "--json")
    assert as_json.returncode == 0, as_json.stderr
    row = json.loads(as_json.stdout)
    proc = _run(execverify, *base)
    assert proc.returncode == 0, proc.stderr
    assert row["prompt"] in proc.stdout
    assert long_line.strip() in proc.stdout and "'[bold]'" in proc.stdout
    gold = gold_completion(row)
    answer_lines = gold[gold.index("<answer>") + len("<answer>") : gold.index("</answer>")].strip()
    assert proc.stdout.rstrip("\n").endswith(answer_lines)
