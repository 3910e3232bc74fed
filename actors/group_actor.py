"""The `agent-group:N` actors: each hosts a group host (synthorg/sim/group_host.py) and moves
its tick exchange through the run's pipeline (actors/pipelines.py)."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import ray

from actors.doorbell import Ringer
from actors.hr_actor import RemoteHr
from actors.ledger_writer import DirectSink, RemoteSink
from actors.memory_actor import recall_of
from actors.metrics import GroupMetrics
from actors.secops_actor import approvals_of
from actors.shm import Mailbox, OutputBoard
from synthorg.actions.executors import ExecutorContext
from synthorg.config.models import CompanyConfig
from synthorg.domain.records import TASK_DTYPE
from synthorg.ledger.ledger import ShardTotals
from synthorg.llm.cassette import CassetteSpec
from synthorg.org.directory import OrgDirectory
from synthorg.sim.channels import Exchange, flat_inputs, from_flat, received, share
from synthorg.sim.claims import RoutingClaims
from synthorg.sim.group_host import GroupHost, StepTiming

# On the shm pipeline one group draws each tick's arrivals (about 0.5 ms at 10,000
# agents, the same in every host) and hands them over with its output of the tick before,
# and one rings the driver's doorbell once every group has published a tick it listens for.
DRAWER = 0
RINGER = 0
NO_ARRIVALS = np.zeros(0, dtype=TASK_DTYPE)


@ray.remote(num_cpus=0)
class AgentGroupActor:
    """Hosts many agents and routes the departments' tasks it is handed; one call per tick
    steps them all."""

    def __init__(self, config: CompanyConfig, directory: OrgDirectory, key: int, seed: int,
                 bounds: list[tuple[int, int]], index: int, secops: ray.actor.ActorHandle,
                 writer: ray.actor.ActorHandle | None,
                 run_dir: str | None, claims: str | None, bell: str | None,
                 shm: str | None = None, run_key: str = "", run_path: str = "",
                 memory: list[ray.actor.ActorHandle] | None = None,
                 hr: ray.actor.ActorHandle | None = None,
                 cassette: CassetteSpec | None = None) -> None:
        """writer: the ledger writer, for a group on another node than the driver's
        (run_dir: the run directory otherwise); claims: the routing claims file, if any;
        bell: the driver's doorbell (actors/doorbell.py), if any; shm: the prefix of the
        exchange files of the `shm` pipeline (actors/shm.py), if it is used; run_key,
        run_path: the run's key and directory, for executors (sandbox labels); memory: the
        memory actors, if the config has memory."""
        if run_dir:
            self._sink: DirectSink | RemoteSink = DirectSink(Path(run_dir))
        elif writer is not None:
            self._sink = RemoteSink(writer)
        else:
            raise ValueError("a group needs the run directory or the ledger writer")
        # flushes off the step: a group that stalls holds up every group at the tick's end
        self._host = GroupHost(config, directory, np.uint64(key), seed, bounds, index,
                               self._sink, approvals_of(secops), background_flush=True,
                               claims=RoutingClaims(claims) if claims else None,
                               context=ExecutorContext(config, run_key or f"g{index}",
                                                       Path(run_path) if run_path else None,
                                                       cassette),
                               recall=recall_of(memory) if memory else None,
                               hr=RemoteHr(hr) if hr is not None else None)
        self._groups = len(bounds)
        self._index = index
        self._metrics = GroupMetrics(run_key, run_path, config.company.name, index,
                                     list(directory.dept_ids))
        self._ringer = Ringer(bell, index) if bell else None
        self._tick = -1  # the tick `advance` last stepped (rung for at the next one)
        # what the next `advance` steps on (compiled-graph pipeline; see actors/pipelines.py)
        self._inputs = Exchange.initial(bounds, len(directory.dept_ids)).flat(index)
        self._box = Mailbox(Path(shm), len(bounds), index) if shm else None
        self._board = OutputBoard(Path(shm), len(bounds), index) if shm else None
        # This process lives for the run: move Ray's and our start-up objects out of the
        # collector's way, so collections triggered by each tick's many small tuples only scan
        # what the tick made (a full scan of Ray's import graph costs milliseconds).
        gc.freeze()

    def close(self) -> None:
        """Let go of what the group's executors hold outside (sandbox containers)."""
        self._host.close()

    def step(self, tick: int, route: np.ndarray, *arrays: np.ndarray,
             defer_record: bool = False, draw_next: bool = False) -> list[np.ndarray]:
        """route: the group per department; arrays: this group's inputs, flat (Ray resolves
        only top-level object refs; sim/channels.py)."""
        output = self._host.step(tick, route, from_flat(arrays, self._groups),
                                 defer_record=defer_record, draw_next=draw_next)
        self._metrics.maybe_update(tick, self._host)
        return output

    def advance(self, tick: int, route: np.ndarray) -> tuple[np.ndarray, ...]:
        """`step` on the inputs `receive` kept; every group reads the whole output."""
        if self._ringer and self._tick >= 0:
            # the last tick's `receive` result is in its channel by now (the graph writes it
            # before reading this call's input): ringing earlier would wake the driver to spin
            self._ringer.ring(self._tick)
        self._tick = tick
        return tuple(self.step(tick, route, *self._inputs))

    def receive(self, *outputs: tuple[np.ndarray, ...]) -> tuple[float, StepTiming]:
        """Keep this group's share of every group's `advance` output as the inputs of the
        next `advance`. Returns when this tick was done here (`time.time()`, so the driver
        can sleep until the next one should be) and the step's timing (for placing the next
        ticks' routing)."""
        self._keep_shares([share(o, self._index, self._groups) for o in outputs])
        return time.time(), self._host.timing

    def run(self, first: int, route: np.ndarray, ring_every: int) -> tuple[np.ndarray, ...]:
        """Step ticks `first`, `first` + 1, ... as the driver releases them, exchanging each
        tick's output with the other groups through shared memory (the `shm` pipeline), until
        the driver says stop; returns the inputs of the next tick (as `inputs` would: a
        separate call for them took 5-15 ms more at the end of each run of ticks). The
        ringer rings for the ticks that are multiples of `ring_every`."""
        box, board = self._box, self._board
        if box is None or board is None:
            raise RuntimeError("this group was not made for the shm pipeline")
        box.reset()
        i, n = self._index, self._groups
        tick = first
        while box.wait_release(tick):
            # every host steps the same arrivals: one draws them (before it claims routing,
            # so the others route more meanwhile), the others read them
            output = self.step(tick, route, *self._inputs, defer_record=True,
                               draw_next=i == DRAWER)
            ahead = self._host.drawn_ahead(tick + 1) if i == DRAWER else NO_ARRIVALS
            board.publish(tick, output, ahead)
            self._host.record()  # while the other groups finish their steps
            box.wait_published(tick)
            shares = [share(output, i, n) if g == i else board.read(g, tick) for g in range(n)]
            if i != DRAWER:
                self._host.expect_arrivals(tick + 1, board.read_ahead(DRAWER, tick))
            self._keep_shares(shares)
            if self._ringer and i == RINGER and tick % ring_every == 0:
                self._ringer.ring(tick)  # every group has published `tick`
            tick += 1
        return self._inputs

    def _keep_shares(self, shares: Sequence[dict[str, np.ndarray]]) -> None:
        """The next step's inputs (flat) from this group's share of every group's output,
        in group order."""
        self._inputs = flat_inputs(received(shares))

    def inputs(self) -> tuple[np.ndarray, ...]:
        return self._inputs

    def keep(self, *arrays: np.ndarray) -> None:
        """Set the inputs of the next `advance` or `run` (this group's, flat): a restore."""
        self._inputs = arrays

    def __repr__(self) -> str:  # the dashboard shows it beside the actor
        group = self._host.group
        heads = ", ".join(group.dir.dept_ids[k] for k, h in enumerate(group.dir.dept_head)
                          if group.lo <= h < group.hi)
        return f"AgentGroup(agents {group.lo}..{group.hi - 1}; heads of: {heads or 'none'})"

    def totals(self) -> ShardTotals:
        totals = self._host.totals()
        self._sink.drain()
        return totals

    def state_dict(self) -> dict[str, object]:
        state = self._host.state_dict()
        self._sink.drain()  # the checkpoint's part offset must be on disk
        return state

    def load_state(self, state: dict[str, object]) -> None:
        self._host.load_state(state)

    def dept_spent(self) -> np.ndarray:
        return self._host.dept_spent

    def open_tasks(self) -> list[tuple[int, int]]:
        return self._host.group.open_tasks()

    def agent_rows(self) -> dict[str, np.ndarray]:
        return self._host.group.agent_rows()

    def pid(self) -> int:
        return os.getpid()

    def yield_priority(self, niceness: int) -> int:
        """Run at `niceness` at least (it only ever goes down), for the compiled graph whose
        waiting readers spin: see ray_backend.GRAPH_NICENESS."""
        return os.nice(max(0, niceness - os.nice(0)))
