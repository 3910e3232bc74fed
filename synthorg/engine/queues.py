"""Per-agent task queues: highest priority first, then earliest deadline, then task id."""

from __future__ import annotations

import heapq

import numpy as np


class TaskQueues:
    def __init__(self, size: int) -> None:
        self._heaps: list[list[tuple[int, int, int, np.void]]] = [[] for _ in range(size)]
        self.length = np.zeros(size, dtype=np.int32)

    def push(self, local: int, task: np.void) -> None:
        heapq.heappush(
            self._heaps[local], (-int(task["priority"]), int(task["deadline"]), int(task["task"]),
                                 task.copy())
        )
        self.length[local] += 1

    def pop(self, local: int) -> np.void:
        self.length[local] -= 1
        return heapq.heappop(self._heaps[local])[3]

    def peek(self, local: int) -> np.void:
        return self._heaps[local][0][3]

    def task_ids(self) -> list[int]:
        return [entry[2] for heap in self._heaps for entry in heap]
