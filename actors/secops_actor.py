"""The `secops` actor: hosts the SecOps office, the owner of a run's security state."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np
import ray

from synthorg.actions.executors import Outcome
from synthorg.config.models import CompanyConfig
from synthorg.errors import ActorCrashed
from synthorg.llm.cassette import CassetteSpec
from synthorg.org.directory import OrgDirectory
from synthorg.secops.office import SecOpsOffice


@ray.remote(num_cpus=0)
class SecOpsActor:
    """Hosts the SecOps office (synthorg/secops/office.py), the owner of the run's security
    state: the approvals agents ask for (each group sends a tick's requests in one call; the
    decisions are delivered at the tick the approval delay fixes). Groups run a copy of the
    fast path (verdicts on call forms) as their interceptor
    (a round trip mid-step would stall every agent of the group)."""

    def __init__(self, config: CompanyConfig, directory: OrgDirectory, key: int, run_dir: str,
                 record: str | None, cassette: CassetteSpec | None = None) -> None:
        self._office = SecOpsOffice(config, np.uint64(key), directory.agent_ids, Path(run_dir),
                                    Path(record) if record else None, cassette)

    async def decide(self, requests: np.ndarray, contexts: list[str]) -> list[Outcome]:
        return await self._office.decide(requests, contexts)

    def state(self) -> dict[str, int]:
        return self._office.state()

    def restore(self, state: dict[str, int]) -> None:
        self._office.restore(state)

    def pid(self) -> int:
        return os.getpid()


def approvals_of(secops: ray.actor.ActorHandle) -> Callable[[np.ndarray, list[str]], Awaitable[list]]:
    """A group's way to the SecOps office: one call per tick's requests. The office's process
    dying is an ActorCrashed (the run rolls back), never a rejection."""

    async def decide(requests: np.ndarray, contexts: list[str]) -> list:
        try:
            return await secops.decide.remote(requests, contexts)
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
            raise ActorCrashed(f"the secops actor is gone: {type(exc).__name__}") from exc

    return decide
