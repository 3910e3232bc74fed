"""Seeded task arrivals: Poisson counts per task type and tick, attributes drawn per task."""

from __future__ import annotations

import math

import numpy as np

from synthorg.config.models import WorkloadSpec
from synthorg.domain.enums import Priority
from synthorg.domain.records import TASK_DTYPE
from synthorg.domain.rng import workload_generator
from synthorg.org.directory import OrgDirectory


class WorkloadGenerator:
    """Arrivals of tick t depend only on (seed, t): a resumed run sees the same tasks."""

    def __init__(self, spec: WorkloadSpec, directory: OrgDirectory, seed: int) -> None:
        self._spec = spec
        self._dir = directory
        self._seed = seed
        self._priority_p = []
        for tt in spec.task_types:
            weights = np.zeros(len(Priority))
            for name, w in tt.priority.items():
                weights[Priority[name]] = w
            self._priority_p.append(weights / weights.sum())

    def arrivals(self, tick: int, first_id: int) -> np.ndarray:
        """Tasks created at `tick`, with ids first_id, first_id + 1, ..."""
        rng = workload_generator(self._seed, tick)
        chunks = []
        for t, tt in enumerate(self._spec.task_types):
            n = int(rng.poisson(tt.rate))
            if n == 0:
                continue
            rows = np.zeros(n, dtype=TASK_DTYPE)
            rows["type"] = t
            rows["dept"] = self._dir.type_dept[t]
            rows["skill"] = self._dir.type_skill[t]
            rows["tool"] = self._dir.type_tool[t]
            rows["difficulty"] = rng.uniform(tt.difficulty.low, tt.difficulty.high, n)
            rows["effort"] = rng.uniform(tt.effort.low, tt.effort.high, n)
            rows["priority"] = rng.choice(len(Priority), size=n, p=self._priority_p[t])
            # whole ticks inside the configured span, never below its minimum
            lo = math.ceil(tt.deadline_ticks.low)
            hi = max(lo, math.floor(tt.deadline_ticks.high))
            rows["deadline"] = tick + rng.integers(lo, hi + 1, n)
            chunks.append(rows)
        if not chunks:
            return np.zeros(0, dtype=TASK_DTYPE)
        out = np.concatenate(chunks)
        out["task"] = np.arange(first_id, first_id + len(out), dtype=np.int64)
        out["created"] = tick
        return out
