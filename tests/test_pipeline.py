"""The synthesize → inputs → execute pipeline through the CLI, as dvc runs it: byte-identical reruns."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from factory.io import read_table, shard_paths
from tests.pipeline import run_stages

STAGES = ("synthesize", "inputs", "execute")


def test_same_params_and_seed_give_byte_identical_outputs(execverify: str, tmp_path: Path) -> None:
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["synthesize"]["tiers"] = [2, 5]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    first = run_stages(execverify, STAGES, tmp_path / "params.yaml", tmp_path / "a")
    second = run_stages(execverify, STAGES, tmp_path / "params.yaml", tmp_path / "b")
    for folder in ("programs", "cases", "executions"):
        a, b = shard_paths(tmp_path / "a" / folder), shard_paths(tmp_path / "b" / folder)
        assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b], folder
    for stage in STAGES:
        assert first[stage] == second[stage]
        assert first[stage]["in"] == first[stage]["out"] + first[stage]["dropped_total"]
    executions = read_table(tmp_path / "a" / "executions")
    assert executions.num_rows == first["execute"]["in"]
    ok = [s for s in executions.column("status").to_pylist() if s == "ok"]
    assert len(ok) == first["execute"]["out"] >= 0.8 * executions.num_rows
    assert set(first["execute"]["yield_by_tier"]) == {"2", "5"}


def test_bad_params_are_one_line_and_exit_2(execverify: str, tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("seed: 1\nsynthesize: {tiers: [9]}\n")
    proc = subprocess.run(
        [execverify, "stage", "synthesize", "--params", str(tmp_path / "p.yaml")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.count("\n") == 1 and "synthesize.tiers" in proc.stderr and "Traceback" not in proc.stderr
    )
    proc = subprocess.run(
        [execverify, "stage", "synthesize", "--params", str(tmp_path / "missing.yaml")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "not found" in proc.stderr


def test_two_languages_in_one_run(execverify: str, tmp_path: Path) -> None:
    """``synthesize.grammars`` with Python and JavaScript: every stage through assemble, each row
    in its language, Python's programs as a Python-only run makes them, and the release's
    per-language configs."""
    import datasets

    from factory.registry import STAGES as ALL_STAGES
    from factory.scoring import score_item
    from factory.tasks.prompts import gold_completion

    params = yaml.safe_load(Path("params.yaml").read_text())
    params["synthesize"].update(tiers=[1], programs_per_target_tier=1, reserve_per_target=0)
    params["synthesize"]["grammars"] = ["grammars/python", "grammars/javascript"]
    (tmp_path / "both.yaml").write_text(yaml.safe_dump(params))
    names = tuple(spec.name for spec in ALL_STAGES)
    stats = run_stages(execverify, names, tmp_path / "both.yaml", tmp_path / "both")
    assert set(stats["synthesize"]["languages"]) == {"python", "javascript"}

    tables = {
        t: read_table(tmp_path / "both" / t).to_pylist() for t in ("programs", "cases", "tasks", "phase2")
    }
    for name, rows in tables.items():
        order = [r["language"] for r in rows]
        assert set(order) == {"python", "javascript"}, name
        assert order == sorted(order, key=["python", "javascript"].index), name  # the grammars' order
    # Every JavaScript output the execute stage recorded is what a plain node process prints.
    executions = read_table(tmp_path / "both" / "executions").to_pylist()
    ran = [r for r in executions if r["language"] == "javascript" and r["status"] == "ok"]
    assert len(ran) >= 100
    assert _plain_node_outputs(ran, tmp_path / "cases.js") == [
        (r["output_repr"], r["output_type"]) for r in ran
    ]

    tasks = {r["language"]: r for r in tables["tasks"] if r["family"] == "output"}
    assert (
        "JavaScript" in tasks["javascript"]["prompt"]
        and "assert.deepStrictEqual" in tasks["javascript"]["prompt"]
    )
    for task in tasks.values():
        assert score_item(task, gold_completion(task)).reward == 1.0, task["language"]

    # Adding a language changes none of Python's programs.
    params["synthesize"]["grammars"] = ["grammars/python"]
    (tmp_path / "python.yaml").write_text(yaml.safe_dump(params))
    run_stages(execverify, ("synthesize",), tmp_path / "python.yaml", tmp_path / "python")
    alone = read_table(tmp_path / "python" / "programs").to_pylist()
    assert alone == [r for r in tables["programs"] if r["language"] == "python"]

    release = tmp_path / "both" / "release"
    card = (release / "README.md").read_text()
    assert "## Items by language" in card and "`javascript`" in card
    assert "Only the `python` rows are matched" in card and "### JavaScript" in card
    for language in ("python", "javascript"):
        rows = datasets.load_dataset(str(release), f"phase1-{language}", split="train")
        assert len(rows) > 0 and set(rows["language"]) == {language}
    mixed = datasets.load_dataset(str(release), "phase1", split="train")
    assert set(mixed["language"]) == {"python", "javascript"}
    codegen = datasets.load_dataset(str(release), "phase2-javascript", split="train")
    assert len(codegen) > 0 and set(codegen["language"]) == {"javascript"}
    assert "```javascript" in codegen[0]["prompt"]


def _plain_node_outputs(cases: list[dict], script: Path) -> list[tuple[str, str]]:
    """(canonical text, type name) of each JavaScript case as one plain ``node`` process gives it:
    each program in a function scope of its own, called on its argument literals, the value
    printed by canonical.js; nothing of the worker, the ``vm`` contexts or the sandbox."""
    import json
    import shutil

    import factory.languages.javascript as js
    from factory.languages.javascript.node_env import FIXED_ENV

    canonical_js = Path(js.__file__).with_name("canonical.js")
    lines = [
        f"const {{ canonical, typeName }} = require({json.dumps(str(canonical_js))});",
        "const out = [];",
    ]
    for case in cases:
        lines.append(
            f"out.push((() => {{\n{case['source']}\nconst v = {case['entry']}({case['args']});\n"
            "return [canonical(v), typeName(v)];\n})());"
        )
    lines.append("process.stdout.write(JSON.stringify(out));")
    script.write_text("\n".join(lines))
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, str(script)], capture_output=True, text=True, timeout=600, env=dict(FIXED_ENV)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [tuple(pair) for pair in json.loads(done.stdout)]
