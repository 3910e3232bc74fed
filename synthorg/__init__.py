"""synthorg: an actor-based simulator of organisations run by AI agents.

Importing this package starts nothing (no Ray, no Docker, no network) and loads little: the
public names below are imported when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synthorg.config import load_config
    from synthorg.config.models import CompanyConfig
    from synthorg.sim.simulation import RunResult, Simulation
    from synthorg.sim.summary import Summary

__all__ = ["CompanyConfig", "RunResult", "Simulation", "Summary", "load_config"]
__version__ = "0.1.0"

_WHERE = {"load_config": "synthorg.config", "CompanyConfig": "synthorg.config.models",
          "RunResult": "synthorg.sim.simulation", "Simulation": "synthorg.sim.simulation",
          "Summary": "synthorg.sim.summary"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    if name in ("errors", "config", "sim"):
        return importlib.import_module(f"synthorg.{name}")
    raise AttributeError(f"module 'synthorg' has no attribute {name!r}")
