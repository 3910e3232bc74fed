"""Shared fixtures. One Ray instance serves the whole test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
STARTUP = REPO / "templates" / "companies" / "startup.yaml"
ENTERPRISE = REPO / "templates" / "companies" / "enterprise.yaml"

os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # tests never open the dashboard


@pytest.fixture(scope="session")
def ray_session():
    import ray

    from actors.ray_backend import ensure_ray

    # as a run starts it, so the session also removes what Ray leaves in /dev/shm
    ensure_ray(cpus=2)
    yield ray
    ray.shutdown()


@pytest.fixture
def scratch():
    """A set of machine-shared files (as a backend makes), removed after the test."""
    from synthorg.sim.scratch import Scratch

    made = Scratch("test")
    yield made
    made.remove()


@pytest.fixture(scope="session")
def startup_path() -> Path:
    return STARTUP
