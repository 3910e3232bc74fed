"""Seeded task arrivals: Poisson counts per task type and tick, attributes drawn per task.

Every group host steps the whole tick's arrivals (they depend only on the seed and the tick),
so the driver never hands them out: each host draws them itself, except on the shm pipeline,
where one group draws them and hands them to the others with its output (actors/shm.py).
Each host records the creation of the tasks it routes."""

from __future__ import annotations

import math

import numpy as np

from synthorg.config.models import WorkloadSpec
from synthorg.domain.enums import EventKind, Priority
from synthorg.domain.records import EVENT_DTYPE, SCENARIO_ACTOR, SYSTEM_ACTOR, TASK_DTYPE
from synthorg.domain.rng import workload_generator
from synthorg.org.directory import OrgDirectory


class WorkloadGenerator:
    """Arrivals of tick t depend only on (seed, t): a resumed run sees the same tasks."""

    def __init__(self, spec: WorkloadSpec, directory: OrgDirectory, seed: int) -> None:
        self._spec = spec
        self._dir = directory
        self._seed = seed
        self._priority_cdf = []
        for tt in spec.task_types:
            weights = np.zeros(len(Priority))
            for name, w in tt.priority.items():
                weights[Priority[name]] = w
            cdf = (weights / weights.sum()).cumsum()
            self._priority_cdf.append(cdf / cdf[-1])

    def arrivals(self, tick: int, first_id: int, factors: np.ndarray | None = None) -> np.ndarray:
        """Tasks created at `tick`, with ids first_id, first_id + 1, ...; `factors` scale
        each task type's rate (a demand spike)."""
        rng = workload_generator(self._seed, tick)
        types, columns = [], []  # per task type with arrivals: (difficulty, effort, priority, deadline)
        for t, tt in enumerate(self._spec.task_types):
            rate = tt.rate * self._spec.scale
            n = int(rng.poisson(rate if factors is None else rate * factors[t]))
            if n == 0:
                continue
            # the draws' order is the stream's: keep it, or every seed's workload changes
            difficulty = rng.uniform(tt.difficulty.low, tt.difficulty.high, n)
            effort = rng.uniform(tt.effort.low, tt.effort.high, n)
            # what rng.choice(len(Priority), n, p=...) draws, without its checks of p (a
            # tenth of the whole draw): the test pins the two together
            priority = self._priority_cdf[t].searchsorted(rng.random(n), side="right")
            # whole ticks inside the configured span, never below its minimum
            lo = math.ceil(tt.deadline_ticks.low)
            hi = max(lo, math.floor(tt.deadline_ticks.high))
            deadline = tick + rng.integers(lo, hi + 1, n)
            types.append(np.full(n, t, dtype=np.int32))
            columns.append((difficulty, effort, priority, deadline))
        if not types:
            return np.zeros(0, dtype=TASK_DTYPE)
        out = np.zeros(sum(len(x) for x in types), dtype=TASK_DTYPE)
        kind = np.concatenate(types)
        out["task"] = np.arange(first_id, first_id + len(out), dtype=np.int64)
        out["type"] = kind
        out["dept"] = self._dir.type_dept[kind]
        out["skill"] = self._dir.type_skill[kind]
        out["tool"] = self._dir.type_tool[kind]
        for i, name in enumerate(("difficulty", "effort", "priority", "deadline")):
            out[name] = np.concatenate([c[i] for c in columns])
        out["created"] = tick
        return out


def creation_events(tick: int, arrivals: np.ndarray, recorded: np.ndarray) -> np.ndarray:
    """`task_created` ledger rows for the arrivals selected by the mask `recorded`. Their seq
    is the task's place among all the tick's arrivals, so the rows are the same whichever
    group records them."""
    index = np.flatnonzero(recorded)
    rows = np.zeros(len(index), dtype=EVENT_DTYPE)
    rows["tick"] = tick
    rows["actor"] = SYSTEM_ACTOR
    rows["seq"] = index
    rows["kind"] = EventKind.task_created
    rows["task"] = arrivals["task"][index]
    rows["target"] = arrivals["dept"][index]
    rows["value"] = arrivals["difficulty"][index]
    return rows


def shock_events(tick: int, indices: list[int]) -> np.ndarray | None:
    """`shock` ledger rows for the scenario's demand spikes and outages starting at `tick`
    (recorded once, by the first host); None when none starts."""
    if not indices:
        return None
    rows = np.zeros(len(indices), dtype=EVENT_DTYPE)
    rows["tick"] = tick
    rows["actor"] = SCENARIO_ACTOR
    rows["seq"] = np.arange(len(indices))
    rows["kind"] = EventKind.shock
    rows["target"] = indices
    return rows
