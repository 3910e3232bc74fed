"""How ticks flow through the group actors. Every group's step at tick t+1 needs every
group's output of tick t (messages, loads, spend), so each tick ends in an all-to-all
exchange; the pipelines differ in how that exchange travels.

- `ShmPipeline`, for groups on one machine: each group steps tick after tick in one long
  call, exchanging outputs through files in /dev/shm and FIFOs (actors/shm.py); the driver
  only releases ticks and listens for its doorbell, every few ticks. About 0.25 ms from
  the last group's step to the next tick's first on a 2-core machine, and a group waiting
  for the others blocks instead of spinning. A group in its run of ticks answers no other
  call, so the driver stops the run (`settle`) before it asks the groups anything.
- `GraphPipeline`, for a few groups on any nodes: a Ray compiled graph. Each tick is one
  execution of a fixed graph (every group `advance`s, then every group `receive`s every
  output and keeps its part) over shared-memory channels: about 1 ms of hand-over on a
  2-core machine, against 3-5 ms for two gRPC hops through the driver. Each group's output
  is one channel read by every group (one write instead of G+2; each reader also decodes
  the others' message parts, so this is for a handful of groups), and readers busy-wait:
  no more groups than there are cores.
- `TaskPipeline`, for any number of groups: ordinary actor calls whose outputs stay in
  object refs; tick t+1's calls are submitted while tick t runs.

All keep ticks queued behind the running one (the shm pipeline a few, the others one) and
report a lost actor as `ActorCrashed`, so the run rolls back to its last good state.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import ray
from ray.dag import InputNode, MultiOutputNode
from ray.experimental.compiled_dag_ref import CompiledDAGRef

from actors.doorbell import Doorbell
from actors.shm import GO, STOP, ShmLinks, open_mailbox, post
from synthorg.errors import ActorCrashed
from synthorg.sim.channels import Exchange, width
from synthorg.sim.placement import HomePlacement


class TaskPipeline:
    def __init__(self, groups: list[Any], initial: Exchange, placement: HomePlacement) -> None:
        self._groups = groups
        self._placement = placement
        self._returns = width(len(groups))
        self._exchange = initial  # arrays, or refs to them
        self._running: list[ray.ObjectRef] = []  # the last submitted tick's outputs

    def submit(self, tick: int) -> None:
        x, route = self._exchange, self._placement.assign()
        stepped = [g.step.options(num_returns=self._returns).remote(tick, route, *x.flat(i))
                   for i, g in enumerate(self._groups)]
        previous, self._running = self._running, [out[-1] for out in stepped]
        self._exchange = Exchange.gather(stepped)
        wait(previous, tick)  # at most one tick queued behind the running one

    def settle(self) -> Exchange:
        x = self._exchange
        wait(self._running, -1)
        self._running = []
        # keep the arrays: a later settle (or the next tick's calls) need not fetch them again
        self._exchange = Exchange([{name: wait(refs, -1) for name, refs in got.items()}
                                   for got in x.inputs])
        return self._exchange

    def restore(self, exchange: Exchange) -> None:
        self._exchange = exchange
        self._running = []

    def close(self) -> None:
        pass


class ShmPipeline:
    # The driver hears of every BATCH-th tick only (one group rings, when every group has
    # published it) and releases ticks up to BATCH ahead of the last it heard of: each of
    # its wake-ups takes a core from a group for a moment, so one every few ticks, not
    # three a tick.
    BATCH = 4
    PATIENCE = 1.0  # seconds to wait for the doorbell before looking for a failed group

    def __init__(self, groups: list[Any], initial: Exchange, placement: HomePlacement,
                 links: ShmLinks, bell: Doorbell) -> None:
        self._groups = groups
        self._route = placement.assign()  # fixed: groups on one machine claim routing
        self._bell = bell  # rung by one group (RINGER in actors/group_actor.py)
        self._boxes = [open_mailbox(links.prefix, g) for g in range(len(groups))]
        self._running: list[ray.ObjectRef] = []  # every group's `run`, while one goes on
        self._first = 0  # the first tick of the run of ticks going on
        self.restore(initial)

    def submit(self, tick: int) -> None:
        if not self._running:
            self._first = tick
            self._running = [g.run.remote(tick, self._route, self.BATCH) for g in self._groups]
        for fd in self._boxes:
            post(fd, GO, tick)
        heard = tick - self.BATCH
        if tick % self.BATCH == 0 and heard >= self._first:
            # a failed group never publishes, and the others wait for it forever
            while not self._bell.wait(heard, self.PATIENCE):
                self._raise_if_stopped(heard)

    def settle(self) -> Exchange:
        if self._running:
            for fd in self._boxes:
                post(fd, STOP, -1)
            order = list(self._running)
            kept: dict[ray.ObjectRef, Any] = {}
            while self._running:
                kept.update(self._raise_if_stopped(-1, timeout=None))
            self._settled = Exchange.from_flat([kept[ref] for ref in order])
        return self._settled

    def restore(self, exchange: Exchange) -> None:
        keep_inputs(self._groups, exchange)
        self._settled = exchange  # what the groups keep while no run of ticks goes on

    def close(self) -> None:
        for fd in self._boxes:
            os.close(fd)
        self._boxes = []

    def _raise_if_stopped(self, tick: int, timeout: float | None = 0
                          ) -> list[tuple[ray.ObjectRef, Any]]:
        """Raise the error of a group whose `run` ended (a lost actor as ActorCrashed); a
        `run` may end without one only after STOP. Returns the ended run's (ref, result)."""
        ready, self._running = ray.wait(self._running, num_returns=1, timeout=timeout)
        values = wait(ready, tick)
        if ready and tick >= 0:
            raise RuntimeError(f"a group stopped stepping at tick {tick} unasked")
        return list(zip(ready, values, strict=True))


