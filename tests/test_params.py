"""``params.yaml`` loading: the repo's file loads unchanged, a forgotten section or a typo is one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from factory.errors import UserError
from factory.params import (
    ExecuteParams,
    Params,
    SynthesizeParams,
    load_params,
    validate_section,
)
from factory.registry import BY_NAME

REPO = Path(__file__).resolve().parents[1]
PARAMS = REPO / "params.yaml"


def _write(tmp_path: Path, data: dict | str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


def _error(path: Path, stage: str | None = None) -> str:
    with pytest.raises(UserError) as info:
        load_params(path, stage=stage)
    message = str(info.value)
    assert "\n" not in message, message
    return message


def test_the_repo_params_load_for_every_stage() -> None:
    raw = yaml.safe_load(PARAMS.read_text())
    for stage in BY_NAME:
        p = load_params(PARAMS, stage=stage)
        assert p.seed == raw["seed"]
        assert p.synthesize.model_dump() == raw["synthesize"]
    # params.py stays the single source of defaults: the file repeats them (benchmarks aside).
    assert load_params(PARAMS).synthesize == SynthesizeParams()


def test_a_missing_section_the_stage_reads_is_an_error(tmp_path: Path) -> None:
    raw = yaml.safe_load(PARAMS.read_text())
    del raw["synthesize"]
    path = _write(tmp_path, raw)
    assert _error(path, "synthesize") == (
        f"{path}: no 'synthesize:' section (the synthesize stage reads its settings from it)"
    )
    assert _error(path, "inputs") == (
        f"{path}: no 'synthesize:' section (the inputs stage reads its settings from it)"
    )
    # Stages that do not read it, and callers that name no stage, still load the file.
    assert load_params(path, stage="tasks").synthesize == SynthesizeParams()
    assert load_params(path).synthesize == SynthesizeParams()


def test_each_stage_needs_only_its_sections(tmp_path: Path) -> None:
    for stage, sections in ((name, spec.required) for name, spec in BY_NAME.items()):
        only = {"seed": 1, **{s: {} for s in sections}}
        assert load_params(_write(tmp_path, only), stage=stage).seed == 1
    # The optional stages are off without their section (and say so loudly when they run).
    assert load_params(_write(tmp_path, "seed: 1\n"), stage="difficulty").difficulty.enabled is False


def test_an_unknown_top_level_key_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "seed: 1\nsynthesise: {tiers: [1]}\nsynthesize: {}\n")
    assert _error(path) == f"{path}: synthesise: unknown key (did you mean 'synthesize'?)"
    path = _write(tmp_path, "seed: 1\nwhatever: 3\n")
    assert _error(path).startswith(f"{path}: whatever: unknown key (known: seed, synthesize, inputs, ")


def test_a_renamed_key_names_its_successor(tmp_path: Path) -> None:
    path = _write(tmp_path, "synthesize: {grammar: grammars/python}\n")
    assert _error(path, "synthesize") == (
        f"{path}: synthesize.grammar: renamed to synthesize.grammars, a list of grammar folders "
        "(one per language)"
    )
    path = _write(tmp_path, "synthesize: {grammars: []}\n")
    assert "synthesize.grammars" in _error(path, "synthesize")


def test_an_unknown_key_inside_a_section_suggests_the_closest(tmp_path: Path) -> None:
    path = _write(tmp_path, "synthesize: {programs_per_target_teir: 2}\n")
    assert _error(path, "synthesize") == (
        f"{path}: synthesize.programs_per_target_teir: unknown key (did you mean 'programs_per_target_tier'?)"
    )
    # Inside a list of sub-sections too.
    path = _write(tmp_path, "assemble: {benchmarks: [{name: a, path: x, feilds: [code]}]}\n")
    assert (
        _error(path, "assemble")
        == f"{path}: assemble.benchmarks.0.feilds: unknown key (did you mean 'fields'?)"
    )


def test_a_bad_value_still_names_the_param(tmp_path: Path) -> None:
    path = _write(tmp_path, "synthesize: {tiers: [9]}\n")
    assert _error(path, "synthesize").startswith(f"{path}: param 'synthesize.tiers': ")


def test_partial_dicts_and_sections_keep_their_defaults() -> None:
    assert Params().synthesize == SynthesizeParams()
    assert Params.model_validate({"seed": 3}).seed == 3
    assert validate_section(SynthesizeParams, None, "x").tiers == [1, 2, 3, 4, 5, 6]
    with pytest.raises(UserError, match=r"^execute params: execute\.bogus: unknown key"):
        validate_section(ExecuteParams, {"bogus": 1}, "execute params", prefix="execute.")


def _synthesize_errors(tmp_path: Path, path: Path, prelude: str = "") -> list[str]:
    """The stderr lines of ``execverify stage synthesize --params path`` (after ``prelude``, Python
    run first in that process), which must exit 2 and write nothing."""
    code = f"import sys; {prelude}from factory.cli import main; main(sys.argv[1:])"
    command = [sys.executable, "-c", code, "stage", "synthesize", "--params", str(path)]
    command += ["--out", str(tmp_path / "o"), "--stats", str(tmp_path / "s.json")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 2, result.stderr
    assert not (tmp_path / "o").exists()
    return result.stderr.strip().splitlines()


def test_cli_missing_section_is_one_line_exit_2(tmp_path: Path) -> None:
    path = _write(tmp_path, "seed: 1\n")
    assert _synthesize_errors(tmp_path, path) == [
        f"execverify: error: {path}: no 'synthesize:' section "
        "(the synthesize stage reads its settings from it)"
    ]


@pytest.mark.parametrize(
    ("backend", "message"),
    [
        (
            {"kind": "slurm"},
            "param 'backend.kind': Value error, kind must be one of local, ray (got 'slurm')",
        ),
        (
            {"address": "10.0.0.1:6379"},
            "param 'backend.address': Value error, an address is for kind ray; the local backend takes none",
        ),
        (
            {"kind": "ray", "address": "head"},
            "param 'backend.address': Value error, address must be HOST:PORT",
        ),
        ({"kind": "ray", "shard_units": 0}, "param 'backend.shard_units'"),
        ({"kind": "ray", "typo": 1}, "backend.typo: unknown key"),
    ],
)
def test_a_bad_backend_is_one_line_naming_it(tmp_path: Path, backend: dict, message: str) -> None:
    raw = yaml.safe_load(PARAMS.read_text())
    raw["backend"] = backend
    assert message in _error(_write(tmp_path, raw), "execute")


def test_kind_ray_without_ray_installed_says_so_in_one_line_exit_2(tmp_path: Path) -> None:
    raw = yaml.safe_load(PARAMS.read_text())
    raw["backend"] = {"kind": "ray", "address": "127.0.0.1:6379"}
    path = _write(tmp_path, raw)
    hide_ray = (
        "import importlib.util; find = importlib.util.find_spec; "
        "importlib.util.find_spec = lambda name, *a: None if name == 'ray' else find(name, *a); "
    )
    assert _synthesize_errors(tmp_path, path, hide_ray) == [
        f"execverify: error: {path}: param 'backend.kind': Value error, kind ray needs Ray, which is not "
        "installed (pip install -e '.[ray]') (got 'ray')"
    ]


def test_the_repo_params_run_locally_and_the_local_backend_needs_no_ray() -> None:
    code = (
        "import sys; from factory.backend import from_params; from factory.params import load_params; "
        "b = from_params(load_params(sys.argv[1]).backend); print(type(b).__name__, 'ray' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(PARAMS)], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["LocalBackend", "False"]
