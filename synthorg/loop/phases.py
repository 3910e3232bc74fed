"""The loop as explicit state machines with checked transitions.

Two machines: the phase cycle a group of agents goes through in each tick
(perceive -> evaluate -> revise -> plan -> filter -> act -> reflect), and the work state an
agent carries between ticks (idle / working / waiting for help / blocked on a human).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from synthorg.domain.enums import TaskStatus, WorkState
from synthorg.errors import LoopTransitionError


class LoopPhase(IntEnum):
    idle = 0  # between ticks
    perceive = 1
    evaluate = 2
    revise = 3
    plan = 4
    filter = 5
    act = 6
    reflect = 7


NEXT_PHASE: dict[LoopPhase, LoopPhase] = {
    LoopPhase.idle: LoopPhase.perceive,
    LoopPhase.perceive: LoopPhase.evaluate,
    LoopPhase.evaluate: LoopPhase.revise,
    LoopPhase.revise: LoopPhase.plan,
    LoopPhase.plan: LoopPhase.filter,
    LoopPhase.filter: LoopPhase.act,
    LoopPhase.act: LoopPhase.reflect,
    LoopPhase.reflect: LoopPhase.idle,
}


class LoopCycle:
    """Tracks the phase of one tick; entering a phase out of order is an error."""

    def __init__(self) -> None:
        self.phase = LoopPhase.idle

    def enter(self, phase: LoopPhase) -> None:
        expected = NEXT_PHASE[self.phase]
        if phase is not expected:
            raise LoopTransitionError(
                f"loop phase {self.phase.name} -> {phase.name} not allowed "
                f"(next must be {expected.name})"
            )
        self.phase = phase

    def finish(self) -> None:
        self.enter(LoopPhase.idle)


_W = WorkState
WORK_TRANSITIONS: frozenset[tuple[WorkState, WorkState]] = frozenset(
    {
        (_W.idle, _W.working),  # Transition: take the next task
        (_W.working, _W.idle),  # Finish / Fail
        (_W.working, _W.waiting_help),  # SendMessage(ask)
        (_W.waiting_help, _W.working),  # reply received
        (_W.working, _W.blocked),  # AskHuman
        (_W.blocked, _W.working),  # approved
        (_W.blocked, _W.idle),  # rejected: task handed off or failed
        (_W.working, _W.waiting_action),  # CallTool run as an action
        (_W.waiting_action, _W.working),  # its result arrived
        (_W.waiting_help, _W.idle),  # the deadline passed while waiting
        (_W.waiting_action, _W.idle),  # the deadline passed while waiting
    }
)

# An agent who leaves the org drops whatever it was doing (engine/staffing.py): that is not a
# step of the loop, so it is not among these transitions.

# per target state, whether each state may move to it (indexed by the int8 states directly)
_ALLOWED_TO = np.zeros((len(WorkState), len(WorkState)), dtype=bool)
for _a, _b in WORK_TRANSITIONS:
    _ALLOWED_TO[_b, _a] = True


def check_work_transition(old: np.ndarray, new: WorkState) -> None:
    """Raise if any agent would move from its state in `old` to `new` illegally."""
    allowed = _ALLOWED_TO[int(new)][old]
    if not allowed.all():
        first = WorkState(int(old[np.argmin(allowed)]))
        raise LoopTransitionError(f"work state {first.name} -> {new.name} not allowed")


_T = TaskStatus
TASK_TRANSITIONS: frozenset[tuple[TaskStatus, TaskStatus]] = frozenset(
    {
        (_T.created, _T.routed),
        (_T.created, _T.failed),  # unroutable
        (_T.routed, _T.queued),
        (_T.queued, _T.active),
        (_T.queued, _T.failed),  # expired in the queue
        (_T.queued, _T.routed),  # delegated onwards by a lead
        (_T.active, _T.completed),
        (_T.active, _T.failed),
        (_T.active, _T.routed),  # handed off after a rejected escalation
    }
)


def check_task_transition(old: TaskStatus, new: TaskStatus) -> None:
    if (old, new) not in TASK_TRANSITIONS:
        raise LoopTransitionError(f"task status {old.name} -> {new.name} not allowed")
