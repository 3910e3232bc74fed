"""The driver owns the clock: each tick it draws the arrivals, hands them to the backend (which
places each department's routing on a group host), and records task creation in its own
ledger shard."""

from __future__ import annotations

import numpy as np

from synthorg.domain.enums import EventKind
from synthorg.domain.records import RESULT_DTYPE, SYSTEM_ACTOR
from synthorg.engine.events import EventBuffer
from synthorg.ledger.ledger import DirectorySink, LedgerShard
from synthorg.org.workload import WorkloadGenerator
from synthorg.sim.backend import Backend, RunPlan
from synthorg.sim.hosts import DRIVER_SHARD


class Driver:
    def __init__(self, plan: RunPlan, backend: Backend, seed: int) -> None:
        self.backend = backend
        self.workload = WorkloadGenerator(plan.config.workload, plan.directory, seed)
        self.ledger = LedgerShard(DRIVER_SHARD, DirectorySink(plan.run_dir))
        self.next_task = 0
        self.tick = 0

    def step(self) -> None:
        t = self.tick
        arrivals = self.workload.arrivals(t, self.next_task)
        self.next_task += len(arrivals)
        self.backend.tick(t, arrivals)
        own = EventBuffer(t)
        own.add(EventKind.task_created, np.full(len(arrivals), SYSTEM_ACTOR, np.int32),
                arrivals["task"], target=arrivals["dept"], value=arrivals["difficulty"])
        self.ledger.append(own.collect(), np.zeros(0, RESULT_DTYPE), arrivals)
        self.tick = t + 1

    def state_dict(self) -> dict[str, object]:
        return {"next_task": self.next_task, "tick": self.tick, "ledger": self.ledger.state()}

    def load_state(self, state: dict[str, object]) -> None:
        self.next_task = int(state["next_task"])  # type: ignore[call-overload]
        self.tick = int(state["tick"])  # type: ignore[call-overload]
        self.ledger.restore(state["ledger"])  # type: ignore[arg-type]
