"""Read-back through a Hub-compatible server: a release published (git commit + tag) into olah
loads with ``datasets.load_dataset("ORG/NAME", config, revision=tag)`` exactly as the folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from factory.io import read_table
from factory.params import AssembleParams

READ = """
import hashlib, json, sys
import datasets
ds = datasets.load_dataset(sys.argv[1], sys.argv[2], revision=sys.argv[3])
out = {}
for split, d in ds.items():
    rows = sorted(json.dumps(r, sort_keys=True) for r in d)
    out[split] = {"rows": len(rows), "sha": hashlib.sha256("\\n".join(rows).encode()).hexdigest(),
                  "features": {k: v.dtype for k, v in d.features.items()}}
print(json.dumps(out))
"""


def _folder_digest(folder: Path, config: str) -> dict:
    import hashlib

    out = {}
    for split_dir in sorted((folder / config).iterdir()):
        table = read_table(split_dir)
        rows = sorted(json.dumps(r, sort_keys=True) for r in table.to_pylist())
        out[split_dir.name] = {
            "rows": len(rows),
            "sha": hashlib.sha256("\n".join(rows).encode()).hexdigest(),
            "features": {f.name: _dtype(f.type) for f in table.schema},
        }
    return out


def _dtype(t: pa.DataType) -> str:
    return {"string": "string", "int32": "int32", "bool": "bool", "double": "float64"}[str(t)]


def _read(hub, repo: str, config: str, revision: str, home: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", READ, repo, config, revision],
        capture_output=True,
        text=True,
        timeout=300,
        env=hub.env(home),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_published_version_reads_back_exactly_and_stays_pinned(
    olah_hub, release: dict, planted: dict, assemble, tmp_path: Path
) -> None:
    folder = release["dir"]
    olah_hub.publish(folder, "execverify/exec-reasoning", "v1")
    for config in ("phase1", "white_box"):
        got = _read(olah_hub, "execverify/exec-reasoning", config, "v1", tmp_path / "home")
        assert got == _folder_digest(folder, config)
        assert got["train"]["rows"] > 0 and got["test"]["rows"] > 0

    # a second version with another split share; v1 still gives the first rows
    assemble(planted["dir"], tmp_path / "v2", params=AssembleParams(test_share=0.3))
    olah_hub.publish(tmp_path / "v2" / "release", "execverify/exec-reasoning", "v2")
    v2 = _read(olah_hub, "execverify/exec-reasoning", "phase1", "v2", tmp_path / "home2")
    assert v2 == _folder_digest(tmp_path / "v2" / "release", "phase1")
    assert v2["test"]["rows"] > release["stats"]["configs"]["phase1"]["test"]
    v1 = _read(olah_hub, "execverify/exec-reasoning", "phase1", "v1", tmp_path / "home3")
    assert v1 == _folder_digest(folder, "phase1")
