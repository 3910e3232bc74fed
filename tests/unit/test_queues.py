"""Per-agent task queues: highest priority first, then earliest deadline, then task id; an
idle agent takes the best task still live and drops the expired ones above it."""

from __future__ import annotations

import numpy as np

from synthorg.domain.records import TASK_DTYPE
from synthorg.engine.queues import TaskQueues


def _tasks(*rows: tuple[int, int, int]) -> np.ndarray:
    """(task id, priority, deadline) per row; the other fields tell the rows apart."""
    tasks = np.zeros(len(rows), dtype=TASK_DTYPE)
    tasks["task"], tasks["priority"], tasks["deadline"] = np.array(rows).T
    tasks["effort"] = tasks["task"] * 1.5
    tasks["skill"] = tasks["task"] + 100
    return tasks


def test_agents_take_their_best_live_task_and_drop_the_expired_above_it():
    queues = TaskQueues(4)
    queues.push_many(np.array([0, 0, 0, 1, 1, 3]), _tasks(
        (1, 1, 50),
        (2, 3, 5),  # best for agent 0, but expired at tick 10
        (3, 3, 40),  # so agent 0 takes this one
        (4, 2, 3),  # agent 1 has only expired tasks
        (5, 2, 2),
        (6, 0, 9),  # live at tick 10 within the grace of 1 tick
    ))
    got, tasks, expired = queues.pop_next([0, 1, 2, 3], tick=10, grace=1)
    assert got == [0, 3]
    assert tasks.dtype == TASK_DTYPE and tasks["task"].tolist() == [3, 6]
    assert tasks["effort"].tolist() == [4.5, 9.0] and tasks["skill"].tolist() == [103, 106]
    assert expired == [(0, 2), (1, 5), (1, 4)]
    assert queues.length.tolist() == [1, 0, 0, 0]
    assert [t for t, _ in queues.task_agents()] == [1]


def test_peek_leaves_the_best_task_that_pop_then_takes():
    queues = TaskQueues(1)
    queues.push_many(np.array([0, 0, 0]), _tasks((7, 1, 30), (8, 1, 20), (9, 0, 10)))
    assert queues.peek(0)["task"].tolist() == [8] and queues.length.tolist() == [3]
    top = queues.pop(0)
    assert top.dtype == TASK_DTYPE and top["task"].tolist() == [8]
    assert top["skill"].tolist() == [108]
    assert queues.length.tolist() == [2] and sorted([t for t, _ in queues.task_agents()]) == [7, 9]


def test_queued_tasks_expire_at_the_first_tick_past_deadline_and_grace():
    queues = TaskQueues(3)
    queues.push_many(np.array([2, 0, 0, 1]), _tasks((1, 3, 5), (2, 1, 5), (3, 0, 8), (4, 2, 6)))
    assert queues.expire(tick=6, grace=1) == []  # deadline 5 + grace 1: still live at 6
    assert queues.expire(tick=7, grace=1) == [(0, 2), (2, 1)]  # sorted by (agent, task)
    assert queues.length.tolist() == [1, 1, 0]
    assert queues.expire(tick=8, grace=1) == [(1, 4)]
    assert queues.peek(0)["task"].tolist() == [3]  # what expired no longer shows
    assert sorted(queues.task_agents()) == [(3, 0)]


def test_a_task_taken_before_its_deadline_does_not_expire_later():
    queues = TaskQueues(1)
    queues.push_many(np.array([0, 0]), _tasks((1, 2, 4), (2, 1, 4)))
    got, tasks, _ = queues.pop_next([0], tick=3, grace=0)
    assert got == [0]
    assert tasks["task"].tolist() == [1]
    assert queues.expire(tick=9, grace=0) == [(0, 2)]  # only the one still queued


def test_restored_queues_expire_in_the_same_order():
    queues = TaskQueues(3)
    queues.push_many(np.array([2, 1, 0, 2, 1]), _tasks((5, 1, 3), (4, 1, 3), (3, 1, 3),
                                                       (2, 1, 3), (1, 1, 3)))
    restored = TaskQueues.from_arrays(3, *queues.to_arrays())
    assert restored.expire(tick=4, grace=0) == queues.expire(tick=4, grace=0)
