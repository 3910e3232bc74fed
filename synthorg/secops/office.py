"""The SecOps office: the owner of the security state of a run.

It holds the policy (the rule engine of the org version in force, so autonomy changes reach
it), decides the approvals agents ask for, and keeps the record of them. Groups keep a local
copy of the fast rules as their interceptor (a round trip mid-step would stall every agent of
a group); what needs the owner goes to it as an action: an approval is asked at tick t and
its decision is delivered at t + the approval delay, through the `secops` actor on Ray or
in-process on the local backend.

Decisions are seeded by the call id: the same call gets the same answer whichever process
asks, and whenever it asks.
"""

from __future__ import annotations

import numpy as np

from synthorg.actions.executors import Outcome
from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import ActionStatus
from synthorg.domain.rng import Stream, uniform
from synthorg.org.directory import OrgDirectory
from synthorg.org.timeline import OrgTimeline
from synthorg.secops.rules import RuleEngine, SecOpsVerdict

GRANTED, REJECTED = 1.0, 0.0  # an approval's outcome value


class SecOpsOffice:
    def __init__(self, config: CompanyConfig, directory: OrgDirectory, key: np.uint64) -> None:
        self._config = config
        self._key = key
        self._timeline = OrgTimeline(config, directory)
        self._engine = RuleEngine(directory, config.policies.security)
        self.asked = 0
        self.granted = 0

    def decide(self, requests: np.ndarray) -> list[Outcome]:
        """Decisions on approval requests (ACTION_DTYPE rows): granted with the policy's
        probability, by a draw on each call id."""
        if not len(requests):
            return []
        self.follow(int(requests["tick"].max()))
        p = self._config.policies.approvals.approve_probability
        granted = uniform(self._key, requests["call"], 0, Stream.approval) < p
        self.asked += len(requests)
        self.granted += int(granted.sum())
        ok = int(ActionStatus.succeeded)
        return [(ok, GRANTED if g else REJECTED) for g in granted.tolist()]

    def follow(self, tick: int) -> None:
        """Take up the org version in force at `tick` (autonomy changes alter the rules)."""
        if tick > self._timeline.tick and self._timeline.advance(tick) is not None:
            self._engine = RuleEngine(self._timeline.directory, self._config.policies.security)

    def check(self, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One-off checks of tool calls (CALL_DTYPE) by the rules in force."""
        return self._engine.check(calls)

    def explain(self, agent: int, tool: int, approved: bool = False) -> SecOpsVerdict:
        return self._engine.explain(agent, tool, approved)

    def state(self) -> dict[str, int]:
        return {"asked": self.asked, "granted": self.granted, "tick": self._timeline.tick}

    def restore(self, state: dict[str, int]) -> None:
        self.asked, self.granted = int(state["asked"]), int(state["granted"])
        self._timeline = OrgTimeline(self._config)
        self._engine = RuleEngine(self._timeline.directory, self._config.policies.security)
        self.follow(int(state["tick"]))
