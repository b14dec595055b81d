"""The local backend: one state for the whole stream, results paired with their units in order."""

from __future__ import annotations

import os

import pytest

from factory.backend import Shards, from_params
from factory.backend.local import LocalBackend
from factory.params import BackendParams
from tests.backend import toy


def test_every_unit_comes_back_with_its_result_in_order_from_one_state() -> None:
    with from_params(BackendParams()) as backend:
        assert isinstance(backend, LocalBackend)
        pairs = list(backend.map(Shards({}, toy.open_counter, toy.square), range(1000)))
    assert [u for u, _ in pairs] == list(range(1000))
    assert all(r[0] == u * u and r[1] == os.getpid() for u, r in pairs)
    assert len({r[2] for _, r in pairs}) == 1  # the state was made once


def test_the_stage_s_own_settings_decide_the_workers_locally() -> None:
    with LocalBackend() as backend:
        job = Shards({}, toy.open_counter, lambda config, state, units: ((u, state["cpus"]) for u in units))
        assert {r[1] for _, r in backend.map(job, [1, 2])} == {None}


def test_an_error_in_the_work_is_raised_as_it_is() -> None:
    with LocalBackend() as backend, pytest.raises(ValueError, match="unit 3 is bad"):
        list(backend.map(Shards({"fail": 3}, toy.open_counter, toy.square), range(10)))
