"""Per-agent task queues: highest priority first, then earliest deadline, then task id.

A queue is a heap of (-priority, deadline, task id, the task's TASK_DTYPE record as bytes).
The key sorts in C without touching the record, and the bytes go in and out of arrays in
one copy per batch: `tolist()` on a batch viewed as opaque records is a C loop, and the
tasks a tick takes become one array with a single join. (As tuples of fields, converting a
tick's tasks each way cost about 0.5 µs a task.)

Deadlines expire on time: a calendar lists the queued tasks by deadline, and `expire` takes
out, at the first tick past a deadline's grace, the tasks still queued. An expired task
leaves its heap lazily (skipped when it reaches the top); `length` and every read-out
count only the tasks still queued.
"""

from __future__ import annotations

import heapq

import numpy as np

from synthorg.domain.records import TASK_DTYPE, record_bytes

_Entry = tuple[int, int, int, bytes]


def _records(records: list[bytes]) -> np.ndarray:
    """TASK_DTYPE rows from record bytes (writable: the caller owns them)."""
    return np.frombuffer(b"".join(records), dtype=TASK_DTYPE).copy()


class TaskQueues:
    def __init__(self, size: int) -> None:
        self._heaps: list[list[_Entry]] = [[] for _ in range(size)]
        self.length = np.zeros(size, dtype=np.int32)
        self._where: dict[int, int] = {}  # queued task id -> its agent
        self._calendar: dict[int, list[int]] = {}  # deadline -> ids queued with it
        self._deadlines: list[int] = []  # the calendar's keys, a heap

    def push_many(self, locals_: np.ndarray, tasks: np.ndarray) -> None:
        """Queue task `tasks[i]` (TASK_DTYPE) for agent `locals_[i]`."""
        heaps, push = self._heaps, heapq.heappush
        agents, ids = locals_.tolist(), tasks["task"].tolist()
        entries = zip((-tasks["priority"].astype(np.int64)).tolist(), tasks["deadline"].tolist(),
                      ids, record_bytes(tasks), strict=True)
        for local, entry in zip(agents, entries, strict=True):
            push(heaps[local], entry)
        self._where.update(zip(ids, agents, strict=True))
        # the calendar by deadline: one extend per distinct deadline, not one step per task
        deadline = tasks["deadline"]
        order = np.argsort(deadline, kind="stable")
        days, first = np.unique(deadline[order], return_index=True)
        by_deadline = tasks["task"][order].tolist()
        bounds = [*first.tolist(), len(by_deadline)]
        calendar = self._calendar
        for i, day in enumerate(days.tolist()):
            due = calendar.get(day)
            if due is None:
                calendar[day] = due = []
                push(self._deadlines, day)
            due.extend(by_deadline[bounds[i]:bounds[i + 1]])
        np.add.at(self.length, locals_, 1)

    def expire(self, tick: int, grace: int) -> list[tuple[int, int]]:
        """Take out the queued tasks past their deadline by more than `grace` ticks at
        `tick`; returns (agent, task id) of each, sorted (an order that does not depend
        on how the queues were built: a restored run expires in the same order)."""
        gone: list[tuple[int, int]] = []
        deadlines, where = self._deadlines, self._where
        while deadlines and tick > deadlines[0] + grace:
            for task_id in self._calendar.pop(heapq.heappop(deadlines)):
                local = where.pop(task_id, None)
                if local is not None:
                    gone.append((local, task_id))
        if gone:
            gone.sort()
            np.subtract.at(self.length, np.array([g[0] for g in gone], dtype=np.intp), 1)
        return gone

    def _pop_live(self, heap: list[_Entry]) -> _Entry | None:
        """Pop the heap's best entry still queued (expired ones are dropped on the way)."""
        where = self._where
        while heap:
            entry = heapq.heappop(heap)
            if where.pop(entry[2], None) is not None:
                return entry
        return None

    def pop(self, local: int) -> np.ndarray:
        """The agent's best task, as a one-row TASK_DTYPE array."""
        entry = self._pop_live(self._heaps[local])
        if entry is None:
            raise IndexError(f"agent {local} has no queued task")
        self.length[local] -= 1
        return _records([entry[3]])

    def pop_next(self, locals_: list[int], tick: int, grace: int
                 ) -> tuple[list[int], np.ndarray, list[tuple[int, int]]]:
        """Each of the agents `locals_` (distinct) takes its best task still live at `tick`
        (not past its deadline by more than `grace` ticks: `expire` has normally taken
        those out already), dropping any expired one above it. Returns the agents that got
        one, their tasks (TASK_DTYPE, in that order), and (agent, task id) of those
        expired, in pop order. One pass in plain Python: an agent's queue is read and
        shortened once, not through numpy scalars per task."""
        heaps = self._heaps
        got: list[int] = []
        taken: list[bytes] = []
        expired: list[tuple[int, int]] = []
        popped: list[int] = []
        where, pop = self._where, heapq.heappop
        for local in locals_:
            heap = heaps[local]
            while heap:
                _, deadline, task_id, record = pop(heap)
                if where.pop(task_id, None) is None:
                    continue  # expired earlier: already out of `length`
                popped.append(local)
                if tick > deadline + grace:
                    expired.append((local, task_id))
                    continue
                got.append(local)
                taken.append(record)
                break
        np.subtract.at(self.length, np.asarray(popped, dtype=np.intp), 1)
        return got, _records(taken), expired

    def peek(self, local: int) -> np.ndarray:
        """The agent's best task, left in the queue, as a one-row TASK_DTYPE array."""
        heap = self._heaps[local]
        while heap[0][2] not in self._where:  # expired: drop it now
            heapq.heappop(heap)
        return _records([heap[0][3]])

    def drain(self, local: int) -> np.ndarray:
        """Empty the agent's queue; its tasks as TASK_DTYPE rows, best first."""
        heap = self._heaps[local]
        records = []
        while (entry := self._pop_live(heap)) is not None:
            records.append(entry[3])
        self.length[local] = 0
        return _records(records) if records else np.zeros(0, dtype=TASK_DTYPE)

    def _live(self) -> list[tuple[int, _Entry]]:
        where = self._where
        return [(local, entry) for local, heap in enumerate(self._heaps) for entry in heap
                if entry[2] in where]

    def to_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Every queued task as (agent, TASK_DTYPE record) arrays: a checkpoint's form."""
        live = self._live()
        return (np.array([local for local, _ in live], dtype=np.int32),
                _records([entry[3] for _, entry in live]) if live
                else np.zeros(0, dtype=TASK_DTYPE))

    @classmethod
    def from_arrays(cls, size: int, agents: np.ndarray, tasks: np.ndarray) -> TaskQueues:
        """The queues `to_arrays` described (each heap pops in the same order: its keys are
        unique by task id)."""
        queues = cls(size)
        if len(agents):
            if agents.min() < 0 or agents.max() >= size:
                raise ValueError("queued tasks of agents outside the group")
            if len(np.unique(tasks["task"])) != len(tasks):
                raise ValueError("a task queued twice")
            queues.push_many(np.asarray(agents, dtype=np.intp), np.asarray(tasks, TASK_DTYPE))
        return queues

    def task_agents(self) -> list[tuple[int, int]]:
        """(task id, agent) of every queued task."""
        return list(self._where.items())
