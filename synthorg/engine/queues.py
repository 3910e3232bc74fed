"""Per-agent task queues: highest priority first, then earliest deadline, then task id.

Tasks are held as plain tuples in TASK_DTYPE field order: building them with `tolist()` on a
batch is a C loop, where one numpy record per task cost a copy each.
"""

from __future__ import annotations

import heapq

import numpy as np

from synthorg.domain.records import TASK_DTYPE

TaskTuple = tuple[int, int, int, int, int, int, float, float, int, int]
_Entry = tuple[float, float, float, TaskTuple]
FIELD = {name: i for i, name in enumerate(TASK_DTYPE.names or ())}
_PRIORITY, _DEADLINE, _TASK = FIELD["priority"], FIELD["deadline"], FIELD["task"]


class TaskQueues:
    def __init__(self, size: int) -> None:
        self._heaps: list[list[_Entry]] = [[] for _ in range(size)]
        self.length = np.zeros(size, dtype=np.int32)

    def push(self, local: int, task: TaskTuple) -> None:
        entry: _Entry = (-task[_PRIORITY], task[_DEADLINE], task[_TASK], task)
        heapq.heappush(self._heaps[local], entry)
        self.length[local] += 1

    def push_many(self, locals_: list[int], tasks: list[TaskTuple]) -> None:
        heaps = self._heaps
        for local, task in zip(locals_, tasks, strict=True):
            entry: _Entry = (-task[_PRIORITY], task[_DEADLINE], task[_TASK], task)
            heapq.heappush(heaps[local], entry)
        np.add.at(self.length, np.asarray(locals_, dtype=np.intp), 1)

    def pop(self, local: int) -> TaskTuple:
        self.length[local] -= 1
        return heapq.heappop(self._heaps[local])[3]

    def pop_next(self, locals_: list[int], tick: int, grace: int
                 ) -> tuple[list[int], list[TaskTuple], list[tuple[int, TaskTuple]]]:
        """Each of the agents `locals_` (distinct) takes its best task still live at `tick`
        (not past its deadline by more than `grace` ticks), dropping the expired ones above
        it. Returns the agents that got one, their tasks, and (agent, task) expired, in pop
        order. One pass in plain Python: an agent's queue is read and shortened once, not
        through numpy scalars per task."""
        heaps = self._heaps
        got: list[int] = []
        tasks: list[TaskTuple] = []
        expired: list[tuple[int, TaskTuple]] = []
        popped: list[int] = []
        for local in locals_:
            heap = heaps[local]
            while heap:
                task = heapq.heappop(heap)[3]
                popped.append(local)
                if tick > task[_DEADLINE] + grace:
                    expired.append((local, task))
                    continue
                got.append(local)
                tasks.append(task)
                break
        np.subtract.at(self.length, np.asarray(popped, dtype=np.intp), 1)
        return got, tasks, expired

    def peek(self, local: int) -> TaskTuple:
        return self._heaps[local][0][3]

    def task_ids(self) -> list[int]:
        return [int(entry[2]) for heap in self._heaps for entry in heap]
