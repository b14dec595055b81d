"""Toy shard jobs for the backend tests (sent to Ray by value: the workers cannot import tests/)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from typing import Any

from factory.sandbox.trusted.pool import WorkerPool

_opened = 0  # how many states this process made


@contextlib.contextmanager
def open_counter(config: dict[str, Any], cpus: int | None) -> Iterator[dict[str, Any]]:
    """A state that says which process made it, and the how-manieth it is there."""
    global _opened
    _opened += 1
    yield {"pid": os.getpid(), "serial": _opened, "cpus": cpus}


def square(config: dict[str, Any], state: dict[str, Any], units: Iterable[int]) -> Iterator[tuple[int, ...]]:
    """(u * u, pid, serial) per unit, ``config["sleep"]`` seconds each; unit ``config["fail"]`` raises."""
    for u in units:
        if u == config.get("fail"):
            raise ValueError(f"unit {u} is bad\nsecond line")
        time.sleep(config.get("sleep", 0))
        yield u * u, state["pid"], state["serial"]


def open_pool(config: dict[str, Any], cpus: int | None) -> WorkerPool:
    """A trusted pool with the limits of ``config`` (``cpus`` workers)."""
    return WorkerPool(workers=cpus or 1, timeout_s=config["timeout_s"], memory_mb=config["memory_mb"])


def run_in_pool(
    config: dict[str, Any], pool: WorkerPool, units: Iterable[str]
) -> Iterator[tuple[str, int, list[int]]]:
    """(status, this process's pid, the pool's worker pids) of each program run (``f()``)."""
    payloads = [{"source": source, "entry": "f", "args": ""} for source in units]
    for result in pool.map("run", payloads):
        yield result["status"], os.getpid(), pool.pids()
