"""Ray actor classes. Each hosts one domain object from synthorg/ and passes batches."""

from __future__ import annotations

import numpy as np
import ray

from synthorg.config.models import CompanyConfig
from synthorg.engine.group import AgentGroup
from synthorg.ledger.ledger import Ledger, LedgerTotals
from synthorg.org.directory import OrgDirectory
from synthorg.org.routing import Department
from synthorg.secops.rules import RuleEngine


@ray.remote(num_cpus=0)
class SecOpsActor:
    """Every tool call passes through here before it runs."""

    def __init__(self, config: CompanyConfig, directory: OrgDirectory) -> None:
        self._engine = RuleEngine(directory, config.policies.security)

    def check(self, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._engine.check(calls)


class RemoteSecOps:
    """SecOpsPort over the SecOps actor: one round trip for a group's whole tick."""

    def __init__(self, handle: ray.actor.ActorHandle) -> None:
        self._handle = handle

    def check(self, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ref: ray.ObjectRef = self._handle.check.remote(calls)
        verdict: np.ndarray
        rule: np.ndarray
        verdict, rule = ray.get(ref)
        return verdict, rule


@ray.remote(num_cpus=0)
class LedgerActor:
    def __init__(self, run_dir: str, sources: int) -> None:
        from pathlib import Path

        self._ledger = Ledger(Path(run_dir), sources)

    def append(self, tick: int, events: np.ndarray, results: np.ndarray,
               created: np.ndarray | None = None) -> None:
        self._ledger.append(tick, events, results, created)

    def totals(self) -> LedgerTotals:
        return self._ledger.totals()

    def state(self) -> dict[str, object]:
        return self._ledger.state()

    def restore(self, state: dict[str, object]) -> None:
        self._ledger.restore(state)

    def record_incident(self, tick: int, rows: np.ndarray) -> None:
        self._ledger.record_incident(tick, rows)


@ray.remote(num_cpus=0)
class DepartmentActor:
    def __init__(self, directory: OrgDirectory, dept: int) -> None:
        self._dept = Department(directory, dept)

    def route(self, tick: int, tasks: np.ndarray, loads: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._dept.route(tick, tasks, loads)


@ray.remote(num_cpus=0)
class AgentGroupActor:
    """Hosts many agents; one call per tick steps them all."""

    def __init__(self, config: CompanyConfig, directory: OrgDirectory, key: int, lo: int, hi: int,
                 secops: ray.actor.ActorHandle, ledger: ray.actor.ActorHandle) -> None:
        self._group = AgentGroup(config, directory, np.uint64(key), lo, hi)
        self._secops = RemoteSecOps(secops)
        self._ledger = ledger
        self._appended: ray.ObjectRef | None = None

    def step(self, tick: int, inbox: np.ndarray, loads: np.ndarray, dept_spent: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # back-pressure: the ledger must have taken the previous tick before we send another
        self.sync()
        out = self._group.step(tick, inbox, loads, dept_spent, self._secops)
        # events go straight to the ledger, not through the driver
        self._appended = self._ledger.append.remote(tick, out.events, out.results)
        return out.messages, out.loads, out.spend

    def sync(self) -> None:
        """Return once the ledger has every batch this group sent (calls arrive in order)."""
        if self._appended is not None:
            ray.get(self._appended)
            self._appended = None

    def open_task_ids(self) -> list[int]:
        return self._group.open_task_ids()

    def agent_rows(self) -> dict[str, np.ndarray]:
        return self._group.agent_rows()

    def state_dict(self) -> dict[str, object]:
        return self._group.state_dict()

    def load_state(self, state: dict[str, object]) -> None:
        self._group.load_state(state)

    def pid(self) -> int:
        import os

        return os.getpid()
