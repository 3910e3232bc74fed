"""The loop's state machines: phase order within a tick, agent work states, task statuses."""

from __future__ import annotations

import numpy as np
import pytest

from synthorg.domain.enums import TaskStatus, WorkState
from synthorg.errors import LoopTransitionError
from synthorg.loop.phases import (
    TASK_TRANSITIONS,
    LoopCycle,
    LoopPhase,
    check_task_transition,
    check_work_transition,
)

ORDER = [LoopPhase.perceive, LoopPhase.evaluate, LoopPhase.revise, LoopPhase.plan,
         LoopPhase.filter, LoopPhase.act, LoopPhase.reflect]


def test_full_cycle_in_order_twice():
    cycle = LoopCycle()
    assert cycle.phase is LoopPhase.idle
    for _ in range(2):
        for phase in ORDER:
            cycle.enter(phase)
            assert cycle.phase is phase
        cycle.finish()
        assert cycle.phase is LoopPhase.idle


def test_skipping_a_phase_raises():
    cycle = LoopCycle()
    cycle.enter(LoopPhase.perceive)
    with pytest.raises(LoopTransitionError, match="perceive -> plan"):
        cycle.enter(LoopPhase.plan)
    assert cycle.phase is LoopPhase.perceive  # unchanged by the refused transition


@pytest.mark.parametrize("phase", [p for p in LoopPhase if p is not LoopPhase.perceive])
def test_first_phase_must_be_perceive(phase):
    with pytest.raises(LoopTransitionError):
        LoopCycle().enter(phase)


def test_repeating_a_phase_raises():
    cycle = LoopCycle()
    cycle.enter(LoopPhase.perceive)
    with pytest.raises(LoopTransitionError):
        cycle.enter(LoopPhase.perceive)


def test_finish_before_reflect_raises():
    cycle = LoopCycle()
    for phase in ORDER[:-1]:
        cycle.enter(phase)
    with pytest.raises(LoopTransitionError):
        cycle.finish()


def _states(*s: WorkState) -> np.ndarray:
    return np.array([int(x) for x in s], dtype=np.int8)


@pytest.mark.parametrize(("old", "new"), [
    (WorkState.idle, WorkState.working),
    (WorkState.working, WorkState.idle),
    (WorkState.working, WorkState.waiting_help),
    (WorkState.waiting_help, WorkState.working),
    (WorkState.working, WorkState.blocked),
    (WorkState.blocked, WorkState.working),
    (WorkState.blocked, WorkState.idle),
    (WorkState.waiting_help, WorkState.idle),  # the deadline passed while waiting
    (WorkState.waiting_action, WorkState.idle),
])
def test_allowed_work_transitions(old, new):
    check_work_transition(_states(old), new)


@pytest.mark.parametrize(("old", "new"), [
    (WorkState.idle, WorkState.blocked),
    (WorkState.idle, WorkState.waiting_help),
    (WorkState.idle, WorkState.idle),
    (WorkState.waiting_help, WorkState.blocked),
    (WorkState.blocked, WorkState.waiting_help),
    (WorkState.working, WorkState.working),
])
def test_forbidden_work_transitions(old, new):
    with pytest.raises(LoopTransitionError, match=f"{old.name} -> {new.name}"):
        check_work_transition(_states(old), new)


def test_work_transition_checks_every_agent():
    check_work_transition(_states(WorkState.idle, WorkState.idle), WorkState.working)
    # one bad agent among good ones is enough; the message names its state
    with pytest.raises(LoopTransitionError, match="blocked -> waiting_help"):
        check_work_transition(_states(WorkState.working, WorkState.working, WorkState.blocked),
                              WorkState.waiting_help)
    with pytest.raises(LoopTransitionError, match="idle -> blocked"):
        check_work_transition(_states(WorkState.working, WorkState.idle), WorkState.blocked)


def test_work_transition_of_nobody_is_fine():
    check_work_transition(np.zeros(0, dtype=np.int8), WorkState.blocked)


@pytest.mark.parametrize(("old", "new"), sorted(TASK_TRANSITIONS))
def test_allowed_task_transitions(old, new):
    check_task_transition(old, new)


def test_queued_to_active_ok():
    check_task_transition(TaskStatus.queued, TaskStatus.active)


@pytest.mark.parametrize(("old", "new"), [
    (TaskStatus.completed, TaskStatus.active),
    (TaskStatus.failed, TaskStatus.active),
    (TaskStatus.created, TaskStatus.active),
    (TaskStatus.created, TaskStatus.completed),
    (TaskStatus.routed, TaskStatus.completed),
    (TaskStatus.completed, TaskStatus.failed),
])
def test_forbidden_task_transitions(old, new):
    with pytest.raises(LoopTransitionError, match=f"{old.name} -> {new.name}"):
        check_task_transition(old, new)


def test_terminal_task_statuses_have_no_exits():
    for old, _ in TASK_TRANSITIONS:
        assert old not in (TaskStatus.completed, TaskStatus.failed)
