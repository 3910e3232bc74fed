"""Live metrics of a run for the Ray dashboard and any Prometheus: each group actor exports
its share through `ray.util.metrics`, tagged with the run and the group, so a sum over
`group` is the run's figure.

They read what the group already holds (its ledger shard's counts, its agents' columns),
at most once a second of wall time, so a tick pays nothing in between and nothing in a run
depends on them. Ray prefixes the names with `ray_` on its metrics endpoint.
"""

from __future__ import annotations

import time

import numpy as np

from synthorg.domain.enums import EventKind, WorkState
from synthorg.sim.group_host import GroupHost

EVERY_S = 1.0
MICRO = 1_000_000
# (metric, event kind) pairs: the ledger's counts that a dashboard watches
COUNTED = {
    "synthorg_tasks_arrived": EventKind.task_created,
    "synthorg_tool_calls_allowed": EventKind.tool_call,
    "synthorg_tool_calls_denied": EventKind.tool_denied,
    "synthorg_tool_calls_escalated": EventKind.tool_escalated,
    "synthorg_security_incidents": EventKind.security_incident,
    "synthorg_approvals_granted": EventKind.approval_granted,
    "synthorg_approvals_rejected": EventKind.approval_rejected,
}


class GroupMetrics:
    def __init__(self, run_key: str, run_dir: str, company: str, group: int,
                 departments: list[str]) -> None:
        """run_key: sim/backend.run_key_of the run directory (the same across resume)."""
        from ray.util.metrics import Gauge

        self._tags = {"run": run_key, "run_dir": run_dir, "company": company,
                      "group": str(group)}
        self._departments = departments
        keys = ("run", "run_dir", "company", "group")

        def gauge(name: str, what: str, extra: tuple[str, ...] = ()) -> Gauge:
            return Gauge(name, description=what, tag_keys=keys + extra)

        self._counted = {name: gauge(name, f"{kind.name} events so far (this group's)")
                         for name, kind in COUNTED.items()}
        self._completed = gauge("synthorg_tasks_completed", "tasks completed so far")
        self._failed = gauge("synthorg_tasks_failed", "tasks failed so far")
        self._queued = gauge("synthorg_queue_length", "tasks queued at agents, by department",
                             ("department",))
        self._busy = gauge("synthorg_agents_busy", "agents holding a task, by department",
                           ("department",))
        self._cost = gauge("synthorg_cost_usd", "salaries, tools and the model paid so far, "
                           "by kind", ("kind",))
        self._tokens = gauge("synthorg_llm_tokens", "the model's tokens so far")
        self._llm_calls = gauge("synthorg_llm_calls", "deliberations asked of the model so far")
        self._tick = gauge("synthorg_tick", "the last tick this group stepped")
        self._rate = gauge("synthorg_ticks_per_second", "ticks stepped per second of wall time")
        self._last: tuple[float, int] | None = None  # (when, tick) of the last update

    def maybe_update(self, tick: int, host: GroupHost) -> None:
        now = time.monotonic()
        if self._last is None:  # the first tick here (of a run, or since a resume) starts the clock
            self._last = (now, tick)
            return
        then, last_tick = self._last
        if now - then < EVERY_S:
            return
        self._last = (now, tick)
        t = host.ledger.counts()
        for name, kind in COUNTED.items():
            self._counted[name].set(float(t.event_counts[kind.value]), tags=self._tags)
        self._completed.set(float(t.completed), tags=self._tags)
        self._failed.set(float(t.failed), tags=self._tags)
        group = host.group
        a = group.a
        queued = np.bincount(group.dept, weights=a.queues.length,
                             minlength=len(self._departments))
        busy = np.bincount(group.dept[a.state != WorkState.idle.value],
                           minlength=len(self._departments))
        for k, name in enumerate(self._departments):
            tags = {**self._tags, "department": name}
            self._queued.set(float(queued[k]), tags=tags)
            self._busy.set(float(busy[k]), tags=tags)
        for part, stat in (("salaries", "paid"), ("tools", "tool_spend"), ("llm", "llm_spend")):
            self._cost.set(float(a.stats[stat].sum()) / MICRO, tags={**self._tags, "kind": part})
        self._tokens.set(float(a.stats["llm_tokens"].sum()), tags=self._tags)
        self._llm_calls.set(float(a.stats["llm_calls"].sum()), tags=self._tags)
        self._tick.set(float(tick), tags=self._tags)
        self._rate.set((tick - last_tick) / (now - then), tags=self._tags)
