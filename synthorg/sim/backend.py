"""The seam between the driver and where agents run (in-process, or Ray actors)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from synthorg.config.models import CompanyConfig
from synthorg.ledger.ledger import LedgerTotals
from synthorg.org.directory import OrgDirectory


@dataclass(frozen=True, eq=False)
class RunPlan:
    """Everything a backend needs to host one run."""

    config: CompanyConfig
    directory: OrgDirectory
    key: np.uint64
    run_dir: Path
    run_id: str
    group_bounds: tuple[tuple[int, int], ...]

    @property
    def sources(self) -> int:
        """Ledger sources per tick: every group, plus the driver."""
        return len(self.group_bounds) + 1


@dataclass(frozen=True, eq=False)
class TickReport:
    """What came back from departments and groups in one tick."""

    dept_messages: list[np.ndarray]
    dept_events: list[np.ndarray]
    dept_failed: list[np.ndarray]
    group_messages: list[np.ndarray]
    group_loads: list[np.ndarray]
    group_spend: list[np.ndarray]


class Backend(Protocol):
    def tick(self, tick: int, arrivals: list[np.ndarray], inboxes: list[np.ndarray],
             loads: np.ndarray, dept_spent: np.ndarray) -> TickReport: ...

    def record(self, tick: int, events: np.ndarray, results: np.ndarray,
               created: np.ndarray) -> None:
        """The driver's own ledger batch for the tick (its events and the departments')."""

    def totals(self) -> LedgerTotals: ...

    def agent_rows(self) -> list[dict[str, np.ndarray]]: ...

    def open_task_ids(self) -> list[int]: ...

    def snapshot(self) -> tuple[list[dict[str, object]], dict[str, object]]:
        """(state of every group, ledger state) at a tick boundary."""

    def restore(self, groups: list[dict[str, object]], ledger: dict[str, object]) -> None: ...

    def record_incident(self, tick: int, rows: np.ndarray) -> None: ...

    def close(self) -> None: ...


def group_bounds(n_agents: int, agents_per_actor: int | str, workers: int) -> tuple[tuple[int, int], ...]:
    """Contiguous agent ranges, one per group. `auto` spreads agents over `workers`."""
    if agents_per_actor == "auto":
        per = math.ceil(n_agents / max(1, min(workers, n_agents)))
    else:
        per = int(agents_per_actor)
    return tuple((lo, min(lo + per, n_agents)) for lo in range(0, n_agents, per))


def local_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
