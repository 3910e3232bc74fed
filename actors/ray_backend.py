"""The Ray backend: department, agent-group, SecOps and ledger actors, named by role so the
dashboard shows the organisation."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import numpy as np
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from actors.hosts import AgentGroupActor, DepartmentActor, LedgerActor, SecOpsActor
from synthorg.domain.records import EVENT_DTYPE, MESSAGE_DTYPE, RESULT_DTYPE
from synthorg.errors import ActorCrashed
from synthorg.ledger.ledger import LedgerTotals
from synthorg.sim.backend import RunPlan, TickReport

_dashboard: dict[str, str | None] = {"url": None}
# A tick's batches (messages, events) are a few hundred KB: passing them inline over gRPC is
# cheaper here than a round trip through the shared-memory object store.
SYSTEM_CONFIG = {"max_direct_call_object_size": 8 * 2**20}


def ensure_ray(address: str | None = None, dashboard: bool = False) -> int:
    """Connect to (or start) Ray; returns the cluster's CPU count."""
    if not ray.is_initialized():
        context = ray.init(address=address, include_dashboard=dashboard,
                           logging_level=logging.ERROR, log_to_driver=False,
                           _system_config=SYSTEM_CONFIG if address is None else None)
        _dashboard["url"] = context.dashboard_url or None
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def dashboard_url() -> str | None:
    return _dashboard["url"]


_NOTHING_ROUTED = (np.zeros(0, MESSAGE_DTYPE), np.zeros(0, EVENT_DTYPE), np.zeros(0, RESULT_DTYPE))


class RayBackend:
    def __init__(self, plan: RunPlan) -> None:
        d = plan.directory
        ns = f"synthorg-{plan.run_id}"
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        cfg_ref, dir_ref = ray.put(plan.config), ray.put(d)
        self.ledger = LedgerActor.options(  # type: ignore[attr-defined]
            name="ledger", namespace=ns, scheduling_strategy=here
        ).remote(str(plan.run_dir), plan.sources)
        self.secops = SecOpsActor.options(  # type: ignore[attr-defined]
            name="secops", namespace=ns).remote(cfg_ref, dir_ref)
        self.departments = [
            DepartmentActor.options(  # type: ignore[attr-defined]
                name=f"dept:{dept}", namespace=ns).remote(dir_ref, k)
            for k, dept in enumerate(d.dept_ids)
        ]
        self.groups = [
            AgentGroupActor.options(  # type: ignore[attr-defined]
                name=f"agent-group:{i}", namespace=ns, scheduling_strategy="SPREAD"
            ).remote(cfg_ref, dir_ref, int(plan.key), lo, hi, self.secops, self.ledger)
            for i, (lo, hi) in enumerate(plan.group_bounds)
        ]
        self._driver_appends: list[ray.ObjectRef] = []

    def tick(self, tick: int, arrivals: list[np.ndarray], inboxes: list[np.ndarray],
             loads: np.ndarray, dept_spent: np.ndarray) -> TickReport:
        # small arrays travel inline with the call: ray.put costs ~3 ms a tick here
        loads_ref, spent_ref = loads, dept_spent
        # a department with no arrivals this tick has nothing to say: skip the round trip
        routed: list[Any] = [dept.route.remote(tick, tasks, loads_ref) if len(tasks) else _NOTHING_ROUTED
                  for dept, tasks in zip(self.departments, arrivals, strict=True)]
        stepped = [g.step.remote(tick, inbox, loads_ref, spent_ref)
                   for g, inbox in zip(self.groups, inboxes, strict=True)]
        try:
            routed_out = [r if r is _NOTHING_ROUTED else ray.get(r) for r in routed]
            stepped_out = ray.get(stepped)
        except ray.exceptions.RayError as exc:
            raise ActorCrashed(f"tick {tick}: {type(exc).__name__}: {_first_line(exc)}") from exc
        return TickReport(
            dept_messages=[r[0] for r in routed_out],
            dept_events=[r[1] for r in routed_out],
            dept_failed=[r[2] for r in routed_out],
            group_messages=[s[0] for s in stepped_out],
            group_loads=[s[1] for s in stepped_out],
            group_spend=[s[2] for s in stepped_out],
        )

    def record(self, tick: int, events: np.ndarray, results: np.ndarray,
               created: np.ndarray) -> None:
        self._driver_appends = [self.ledger.append.remote(tick, events, results, created)]

    def totals(self) -> LedgerTotals:
        self._drain()
        return ray.get(self.ledger.totals.remote())

    def agent_rows(self) -> list[dict[str, np.ndarray]]:
        return ray.get([g.agent_rows.remote() for g in self.groups])

    def open_task_ids(self) -> list[int]:
        return [t for ids in ray.get([g.open_task_ids.remote() for g in self.groups]) for t in ids]

    def snapshot(self) -> tuple[list[dict[str, object]], dict[str, object]]:
        self._drain()
        groups = ray.get([g.state_dict.remote() for g in self.groups])
        return groups, ray.get(self.ledger.state.remote())

    def restore(self, groups: list[dict[str, object]], ledger: dict[str, object]) -> None:
        ray.get([g.load_state.remote(st) for g, st in zip(self.groups, groups, strict=True)]
                + [self.ledger.restore.remote(ledger)])
        self._driver_appends = []

    def record_incident(self, tick: int, rows: np.ndarray) -> None:
        ray.get(self.ledger.record_incident.remote(tick, rows))

    def group_pids(self) -> list[int]:
        return ray.get([g.pid.remote() for g in self.groups])

    def _drain(self) -> None:
        ray.get([g.sync.remote() for g in self.groups] + self._driver_appends)
        self._driver_appends = []

    def close(self) -> None:
        for handle in [*self.groups, *self.departments, self.secops, self.ledger]:
            with contextlib.suppress(ray.exceptions.RayError):  # already gone
                ray.kill(handle)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:200]
