"""The trusted-code sandbox: a pool of reused, resource-limited worker processes (docs/design.md §6.1).

``WorkerPool`` and ``map_pools`` live in ``factory.sandbox.pool``; the child side (job kinds,
statuses, the helpers a new job kind reuses) in ``factory.sandbox.worker``. This package module
imports nothing itself, so a worker process starts without loading the parent's side.
"""

from __future__ import annotations

from typing import Any

__all__ = ["WorkerPool", "map_pools"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from factory.sandbox import pool

        return getattr(pool, name)
    raise AttributeError(f"module 'factory.sandbox' has no attribute {name!r}")
