"""Departments route arriving tasks to their agents.

Routing sees the agents' loads as of the end of the previous tick (a department does not see
inside other actors mid-tick), plus what it assigned itself this tick. Assignments are
messages, delivered next tick.
"""

from __future__ import annotations

import heapq
from typing import Protocol

import numpy as np

from synthorg.domain.enums import EventKind, FailReason, MessageKind, TaskStatus
from synthorg.domain.records import RESULT_DTYPE, dept_actor, messages_carrying
from synthorg.engine.events import EventBuffer
from synthorg.org.directory import SENIORITY_BONUS, OrgDirectory

Pool = tuple[np.ndarray, np.ndarray]  # candidate agents of a task type, their strength


class RoutingStrategy(Protocol):
    def assign(self, tasks: np.ndarray, pools: list[Pool | None], loads: np.ndarray) -> np.ndarray:
        """An agent per task (-1: nobody can take it), in task order; each assignment counts
        towards the loads the next task sees."""


class LoadBalanced:
    """Least loaded first; ties go to the more skilled, then the earlier agent.

    A heap per task type with lazy refresh (loads only grow within a tick) gives the same
    choices as an argmin over all candidates per task, in O(log n) a task."""

    def assign(self, tasks: np.ndarray, pools: list[Pool | None], loads: np.ndarray) -> np.ndarray:
        assigned = np.full(len(tasks), -1, dtype=np.int32)
        load = loads.astype(np.float64).tolist()
        heaps: dict[int, tuple[list[tuple[float, int]], list[int], list[float]]] = {}
        for i, ttype in enumerate(tasks["type"].tolist()):
            pool = pools[ttype]
            if pool is None or not len(pool[0]):
                continue
            entry = heaps.get(ttype)
            if entry is None:
                cands, strength = pool[0].tolist(), (pool[1] * 1e-3).tolist()
                heap = [(load[a] - s, pos) for pos, (a, s) in enumerate(zip(cands, strength,
                                                                               strict=True))]
                heapq.heapify(heap)
                entry = heaps[ttype] = (heap, cands, strength)
            heap, cands, strength = entry
            while True:
                key, pos = heap[0]
                agent = cands[pos]
                true_key = load[agent] - strength[pos]
                if true_key == key:
                    break
                heapq.heapreplace(heap, (true_key, pos))
            assigned[i] = agent
            load[agent] += 1.0
            heapq.heapreplace(heap, (load[agent] - strength[pos], pos))
        return assigned


class RoleBased:
    """Best fit for the difficulty: just competent enough, lightly weighted by load."""

    def assign(self, tasks: np.ndarray, pools: list[Pool | None], loads: np.ndarray) -> np.ndarray:
        assigned = np.full(len(tasks), -1, dtype=np.int32)
        load_now = loads.astype(np.float64)
        for i, (ttype, difficulty) in enumerate(zip(tasks["type"].tolist(),
                                                   tasks["difficulty"].tolist(), strict=True)):
            pool = pools[ttype]
            if pool is None or not len(pool[0]):
                continue
            cands, strength = pool
            pick = int(np.argmin(np.abs(strength - difficulty - 0.1) + 0.05 * load_now[cands]))
            assigned[i] = cands[pick]
            load_now[cands[pick]] += 1.0
        return assigned


STRATEGIES: dict[str, RoutingStrategy] = {"load_balanced": LoadBalanced(), "role_based": RoleBased()}


class Department:
    def __init__(self, directory: OrgDirectory, dept: int) -> None:
        self._dir = directory
        self.dept = dept
        self.actor = dept_actor(dept)
        self._strategy = STRATEGIES[directory.dept_routing[dept]]
        d = directory
        self._pools: list[Pool | None] = []
        for t in range(len(d.type_ids)):
            cands = d.handlers.get((dept, t))
            if cands is None or d.type_dept[t] != dept:
                self._pools.append(None)
                continue
            strength = d.skills[cands, d.type_skill[t]] + SENIORITY_BONUS[d.seniority[cands]]
            self._pools.append((cands, strength))

    def route(self, tick: int, tasks: np.ndarray, loads: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Assign `tasks`; returns (assign messages, events, failed-task results)."""
        events = EventBuffer(tick)
        assigned = self._strategy.assign(tasks, self._pools, loads)
        ok = assigned >= 0
        messages = messages_carrying(tasks[ok])
        messages["src"] = self.actor
        messages["seq"] = np.arange(len(messages), dtype=np.int32)
        messages["dst"] = assigned[ok]
        messages["kind"] = MessageKind.assign
        actor = np.full(int(ok.sum()), self.actor, dtype=np.int32)
        events.add(EventKind.task_routed, actor, tasks["task"][ok], target=assigned[ok])
        failed = np.zeros(int((~ok).sum()), dtype=RESULT_DTYPE)
        if len(failed):
            failed["task"] = tasks["task"][~ok]
            failed["agent"] = -1
            failed["status"] = TaskStatus.failed
            failed["reason"] = FailReason.unroutable
            failed["finished"] = tick
            failed["started"] = tick
            events.add(EventKind.task_failed, np.full(len(failed), self.actor, np.int32),
                       failed["task"], target=np.full(len(failed), FailReason.unroutable))
        return messages, events.collect(), failed
