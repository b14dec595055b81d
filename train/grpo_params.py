"""``train/params.yaml``: the knobs of the GRPO phases, validated strictly (a bad value names the
param and exits 2, like the data pipeline's params)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from factory.params import _Section, read_params_file, validate_section


class TinyModel(_Section):
    """A randomly initialised Qwen2 of this shape, with a byte-level BPE trained on the prompts."""

    hidden_size: int = Field(64, ge=8)
    num_hidden_layers: int = Field(2, ge=1)
    num_attention_heads: int = Field(4, ge=1)
    num_key_value_heads: int = Field(2, ge=1)
    intermediate_size: int = Field(128, ge=8)
    vocab_size: int = Field(1000, ge=300, description="tokenizer vocabulary to train (model's: the same)")
    max_position_embeddings: int = Field(8192, ge=128)


class Reward(_Section):
    alpha: float = Field(0.5, ge=0, le=1, description="white-box weight α in R = 2((1-α)R_io + αR_wb)")
    gated: bool = False
    format: bool = Field(False, description="add the format shaping reward")
    timeout_s: float = Field(5.0, gt=0, le=600)
    workers: int | None = Field(None, ge=1, description="sandbox jobs in flight; null: 6 per core")


class Phase(_Section):
    """One GRPO phase: which data, which reward, and the GRPOConfig arguments."""

    config: str  # the dataset config (load_dataset's name): phase1, phase2, ...
    split: str = "train"
    init: str | None = Field(None, description="start from this checkpoint (phase 2: phase 1's output)")
    max_items: int | None = Field(None, ge=1, description="a seeded sample of this many items; null: all")
    families: list[str] | None = Field(None, description="keep only these families; null: all")
    curriculum: bool = Field(False, description="present items in tier order (easy first)")
    output_dir: str
    plots_dir: str
    metrics: str
    reward: Reward = Reward()
    grpo: dict[str, Any] = Field(default_factory=dict, description="GRPOConfig arguments")

    @field_validator("grpo")
    @classmethod
    def _grpo(cls, v: dict[str, Any]) -> dict[str, Any]:
        owned = {"output_dir", "remove_unused_columns", "shuffle_dataset"} & set(v)
        if owned:
            raise ValueError(f"{', '.join(sorted(owned))} are set by the script, not in grpo")
        return v


class Data(_Section):
    path: str = Field(description="a release folder (datasets.load_dataset) or a Hub repo id")
    revision: str | None = Field(None, description="a tag or commit (pin it for a Hub repo)")


class Model(_Section):
    name: str = Field("tiny", description="'tiny' (built here), a local folder or a Hub model id")
    tiny: TinyModel = TinyModel()
    chat: bool = Field(True, description="send prompts as chat messages (the tokenizer's chat template)")


class TrainParams(_Section):
    seed: int = Field(0, ge=0)
    data: Data
    model: Model = Model()
    phase1: Phase
    phase2: Phase


def load_train_params(path: str | Path, overrides: dict[str, Any] | None = None) -> TrainParams:
    """Read and validate ``train/params.yaml`` (``overrides``: dotted keys, e.g. from tests)."""
    raw = read_params_file(path)
    for dotted, value in (overrides or {}).items():
        node = raw
        *parents, last = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return validate_section(TrainParams, raw, str(path))
