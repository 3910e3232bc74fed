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

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
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
