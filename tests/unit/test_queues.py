"""Per-agent task queues: highest priority first, then earliest deadline, then task id; an
idle agent takes the best task still live and drops the expired ones above it."""

from __future__ import annotations

from synthorg.engine.queues import FIELD, TaskQueues


def _task(task: int, priority: int, deadline: int) -> tuple:
    row = [0] * len(FIELD)
    row[FIELD["task"]], row[FIELD["priority"]], row[FIELD["deadline"]] = task, priority, deadline
    return tuple(row)


def test_agents_take_their_best_live_task_and_drop_the_expired_above_it():
    queues = TaskQueues(4)
    queues.push_many([0, 0, 0, 1, 1, 3], [
        _task(1, priority=1, deadline=50),
        _task(2, priority=3, deadline=5),   # best for agent 0, but expired at tick 10
        _task(3, priority=3, deadline=40),  # then this one
        _task(4, priority=2, deadline=3),   # agent 1 has only expired tasks
        _task(5, priority=2, deadline=2),
        _task(6, priority=0, deadline=9),   # live at tick 10 within the grace of 1 tick
    ])
    got, tasks, expired = queues.pop_next([0, 1, 2, 3], tick=10, grace=1)
    assert got == [0, 3]
    assert [t[FIELD["task"]] for t in tasks] == [3, 6]
    assert [(agent, t[FIELD["task"]]) for agent, t in expired] == [(0, 2), (1, 5), (1, 4)]
    assert queues.length.tolist() == [1, 0, 0, 0]
    assert queues.task_ids() == [1]
