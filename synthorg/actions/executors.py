"""Executors: what runs actions that take wall-clock time (tool runners now; the sandbox, memory
and LLM executors plug in here too).

An executor gets a batch of actions (ACTION_DTYPE rows, issued in one tick by one group) and
returns each one's outcome: (ActionStatus, value). It may take as long as it needs and run the
calls concurrently: the simulation delivers the outcomes at the tick it fixed when the actions
were issued, never when the wall clock says. An outcome must depend only on the action (and
the run's seed), so a run reproduces whatever the machine's speed.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from synthorg.config.models import CompanyConfig, ExecutorSpec
from synthorg.domain.enums import ActionStatus
from synthorg.domain.rng import Stream, uniform
from synthorg.errors import ExecutorFault

if TYPE_CHECKING:
    from synthorg.llm.cassette import CassetteSpec

# ActionStatus, value; an executor that uses a model adds tokens in, tokens out, micro-USD
Outcome = tuple[int, float] | tuple[int, float, int, int, int]
Decide = Callable[[np.ndarray, list[str]], Awaitable[list[Outcome]]]


@dataclass(frozen=True)
class ExecutorContext:
    """What executors that touch the world need of the run."""

    config: CompanyConfig
    run_key: str  # stable across resume: names the run's containers and workspaces
    run_dir: Path | None = None
    cassette: CassetteSpec | None = None  # the model's replies: recorded, or replayed


class Executor(Protocol):
    async def run(self, actions: np.ndarray, arguments: list[str]) -> list[Outcome]:
        """Each action's outcome, in the order given; `arguments`: each call's arguments as
        JSON text. Raising fails the whole batch (each action is then recorded as failed)."""


async def each_call(actions: np.ndarray, call: Callable[[np.void], Awaitable[Outcome]],
                    limit: asyncio.Semaphore, timeout_s: float | None) -> list[Outcome]:
    """Run `call` per action, at most `limit` at a time, each within `timeout_s` seconds (None:
    the call keeps its own time). A time-out or an error of the call is its outcome; an
    ExecutorFault (the executor's outside service failed) is not, and stops the batch."""

    async def one(row: np.void) -> Outcome:
        async with limit:
            try:
                return await asyncio.wait_for(call(row), timeout_s)
            except TimeoutError:
                return int(ActionStatus.timed_out), 0.0
            except ExecutorFault:
                raise
            except Exception:  # an executor's failure is the action's outcome, not a crash
                return int(ActionStatus.failed), 0.0

    return list(await asyncio.gather(*(one(row) for row in actions)))


class DelayExecutor:
    """For tests and demonstrations: each call sleeps a random wall-clock time (not seeded:
    the point is that the clock does not matter), then succeeds unless a seeded draw by its
    call id says it fails."""

    def __init__(self, spec: ExecutorSpec, key: np.uint64) -> None:
        self._spec = spec
        self._key = key
        self._clock = random.Random()  # wall-clock jitter only; never reaches an outcome
        self._limit: asyncio.Semaphore | None = None

    async def run(self, actions: np.ndarray, arguments: list[str]) -> list[Outcome]:
        if self._limit is None:  # made in the runner's event loop
            self._limit = asyncio.Semaphore(self._spec.max_in_flight)
        return await each_call(actions, self._call, self._limit, self._spec.timeout_s)

    async def _call(self, row: np.void) -> Outcome:
        await asyncio.sleep(self._clock.uniform(self._spec.sleep_s.low, self._spec.sleep_s.high))
        draw = float(uniform(self._key, np.array([row["call"]]), 0, Stream.action)[0])
        if draw < self._spec.fail_probability:
            return int(ActionStatus.failed), 0.0
        return int(ActionStatus.succeeded), 1.0


class ApprovalDesk:
    """Takes a tick's approval requests, each with its context (the call asked for and why,
    as JSON), to the SecOps office in one call: the office itself (local backend) or the
    `secops` actor."""

    def __init__(self, decide: Decide) -> None:
        self._decide = decide

    async def run(self, actions: np.ndarray, arguments: list[str]) -> list[Outcome]:
        return list(await self._decide(actions, arguments))


APPROVALS = "approvals"  # the executor name of approvals (reserved in the config)
LLM = "llm"  # the executor name of agents' deliberations with the model (config `llm`)

def build_executor(spec: ExecutorSpec, key: np.uint64, context: ExecutorContext) -> Executor:
    if spec.kind == "sandbox":
        from synthorg.actions.sandboxed import SandboxExecutor

        return SandboxExecutor(spec, key, context)
    if spec.kind == "mcp":
        from synthorg.actions.sandboxed import McpExecutor

        return McpExecutor(spec, key, context)
    return DelayExecutor(spec, key)
