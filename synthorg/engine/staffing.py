"""A group's side of a changing org: applying a new org version at a tick boundary, and
passing on what reaches agents who are away or gone.

A leaver's open tasks (the one in hand and its queue) go back to routing: the leaver's
department routes them on last tick's loads, as it routes arrivals, and the assignments are
messages from the leaver, delivered next tick. Each leaver's tasks are routed on their own, so
the outcome does not depend on which other agents share the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from synthorg.domain.enums import EventKind, FailReason, MessageKind, Priority, WorkState
from synthorg.domain.records import (
    TASK_DTYPE,
    answers_to,
    carries_task,
    join,
    messages_carrying,
    take,
    task_fields_of,
)
from synthorg.engine.events import EventBuffer, MessageBuffer, ResultBuffer
from synthorg.org.directory import OrgDirectory
from synthorg.org.routing import unroutable
from synthorg.org.timeline import OrgChange

MAX_PRIORITY = max(int(p) for p in Priority)

if TYPE_CHECKING:
    from synthorg.engine.group import AgentGroup


class Staffing:
    def __init__(self, group: AgentGroup) -> None:
        self.g = group

    def reorganise(self, tick: int, directory: OrgDirectory, changes: list[OrgChange],
                   loads: np.ndarray, ev: EventBuffer, out: MessageBuffer,
                   results: ResultBuffer) -> None:
        """Take up the org version that starts at `tick`; record this group's agents'
        changes and route the leavers' open tasks anew."""
        g, a = self.g, self.g.a
        g.use(directory)
        for change in changes:
            if change.agent < 0:  # a department's own change: recorded by the first group
                if g.lo == 0:
                    ev.add_one(change.kind, change.agent, target=change.target,
                               value=change.value)
                continue
            if not g.lo <= change.agent < g.hi:
                continue
            ev.add_one(change.kind, change.agent, target=change.target, value=change.value)
            if change.kind == EventKind.agent_joined:  # an HR hire's levels are decided now
                a.skills[change.agent - g.lo] = directory.skills[change.agent]
            if g.memory is not None and change.kind == EventKind.agent_joined:
                g.memory.joined(tick, change.agent)  # someone rehired has their memory back
            if change.kind != EventKind.agent_left:
                continue
            if g.memory is not None:
                g.memory.left(tick, change.agent)  # archived: a read-only snapshot
            local = change.agent - g.lo
            held = a.state[local] != WorkState.idle.value
            tasks = join([take(a.cur, np.array([local]))] if held else [], TASK_DTYPE)
            tasks = join([tasks, a.queues.drain(local)], TASK_DTYPE)
            boost = g.cfg.hr.firing.priority_boost if g.cfg.hr.enabled else 0
            if boost and len(tasks):  # work left by a leaver is late already: it goes first
                tasks["priority"] = np.minimum(tasks["priority"] + boost, MAX_PRIORITY)
            a.state[local] = WorkState.idle
            self._route_again(tick, change.agent, tasks, loads, ev, out, results)

    def pass_on(self, tick: int, inbox: np.ndarray, loads: np.ndarray, ev: EventBuffer,
                out: MessageBuffer, results: ResultBuffer) -> np.ndarray:
        """The inbox less what reaches agents not at work: their tasks are routed anew (from
        them), help requests to them bounce."""
        g = self.g
        away = ~g.active[inbox["dst"] - g.lo]
        if not away.any():
            return inbox
        carrying = carries_task(inbox) & away
        asking = (inbox["kind"] == MessageKind.ask.value) & away
        passed = take(inbox, carrying)
        for agent in np.unique(passed["dst"]).tolist():
            mine = passed["dst"] == agent
            self._route_again(tick, agent, task_fields_of(take(passed, mine)), loads, ev, out,
                              results)
        asks = take(inbox, asking)
        if len(asks):
            out.add(answers_to(asks, MessageKind.bounce))
        return take(inbox, ~(carrying | asking))

    def _route_again(self, tick: int, agent: int, tasks: np.ndarray, loads: np.ndarray,
                     ev: EventBuffer, out: MessageBuffer, results: ResultBuffer) -> None:
        """Route `tasks`, which `agent` can no longer work on, to others of their department."""
        for dept in np.unique(tasks["dept"]).tolist():
            part = take(tasks, tasks["dept"] == dept)
            assigned = self.g.routers[dept].choose(part, loads)
            ok = assigned >= 0
            msgs = messages_carrying(take(part, ok))
            msgs["src"], msgs["dst"], msgs["kind"] = agent, assigned[ok], MessageKind.assign
            out.add(msgs)
            ev.add(EventKind.task_returned, np.full(int(ok.sum()), agent, np.int32),
                   part["task"][ok], target=assigned[ok])
            failed = unroutable(part["task"][~ok], tick)
            results.add(failed)
            ev.add(EventKind.task_failed, np.full(len(failed), agent, np.int32), failed["task"],
                   target=np.full(len(failed), FailReason.unroutable))
