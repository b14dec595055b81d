"""Properties of traces and tasks over synthesized cases of the control-flow tiers (docs/design.md §4, §5).

The whole chain runs on real synthesized programs: synthesize → inputs → execute → trace → tasks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from factory.execute.stage import run_execute_stage
from factory.inputs.stage import run_inputs_stage
from factory.io import read_table
from factory.params import ExecuteParams, InputsParams, SynthesizeParams, TasksParams, TraceParams
from factory.scoring import score_item
from factory.synth.stage import run_synthesize_stage
from factory.tasks.analysis import statement_lines
from factory.tasks.prompts import gold_completion
from factory.tasks.questions import questions_from_trace
from factory.tasks.sampling import literal_state
from factory.tasks.stage import run_tasks_stage
from factory.trace.stage import run_trace_stage


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("chain")
    run_synthesize_stage(11, SynthesizeParams(tiers=[4, 5, 6]), tmp / "programs", tmp / "s.json")
    execute = ExecuteParams()
    run_inputs_stage(
        11,
        InputsParams(),
        execute,
        "grammars/python",
        tmp / "programs",
        tmp / "cases",
        tmp / "i.json",
    )
    run_execute_stage(tmp / "cases", tmp / "executions", tmp / "e.json", execute)
    trace_stats = run_trace_stage(tmp / "executions", tmp / "traces", tmp / "t.json", TraceParams(), execute)
    run_tasks_stage(
        tmp / "traces", tmp / "tasks", tmp / "k.json", 11, TasksParams(families=["white_box", "coverage"])
    )
    return {
        "executions": {r["case_id"]: r for r in read_table(tmp / "executions").to_pylist()},
        "traces": read_table(tmp / "traces").to_pylist(),
        "tasks": read_table(tmp / "tasks").to_pylist(),
        "trace_stats": trace_stats.to_dict(),
    }


#: Prints, under the first hash seed, the argument texts whose sets the scorer's child (marshal)
#: would iterate in another order than their literal does (``literals.reordered_copy``).
_REORDERED = """
import json, sys
from factory.literals import parse_args, reordered_copy
texts = json.load(sys.stdin)
print(json.dumps([t for t in texts if reordered_copy(parse_args(t)) is not None]))
"""


def test_enough_cases_survive(chain: dict) -> None:
    """The tracer returns what the execute stage recorded, except where the recorded run saw a set
    argument in the scorer's order and the tracer in the literal's (the trace stage drops those)."""
    assert len(chain["traces"]) > 500
    differs = chain["trace_stats"]["dropped"].get("trace_output_differs", 0)
    traced = {row["case_id"] for row in chain["traces"]}
    dropped = [r["args"] for case_id, r in chain["executions"].items() if case_id not in traced]
    env = {**os.environ, "PYTHONHASHSEED": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _REORDERED], input=json.dumps(dropped), capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert differs <= len(json.loads(done.stdout))


def test_the_last_step_returns_what_the_execute_stage_recorded(chain: dict) -> None:
    for row in chain["traces"]:
        trace = json.loads(row["trace"])
        execution = chain["executions"][row["case_id"]]
        assert trace["output_repr"] == execution["output_repr"]
        assert trace["output_type"] == execution["output_type"]
        last = trace["steps"][-1]
        assert last["func"] == "f"  # the entry's frame returns the value
        assert row["source"].splitlines()[last["line"] - 1].strip().startswith("return")


def test_next_line_golds_are_statement_lines_or_minus_one(chain: dict) -> None:
    checked = 0
    for item in chain["tasks"]:
        lines = statement_lines(item["source"])
        for q in json.loads(item["questions"]):
            if q["family"] == "next_line":
                assert q["answer"] == -1 or q["answer"] in lines
                checked += 1
    assert checked > 1000


def test_every_gold_answer_round_trips_through_the_scorer(chain: dict) -> None:
    families = set()
    for item in chain["tasks"]:
        result = score_item(item, gold_completion(item))
        families.add(item["family"])
        assert result.n_unparsed == 0 and result.n_wrong == 0, (item["task_id"], result.per_question)
        assert result.reward == (2.0 if item["family"] == "white_box" else 1.0)
    assert families == {"white_box", "coverage"}


def test_state_golds_are_typed_literals_or_nil(chain: dict) -> None:
    import ast

    for item in chain["tasks"]:
        for q in json.loads(item["questions"]):
            if q["family"] == "state" and q["answer"] != "Nil":
                value, type_name = q["answer"].rsplit(";", 1)
                assert type(ast.literal_eval(value.strip())).__name__ == type_name.strip()


def test_questions_from_trace_are_distinct_and_their_state_golds_literal(chain: dict) -> None:
    """What ``sample_questions(from_trace=True)`` relies on instead of checking again: no two
    questions of a trace ask the same thing, and every state gold the tracer recorded as literal
    parses back (``literal_state``)."""
    states = 0
    for row in chain["traces"]:
        questions = questions_from_trace(row["source"], json.loads(row["trace"]), max_occurrence=4)
        keys = [(q["family"], q.get("line"), q.get("occurrence"), q.get("var")) for q in questions]
        assert len(keys) == len(set(keys))
        for q in questions:
            if q["family"] == "state":
                assert literal_state(q), q
                states += 1
    assert states > 1000
