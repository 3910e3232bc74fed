"""The driver owns the clock: arrivals, one round of departments and groups per tick,
message delivery at the next tick, and the driver's own ledger batch."""

from __future__ import annotations

import numpy as np

from synthorg.domain.enums import TASK_CARRYING, EventKind
from synthorg.domain.records import MESSAGE_DTYPE, RESULT_DTYPE, SYSTEM_ACTOR
from synthorg.engine.events import EventBuffer
from synthorg.org.workload import WorkloadGenerator
from synthorg.sim.backend import Backend, RunPlan


class Driver:
    def __init__(self, plan: RunPlan, backend: Backend, seed: int) -> None:
        d = plan.directory
        self.plan = plan
        self.backend = backend
        self.workload = WorkloadGenerator(plan.config.workload, d, seed)
        self.loads = np.zeros(d.size, dtype=np.int32)
        self.dept_spent = np.zeros(len(d.dept_ids), dtype=np.int64)
        self.inboxes = [np.zeros(0, MESSAGE_DTYPE) for _ in plan.group_bounds]
        self.next_task = 0
        self.tick = 0
        self._starts = np.array([lo for lo, _ in plan.group_bounds], dtype=np.int64)
        self._n_depts = len(d.dept_ids)

    def step(self) -> None:
        t = self.tick
        arrivals = self.workload.arrivals(t, self.next_task)
        self.next_task += len(arrivals)
        by_dept = [arrivals[arrivals["dept"] == k] for k in range(self._n_depts)]
        report = self.backend.tick(t, by_dept, self.inboxes, self.loads, self.dept_spent)

        own = EventBuffer(t)
        own.add(EventKind.task_created, np.full(len(arrivals), SYSTEM_ACTOR, np.int32),
                arrivals["task"], target=arrivals["dept"], value=arrivals["difficulty"])
        events = np.concatenate([own.collect(), *report.dept_events])
        failed = (np.concatenate(report.dept_failed) if report.dept_failed
                  else np.zeros(0, RESULT_DTYPE))
        self.backend.record(t, events, failed, arrivals)

        self.loads = np.concatenate(report.group_loads)
        self.dept_spent = self.dept_spent + np.sum(report.group_spend, axis=0, dtype=np.int64)
        # departments in descending index have ascending sender ids (-1 - dept), and groups
        # hold ascending agent ranges: the concatenation is sorted by (src, seq)
        self.inboxes = self._deliver([*reversed(report.dept_messages), *report.group_messages])
        self.tick = t + 1

    def _deliver(self, batches: list[np.ndarray]) -> list[np.ndarray]:
        """Split next tick's messages by destination group, ordered by (dst, src, seq)."""
        msgs = np.concatenate(batches) if batches else np.zeros(0, MESSAGE_DTYPE)
        src, seq = msgs["src"], msgs["seq"]
        in_order = bool(np.all((src[1:] > src[:-1]) | ((src[1:] == src[:-1]) & (seq[1:] > seq[:-1]))))
        if in_order:  # the usual case: a stable sort by destination is enough
            msgs = msgs[np.argsort(msgs["dst"], kind="stable")]
        else:
            msgs = msgs[np.lexsort((seq, src, msgs["dst"]))]
        cuts = np.searchsorted(msgs["dst"], self._starts[1:])
        return np.split(msgs, cuts)

    def state_dict(self) -> dict[str, object]:
        return {"loads": self.loads, "dept_spent": self.dept_spent, "inboxes": self.inboxes,
                "next_task": self.next_task, "tick": self.tick}

    def load_state(self, state: dict[str, object]) -> None:
        self.loads = np.array(state["loads"])
        self.dept_spent = np.array(state["dept_spent"])
        self.inboxes = [np.array(m) for m in state["inboxes"]]  # type: ignore[attr-defined]
        self.next_task = int(state["next_task"])  # type: ignore[call-overload]
        self.tick = int(state["tick"])  # type: ignore[call-overload]

    def in_flight_task_ids(self) -> list[int]:
        ids: list[int] = []
        for inbox in self.inboxes:
            carrying = np.isin(inbox["kind"], [int(k) for k in TASK_CARRYING])
            ids.extend(inbox["t_task"][carrying].tolist())
        return ids
