"""A group's side of long-term memory (synthorg/memory): what its agents write when a task
ends or a colleague helps, what they search for when they take up a task, and what that does
to their work. One call to the memory service per tick, with everything at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from synthorg.config.models import MemorySpec
from synthorg.domain.enums import EventKind, Seniority, TaskStatus
from synthorg.engine.events import EventBuffer
from synthorg.memory.experience import experience
from synthorg.memory.records import (
    HIT_DTYPE,
    ORG,
    QUERY_DTYPE,
    RECALLED_DTYPE,
    WRITE_DTYPE,
    Category,
    Outcome,
)
from synthorg.memory.service import ARCHIVE, CHANGE_DTYPE, RESTORE

if TYPE_CHECKING:
    from synthorg.engine.group import AgentGroup

# (tick, writes, queries, changes) -> hits: the memory service, in process or an actor's
Recall = Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


class MemoryDesk:
    def __init__(self, group: AgentGroup, spec: MemorySpec, recall: Recall) -> None:
        self.g, self.spec, self.recall = group, spec, recall
        self.writes: list[np.ndarray] = []  # since the last call
        self.changes: list[tuple[int, int, int]] = []
        self._seq = np.zeros(group.hi - group.lo, dtype=np.int32)
        self._seq_tick = -1
        self._org_writer = int(Seniority[spec.org_writers])
        # what each agent that reasons with a model recalled for its current task: its prompt
        # quotes them (engine/llm_desk.py); kept for those agents only, and in checkpoints
        self.recalled = np.zeros(0, dtype=RECALLED_DTYPE)

    def _next_seq(self, tick: int, local: np.ndarray, count: int) -> np.ndarray:
        if tick != self._seq_tick:
            self._seq[:] = 0
            self._seq_tick = tick
        seq = self._seq[local].copy()
        self._seq[local] += count
        return seq

    def _rows(self, tick: int, local: np.ndarray, tasks: np.ndarray, category: Category
              ) -> np.ndarray:
        rows = np.zeros(len(local), dtype=WRITE_DTYPE)
        rows["tick"] = tick
        rows["agent"] = self.g.global_ids[local]
        rows["owner"] = rows["agent"]
        rows["category"] = category
        for name in ("task", "type", "skill", "dept", "difficulty"):
            rows[name] = tasks[name]
        rows["helper"] = -1
        return rows

    def closed(self, tick: int, local: np.ndarray, results: np.ndarray, tasks: np.ndarray,
               ev: EventBuffer) -> None:
        """Reflect: a task ended (RESULT rows): what happened (episodic), and for work done
        well a lesson (procedural) and, from a senior enough agent, organisation memory."""
        done = results["status"] == TaskStatus.completed
        episodic = self._rows(tick, local, tasks, Category.episodic)
        episodic["outcome"] = np.where(done, Outcome.completed, Outcome.failed)
        episodic["quality"] = results["quality"]
        episodic["turns"] = results["turns"]
        lesson = episodic[done & (results["quality"] >= self.spec.lesson_quality)]  # a copy
        lesson["category"] = Category.procedural
        senior = self.g.seniority[local] >= self._org_writer
        org = episodic[done & senior & (results["quality"] >= self.spec.org_quality)]
        org["category"] = Category.semantic
        org["owner"] = ORG
        self._add(tick, [episodic, lesson, org], ev)

    def helped(self, tick: int, local: np.ndarray, helpers: np.ndarray, tasks: np.ndarray,
               ev: EventBuffer) -> None:
        """A colleague's answer: who helps with such work (social) and how (procedural)."""
        social = self._rows(tick, local, tasks, Category.social)
        social["helper"] = helpers
        shown = social.copy()
        shown["category"] = Category.procedural
        self._add(tick, [social, shown], ev)

    def _add(self, tick: int, parts: list[np.ndarray], ev: EventBuffer) -> None:
        rows = np.concatenate([p for p in parts if len(p)] or [np.zeros(0, WRITE_DTYPE)])
        if not len(rows):
            return
        # one agent's writes of a tick are numbered in the order made (keys: records.py)
        order = np.argsort(rows["agent"], kind="stable")
        rows = rows[order]
        first = np.searchsorted(rows["agent"], rows["agent"], side="left")
        within = np.arange(len(rows)) - first
        agents, counts = np.unique(rows["agent"], return_counts=True)
        base = self._next_seq(tick, agents - self.g.lo, 0)
        rows["seq"] = np.repeat(base, counts) + within
        self._seq[agents - self.g.lo] += counts.astype(np.int32)
        self.writes.append(rows)
        ev.add(EventKind.memory_written, rows["agent"], rows["task"],
               target=rows["category"].astype(np.int32), value=rows["quality"])

    def left(self, tick: int, agent: int) -> None:
        self.changes.append((tick, agent, ARCHIVE))

    def joined(self, tick: int, agent: int) -> None:
        self.changes.append((tick, agent, RESTORE))

    def perceive(self, tick: int, started: np.ndarray, ev: EventBuffer) -> None:
        """The agents `started` took up a task: what they remember of such work comes back
        now, with what was written since the last call on its way."""
        if not len(started) and not self.writes and not self.changes:
            return
        a = self.g.a
        queries = np.zeros(len(started), dtype=QUERY_DTYPE)
        queries["tick"] = tick
        queries["agent"] = self.g.global_ids[started]
        for name in ("task", "type", "skill", "dept", "difficulty"):
            queries[name] = a.cur[name][started]
        writes = np.concatenate(self.writes) if self.writes else np.zeros(0, WRITE_DTYPE)
        changes = np.array(self.changes, dtype=CHANGE_DTYPE)
        self.writes, self.changes = [], []
        hits = self.recall(tick, writes, queries, changes)
        if not len(started):
            return
        bonus, helper = experience(hits, len(started), self.spec)
        a.experience[started] = bonus
        a.mem_helper[started] = helper
        if self.g.llm is not None:
            self._keep_recalled(started, hits)
        found = np.bincount(hits["query"], minlength=len(started))[:len(started)]
        ev.add(EventKind.memory_searched, queries["agent"], queries["task"],
               target=found.astype(np.int32), value=bonus)

    def _keep_recalled(self, started: np.ndarray, hits: np.ndarray) -> None:
        reasoning = self.g.llm.selected  # type: ignore[union-attr]
        kept = self.recalled[~np.isin(self.recalled["local"], started)]
        mine = hits[reasoning[started[hits["query"]]]]
        rows = np.zeros(len(mine), dtype=RECALLED_DTYPE)
        for name in HIT_DTYPE.names or ():
            rows[name] = mine[name]
        rows["local"] = started[mine["query"]]
        self.recalled = np.concatenate([kept, rows])

    def recalled_by(self, local: int) -> np.ndarray:
        """The memories `local` recalled for its current task, best first."""
        return np.sort(self.recalled[self.recalled["local"] == local], order="rank")

    def state(self) -> dict[str, object]:
        writes = np.concatenate(self.writes) if self.writes else np.zeros(0, WRITE_DTYPE)
        return {"writes": writes, "changes": np.array(self.changes, dtype=CHANGE_DTYPE),
                "seq": self._seq.copy(), "seq_tick": self._seq_tick,
                "recalled": self.recalled.copy()}

    def load(self, state: dict[str, object]) -> None:
        writes, changes = np.asarray(state["writes"]), np.asarray(state["changes"])
        seq = np.asarray(state["seq"])
        if (writes.dtype != WRITE_DTYPE or changes.dtype != CHANGE_DTYPE
                or seq.shape != self._seq.shape):
            raise ValueError("memory desk state of the wrong shape")
        self.writes = [writes.copy()] if len(writes) else []
        self.changes = [(int(t), int(o), int(op)) for t, o, op in changes.tolist()]
        self._seq = seq.astype(np.int32).copy()
        self._seq_tick = int(state["seq_tick"])  # type: ignore[call-overload]
        recalled = np.asarray(state.get("recalled", np.zeros(0, RECALLED_DTYPE)))
        if recalled.dtype != RECALLED_DTYPE or (len(recalled) and not (
                (recalled["local"] >= 0) & (recalled["local"] < len(self._seq))).all()):
            raise ValueError("memory desk: recalled memories of the wrong shape")
        self.recalled = recalled.copy()
