"""Which group routes each department's arrivals in a tick.

Routing is stateless: a department's choices depend only on the tick's arrivals and on the
loads of the last tick, which every group receives anyway. So any group can route any
department with the same outcome, and where routing runs is free to change every tick.

- `HomePlacement`: each department is routed by the group that holds its head.
- `BalancedPlacement`: each tick, departments go to the groups expected to finish soonest,
  from the step and routing times the groups reported. The tick waits for the slowest group,
  and on a shared machine one core can run a fifth slower than the other for seconds at a
  time; routing is about a fifth of a step, enough to even that out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

from synthorg.org.directory import OrgDirectory
from synthorg.sim.hosts import StepTiming, group_starts


def home_groups(directory: OrgDirectory, bounds: Sequence[tuple[int, int]]) -> np.ndarray:
    """Per department, the group that holds its head (group 0 for a department without one)."""
    return np.searchsorted(group_starts(bounds), np.maximum(directory.dept_head, 0), side="right")


class HomePlacement:
    def __init__(self, directory: OrgDirectory, bounds: Sequence[tuple[int, int]]) -> None:
        self.groups = len(bounds)
        self.home = home_groups(directory, bounds)

    def split(self, arrivals: np.ndarray) -> list[np.ndarray]:
        """The arrivals each group routes, in arrival order."""
        return self._by_group(arrivals, self.home)

    def observe(self, timings: Sequence[StepTiming]) -> None:
        """Every group's timing of its last step."""

    def _by_group(self, arrivals: np.ndarray, host: np.ndarray) -> list[np.ndarray]:
        where = host[arrivals["dept"]]
        return [arrivals[where == g] for g in range(self.groups)]


class BalancedPlacement(HomePlacement):
    WINDOW = 5  # steps: a group's time besides routing is the median of its last few, so
    # one slow step (a ledger flush) does not move every department
    SMOOTHING = 0.3  # weight of the newest per-task routing cost of a department

    def __init__(self, directory: OrgDirectory, bounds: Sequence[tuple[int, int]]) -> None:
        super().__init__(directory, bounds)
        self._rest: deque[np.ndarray] = deque(maxlen=self.WINDOW)  # seconds per group
        self._per_task = np.full(len(self.home), np.nan)  # routing seconds per task, per dept

    def split(self, arrivals: np.ndarray) -> list[np.ndarray]:
        if not self._rest or np.isnan(self._per_task).all():
            return super().split(arrivals)
        per_task = np.where(np.isnan(self._per_task), np.nanmean(self._per_task), self._per_task)
        finish = np.median(np.array(self._rest), axis=0)
        host = self.home.copy()
        depts, counts = np.unique(arrivals["dept"], return_counts=True)
        cost = per_task[depts] * counts
        for k in np.argsort(-cost, kind="stable"):  # the largest first (LPT)
            g = int(np.argmin(finish))
            host[depts[k]] = g
            finish[g] += cost[k]
        return self._by_group(arrivals, host)

    def observe(self, timings: Sequence[StepTiming]) -> None:
        self._rest.append(np.array([max(t.seconds - t.routing.sum(), 0.0) for t in timings]))
        routing = np.sum([t.routing for t in timings], axis=0)
        routed = np.sum([t.routed for t in timings], axis=0)
        now = np.divide(routing, routed, out=np.full(len(routed), np.nan), where=routed > 0)
        a = self.SMOOTHING
        blend = np.where(np.isnan(self._per_task), now, a * now + (1 - a) * self._per_task)
        self._per_task = np.where(np.isnan(now), self._per_task, blend)
