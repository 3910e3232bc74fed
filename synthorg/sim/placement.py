"""Which group routes each department's arrivals in a tick.

Routing is stateless: a department's choices depend only on the tick's arrivals (every group
draws them from the seed) and on the loads of the last tick, which every group receives
anyway. So any group can route any department with the same outcome, and where routing runs
is free to change every tick.

- `HomePlacement`: each department is routed by the group that holds its head.
- `ClaimedPlacement`: groups on one machine take departments while the tick runs, the first
  free first (sim/claims.py); nothing to predict.
- `BalancedPlacement`, for groups spread over nodes: each tick, departments go to the groups
  expected to finish soonest,
  from the step and routing times the groups reported. The tick waits for the slowest group,
  and on a shared machine one core can run a fifth slower than the other for seconds at a
  time; routing is about a fifth of a step, enough to even that out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

from synthorg.org.directory import OrgDirectory
from synthorg.sim.claims import CLAIMED
from synthorg.sim.group_host import StepTiming, group_starts


def home_groups(directory: OrgDirectory, bounds: Sequence[tuple[int, int]]) -> np.ndarray:
    """Per department, the group that holds its head (group 0 for a department without one)."""
    return np.searchsorted(group_starts(bounds), np.maximum(directory.dept_head, 0), side="right")


class HomePlacement:
    def __init__(self, directory: OrgDirectory, bounds: Sequence[tuple[int, int]]) -> None:
        self.groups = len(bounds)
        self.home = home_groups(directory, bounds)

    def assign(self) -> np.ndarray:
        """Per department, the group that routes its arrivals in the next tick."""
        return self.home

    def observe(self, timings: Sequence[StepTiming]) -> None:
        """Every group's timing of its last step."""


class ClaimedPlacement(HomePlacement):
    """Every department is claimed at run time by the first group free to route it
    (sim/claims.py): for groups on one machine."""

    def assign(self) -> np.ndarray:
        return np.full(len(self.home), CLAIMED)


class BalancedPlacement(HomePlacement):
    WINDOW = 5  # steps: a group's time besides routing is the median of its last few, so
    # one slow step (a ledger flush) does not move every department
    SMOOTHING = 0.3  # weight of the newest per-task routing cost of a department

    def __init__(self, directory: OrgDirectory, bounds: Sequence[tuple[int, int]]) -> None:
        super().__init__(directory, bounds)
        self._rest: deque[np.ndarray] = deque(maxlen=self.WINDOW)  # seconds per group
        self._per_task = np.full(len(self.home), np.nan)  # routing seconds per task, per dept
        self._routed = np.zeros(len(self.home))  # tasks per department in the last tick

    def assign(self) -> np.ndarray:
        """Departments in decreasing order of expected routing time (last tick's tasks at
        their smoothed cost per task), each to the group expected to finish first (LPT)."""
        if not self._rest or np.isnan(self._per_task).all():
            return self.home
        per_task = np.where(np.isnan(self._per_task), np.nanmean(self._per_task), self._per_task)
        finish = np.median(np.array(self._rest), axis=0)
        host = self.home.copy()
        cost = per_task * self._routed
        for k in np.argsort(-cost, kind="stable"):
            if cost[k] > 0:
                g = int(np.argmin(finish))
                host[k] = g
                finish[g] += cost[k]
        return host

    def observe(self, timings: Sequence[StepTiming]) -> None:
        self._rest.append(np.array([max(t.seconds - t.routing.sum(), 0.0) for t in timings]))
        routing = np.sum([t.routing for t in timings], axis=0)
        routed = np.sum([t.routed for t in timings], axis=0)
        self._routed = routed
        now = np.divide(routing, routed, out=np.full(len(routed), np.nan), where=routed > 0)
        a = self.SMOOTHING
        blend = np.where(np.isnan(self._per_task), now, a * now + (1 - a) * self._per_task)
        self._per_task = np.where(np.isnan(now), self._per_task, blend)
