"""Departments route arriving tasks to their agents.

Routing sees the agents' loads as of the end of the previous tick (a department does not see
inside other actors mid-tick), plus what it assigned itself this tick. Assignments are
messages, delivered next tick.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from typing import Protocol

import numpy as np

from synthorg.domain.enums import EventKind, FailReason, MessageKind, TaskStatus
from synthorg.domain.records import RESULT_DTYPE, dept_actor, messages_carrying, take
from synthorg.engine.events import EventBuffer
from synthorg.org.directory import OrgDirectory, strength

Pool = tuple[np.ndarray, np.ndarray]  # candidate agents of a task type, their strength


class RoutingStrategy(Protocol):
    def assign(self, tasks: np.ndarray, pools: list[Pool | None], loads: np.ndarray) -> np.ndarray:
        """An agent per task (-1: nobody can take it), in task order; each assignment counts
        towards the loads the next task sees."""


class LoadBalanced:
    """Least loaded first; ties go to the more skilled, then the earlier agent.

    The same choices as an argmin of (load - strength * 1e-3, position) over all candidates per
    task, made from a heap over just a shortlist of each task type's candidates."""

    def assign(self, tasks: np.ndarray, pools: list[Pool | None], loads: np.ndarray) -> np.ndarray:
        assigned = [-1] * len(tasks)
        load_now = loads.astype(np.float64)  # as of the call, or of the last _Shortlist build
        bumped: dict[int, float] = {}  # the loads of the agents assigned to in this call
        types = tasks["type"].tolist()
        todo = Counter(types)
        shortlists: dict[int, _Shortlist] = {}
        for i, ttype in enumerate(types):
            pool = pools[ttype]
            if pool is None or not len(pool[0]):
                continue
            short = shortlists.get(ttype)
            if short is None:
                short = shortlists[ttype] = _Shortlist(pool[0], pool[1] * 1e-3, todo[ttype],
                                                       load_now, bumped)
            agent = short.best(load_now, bumped)[2]
            load = bumped.get(agent)
            load = bumped[agent] = (float(load_now[agent]) if load is None else load) + 1.0
            short.raise_best(load)
            assigned[i] = agent
        return np.array(assigned, dtype=np.int32)


class _Shortlist:
    """Finds the candidate with the least (load - s, position), s a per-candidate offset.

    Its heap of (key, position, agent, s) holds only the k candidates with the least keys when
    it is built: everyone left out then ranks above (bound_key, bound_pos), and keys only grow,
    so while the heap's best stays within that bound nobody left out can beat it. With k = the
    number of tasks to place, that holds to the end unless other task types assign to the same
    agents (each pick moves up just one heaped candidate); if not, the heap is rebuilt twice as
    wide. Entries whose agent was assigned to since they were made are refreshed lazily."""

    def __init__(self, cands: np.ndarray, s: np.ndarray, k: int, load_now: np.ndarray,
                 bumped: dict[int, float]) -> None:
        self.cands, self.s = cands, s
        self._build(k, load_now, bumped)

    def _build(self, k: int, load_now: np.ndarray, bumped: dict[int, float]) -> None:
        self.k = k
        if bumped:
            load_now[list(bumped)] = list(bumped.values())
        keys = load_now[self.cands] - self.s  # the same float64 arithmetic as load - s
        n = len(keys)
        if k >= n:
            sel = np.arange(n)
            self.bound_key, self.bound_pos = math.inf, n
        else:
            kth = np.partition(keys, k - 1)[k - 1]
            below = np.flatnonzero(keys < kth)
            at = np.flatnonzero(keys == kth)[: k - len(below)]
            sel = np.concatenate([below, at])
            self.bound_key, self.bound_pos = float(kth), int(at[-1])
        self.heap = list(zip(keys[sel].tolist(), sel.tolist(), self.cands[sel].tolist(),
                             self.s[sel].tolist(), strict=True))
        heapq.heapify(self.heap)

    def best(self, load_now: np.ndarray, bumped: dict[int, float]) -> tuple[float, int, int, float]:
        """The best (key, position, agent, s), brought to the top of the heap."""
        heap = self.heap
        while True:
            entry = key, pos, agent, s = heap[0]
            load = bumped.get(agent)
            if load is not None and load - s != key:
                heapq.heapreplace(heap, (load - s, pos, agent, s))
            elif key > self.bound_key or (key == self.bound_key and pos > self.bound_pos):
                self._build(2 * self.k, load_now, bumped)
                heap = self.heap
            else:
                return entry

    def raise_best(self, load: float) -> None:
        """The agent `best` returned now has `load`."""
        _, pos, agent, s = self.heap[0]
        heapq.heapreplace(self.heap, (load - s, pos, agent, s))


_MODERATE = 2.0**20  # loads, strengths and difficulties below this keep RoleBased's levels exact
_Level = tuple[float, list[int], _Shortlist]  # a strength, its positions in the pool, their loads


