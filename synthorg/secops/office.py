"""The SecOps office: the owner of the security state of a run.

It decides the approvals agents ask for and keeps the record of them. Groups keep a local
copy of the fast path (the verdicts on call forms, synthorg/secops/forms.py) as their
interceptor (a round trip mid-step would stall every agent of a group); what needs the owner
goes to it as an action: an approval is asked at tick t and its decision is delivered at
t + the approval delay, through the `secops` actor on Ray or in-process on the local backend.

The seeded approver stands for the person who decides: it grants with the policy's
probability, and recognises a harmful call (the ground truth a person reading the call
would see) with `catch_probability`, rejecting it. Decisions are seeded by the call id: the
same call gets the same answer whichever process asks, and whenever it asks.
"""

from __future__ import annotations

import numpy as np

from synthorg.actions.executors import Outcome
from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import ActionStatus
from synthorg.domain.rng import Stream, uniform
from synthorg.secops.forms import secops_tables

GRANTED, REJECTED = 1.0, 0.0  # an approval's outcome value


class SecOpsOffice:
    def __init__(self, config: CompanyConfig, key: np.uint64) -> None:
        self._config = config
        self._key = key
        self.tick = -1  # the last tick a request was asked at
        self._forms = secops_tables(config).forms
        self.asked = 0
        self.granted = 0

    def decide(self, requests: np.ndarray) -> list[Outcome]:
        """Decisions on approval requests (ACTION_DTYPE rows, the call's form in `value`, -1
        for an escalation on confidence): granted with the policy's probability, by a draw
        on each call id, unless the approver recognises a harmful call."""
        if not len(requests):
            return []
        self.tick = max(self.tick, int(requests["tick"].max()))
        policy = self._config.policies.approvals
        granted = uniform(self._key, requests["call"], 0, Stream.approval) < policy.approve_probability
        form = requests["value"].astype(np.int64)
        harmful = (form >= 0) & self._forms.harmful(np.maximum(form, 0))
        caught = uniform(self._key, requests["call"], 0, Stream.catch) < policy.catch_probability
        granted &= ~(harmful & caught)
        self.asked += len(requests)
        self.granted += int(granted.sum())
        ok = int(ActionStatus.succeeded)
        return [(ok, GRANTED if g else REJECTED) for g in granted.tolist()]

    def state(self) -> dict[str, int]:
        return {"asked": self.asked, "granted": self.granted, "tick": self.tick}

    def restore(self, state: dict[str, int]) -> None:
        self.asked, self.granted = int(state["asked"]), int(state["granted"])
        self.tick = int(state["tick"])
