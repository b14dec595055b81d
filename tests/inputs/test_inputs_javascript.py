"""The inputs stage on JavaScript programs: pools of JavaScript literals, the language's job kinds,
its checks, a deterministic result whose arguments the JavaScript execute path runs; and one
error line for a language that lacks a facet the stage needs."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from factory import languages
from factory.cli import main
from factory.contracts import PROGRAMS_SCHEMA
from factory.errors import UserError
from factory.execute.runner import Executor
from factory.grammar.loader import load_grammar
from factory.grammar.types import parse_type
from factory.inputs.draw import draw_examples
from factory.inputs.pools import draw_pool, draw_type_pool
from factory.inputs.stage import run_inputs_stage
from factory.inputs.strategies import strategy_for
from factory.io import ShardWriter, read_table
from factory.languages.javascript import values
from factory.languages.javascript.values import js_value
from factory.params import ExecuteParams, InputsParams, SynthesizeParams
from factory.synth.stage import run_synthesize_stage

FOLDER = "grammars/javascript"
GRAMMAR = load_grammar(FOLDER)
JS = languages.language("javascript")
TYPES = ["number", "string", "boolean", "array[number]", "object[string, number]", "set[string]"] + [
    "map[string, array[string]]",
    "pair[string, number]",
]
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js >= 20) is not on PATH")


@pytest.mark.parametrize("type_text", TYPES)
def test_drawn_values_are_canonical_javascript_literals_that_read_back(type_text: str) -> None:
    t = parse_type(type_text)
    for value in draw_examples(strategy_for(GRAMMAR, t), 25, seed=5):
        text = JS.drawn_literal(value, t)
        back = values.literal_value(text)
        assert values.strict_equal(back, js_value(value, t)), (value, text)
        assert values.literal(back) == text  # canonical: the pools' text is the value model's


def test_the_pools_hold_javascript_argument_lists() -> None:
    assert draw_type_pool(GRAMMAR, "set[number]", 1, 40)[0].startswith("new Set(")
    key = json.dumps(["array[string]", "map[string, number]", "boolean"])
    pool = draw_pool(GRAMMAR, key, 1, 40)
    assert len(pool) == 40
    for args in pool:
        items, mapping, flag = values.parse_args(args)
        assert isinstance(items, list) and isinstance(mapping, values.JsMap) and isinstance(flag, bool)
        assert "'" not in args.split('"')[0]  # no Python repr: strings are double-quoted
    assert draw_pool(GRAMMAR, key, 1, 40) == pool


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few dozen synthesized programs of tiers 1, 3 and 5 (every 9th of one per target and tier)."""
    root = tmp_path_factory.mktemp("js_inputs")
    params = SynthesizeParams(
        grammars=[FOLDER], tiers=[1, 3, 5], programs_per_target_tier=1, reserve_per_target=0
    )
    run_synthesize_stage(4, params, root / "all", root / "s.json")
    rows = read_table(root / "all").to_pylist()[::9]
    with ShardWriter(root / "programs", PROGRAMS_SCHEMA) as out:
        out.write_many(rows)
    return root / "programs"


def _inputs(programs: Path, out: Path) -> dict[str, Any]:
    return run_inputs_stage(
        2,
        InputsParams(),
        ExecuteParams(workers=2),
        FOLDER,
        programs,
        out / "cases",
        out / "s.json",
        out / "pools",
    ).to_dict()


@needs_node
def test_the_stage_keeps_checked_cases_that_the_javascript_executor_runs(
    programs: Path, tmp_path: Path
) -> None:
    stats = _inputs(programs, tmp_path / "a")
    n = len(read_table(programs))
    assert stats["in"] == n == stats["out"] + stats["dropped_total"]
    assert stats["out"] >= n // 3
    assert set(stats["dropped"]) <= {
        "constant_output",
        "one_sided_branch",
        "irrelevant_statement",
        "idle_repetition",
        "no_candidate_ran",
    }
    assert stats["candidate_status"]["ok"] >= 0.8 * sum(stats["candidate_status"].values())
    assert set(stats["ablation_status"]) <= {"ok", "incomplete", "resource_limit"}
    cases = read_table(tmp_path / "a" / "cases").to_pylist()
    assert (
        len(cases) == stats["cases"] and {c["program_id"] for c in cases} and len(cases) <= 4 * stats["out"]
    )
    sources = {row["program_id"]: row for row in read_table(programs).to_pylist()}
    for case in cases:
        types = [t for _, t in json.loads(sources[case["program_id"]]["param_types"])]
        assert len(values.parse_args(case["args"])) == len(types)
    with Executor(language=JS, workers=1, memory_mb=256) as executor:
        results = list(executor.run(cases))
    assert [r["status"] for r in results] == ["ok"] * len(cases)
    # Deterministic: a second run writes the same bytes.
    _inputs(programs, tmp_path / "b")
    for table in ("cases", "pools"):
        first = sorted((tmp_path / "a" / table).iterdir())
        second = sorted((tmp_path / "b" / table).iterdir())
        assert [p.name for p in first] == [p.name for p in second]
        assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


def test_a_language_without_a_facet_is_one_error_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "factory.languages.javascript.normalize", None)
    with pytest.raises(UserError, match="JavaScript has no 'normalize' facet") as raised:
        JS.facet("normalize")
    assert "\n" not in str(raised.value)
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["synthesize"]["grammars"] = [FOLDER]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    with ShardWriter(tmp_path / "programs", PROGRAMS_SCHEMA) as out:
        out.write_many([])
    argv = [
        "stage",
        "inputs",
        "--params",
        str(tmp_path / "params.yaml"),
        "--programs",
        str(tmp_path / "programs"),
    ]
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--out", str(tmp_path / "cases"), "--stats", str(tmp_path / "s.json")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no 'normalize' facet" in err and "Traceback" not in err
    assert not (tmp_path / "cases").exists()


def test_programs_without_their_grammar_are_one_error(programs: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError) as raised:
        run_inputs_stage(
            2, InputsParams(), ExecuteParams(workers=1), ["grammars/python"], programs,
            tmp_path / "cases", tmp_path / "s.json",
        )  # fmt: skip
    assert str(raised.value) == (
        f"{programs}: programs in 'javascript', but no grammar of it is given (grammars/python)"
    )
    assert not (tmp_path / "cases").exists()
