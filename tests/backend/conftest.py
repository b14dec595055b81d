"""A real two-node Ray cluster on 127.0.0.1, shared by the backend tests of a session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.backend.cluster import RayCluster, ray_cluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[RayCluster]:
    """The cluster (a head and a second node, one CPU each), stopped at the end, also on failure.
    Ray is part of the test environment (the ``ray`` extra): without it this fails, loudly."""
    with ray_cluster(nodes=2) as running:
        yield running
