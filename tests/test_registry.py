"""The stage registry is what dvc.yaml runs: the same stages, commands and params, and every
option it passes exists on the command."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
import yaml

from factory.cli import app, register_commands
from factory.registry import BY_NAME, STAGES, stage

ROOT = Path(__file__).resolve().parents[1]
DVC = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]


def test_dvc_yaml_has_exactly_the_registered_stages() -> None:
    assert sorted(DVC) == sorted(BY_NAME)


@pytest.mark.parametrize("spec", STAGES, ids=lambda spec: spec.name)
def test_dvc_cmd_and_params_come_from_the_registry(spec) -> None:
    assert DVC[spec.name]["cmd"] == spec.dvc_command()
    assert tuple(DVC[spec.name]["params"]) == spec.params
    # a required section is one the stage lists among its params
    assert set(spec.required) <= {entry.split(".")[0] for entry in spec.params}


@pytest.mark.parametrize("spec", STAGES, ids=lambda spec: spec.name)
def test_every_registered_option_is_an_option_of_the_command(spec) -> None:
    register_commands()
    command = typer.main.get_command(app)  # typer's own (possibly bundled) click types
    for word in ("stage", spec.name):
        assert hasattr(command, "get_command"), f"{word} is not under a group"
        sub = command.get_command(None, word)
        assert sub is not None, f"execverify has no command stage {spec.name}"
        command = sub
    names = {opt for param in command.params for opt in param.opts}
    for option, _ in spec.options:
        assert option in names, f"execverify stage {spec.name} has no option {option}"
    assert "--params" in names
    for option, _contract in spec.reads:
        assert option in dict(spec.options)


def test_an_unknown_stage_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="the stages are synthesize, inputs"):
        stage("trcae")
