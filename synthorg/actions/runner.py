"""The action runner of one group host: issues actions to their executors and hands back the
outcomes due at a tick.

Executors run on an event loop in a thread of the runner's own, so slow calls overlap with the
group's ticks. An action issued at tick t by an executor with latency L is due at t + L: the
host asks for the outcomes due at each tick before it steps it and blocks until they are in.
So the wall clock decides how long a tick waits, never what happens in it.

Checkpoints: `settle` waits for every action in flight; `state` then holds their outcomes
with their due ticks, and a restored runner delivers them as if they had just arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Mapping
from concurrent.futures import Future

import numpy as np

from synthorg.actions.executors import Executor, Outcome
from synthorg.domain.enums import ActionStatus
from synthorg.domain.records import ACTION_DTYPE, join, take
from synthorg.errors import ActorCrashed, MisuseError


class ActionRunner:
    def __init__(self, executors: Mapping[int, Executor]) -> None:
        self._executors = dict(executors)
        # executors that hold something per task (sandbox workspaces), told when tasks end
        self._per_task = [e for e in self._executors.values() if hasattr(e, "release_tasks")]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # issued batches: (due tick, rows, their outcomes to come)
        self._flying: list[tuple[int, np.ndarray, Future[list[Outcome]]]] = []
        self._landed: list[np.ndarray] = []  # rows with outcomes, not yet delivered
        for executor in self._executors.values():  # e.g. sandboxes started ahead
            if hasattr(executor, "prepare"):
                asyncio.run_coroutine_threadsafe(executor.prepare(), self._event_loop())

    @property
    def idle(self) -> bool:
        return not self._flying and not self._landed

    def issue(self, actions: np.ndarray, arguments: Mapping[int, str] | None = None) -> None:
        """Start the actions (ACTION_DTYPE rows with `due` set, status issued); `arguments`:
        the JSON arguments of those that have some, by call id."""
        if not len(actions):
            return
        loop = self._event_loop()
        arguments = arguments or {}
        for executor in np.unique(actions["executor"]).tolist():
            rows = take(actions, actions["executor"] == executor)
            run = self._executors[executor].run(
                rows, [arguments.get(call, "{}") for call in rows["call"].tolist()])
            future = asyncio.run_coroutine_threadsafe(_guarded(run, len(rows)), loop)
            self._flying.append((int(rows["due"].min()), rows, future))

    def release(self, tasks: np.ndarray) -> None:
        """The tasks ended: executors let go of what they held for them (in the
        background; an outcome still in flight for one is ignored by its group)."""
        if not self._per_task or not len(tasks):
            return
        loop = self._event_loop()
        for executor in self._per_task:
            asyncio.run_coroutine_threadsafe(
                executor.release_tasks(tasks.tolist()), loop)

    def due(self, tick: int) -> np.ndarray:
        """Every action due at or before `tick` with its outcome, ordered by call id (waits
        for those still running)."""
        if self.idle:
            return np.zeros(0, dtype=ACTION_DTYPE)
        keep = []
        for due, rows, future in self._flying:
            if due <= tick:
                self._landed.append(_with_outcomes(rows, future.result()))
            else:
                keep.append((due, rows, future))
        self._flying = keep
        landed = join(self._landed, ACTION_DTYPE)
        now = landed["due"] <= tick
        self._landed = [take(landed, ~now)] if not now.all() else []
        out = take(landed, now)
        return take(out, np.argsort(out["call"], kind="stable"))

    def settle(self) -> None:
        """Wait for every action in flight (before a checkpoint)."""
        for _, rows, future in self._flying:
            self._landed.append(_with_outcomes(rows, future.result()))
        self._flying = []

    def state(self) -> np.ndarray:
        """The outcomes not delivered yet (call after `settle`)."""
        self.settle()
        return join(self._landed, ACTION_DTYPE)

    def restore(self, landed: np.ndarray) -> None:
        self._flying = []  # a rolled-back run's calls: their outcomes are not this run's
        self._landed = [np.array(landed, dtype=ACTION_DTYPE)] if len(landed) else []

    def close(self) -> None:
        """Cancel what still runs (actions due after the run's last tick) and stop the loop."""
        loop, self._loop = self._loop, None
        self._flying = []
        if loop is None:
            return
        with contextlib.suppress(Exception):  # a loop that is gone has nothing to cancel
            asyncio.run_coroutine_threadsafe(_cancel_others(), loop).result(timeout=10)
        for executor in self._executors.values():  # what they hold outside (containers)
            if hasattr(executor, "aclose"):
                with contextlib.suppress(Exception):
                    asyncio.run_coroutine_threadsafe(
                        executor.aclose(), loop).result(timeout=60)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        if not loop.is_running():
            loop.close()

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                            name="synthorg-actions")
            self._thread.start()
        return self._loop


async def _cancel_others() -> None:
    me = asyncio.current_task()
    others = [t for t in asyncio.all_tasks() if t is not me]
    for t in others:
        t.cancel()
    await asyncio.gather(*others, return_exceptions=True)


async def _guarded(run: object, n: int) -> list[Outcome]:
    """An executor that raises, or answers with the wrong number of outcomes, fails its batch;
    one whose process died (ActorCrashed) stops the run, which rolls back and goes on."""
    try:
        outcomes = list(await run)  # type: ignore[misc]
    except (ActorCrashed, MisuseError):  # a lost actor; a cassette that lacks a reply
        raise
    except Exception:
        return [(int(ActionStatus.failed), 0.0)] * n
    if len(outcomes) != n:
        return [(int(ActionStatus.failed), 0.0)] * n
    return outcomes


def _with_outcomes(rows: np.ndarray, outcomes: list[Outcome]) -> np.ndarray:
    done = rows.copy()
    done["status"] = [o[0] for o in outcomes]
    done["value"] = [o[1] for o in outcomes]
    if any(len(o) > 2 for o in outcomes):
        usage = np.array([o[2:5] if len(o) > 2 else (0, 0, 0) for o in outcomes],
                         dtype=np.int64).reshape(-1, 3)
        done["tokens_in"], done["tokens_out"], done["cost_micro"] = usage.T
    return done
