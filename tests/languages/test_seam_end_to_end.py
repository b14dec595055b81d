"""The seam, downstream: a fixture language runs synthesize → inputs → execute → trace → tasks →
score, and no stage code names it.

"toy" (``toy_language``, tests/languages/fixtures/) renders programs with 2-space indents and
runs them with its own job kinds, which wrap Python's (toy text is Python text) and count their
calls in a file: they run in the sandbox's worker processes, which import ``toy_language`` from
their ``PYTHONPATH``. The tasks stage's workers resolve the language by name, so it is named in
``LANGUAGES_ENV`` rather than registered in this process only.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import toy_language

from factory.execute.stage import run_execute_stage
from factory.inputs.stage import run_inputs_stage
from factory.io import read_table
from factory.languages import LANGUAGES_ENV, grammar_language, language, unregister
from factory.params import ExecuteParams, InputsParams, SynthesizeParams, TasksParams, TraceParams
from factory.scoring import score_item
from factory.synth.stage import run_synthesize_stage
from factory.tasks.prompts import gold_completion
from factory.tasks.stage import run_tasks_stage
from factory.trace.stage import run_trace_stage

FIXTURES = Path(__file__).parent / "fixtures"
GRAMMAR = FIXTURES / "toy"
SEED = 3


@dataclass
class Run:
    """The tables of one pipeline run in toy, and the calls of toy's job kinds and analysis."""

    tables: dict[str, list[dict[str, Any]]]
    calls: Counter[str]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    tmp = tmp_path_factory.mktemp("toy")
    calls = tmp / "calls.txt"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(FIXTURES), os.environ.get("PYTHONPATH")])))
        mp.setenv(LANGUAGES_ENV, "toy=toy_language:TOY")
        mp.setenv(toy_language.CALLS_ENV, str(calls))
        try:
            execute = ExecuteParams(workers=1)
            synthesize = SynthesizeParams(grammars=[str(GRAMMAR)], tiers=[1, 3], workers=1)
            run_synthesize_stage(SEED, synthesize, tmp / "programs", tmp / "synthesize.json")
            inputs = InputsParams(per_program=2, candidates=4)
            run_inputs_stage(
                SEED, inputs, execute, str(GRAMMAR), tmp / "programs", tmp / "cases", tmp / "inputs.json"
            )
            # The later stages read the language off each row's `language` column.
            run_execute_stage(tmp / "cases", tmp / "executions", tmp / "execute.json", execute)
            run_trace_stage(tmp / "executions", tmp / "traces", tmp / "trace.json", TraceParams(), execute)
            run_tasks_stage(tmp / "traces", tmp / "tasks", tmp / "tasks.json", SEED, TasksParams(workers=1))
            tables = {
                t: read_table(tmp / t).to_pylist() for t in ("programs", "executions", "traces", "tasks")
            }
            yield Run(tables, Counter(calls.read_text().split()))
        finally:
            unregister("toy")  # forget the instance LANGUAGES_ENV loaded


def test_the_grammar_names_the_language_and_the_registry_finds_it(run: Run) -> None:
    assert grammar_language(GRAMMAR) == "toy"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(LANGUAGES_ENV, "toy=toy_language:TOY")
        try:
            assert language("toy") is toy_language.TOY
        finally:
            unregister("toy")


def test_the_programs_are_rendered_by_the_language(run: Run) -> None:
    programs = run.tables["programs"]
    assert programs
    for row in programs:
        indents = {len(line) - len(line.lstrip(" ")) for line in row["source"].splitlines()}
        assert 2 in indents and indents <= {0, 2, 4, 6, 8}, row["source"]


def test_every_row_names_its_language(run: Run) -> None:
    for table, rows in run.tables.items():
        assert rows and {row["language"] for row in rows} == {"toy"}, table


def test_every_stage_kept_cases(run: Run) -> None:
    executions = run.tables["executions"]
    assert sum(r["status"] == "ok" for r in executions) >= 4
    assert len(run.tables["traces"]) >= 4
    assert {r["family"] for r in run.tables["tasks"]} >= {"white_box", "output", "input"}
    assert {r["source"] for r in run.tables["tasks"]} <= {r["source"] for r in run.tables["programs"]}


def test_the_language_ran_and_traced_the_programs(run: Run) -> None:
    ok = sum(r["status"] == "ok" for r in run.tables["executions"])
    # every case ran under both hash seeds; every ok one was traced under both (row and digest)
    assert run.calls["run"] == 2 * len(run.tables["executions"])
    assert run.calls["trace_row"] == run.calls["trace_digest"] == ok


def test_the_tasks_stage_read_the_programs_with_the_language(run: Run) -> None:
    assert run.calls["program_features"] >= len(run.tables["traces"])
    for row in run.tables["tasks"]:
        assert "the Toy program below" in row["prompt"] or "the Toy function below" in row["prompt"]
        assert "Python" not in row["prompt"]


def test_the_scorer_judges_with_the_language(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LANGUAGES_ENV, "toy=toy_language:TOY")
    compared = Counter[str]()
    strict_equal = toy_language.TOY.strict_equal

    def counted(a: Any, b: Any) -> bool:
        compared["strict_equal"] += 1
        return strict_equal(a, b)

    monkeypatch.setattr(toy_language.TOY, "strict_equal", counted)
    by_family: dict[str, dict[str, Any]] = {}
    for row in run.tables["tasks"]:
        by_family.setdefault(row["family"], row)
    try:
        for family, row in by_family.items():
            best = 2.0 if family == "white_box" else 1.0
            assert score_item(row, gold_completion(row), language="toy").reward == best, family
            n = len(json.loads(row["questions"]))
            wrong = "<answer>\n" + "\n".join(["no idea"] * n) + "\n</answer>"
            assert score_item(row, wrong, language="toy").reward < best, family
        assert compared["strict_equal"] > 0
        judged = compared["strict_equal"]
        row = by_family["output"]
        assert score_item({**row, "language": "toy"}, gold_completion(row)).reward == 1.0  # the row's wins
        assert compared["strict_equal"] > judged
    finally:
        unregister("toy")
