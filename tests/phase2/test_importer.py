"""The importer on the bundled MBPP and HumanEval files and on local files made here (jsonl,
parquet, a dataset folder through ``datasets.load_dataset``), judged by the codegen scorer."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.contracts import PHASE2_SCHEMA
from factory.io import read_table
from factory.phase2.importer import import_dataset, read_rows
from factory.phase2.items import gold_completion
from factory.scoring import score_batch

BENCHMARKS = Path(__file__).resolve().parents[2] / "data" / "benchmarks"
MBPP = BENCHMARKS / "mbpp" / "sanitized-mbpp.json"
HUMANEVAL = BENCHMARKS / "humaneval" / "HumanEval.jsonl.gz"

GENERIC = [
    {
        "id": "add",
        "question": "Return the sum of two integers.",
        "tests": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(0, 0) == 0"],
        "solution": "def add(a, b):\n    return a + b\n",
    },
    {  # tests as JSON text, the entry named, no reference solution
        "problem": "Reverse a string.",
        "tests": json.dumps(["assert rev('ab') == 'ba'", "assert rev('') == ''"]),
        "entry_point": "rev",
    },
    {"question": "No tests here.", "tests": []},
    {"question": "Broken test.", "tests": ["assert f(1) =="]},
    {"tests": ["assert g(1) == 1"]},
]


def _cli(execverify: str, *args: str) -> subprocess.CompletedProcess:
    env = {"CI": "1", "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run([execverify, "phase2", "import", *args], capture_output=True, text=True, env=env)


def _benchmark(path: Path) -> Path:
    if not path.is_file():
        pytest.fail(f"{path} not found (data/benchmarks/ is part of the repository)")
    return path


def test_mbpp_imports_and_its_reference_code_passes(execverify: str, tmp_path: Path) -> None:
    # --timeout 60: the reference of 123 (amicable_numbers_sum(9999)) takes about 6 s of CPU here,
    # past the default 5 s, so with the default its verdict would follow the machine's speed.
    mbpp = str(_benchmark(MBPP))
    proc = _cli(
        execverify, mbpp, "--out", str(tmp_path / "mbpp"), "--name", "mbpp", "--verify", "--timeout", "60"
    )
    assert proc.returncode == 0, proc.stderr
    stats = json.loads((tmp_path / "metrics" / "import-mbpp.json").read_text())
    # 596 (tuple_size) tests `sys.getsizeof` without importing sys: its solution's own import
    # does not reach the tests, so the sandboxed check rightly fails it.
    assert stats["in"] == 427 and stats["out"] == 426 and stats["dropped"] == {"reference_fails": 1}
    items = read_table(tmp_path / "mbpp").to_pylist()
    first = next(i for i in items if i["program_id"] == "2")
    assert first["entry"] == "similar_elements" and first["n_tests"] == 3 and first["n_examples"] == 1
    assert "Write a function to find the shared elements" in first["prompt"]
    assert json.loads(first["examples"])[0] in first["prompt"]
    # A wrong solution fails the tests it is judged on.
    wrong = "```python\ndef similar_elements(a, b):\n    return set()\n```"
    assert score_batch([first], [wrong])[0].reward == 0.0


def test_humaneval_check_becomes_one_test_per_assert(tmp_path: Path) -> None:
    stats = import_dataset(
        read_rows(str(_benchmark(HUMANEVAL))), "humaneval", tmp_path / "he", tmp_path / "s.json"
    )
    assert stats.items_in == stats.items_out == 164
    items = read_table(tmp_path / "he").to_pylist()
    assert sum(i["n_tests"] > 1 for i in items) > 140  # split into asserts, so rewards are fractions
    results = score_batch(items, [gold_completion(i) for i in items])
    assert [r.reward for r in results] == [1.0] * 164
    # Half of a solution gets part of the reward: has_close_elements with the threshold ignored.
    item = items[0]
    half = "```python\ndef has_close_elements(numbers, threshold):\n    return len(numbers) > 5\n```"
    reward = score_batch([item], [half])[0].reward
    assert 0.0 < reward < 1.0


def test_generic_rows_from_jsonl_parquet_and_a_dataset_folder(tmp_path: Path) -> None:
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in GENERIC))
    folder = tmp_path / "folder" / "data"
    folder.mkdir(parents=True)
    keys = sorted({k for r in GENERIC for k in r})
    flat = [{k: json.dumps(r[k]) if isinstance(r.get(k), list) else r.get(k) for k in keys} for r in GENERIC]
    table = pa.Table.from_pylist(flat)
    pq.write_table(table, folder / "train-00000-of-00001.parquet")
    outs: list[list[dict[str, Any]]] = []
    for name, source in (("jsonl", str(jsonl)), ("parquet", str(folder / "train-00000-of-00001.parquet")),
                         ("folder", str(tmp_path / "folder"))):  # fmt: skip
        stats = import_dataset(
            read_rows(source), "toy", tmp_path / name, tmp_path / f"{name}.json", verify=True
        )
        assert stats.items_in == 5 and stats.items_out == 1, name
        assert stats.dropped == {"no_tests": 1, "test_syntax_error": 1, "no_problem": 1, "no_reference": 1}
        outs.append(read_table(tmp_path / name).to_pylist())
        assert read_table(tmp_path / name).schema.remove_metadata().equals(PHASE2_SCHEMA.remove_metadata())
    assert outs[0] == outs[1] == outs[2]
    item = outs[0][0]
    assert item["entry"] == "add" and item["origin"] == "toy" and item["program_id"] == "add"
    unverified = import_dataset(read_rows(str(jsonl)), "toy", tmp_path / "all", tmp_path / "all.json")
    assert unverified.items_out == 2
    rev = next(i for i in read_table(tmp_path / "all").to_pylist() if i["entry"] == "rev")
    assert score_batch([rev], ["```python\ndef rev(s):\n    return s[::-1]\n```"])[0].reward == 1.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "file not found"),
        (b"{not json\n", "not valid JSON"),
        (b"\x1f\x8b broken gzip", "cannot read"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    execverify: str, tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / ("rows.jsonl.gz" if content and content.startswith(b"\x1f") else "rows.jsonl")
    if content is not None:
        path.write_bytes(content)
    proc = _cli(execverify, str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert message in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_missing_hub_dataset_is_one_line(execverify: str, tmp_path: Path) -> None:
    proc = _cli(execverify, "nobody/no-such-dataset", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "cannot load dataset 'nobody/no-such-dataset'" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_gzip_jsonl_reads_like_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(json.dumps(GENERIC[0]) + "\n")
    assert list(read_rows(str(path))) == [GENERIC[0]]
