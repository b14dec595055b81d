"""The assemble stage on a real (small) tasks table with planted duplicates and a benchmark program."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from factory.contracts import TASKS_SCHEMA
from factory.io import read_table
from factory.params import AssembleParams
from factory.release.card import card_configs
from factory.release.normalize import program_key
from factory.scoring import score_item
from factory.tasks.prompts import gold_completion

ARROW_TO_FEATURE = {
    "string": "string",
    "int32": "int32",
    "bool": "bool",
    "double": "float64",
    "int64": "int64",
}


def _load(folder: Path, config: str, cache: Path):
    import datasets

    return datasets.load_dataset(str(folder), config, cache_dir=str(cache))


def test_every_config_loads_with_the_documented_columns(release: dict, tmp_path: Path) -> None:
    folder = release["dir"]
    card = (folder / "README.md").read_text()
    configs = {c["config_name"]: c for c in card_configs(card)}
    assert list(configs)[0] == "phase1" and configs["phase1"].get("default") is True
    assert set(configs) == {"phase1", "white_box", "output", "input", "coverage"}
    expected = {f.name: ARROW_TO_FEATURE[str(f.type)] for f in TASKS_SCHEMA}
    assert f"`{next(iter(expected))}` | `string`" in card  # the card documents the columns
    for name, counts in release["stats"]["configs"].items():
        ds = _load(folder, name, tmp_path / "cache")
        assert set(ds) == {"train", "test"}
        for split in ("train", "test"):
            assert ds[split].num_rows == counts[split] > 0, (name, split)
            assert {k: v.dtype for k, v in ds[split].features.items()} == expected


def test_splits_are_disjoint_by_program(release: dict) -> None:
    programs = defaultdict(set)
    for path in release["dir"].glob("*/*/*.parquet"):
        split = path.parent.name
        programs[split] |= set(pq.read_table(path, columns=["program_id"]).column(0).to_pylist())
    assert programs["train"] and programs["test"]
    assert not programs["train"] & programs["test"]
    share = len(programs["test"]) / (len(programs["train"]) + len(programs["test"]))
    assert 0.03 < share < 0.2  # test_share 0.1 by hash


def test_phase1_is_white_box_and_input_in_the_configured_shares(release: dict) -> None:
    for split in ("train", "test"):
        table = read_table(release["dir"] / "phase1" / split)
        families = table.column("family").to_pylist()
        assert set(families) == {"white_box", "input"}
        assert families.count("white_box") == families.count("input")  # 0.5 / 0.5
        assert set(table.column("tier").to_pylist()) == {1, 4}  # the curriculum column


def test_planted_benchmark_program_and_duplicates_are_removed_and_counted(
    release: dict, planted: dict
) -> None:
    stats = release["stats"]
    released = set()
    for path in release["dir"].glob("*/*/*.parquet"):
        released |= set(pq.read_table(path, columns=["program_id"]).column(0).to_pylist())
    assert planted["cruxeval_pid"] not in released
    assert stats["decontamination"]["programs_removed"]["cruxeval"]["ast"] >= 1
    assert stats["dropped"]["exact_duplicate"] == 5
    assert len(planted["near_pair"] & released) == 1  # one of the two near duplicates stays
    assert min(planted["near_pair"]) in released  # the smaller program_id
    assert stats["programs"]["near_duplicate"] >= 1
    assert stats["in"] == planted["rows"] == stats["out"] + stats["dropped_total"]


def test_same_input_gives_a_byte_identical_release(
    release: dict, planted: dict, tmp_path: Path, assemble
) -> None:
    again = assemble(planted["dir"], tmp_path)
    assert again == release["stats"]
    first = sorted(p.relative_to(release["out"]) for p in release["out"].rglob("*") if p.is_file())
    second = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert first == second and any(p.suffix == ".png" for p in first)
    for rel in first:
        assert (release["out"] / rel).read_bytes() == (tmp_path / rel).read_bytes(), rel


def test_adding_programs_moves_no_existing_program(
    planted: dict, release: dict, tmp_path: Path, assemble, shard
) -> None:
    rows = read_table(planted["dir"]).to_pylist()
    programs = sorted({r["program_id"] for r in rows})
    half = set(programs[::2])
    (tmp_path / "tasks").mkdir()
    shard([r for r in rows if r["program_id"] in half], tmp_path / "tasks" / "part-00000.parquet")
    assemble(tmp_path / "tasks", tmp_path / "small")

    def splits(folder: Path) -> dict[str, str]:
        return {
            pid: path.parent.name
            for path in folder.glob("white_box/*/*.parquet")
            for pid in pq.read_table(path, columns=["program_id"]).column(0).to_pylist()
        }

    small, full = splits(tmp_path / "small" / "release"), splits(release["dir"])
    # A near-duplicate whose twin (smaller id) is not in the small release is kept there and
    # dropped from the full one (the planted pair, and any the programs make); every other
    # program of the small release is in the full one too, in the same split.
    common = small.keys() & full.keys()
    assert len(common) > 0.9 * len(small) > 0
    assert all(full[pid] == small[pid] for pid in common)
    sources = {r["program_id"]: r["source"] for r in rows}
    keys = {pid: program_key(ast.parse(src)) for pid, src in sources.items()}
    for pid in small.keys() - full.keys():
        assert any(keys[other] == keys[pid] and other < pid for other in sources.keys() - half), pid


def test_released_rows_score_through_factory_scoring(release: dict, tmp_path: Path) -> None:
    ds = _load(release["dir"], "output", tmp_path / "cache")["train"]
    for row in ds.select(range(min(20, ds.num_rows))):
        assert score_item(row, gold_completion(row)).reward == 1.0
    wb = _load(release["dir"], "white_box", tmp_path / "cache")["test"]
    row = wb[0]
    assert score_item(row, gold_completion(row)).reward == 2.0
    assert score_item(row, "<answer>\nno\n</answer>").reward == 0.0


def test_the_card_has_tables_plots_and_provenance_and_no_time(release: dict) -> None:
    card = (release["dir"] / "README.md").read_text()
    for heading in (
        "Configs and splits",
        "Items by tier and family",
        "Yield per stage",
        "Answers",
        "Provenance",
    ):
        assert f"## {heading}" in card
    for png in re.findall(r"\]\((assets/[^)]+\.png)\)", card):
        data = (release["dir"] / png).read_bytes()
        assert data.startswith(b"\x89PNG") and b"tIME" not in data and b"Software" not in data
    assert len(re.findall(r"\]\((assets/[^)]+\.png)\)", card)) == 3
    assert "| tier 4 |" in card and "| cruxeval | 800 |" in card
    assert "no difficulty filter was applied" in card
    assert not re.search(r"20\d\d-\d\d-\d\d|\d\d:\d\d:\d\d", card)
    assert "python_version" not in card and "3." in card.split("## Provenance")[1]


def test_difficulty_columns_and_solver_reach_the_release(small_tasks: Path, tmp_path: Path, assemble) -> None:
    table = read_table(small_tasks)
    n = table.num_rows
    table = table.append_column("solver_model", pa.array(["SmolLM2-135M"] * n))
    table = table.append_column("n", pa.array([10] * n, pa.int32()))
    table = table.append_column("passes", pa.array([i % 4 for i in range(n)], pa.int32()))
    table = table.append_column("pass_rate", pa.array([(i % 4) / 10 for i in range(n)]))
    (tmp_path / "difficulty").mkdir()
    pq.write_table(table, tmp_path / "difficulty" / "part-00000.parquet")
    stats = {"solver": "transformers", "solver_model": "SmolLM2-135M", "n": 10, "min_pass": 0, "max_pass": 3,
             "enabled": True}  # fmt: skip
    (tmp_path / "difficulty.json").write_text(json.dumps(stats))
    assemble(tmp_path / "difficulty", tmp_path / "out", difficulty_stats=tmp_path / "difficulty.json")
    card = (tmp_path / "out" / "release" / "README.md").read_text()
    assert "model `SmolLM2-135M`" in card and "[0, 3]" in card
    ds = _load(tmp_path / "out" / "release", "phase1", tmp_path / "cache")["train"]
    assert ds.features["pass_rate"].dtype == "float64" and ds.features["solver_model"].dtype == "string"


@pytest.fixture
def cli(execverify: str, tmp_path: Path):
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [execverify, "stage", "assemble", "--out", str(tmp_path / "rel"),
             "--stats", str(tmp_path / "s.json"), "--plots", str(tmp_path / "plots"), *args],
            capture_output=True, text=True, timeout=600, env={"CI": "1", "PATH": "/usr/bin:/bin"},
        )  # fmt: skip

    return run


def _one_line_exit_2(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert all(n in proc.stderr for n in needles), proc.stderr


def test_the_cli_assembles_and_bad_input_is_one_line_exit_2(
    cli, small_tasks: Path, tmp_path: Path, shard
) -> None:
    proc = cli("--tasks", str(small_tasks), "--metrics-dir", str(small_tasks.parent))
    assert proc.returncode == 0, proc.stderr
    assert "assemble:" in proc.stderr and (tmp_path / "rel" / "README.md").is_file()
    assert "| synthesize |" in (tmp_path / "rel" / "README.md").read_text()  # yield from the stage stats
    _one_line_exit_2(cli("--tasks", str(tmp_path / "missing")), "missing", "not found")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "part-00000.parquet").write_bytes(b"not parquet")
    _one_line_exit_2(cli("--tasks", str(broken)), "part-00000.parquet")
    other = tmp_path / "other"
    other.mkdir()
    shard([{"x": 1}], other / "part-00000.parquet", pa.schema([("x", "int64")]))
    _one_line_exit_2(cli("--tasks", str(other)), "not a tasks table")
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["assemble"]["test_share"] = 2
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(params))
    _one_line_exit_2(
        cli("--tasks", str(small_tasks), "--params", str(tmp_path / "p.yaml")), "assemble.test_share"
    )
    params["assemble"]["test_share"] = 0.1
    params["assemble"]["benchmarks"][0]["path"] = "nowhere/cruxeval.jsonl"
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(params))
    _one_line_exit_2(
        cli("--tasks", str(small_tasks), "--params", str(tmp_path / "p.yaml")), "nowhere/cruxeval.jsonl"
    )
    _one_line_exit_2(
        cli("--tasks", str(small_tasks), "--difficulty-stats", str(tmp_path / "none.json")),
        "difficulty stats",
    )
    assert (tmp_path / "rel" / "README.md").is_file()  # a failed run leaves the previous release
    assert not list(tmp_path.glob(".rel.*"))  # and no temporary folder


def test_params_validation() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        AssembleParams(phase1={"white_box": 0.7, "input": 0.7})
    with pytest.raises(ValidationError):
        AssembleParams(near_dup_literals="drop")
    with pytest.raises(ValidationError):
        AssembleParams(benchmarks=[{"name": "a", "path": "x"}, {"name": "a", "path": "y"}])
    assert AssembleParams().test_share == 0.1


def test_an_extra_config_over_another_input_is_one_table_entry(
    small_tasks: Path, small_release: dict, tmp_path: Path, assemble, shard, monkeypatch, execverify: str
) -> None:
    """How phase2 will come: codegen items in their own folder, one EXTRA_CONFIGS entry."""
    import gzip

    from factory.release import configs

    humaneval = json.loads(gzip.open("data/benchmarks/humaneval/HumanEval.jsonl.gz", "rt").readline())
    kept = small_release["kept"]  # the programs the release of small_tasks alone keeps
    firsts: dict[str, dict] = {}  # the first item of each program
    for r in read_table(small_tasks).to_pylist():
        firsts.setdefault(r["program_id"], r)
    dropped = [r for pid, r in firsts.items() if pid not in kept][:2]
    assert dropped, "small_tasks has near duplicates: the release drops some program"
    ours = [r for pid, r in firsts.items() if pid in kept][:10] + dropped  # ten kept, then the dropped
    assert len(ours) == 10 + len(dropped)
    rows = [
        {"task_id": f"cg{i}", "family": "codegen", "prompt": "Write f.", "source": r["source"],
         "entry": r["entry"], "tests": [f"assert {r['entry']}({r['args']}) == {r['output_repr']}"]}
        for i, r in enumerate(ours)
    ]  # fmt: skip
    rows.append(
        {**rows[0], "task_id": "cg-he", "source": humaneval["prompt"] + humaneval["canonical_solution"]}
    )
    schema = pa.schema(
        [("task_id", pa.string()), ("family", pa.string()), ("prompt", pa.string()), ("source", pa.string()),
         ("entry", pa.string()), ("tests", pa.list_(pa.string()))]
    )  # fmt: skip
    (tmp_path / "codegen").mkdir()
    shard(rows, tmp_path / "codegen" / "part-00000.parquet", schema)
    monkeypatch.setitem(
        configs.EXTRA_CONFIGS, "codegen", configs.ConfigSpec("phase2", "codegen", ("codegen",))
    )
    stats = assemble(small_tasks, tmp_path / "out", extra_inputs={"codegen": tmp_path / "codegen"})
    assert stats["decontamination"]["programs_removed"]["humaneval"]["ast"] == 1
    card = (tmp_path / "out" / "release" / "README.md").read_text()
    assert "config_name: phase2" in card and "| `tests` | `list<element: string>` |" in card
    ds = _load(tmp_path / "out" / "release", "phase2", tmp_path / "cache")
    loaded = [r for split in ds.values() for r in split]
    # HumanEval's solution is removed; ours go with their programs: the ten the release of
    # small_tasks keeps stay, those it drops (near duplicates or contaminated) go.
    released = {r["task_id"] for r in loaded}
    assert released == {r["task_id"] for r in rows[:10]}
    assert all(isinstance(r["tests"], list) and r["tests"][0].startswith("assert ") for r in loaded)
    # without a config for it, an extra input is a one-line error
    proc = subprocess.run(
        [execverify, "stage", "assemble", "--tasks", str(small_tasks),
         "--extra-input", f"codegen={tmp_path}/codegen",
         "--out", str(tmp_path / "x"), "--stats", str(tmp_path / "x.json"), "--plots", str(tmp_path / "xp")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    _one_line_exit_2(proc, "no config reads an input of that name")
