"""Evaluation: pass@k, wrong vs unparsed, benchmarks, REval's incremental consistency, the CLI."""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from factory.evaluate import evaluate, load_benchmark, pass_at_k
from factory.io import read_table
from factory.solvers.base import BaseSolver
from factory.tasks.prompts import gold_completion
from tests.solvers.helpers import ScriptedSolver, cruxeval_task_rows, write_tasks


@pytest.mark.parametrize(("n", "c", "k"), [(5, 0, 1), (5, 2, 1), (5, 2, 3), (6, 3, 6), (4, 4, 2), (10, 3, 5)])
def test_pass_at_k_is_the_chance_that_k_drawn_samples_hold_a_right_one(n: int, c: int, k: int) -> None:
    draws = list(itertools.combinations(range(n), k))
    brute = sum(any(i < c for i in d) for d in draws) / len(draws)
    assert pass_at_k(n, c, k) == pytest.approx(brute)


def test_cruxeval_items_use_our_prompts_and_the_benchmarks_gold(cruxeval_path, cruxeval_records) -> None:
    out_items, skipped = load_benchmark("cruxeval-o", cruxeval_path, limit=5)
    in_items, _ = load_benchmark("cruxeval-i", cruxeval_path, limit=5)
    assert [i["family"] for i in out_items] == ["output"] * 5 and [i["family"] for i in in_items] == [
        "input"
    ] * 5
    for item, record in zip(out_items, cruxeval_records, strict=False):
        assert json.loads(item["answer"]) == [record["output"]]
        assert f"f({record['input']})" in item["prompt"]
    full, skipped = load_benchmark("cruxeval-o", cruxeval_path)
    assert len(full) + sum(skipped.values()) == len(cruxeval_records)


def test_gold_answers_score_one_and_garbage_counts_as_unparsed(cruxeval_path) -> None:
    items, _ = load_benchmark("cruxeval-i", cruxeval_path, limit=4)
    right = {items[0]["prompt"], items[1]["prompt"]}
    double = ScriptedSolver(items, lambda p: 1 if p in right else 0)
    report = evaluate(items, double, n=2, temperature=1.0)
    assert report["samples"] == {"right": 2, "wrong": 0, "unparsed": 6}
    assert report["pass@1"] == pytest.approx(0.25) and report["pass@2"] == pytest.approx(0.5)


def test_a_wrong_answer_is_wrong_not_unparsed(cruxeval_path) -> None:
    items, _ = load_benchmark("cruxeval-o", cruxeval_path, limit=1)

    class WrongDouble(BaseSolver):  # a TEST DOUBLE: a well-formed but wrong answer
        model_id = "wrong-test-double"

        def _generate(self, prompts, n, sampling):
            return [
                ["<answer>\nassert f(" + items[0]["args"] + ") == 'not it'\n</answer>"] * n for _ in prompts
            ]

    report = evaluate(items, WrongDouble(), n=1)
    assert report["samples"] == {"right": 0, "wrong": 1, "unparsed": 0}


def release_folder(rows, root: Path) -> Path:
    """A release in the Hub layout: two configs that share rows, a train and a test split."""
    test, train = rows[: len(rows) // 2], rows[len(rows) // 2 :]
    for config in ("phase1", "all"):
        write_tasks(test, root / ".tmp" / config / "test")
        write_tasks(train, root / ".tmp" / config / "train")
        (root / config).mkdir(parents=True)
        for split in ("test", "train"):
            table = read_table(root / ".tmp" / config / split)
            pq.write_table(table, root / config / f"{split}-00000-of-00001.parquet")
    import shutil

    shutil.rmtree(root / ".tmp")
    return root


def test_release_reads_the_test_split_once_and_scores_consistency(cruxeval_traced, tmp_path: Path) -> None:
    rows = cruxeval_task_rows(cruxeval_traced, 12)
    root = release_folder(rows, tmp_path / "release")
    items, _ = load_benchmark("release", root)
    assert sorted(i["task_id"] for i in items) == sorted(r["task_id"] for r in rows[: len(rows) // 2])
    tasks_items, _ = load_benchmark("release", write_tasks(rows, tmp_path / "tasks"))
    assert len(tasks_items) == len(rows)  # a stage folder (no test split): every row

    everything = evaluate(items, ScriptedSolver(items, lambda p: 1), n=1, consistency=True)
    ic = everything["incremental_consistency"]
    assert ic["chains"] > 0 and ic["score"] == 1.0
    assert set(everything["by_question_family"]) == {"output", "input", "next_line", "state", "coverage"}
    assert all(v["accuracy"] == 1.0 for v in everything["by_question_family"].values())

    # Coverage wrong breaks every chain at its first link, whatever comes after it.
    no_cov = evaluate(
        items, ScriptedSolver(items, lambda p: 0 if "YES or NO" in p else 1), n=1, consistency=True
    )
    assert no_cov["incremental_consistency"]["score"] == 0.0
    assert no_cov["by_question_family"]["output"]["accuracy"] == 1.0


def test_chain_counts_links_up_to_the_first_broken_one(cruxeval_traced) -> None:
    rows = cruxeval_task_rows(cruxeval_traced, 12)

    def usable(case: str) -> bool:
        families = {r["family"] for r in rows if r["case_id"] == case}
        wb = [r for r in rows if r["case_id"] == case and r["family"] == "white_box"]
        asked = {q["family"] for r in wb for q in json.loads(r["questions"])}
        return {"white_box", "coverage"} <= families and {"state", "next_line"} <= asked

    case = next(c for c in sorted({r["case_id"] for r in rows}) if usable(c))
    items = [r for r in rows if r["case_id"] == case and r["family"] in ("white_box", "coverage")]
    wb = next(i for i in items if i["family"] == "white_box")
    qs = json.loads(wb["questions"])
    gold = gold_completion(wb).split("\n")
    start = gold.index("<answer>") + 1
    # Break the first next_line answer: coverage and state hold, next_line and output do not count.
    nl = next(i for i, q in enumerate(qs) if q["family"] == "next_line")
    gold[start + nl] = f"{nl + 1}. this line is not in the program"  # numbered, as the gold is
    broken = "\n".join(gold)

    class ChainDouble(BaseSolver):  # a TEST DOUBLE: gold coverage, a broken next_line in the white-box item
        model_id = "chain-test-double"

        def _generate(self, prompts, n, sampling):
            return [
                [
                    broken
                    if p == wb["prompt"]
                    else gold_completion(items[0] if items[0]["prompt"] == p else items[1])
                ]
                * n
                for p in prompts
            ]

    report = evaluate(items, ChainDouble(), n=1, consistency=True)
    assert report["incremental_consistency"] == {
        "chain": ["coverage", "state", "next_line", "output"],
        "chains": 1,
        "score": 0.5,
        "fully_consistent_samples": 0,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--benchmark", "humaneval", "--path", "x"], "unknown benchmark"),
        (["--benchmark", "cruxeval-o", "--path", "/nonexistent.jsonl"], "CRUXEval file not found"),
        (["--benchmark", "release", "--path", "/nonexistent"], "release folder not found"),
        (["--benchmark", "cruxeval-o", "--path", "x", "--n", "0"], "--n must be"),
        (["--benchmark", "cruxeval-o", "--path", "x", "--solver", "llama"], "solver must be one of"),
    ],
)
def test_eval_bad_input_is_one_line_and_exit_2(execverify, args, message) -> None:
    done = subprocess.run([execverify, "eval", *args, "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr and done.stdout == ""
