"""synthorg: an actor-based simulator of organisations run by AI agents.

Importing this package starts nothing: no Ray, no Docker, no network.
"""

from synthorg.config import load_config
from synthorg.config.models import CompanyConfig
from synthorg.sim.simulation import RunResult, Simulation
from synthorg.sim.summary import Summary

__all__ = ["CompanyConfig", "RunResult", "Simulation", "Summary", "load_config"]
__version__ = "0.1.0"
