"""The Ray backend: agent-group, SecOps and ledger-writer actors, named by role so the
dashboard shows the organisation."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import numpy as np
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from actors.hosts import AgentGroupActor, LedgerWriter, SecOpsActor
from synthorg.errors import ActorCrashed
from synthorg.ledger.ledger import ShardTotals
from synthorg.sim.backend import RunPlan
from synthorg.sim.hosts import Exchange, gather

_dashboard: dict[str, str | None] = {"url": None}
# A tick's batches are a few hundred KB: passing them inline over gRPC is cheaper here than a
# round trip through the shared-memory object store. Ray starts workers at nice 15, behind
# the driver and its daemons; a simulation's few group workers are the work, so they run at
# normal priority (only when this process starts Ray: a cluster keeps its own settings).
SYSTEM_CONFIG = {"max_direct_call_object_size": 8 * 2**20, "worker_niceness": 0}


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


class RayBackend:
    """Group actors (hosting agents and departments), SecOps and the ledger writer; the
    exchange between ticks stays in Ray's object refs. Tick t+1's calls are submitted while
    tick t runs: Ray starts each as soon as its inputs exist, so a tick costs no round trip
    through the driver's Python."""

    def __init__(self, plan: RunPlan) -> None:
        d, bounds = plan.directory, list(plan.group_bounds)
        ns = f"synthorg-{plan.run_id}"
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        cfg_ref, dir_ref = ray.put(plan.config), ray.put(d)
        self.writer = LedgerWriter.options(  # type: ignore[attr-defined]
            name="ledger", namespace=ns, scheduling_strategy=here).remote(str(plan.run_dir))
        self.secops = SecOpsActor.options(  # type: ignore[attr-defined]
            name="secops", namespace=ns).remote(cfg_ref, dir_ref)
        self.groups = [
            AgentGroupActor.options(  # type: ignore[attr-defined]
                name=f"agent-group:{i}", namespace=ns, scheduling_strategy="SPREAD"
            ).remote(cfg_ref, dir_ref, int(plan.key), bounds, i, self.writer)
            for i in range(len(bounds))
        ]
        self._returns = len(bounds) + 2
        self._exchange: Exchange = Exchange.initial(bounds, len(d.dept_ids))
        self._running: list[ray.ObjectRef] = []  # the last submitted tick's group outputs

    def tick(self, tick: int, arrivals: list[np.ndarray]) -> None:
        x, n = self._exchange, len(self.groups)
        stepped = [g.step.options(num_returns=self._returns).remote(
                       tick, tasks, *x.inbox[i], *x.loads, *x.spend)
                   for i, (g, tasks) in enumerate(zip(self.groups, arrivals, strict=True))]
        previous, self._running = self._running, [out[n + 1] for out in stepped]
        self._exchange = Exchange(*gather(stepped))
        # at most one tick queued behind the running one; a dead actor surfaces here
        self._get(previous, tick)

    def settle(self) -> Exchange:
        x = self._exchange
        self._get(self._running, -1)
        self._running = []
        inbox = [self._get(parts, -1) for parts in x.inbox]
        # keep the arrays: a later settle (or the next tick's calls) need not fetch them again
        self._exchange = Exchange(inbox, self._get(x.loads, -1), self._get(x.spend, -1))
        return self._exchange

    def snapshot(self) -> list[dict[str, object]]:
        return self._get([g.state_dict.remote() for g in self.groups], -1)

    def restore(self, groups: list[dict[str, object]], exchange: Exchange) -> None:
        self._get([g.load_state.remote(st) for g, st in zip(self.groups, groups, strict=True)], -1)
        self._exchange = exchange
        self._running = []

    def dept_spent(self) -> np.ndarray:
        running = self._get([self.groups[0].dept_spent.remote()], -1)[0]
        return self.settle().dept_spent(running)

    def shard_totals(self) -> list[ShardTotals]:
        return self._get([g.totals.remote() for g in self.groups], -1)

    def agent_rows(self) -> list[dict[str, np.ndarray]]:
        return self._get([g.agent_rows.remote() for g in self.groups], -1)

    def open_task_ids(self) -> list[int]:
        return [t for ids in self._get([g.open_task_ids.remote() for g in self.groups], -1)
                for t in ids]

    def group_pids(self) -> list[int]:
        return self._get([g.pid.remote() for g in self.groups], -1)

    def close(self) -> None:
        for handle in [*self.groups, self.secops, self.writer]:
            with contextlib.suppress(ray.exceptions.RayError):  # already gone
                ray.kill(handle)

    @staticmethod
    def _get(refs: list[Any], tick: int) -> list[Any]:
        """ray.get, with a dead actor reported as ActorCrashed (the run rolls back)."""
        pending = [r for r in refs if isinstance(r, ray.ObjectRef)]
        try:
            values = iter(ray.get(pending))
        except ray.exceptions.RayError as exc:
            cause = _root_cause(exc)
            if not isinstance(cause, _LOST):
                raise  # an error in the simulation itself: no retry would help
            where = f"tick {tick}" if tick >= 0 else "settling"
            raise ActorCrashed(f"{where}: {type(cause).__name__}: {_first_line(cause)}") from exc
        return [next(values) if isinstance(r, ray.ObjectRef) else r for r in refs]


# a process or its objects are gone: rebuilding the actors from the last good state helps
_LOST = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
         ray.exceptions.ObjectLostError, ray.exceptions.OwnerDiedError,
         ray.exceptions.NodeDiedError, ray.exceptions.ActorUnavailableError)


def _root_cause(exc: BaseException) -> BaseException:
    """A task that failed because an input failed wraps that input's error."""
    seen = 0
    while isinstance(exc, ray.exceptions.RayTaskError) and seen < 100:
        cause = getattr(exc, "cause", None)
        if cause is None or cause is exc:
            break
        exc, seen = cause, seen + 1
    return exc


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:200]
