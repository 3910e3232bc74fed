"""Departments route arriving tasks to their agents.

Routing sees the agents' loads as of the end of the previous tick (a department does not see
inside other actors mid-tick), plus what it assigned itself this tick. Assignments are
messages, delivered next tick.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from synthorg.domain.enums import EventKind, FailReason, MessageKind, TaskStatus
from synthorg.domain.records import RESULT_DTYPE, dept_actor, messages_carrying
from synthorg.engine.events import EventBuffer
from synthorg.org.directory import SENIORITY_BONUS, OrgDirectory


class RoutingStrategy(Protocol):
    def choose(self, candidates: np.ndarray, skill: np.ndarray, load: np.ndarray,
               difficulty: float) -> int:
        """Index into `candidates` of the agent that gets the task."""


class LoadBalanced:
    """Least loaded first; ties go to the more skilled, then the earlier agent."""

    def choose(self, candidates: np.ndarray, skill: np.ndarray, load: np.ndarray,
               difficulty: float) -> int:
        return int(np.argmin(load - skill * 1e-3))


class RoleBased:
    """Best fit for the difficulty: just competent enough, lightly weighted by load."""

    def choose(self, candidates: np.ndarray, skill: np.ndarray, load: np.ndarray,
               difficulty: float) -> int:
        return int(np.argmin(np.abs(skill - difficulty - 0.1) + 0.05 * load))


STRATEGIES: dict[str, RoutingStrategy] = {"load_balanced": LoadBalanced(), "role_based": RoleBased()}


class Department:
    def __init__(self, directory: OrgDirectory, dept: int) -> None:
        self._dir = directory
        self.dept = dept
        self.actor = dept_actor(dept)
        self._strategy = STRATEGIES[directory.dept_routing[dept]]

    def route(self, tick: int, tasks: np.ndarray, loads: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Assign `tasks`; returns (assign messages, events, failed-task results)."""
        d = self._dir
        events = EventBuffer(tick)
        assigned = np.full(len(tasks), -1, dtype=np.int32)
        # candidates and their strength per task type; loads count this tick's assignments
        pools: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        load_now = loads.astype(np.float64)
        types, skills = tasks["type"].tolist(), tasks["skill"].tolist()
        difficulty = tasks["difficulty"].tolist()
        for i, ttype in enumerate(types):
            pool = pools.get(ttype)
            if pool is None:
                cands = d.handlers.get((self.dept, ttype), np.zeros(0, np.int32))
                strength = d.skills[cands, skills[i]] + SENIORITY_BONUS[d.seniority[cands]]
                pool = pools[ttype] = (cands, strength)
            cands, strength = pool
            if len(cands) == 0:
                continue
            pick = self._strategy.choose(cands, strength, load_now[cands], difficulty[i])
            assigned[i] = cands[pick]
            load_now[cands[pick]] += 1.0
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
