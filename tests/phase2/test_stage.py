"""The phase2 stage on a real (small) pipeline run: synthesize → inputs → execute → phase2.

Every item is judged by the one codegen scorer (the untrusted sandbox): the reference program
passes all its hidden tests, and a program that only memorises the shown examples fails some
hidden test on most items (the share is measured and printed).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.contracts import PHASE2_SCHEMA, PROGRAMS_SCHEMA, SPARES_SCHEMA
from factory.errors import UserError
from factory.inputs.pool_table import write_pools
from factory.io import read_table, shard_paths
from factory.params import ExecuteParams, InputsParams, Phase2Params, validate_section
from factory.phase2.items import gold_completion, memorizer_source
from factory.phase2.stage import choose_hidden, memorizer_fails, run_phase2_stage
from factory.scoring import score_batch


@pytest.fixture(scope="module")
def pipeline(data_chain) -> dict[str, Any]:
    """One tier of the real grammar through the data stages (every operation once, tier 4)."""
    root, params = data_chain((4,))
    return {"root": root, "params": params}


@pytest.fixture(scope="module")
def built(pipeline: dict[str, Any], execverify: str) -> dict[str, Any]:
    """The phase2 stage through its command, as dvc.yaml runs it."""
    root = pipeline["root"]
    proc = subprocess.run(
        [execverify, "stage", "phase2", "--params", str(root / "params.yaml")]
        + ["--programs", str(root / "programs"), "--executions", str(root / "executions")]
        + ["--spares", str(root / "spares")]
        + ["--out", str(root / "phase2"), "--stats", str(root / "phase2.json")],
        capture_output=True,
        text=True,
        timeout=600,
        env={"CI": "1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "dropped because" in proc.stderr
    stats = json.loads((root / "phase2.json").read_text())
    return {"items": read_table(root / "phase2").to_pylist(), "stats": stats, "root": root}


def test_items_have_the_schema_signature_examples_and_hidden_tests(built: dict[str, Any]) -> None:
    items, stats = built["items"], built["stats"]
    table = read_table(built["root"] / "phase2")
    assert table.schema.remove_metadata().equals(PHASE2_SCHEMA.remove_metadata())
    assert stats["in"] == stats["out"] + stats["dropped_total"]
    # Programs the inputs stage dropped have no executions (no_ok_case); of the others most become items.
    executed = stats["in"] - stats["dropped"].get("no_ok_case", 0)
    assert stats["out"] == len(items) >= 0.5 * executed > 0
    assert stats["provenance"]["python_version"]
    assert set(stats["items_by_tier"]) == {"4"}
    for item in items:
        tests, examples = json.loads(item["tests"]), json.loads(item["examples"])
        assert item["family"] == "codegen" and item["origin"] == "synth" and item["tier"] == 4
        assert 3 <= len(tests) == item["n_tests"] <= 8 and 2 <= len(examples) == item["n_examples"] <= 3
        assert item["signature"].startswith(f"def {item['entry']}(") and item["signature"] in item["prompt"]
        shown_calls = {e.split(" := ", 1)[1].split(")) == ", 1)[0] for e in examples}
        hidden_calls = {t.split(" := ", 1)[1].split(")) == ", 1)[0] for t in tests}
        assert not shown_calls & hidden_calls, "a hidden test repeats a shown example"
        for call in shown_calls:
            assert f">>> {call})" in item["prompt"]
        for call in hidden_calls:
            assert f">>> {call})" not in item["prompt"]  # hidden means not shown


def test_reference_program_passes_every_hidden_test(built: dict[str, Any]) -> None:
    items = built["items"]
    results = score_batch(items, [gold_completion(i) for i in items])
    failing = [(i["program_id"], r.to_dict()) for i, r in zip(items, results, strict=True) if r.reward != 1.0]
    assert not failing, failing[:3]
    assert all(r.n_right == i["n_tests"] for i, r in zip(items, results, strict=True))


def test_a_memorizer_fails_some_hidden_test_on_most_items(built: dict[str, Any]) -> None:
    items = built["items"]
    completions = []
    for item in items:
        shown = []
        for example in json.loads(item["examples"]):
            call, rest = example.split(" := ", 1)[1].split(")) == ", 1)
            args = call.split("(", 1)[1]
            shown.append((args, rest.rsplit(" and type(_r).__name__ == ", 1)[0]))
        completions.append(f"<answer>\n```python\n{memorizer_source(item['entry'], shown)}```\n</answer>")
    results = score_batch(items, completions)
    fails = [r.reward < 1.0 for r in results]
    share = sum(fails) / len(fails)
    print(f"memorizer fails some hidden test on {sum(fails)}/{len(fails)} items ({share:.1%})")
    assert share > 0.5
    # It still passes the shown examples: the failures come from the hidden tests alone.
    shown_items = [{**i, "tests": i["examples"]} for i in items[:40]]
    assert all(r.reward == 1.0 for r in score_batch(shown_items, completions[:40]))
    # The stage's own count (computed without running anything) is the same.
    assert built["stats"]["memorizer"]["items_where_it_fails_a_hidden_test"] == sum(fails)


def test_same_params_and_seed_give_byte_identical_items(pipeline: dict[str, Any], built: dict) -> None:
    root, p = pipeline["root"], pipeline["params"]
    again = root / "again"
    run_phase2_stage(
        p.seed, p.phase2, p.inputs, p.execute, p.synthesize.grammars,
        root / "programs", root / "executions", root / "spares", again, root / "again.json",
    )  # fmt: skip
    first = [path.read_bytes() for path in shard_paths(root / "phase2")]
    assert first == [path.read_bytes() for path in shard_paths(again)]


def test_executions_out_of_program_order_is_a_user_error(pipeline: dict[str, Any], tmp_path: Path) -> None:
    root, p = pipeline["root"], pipeline["params"]
    programs = read_table(root / "programs")
    (tmp_path / "reversed").mkdir()
    backwards = programs.take(list(range(programs.num_rows - 1, -1, -1)))
    pq.write_table(backwards, tmp_path / "reversed/part-00000.parquet")
    with pytest.raises(UserError, match="not in .* or not in its order"):
        run_phase2_stage(
            p.seed, p.phase2, p.inputs, p.execute, p.synthesize.grammars, tmp_path / "reversed",
            root / "executions", root / "spares", tmp_path / "out", tmp_path / "s.json",
        )  # fmt: skip
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_choose_hidden_skips_shown_arguments_and_prefers_new_outputs() -> None:
    shown = [("1", "2", "int"), ("2", "4", "int")]
    ran = [("1", "2", "int"), ("5", "4", "int"), ("7", "14", "int"), ("7", "14", "int"), ("8", "16", "int")]
    assert choose_hidden(shown, ran, 3) == [("7", "14", "int"), ("8", "16", "int"), ("5", "4", "int")]
    # Seen outputs: first those a memorizer of the examples (answering "2") gets wrong.
    shown = [("1", "2", "int"), ("2", "4", "int"), ("3", "2", "int")]
    ran = [("5", "2", "int"), ("6", "4", "int"), ("7", "8", "int")]
    assert choose_hidden(shown, ran, 3) == [("7", "8", "int"), ("6", "4", "int"), ("5", "2", "int")]
    # 4 == 4.0 in Python, but a float is not the int the tests ask for.
    assert not memorizer_fails(shown, [("9", "2", "int")])
    assert memorizer_fails(shown, [("9", "2.0", "float")])
    assert not memorizer_fails([("True", "1", "int")], [("1", "1", "int")])


def test_bad_phase2_params_name_the_param() -> None:
    with pytest.raises(UserError, match="phase2.hidden_tests"):
        validate_section(Phase2Params, {"hidden_tests": 0}, "params.yaml", prefix="phase2.")
    with pytest.raises(UserError, match="min_examples must not exceed examples"):
        validate_section(Phase2Params, {"examples": 2, "min_examples": 3}, "params.yaml", prefix="phase2.")
    with pytest.raises(UserError, match="phase2.shown"):
        validate_section(Phase2Params, {"shown": 3}, "params.yaml", prefix="phase2.")


def test_a_codegen_row_scores_through_execverify_score(built: dict[str, Any], execverify: str) -> None:
    item = built["items"][0]
    root = built["root"]
    (root / "task.json").write_text(json.dumps(item))
    (root / "good.txt").write_text(gold_completion(item))
    (root / "bad.txt").write_text("```python\ndef f(*args):\n    return None\n```")
    for name, reward in (("good", 1.0), ("bad", 0.0)):
        proc = subprocess.run(
            [execverify, "score", "--task", str(root / "task.json")]
            + ["--completion", str(root / f"{name}.txt"), "--json"],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["reward"] == reward


def test_spares_that_fall_short_are_topped_up_with_fresh_draws(tmp_path: Path) -> None:
    """A program whose spares all give the output a memorizer of its examples answers, and one with
    fewer spares than ``min_hidden_tests``, get ``phase2.candidates`` fresh draws (from the saved pools,
    run under both seeds); a program with enough telling spares gets none. The fresh draws that
    defeat the memorizer come first among the hidden tests."""
    source = "def f(n):\n    return n > 100\n"
    programs = [
        {
            "program_id": f"p{i}",
            "index": i,
            "language": "python",
            "source": source,
            "entry": "f",
            "tier": 1,
            "target": "int.gt",
            "param_types": '[["n", "int"]]',
            "n_lines": 2,
            "grammar_hash": "g",
            "reserve": False,
        }  # fmt: skip
        for i in range(3)
    ]
    shown = [("5", "False"), ("200", "True"), ("7", "False")]
    executions = [
        {"program_id": p["program_id"], "args": a, "status": "ok", "output_repr": o, "output_type": "bool"}
        for p in programs
        for a, o in shown
    ]
    spares = [(0, str(n), "False") for n in range(10, 18)]  # all the memorizer's answer
    spares += [(1, "8", "False")]  # one spare only
    spares += [(2, str(n), "False") for n in range(10, 17)] + [(2, "500", "True")]  # a telling one
    spare_rows = [
        {"program_id": f"p{i}", "language": "python", "args": a, "output_repr": o, "output_type": "bool"}
        for i, a, o in spares
    ]
    for name, rows, schema in (
        ("programs", programs, PROGRAMS_SCHEMA),
        ("executions", executions, None),
        ("spares", spare_rows, SPARES_SCHEMA),
    ):
        (tmp_path / name).mkdir()
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / name / "part-00000.parquet")
    write_pools({"python": {'["int"]': [str(n) for n in range(90, 130)]}}, tmp_path / "pools")
    stats = run_phase2_stage(
        0, Phase2Params(), InputsParams(), ExecuteParams(workers=1), "grammars/python",
        tmp_path / "programs", tmp_path / "executions", tmp_path / "spares",
        tmp_path / "out", tmp_path / "out.json", tmp_path / "pools",
    )  # fmt: skip
    items = {item["program_id"]: item for item in read_table(tmp_path / "out").to_pylist()}
    assert stats.extra["topped_up"] == 2
    assert stats.extra["run_status"] == {"confirm:ok": 8 + 1 + 8, "fresh:ok": 2 * 12}
    assert stats.extra["memorizer"]["items_where_it_fails_a_hidden_test"] == 3
    for program_id in ("p0", "p1"):
        tests = json.loads(items[program_id]["tests"])
        assert len(tests) == 8 and "== True" in tests[0], tests  # a fresh draw above 100 first
    assert [test.split("f(", 1)[1].split(")", 1)[0] for test in json.loads(items["p2"]["tests"])] == [
        "500",
        *map(str, range(10, 17)),
    ]