class GraphPipeline:
    DEPTH = 1  # ticks submitted ahead of the one the driver waits for
    # Reading a compiled graph's result busy-waits, and on a small machine that takes a core
    # from the groups. So the driver first waits for the groups' doorbell (one machine:
    # actors/doorbell.py) or, across nodes, sleeps until a little after the tick it waits for
    # should be done: the groups' own finish times, a median tick apart (anchored on when
    # the groups finished, not on when the driver woke, so a late driver does not drift).
    # Waking late costs nothing as long as it is less than a tick: the groups have DEPTH
    # ticks queued.
    LATE = 0.05  # of a tick
    WINDOW = 6  # finish times kept
    PATIENCE = 1.0  # seconds (at least) to wait for the doorbell before reading anyway

    def __init__(self, groups: list[Any], initial: Exchange, placement: HomePlacement,
                 bell: Doorbell | None = None) -> None:
        self._groups = groups
        self._placement = placement  # learns from each tick's timings
        self._bell = bell
        self._graph = _compile(groups)
        self._pending: deque[tuple[int, list[Any]]] = deque()  # per tick: a ref per group
        self._finished: deque[float] = deque(maxlen=self.WINDOW)  # per tick, time.time()
        self.restore(initial)

    def submit(self, tick: int) -> None:
        with crashes_reported(tick):
            self._pending.append((tick, self._graph.execute(tick, self._placement.assign())))
        if len(self._pending) > self.DEPTH:
            oldest = self._pending[0][0]
            if self._bell is None:
                time.sleep(self._until_done())
            else:  # a crashed group never rings: reading the graph then reports it
                self._bell.wait(oldest, max(self.PATIENCE, 3 * self._median_tick()))
            self._complete(tick)

    def settle(self) -> Exchange:
        while self._pending:
            self._complete(-1)
        return kept_inputs(self._groups)

    def restore(self, exchange: Exchange) -> None:
        keep_inputs(self._groups, exchange)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a dead actor's graph is torn down already
            self._graph.teardown()
        self._pending.clear()  # after teardown: a dropped result then needs no release

    def _complete(self, tick: int) -> None:
        reports = wait(self._pending.popleft()[1], tick)  # every group's `receive`
        self._finished.append(max(r[0] for r in reports))
        self._placement.observe([r[1] for r in reports])

    def _median_tick(self) -> float:
        gaps = sorted(b - a for a, b in pairwise(self._finished))
        return gaps[len(gaps) // 2] if gaps else 0.0

    def _until_done(self) -> float:
        """Seconds to sleep before reading the oldest pending tick; never more than a tick
        (clocks of other nodes may be off)."""
        if len(self._finished) < 2:
            return 0.0
        tick = self._median_tick()
        due = self._finished[-1] + (1 + self.LATE) * tick
        return min(max(0.0, due - time.time()), tick)


def _compile(groups: list[Any]) -> Any:
    with InputNode() as inp:  # inp[0]: the tick; inp[1]: the group routing each department
        outs = [g.advance.bind(inp[0], inp[1]) for g in groups]
        acks = [g.receive.bind(*outs) for g in groups]
        graph = MultiOutputNode(acks)
    return graph.experimental_compile(_submit_timeout=-1,
                                      _max_inflight_executions=GraphPipeline.DEPTH + 2)


def wait(refs: list[Any], tick: int) -> list[Any]:
    """ray.get (values pass through), with a lost actor reported as ActorCrashed."""
    pending = [r for r in refs if isinstance(r, ray.ObjectRef)]
    compiled = [r for r in refs if isinstance(r, CompiledDAGRef)]
    with crashes_reported(tick):
        # a compiled graph's default timeout is 10 s; a tick of a huge company may take more
        values = iter(ray.get(compiled, timeout=-1) if compiled else ray.get(pending))
    return [next(values) if isinstance(r, ray.ObjectRef | CompiledDAGRef) else r for r in refs]


def keep_inputs(groups: list[Any], exchange: Exchange) -> None:
    """Hand each group actor its inputs of the next tick (groups that keep them between
    ticks: the shm and graph pipelines)."""
    wait([g.keep.remote(*exchange.flat(i)) for i, g in enumerate(groups)], -1)


def kept_inputs(groups: list[Any]) -> Exchange:
    """The exchange the group actors keep, once no tick runs."""
    return Exchange.from_flat(wait([g.inputs.remote() for g in groups], -1))


@contextlib.contextmanager
def crashes_reported(tick: int) -> Iterator[None]:
    """A lost actor becomes ActorCrashed (the run rolls back to its last good state); an error
    in the simulation itself is raised as it is: no retry would help."""
    try:
        yield
    except ray.exceptions.RayError as exc:
        cause = _root_cause(exc)
        if isinstance(cause, ActorCrashed):  # a group lost an actor it calls (secops)
            raise ActorCrashed(f"tick {tick}: {cause}") from exc
        if not isinstance(cause, _LOST):
            raise
        where = f"tick {tick}" if tick >= 0 else "settling"
        raise ActorCrashed(f"{where}: {type(cause).__name__}: {_first_line(cause)}") from exc


# a process or its objects are gone: rebuilding the actors from the last good state helps
_LOST = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
         ray.exceptions.ObjectLostError, ray.exceptions.OwnerDiedError,
         ray.exceptions.NodeDiedError, ray.exceptions.ActorUnavailableError,
         ray.exceptions.RayChannelError)


def _root_cause(exc: BaseException) -> BaseException:
    """A task that failed because an input failed wraps that input's error."""
    seen = 0
    while isinstance(exc, ray.exceptions.RayTaskError) and seen < 100:
        cause = getattr(exc, "cause", None)
        if cause is None or cause is exc:
            break
        exc, seen = cause, seen + 1
    return exc


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:200]