class RoleBased:
    """Best fit for the difficulty: just competent enough, lightly weighted by load.

    The argmin of (|strength - difficulty - 0.1| + 0.05 * load, position) over the candidates
    per task. Candidates of equal strength differ only in load, and with whole loads of moderate
    size a higher load always scores strictly worse: so when a pool has few distinct strengths,
    comparing the least loaded candidate (earliest on ties) of each strength is enough."""

    def assign(self, tasks: np.ndarray, pools: list[Pool | None], loads: np.ndarray) -> np.ndarray:
        assigned = np.full(len(tasks), -1, dtype=np.int32)
        load_now = loads.astype(np.float64)
        bumped: dict[int, float] = {}  # the loads of the agents assigned to in this call
        types = tasks["type"].tolist()
        todo = Counter(types)
        whole = not len(load_now) or bool(np.abs(load_now).max() + len(tasks) < _MODERATE
                                          and (load_now == np.round(load_now)).all())
        levels: dict[int, list[_Level] | None] = {}
        for i, (ttype, difficulty) in enumerate(zip(types, tasks["difficulty"].tolist(),
                                                   strict=True)):
            pool = pools[ttype]
            if pool is None or not len(pool[0]):
                continue
            if ttype not in levels:
                levels[ttype] = _levels(pool, todo[ttype], load_now, bumped) if whole else None
            by_level = levels[ttype]
            chosen = None
            if by_level is not None and abs(difficulty) < _MODERATE:
                score, first = math.inf, -1
                for s, members, short in by_level:
                    load, pos = short.best(load_now, bumped)[:2]
                    level_score, level_first = abs(s - difficulty - 0.1) + 0.05 * load, members[pos]
                    if first < 0 or level_score < score or (level_score == score
                                                            and level_first < first):
                        chosen, score, first = short, level_score, level_first
            if chosen is not None:
                agent = chosen.heap[0][2]
            else:
                cands, strength = pool
                pick = int(np.argmin(np.abs(strength - difficulty - 0.1) + 0.05 * load_now[cands]))
                agent = int(cands[pick])
            load_now[agent] += 1.0
            load = bumped[agent] = float(load_now[agent])
            if chosen is not None:
                chosen.raise_best(load)
            assigned[i] = agent
        return assigned


def _levels(pool: Pool, k: int, load_now: np.ndarray, bumped: dict[int, float]
            ) -> list[_Level] | None:
    """A pool's candidates by strength, if there are few strengths and all of moderate size."""
    cands, strength = pool
    if strength.dtype != np.float64 or not (np.abs(strength) < _MODERATE).all():
        return None
    values, which = np.unique(strength, return_inverse=True)
    if len(values) > min(16, len(cands) // 32):  # then a numpy argmin over the pool is as quick
        return None
    out = []
    for level, s in enumerate(values.tolist()):
        members = np.flatnonzero(which == level)
        out.append((s, members.tolist(),
                    _Shortlist(cands[members], np.zeros(len(members)), k, load_now, bumped)))
    return out


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
            self._pools.append((cands, strength(d.skills[cands, d.type_skill[t]],
                                                d.seniority[cands])))

    def choose(self, tasks: np.ndarray, loads: np.ndarray) -> np.ndarray:
        """An agent per task of this department (-1: nobody can take it)."""
        return self._strategy.assign(tasks, self._pools, loads)

    def route(self, tick: int, tasks: np.ndarray, loads: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Assign `tasks`; returns (assign messages, events, failed-task results)."""
        events = EventBuffer(tick)
        assigned = self.choose(tasks, loads)
        ok = assigned >= 0
        messages = messages_carrying(take(tasks, ok))
        messages["src"] = self.actor
        messages["seq"] = np.arange(len(messages), dtype=np.int32)
        messages["dst"] = assigned[ok]
        messages["kind"] = MessageKind.assign
        actor = np.full(int(ok.sum()), self.actor, dtype=np.int32)
        events.add(EventKind.task_routed, actor, tasks["task"][ok], target=assigned[ok])
        failed = unroutable(tasks["task"][~ok], tick)
        if len(failed):
            events.add(EventKind.task_failed, np.full(len(failed), self.actor, np.int32),
                       failed["task"], target=np.full(len(failed), FailReason.unroutable))
        return messages, events.collect(), failed


def unroutable(task_ids: np.ndarray, tick: int) -> np.ndarray:
    """Failed-task results for tasks nobody in their department can take."""
    failed = np.zeros(len(task_ids), dtype=RESULT_DTYPE)
    failed["task"] = task_ids
    failed["agent"] = -1
    failed["status"] = TaskStatus.failed
    failed["reason"] = FailReason.unroutable
    failed["finished"] = tick
    failed["started"] = tick
    return failed
