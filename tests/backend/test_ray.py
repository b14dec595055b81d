"""The Ray backend on a real two-node cluster: order, the state made once per actor, a sandbox
pool in each actor's own process tree with the stage's limits, a lost actor's shards run again,
and errors as one line."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest
from ray import cloudpickle

from factory.backend import ShardError, Shards
from factory.backend.local import LocalBackend
from factory.backend.ray import RayBackend
from factory.errors import UserError
from tests.backend import toy
from tests.backend.cluster import RayCluster

cloudpickle.register_pickle_by_value(toy)  # the actors cannot import tests/


@pytest.fixture
def backend(cluster: RayCluster) -> Iterator[RayBackend]:
    with RayBackend(cluster.address, shard_units=7) as connected:
        yield connected


def test_results_come_back_in_input_order_from_one_state_per_actor(backend: RayBackend) -> None:
    pairs = list(backend.map(Shards({"sleep": 0.002}, toy.open_counter, toy.square), range(300)))
    assert [u for u, _ in pairs] == list(range(300))
    assert all(r[0] == u * u for u, r in pairs)
    pids = {r[1] for _, r in pairs}
    assert len(pids) == 2 and os.getpid() not in pids  # both actors (one per node), none here
    serials = {pid: {r[2] for _, r in pairs if r[1] == pid} for pid in pids}
    assert all(len(s) == 1 for s in serials.values())  # each actor made its state once


def test_each_actor_runs_a_trusted_pool_of_its_own_with_the_same_limits(backend: RayBackend) -> None:
    programs = [
        "def f():\n    return 1\n",
        "def f():\n    while True:\n        pass\n",  # the CPU timeout
        "def f():\n    return 'x' * (1 << 30)\n",  # the memory cap
    ] * 5
    job = Shards({"timeout_s": 0.5, "memory_mb": 64}, toy.open_pool, toy.run_in_pool)
    on_ray = list(backend.map(job, programs))
    local = list(LocalBackend().map(job, programs))
    assert (
        [r[0] for _, r in on_ray]
        == [r[0] for _, r in local]
        == ["ok", "resource_limit", "resource_limit"] * 5
    )
    for _, (_, actor, workers) in on_ray:
        for worker in workers:  # the pool's workers are the actor's children (or already replaced)
            try:
                ppid = int(open(f"/proc/{worker}/stat").read().rsplit(")", 1)[1].split()[1])
            except FileNotFoundError:
                continue
            assert ppid == actor


def test_a_killed_actor_s_shards_run_again_and_the_results_do_not_change(
    backend: RayBackend, cluster: RayCluster
) -> None:
    killed: list[int] = []

    def kill_one_on_the_second_node() -> None:
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            pids = cluster.actor_pids(node=1, busy=True)
            if pids:
                time.sleep(0.5)  # mid-shard
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.1)

    killer = threading.Thread(target=kill_one_on_the_second_node)
    killer.start()
    pairs = list(backend.map(Shards({"sleep": 0.02}, toy.open_counter, toy.square), range(400)))
    killer.join()
    assert killed, "no actor was found on the second node"
    assert [u for u, _ in pairs] == list(range(400))
    assert all(r[0] == u * u for u, r in pairs)
    pids = {r[1] for _, r in pairs}
    assert killed[0] in pids and len(pids) == 3  # the killed actor ran shards, its restart the rest


def test_an_error_in_a_shard_is_one_line_naming_the_shard_and_the_cause(backend: RayBackend) -> None:
    with pytest.raises(ShardError) as raised:
        list(backend.map(Shards({"fail": 17}, toy.open_counter, toy.square), range(40)))
    message = str(raised.value)
    assert "\n" not in message
    assert (
        "tests.backend.toy.square: shard 2 failed on the Ray cluster: ValueError: unit 17 is bad" in message
    )


def test_no_actors_start_for_no_units(backend: RayBackend) -> None:
    assert list(backend.map(Shards({}, toy.open_counter, toy.square), [])) == []


def test_an_address_where_no_head_listens_is_one_line() -> None:
    started = time.monotonic()
    with pytest.raises(UserError, match=r"backend.address 127.0.0.1:1: no Ray head answers there"):
        RayBackend("127.0.0.1:1").__enter__()
    assert time.monotonic() - started < 10  # not ray.init's minutes of waiting
