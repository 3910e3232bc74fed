"""Who says yes to a promotion that needs approval (hr.promotion.approval_from).

- `seeded` and `llm` modes: the seeded approver, with `policies.approvals.approve_probability`
  (the model reviews SecOps's calls, not careers).
- `human` mode: a person, with `synthorg approvals`. The HR office parks each request in the
  run's approvals store beside the agents' calls, and its review waits for the decisions up
  to `timeout_seconds`, after which `on_timeout` applies. The groups step on meanwhile until
  the tick the review's decisions take effect. A replay is given the recorded decisions.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

import numpy as np

from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import Seniority
from synthorg.domain.records import call_ids
from synthorg.domain.rng import Stream, uniform
from synthorg.secops.parking import HR_REQUEST, POLL_SECONDS, ParkedCall, PersonDesk

PROMOTION = "hr:promotion"  # the `tool` of a parked promotion


class PromotionApprover(Protocol):
    def decide(self, review: int, at: int, agents: np.ndarray, levels: np.ndarray,
               reasons: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Per agent asking to reach `levels` at tick `at` (decided at the review at tick
        `review`): granted, and whether nobody answered in time."""
        ...

    def close(self) -> None: ...


class SeededApprover:
    def __init__(self, config: CompanyConfig, key: np.uint64) -> None:
        self._key, self._p = key, config.policies.approvals.approve_probability

    def decide(self, review: int, at: int, agents: np.ndarray, levels: np.ndarray,
               reasons: list[str]) -> tuple[np.ndarray, np.ndarray]:
        granted = uniform(self._key, agents.astype(np.int64), at, Stream.promotion) < self._p
        return granted, np.zeros(len(agents), dtype=bool)

    def close(self) -> None:
        pass


class PersonApprover:
    def __init__(self, config: CompanyConfig, agent_ids: tuple[str, ...], run_dir: Path,
                 record: Path | None) -> None:
        policy = config.policies.approvals
        self._agent_ids = agent_ids
        self._desk = PersonDesk(run_dir, record, policy.on_timeout == "grant",
                                policy.timeout_seconds)

    def decide(self, review: int, at: int, agents: np.ndarray, levels: np.ndarray,
               reasons: list[str]) -> tuple[np.ndarray, np.ndarray]:
        if not len(agents):
            return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
        calls = (HR_REQUEST | call_ids(at, agents)).tolist()
        self._desk.store.park(ParkedCall(
            call=c, tick=review, due=at, agent=self._agent_ids[a], task=-1, tool=PROMOTION,
            arguments={"from": Seniority(level - 1).name, "to": Seniority(level).name},
            reason=why) for c, a, level, why in zip(calls, agents.tolist(), levels.tolist(),
                                                     reasons, strict=True))
        got = self._decisions(calls)
        return (np.array([got[c].status == "granted" for c in calls]),
                np.array([got[c].decided_by == "timeout" for c in calls]))

    def _decisions(self, calls: list[int]) -> dict[int, ParkedCall]:
        if (got := self._desk.recorded(calls)) is not None:
            return got
        deadline = self._desk.deadline()
        while (got := self._desk.look(calls, deadline)) is None:
            time.sleep(POLL_SECONDS)
        return got

    def close(self) -> None:
        self._desk.close()


def promotion_approver(config: CompanyConfig, key: np.uint64, agent_ids: tuple[str, ...],
                       run_dir: Path | None = None, record: Path | None = None
                       ) -> PromotionApprover:
    if config.policies.approvals.mode == "human" and run_dir is not None:
        return PersonApprover(config, agent_ids, run_dir, record)
    return SeededApprover(config, key)
