"""The vllm backend: argument mapping and the clear error where vllm is absent.

The engine itself runs in test_vllm_engine.py, in the CPU build's own venv (``.ci/vllm-venv``)."""

from __future__ import annotations

import importlib.util

import pytest

from factory.errors import UserError
from factory.solvers.base import Sampling
from factory.solvers.vllm_backend import VLLMSolver, sampling_kwargs


def test_sampling_params_mapping() -> None:
    assert sampling_kwargs(10, Sampling(1.0, 0.9, 512, 7)) == {
        "n": 10,
        "temperature": 1.0,
        "top_p": 0.9,
        "max_tokens": 512,
        "seed": 7,
    }
    assert sampling_kwargs(1, Sampling(0.0, 0.5, 8, 0))["top_p"] == 1.0  # greedy ignores top_p
    assert sampling_kwargs(5, Sampling(0.0, 0.5, 8, 0))["n"] == 1  # vLLM refuses n > 1 when greedy


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_missing_vllm_is_a_user_error() -> None:
    with pytest.raises(UserError, match="needs vllm"):
        VLLMSolver("some/model")
    with pytest.raises(UserError, match="needs vllm"):
        VLLMSolver("embedded")  # an embedded model is a model; vllm is what is missing
    with pytest.raises(UserError, match="needs a model"):
        VLLMSolver("")
