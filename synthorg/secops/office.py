"""The SecOps office: the owner of the security state of a run.

It decides the approvals agents ask for and keeps the record of them. Groups keep a local
copy of the fast path (the verdicts on call forms, synthorg/secops/forms.py) as their
interceptor (a round trip mid-step would stall every agent of a group); what needs the owner
goes to it as an action: an approval is asked at tick t and its decision is delivered at
t + the approval delay, through the `secops` actor on Ray or in-process on the local backend.

Every request is parked first (synthorg/secops/parking.py: the call and why SecOps escalated
it, in the run directory), then decided:
- `seeded` (simulations): the approver stands for the person who decides. It answers in
  time with `answer_probability`, grants with `approve_probability`, and recognises a harmful
  call (the ground truth a person reading the call would see) with `catch_probability`,
  rejecting it. Draws are by call id: the same call gets the same answer whichever process
  asks, and whenever it asks.
- `human`: a person decides with `synthorg approvals`; the run waits at the decision's tick,
  up to `timeout_seconds`, then the policy's default outcome applies. What was decided stays
  in the store: a rolled-back or restarted office finds it, and `replay` is given it
  (`record`) instead of asking anyone.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from synthorg.actions.executors import Outcome
from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import ActionStatus
from synthorg.domain.rng import Stream, uniform
from synthorg.secops.forms import secops_tables
from synthorg.secops.parking import POLL_SECONDS, ApprovalStore, ParkedCall, PersonDesk

if TYPE_CHECKING:
    from synthorg.llm.cassette import CassetteSpec
    from synthorg.llm.judge import ModelJudge

GRANTED, REJECTED = 1.0, 0.0  # an approval's outcome value


class SecOpsOffice:
    def __init__(self, config: CompanyConfig, key: np.uint64, agent_ids: tuple[str, ...],
                 run_dir: Path, record: Path | None = None,
                 cassette: CassetteSpec | None = None) -> None:
        """record: a store of decisions already made (a replayed human-mode run's): they are
        given instead of asking a person, and a call without one is an error."""
        self._config = config
        self._key = key
        self._agent_ids = agent_ids
        policy = config.policies.approvals
        self._desk = PersonDesk(run_dir, record, policy.on_timeout == "grant",
                                policy.timeout_seconds)
        self.tick = -1  # the last tick a request was asked at
        self._forms = secops_tables(config).forms
        self._judge: ModelJudge | None = None
        if config.policies.approvals.mode == "llm":  # SecOps's slow path with the model
            from synthorg.llm.judge import ModelJudge

            self._judge = ModelJudge(config, cassette)

    @property
    def store(self) -> ApprovalStore:
        return self._desk.store

    async def decide(self, requests: np.ndarray, contexts: list[str]) -> list[Outcome]:
        """Decisions on approval requests (ACTION_DTYPE rows, the call's form in `value`, -1
        for an escalation on confidence; `contexts`: each one's call and reason as JSON)."""
        if not len(requests):
            return []
        self.tick = max(self.tick, int(requests["tick"].max()))
        if self._config.policies.approvals.mode == "seeded":
            return self._seeded(requests, contexts)
        if self._judge is not None:
            judged = await self._judge.decide(requests, contexts)
            self.store.park(self._parked(requests, contexts, [
                ("granted" if o[1] == GRANTED else "rejected", "model") for o, _ in judged],
                [note for _, note in judged]))
            return [o for o, _ in judged]
        self.store.park(self._parked(requests, contexts))
        calls = requests["call"].tolist()
        return _outcomes(calls, await self._person(calls))

    def _seeded(self, requests: np.ndarray, contexts: list[str]) -> list[Outcome]:
        """Decided as asked: parked with the decision (a call asked again after a rollback
        keeps its row, with the same decision)."""
        policy = self._config.policies.approvals
        calls = requests["call"]
        granted = uniform(self._key, calls, 0, Stream.approval) < policy.approve_probability
        form = requests["value"].astype(np.int64)
        harmful = (form >= 0) & self._forms.harmful(np.maximum(form, 0))
        caught = uniform(self._key, calls, 0, Stream.catch) < policy.catch_probability
        granted &= ~(harmful & caught)
        answered = uniform(self._key, calls, 0, Stream.answer) < policy.answer_probability
        default = policy.on_timeout == "grant"
        decided = [("granted" if (g if a else default) else "rejected",
                    "approver" if a else "timeout")
                   for a, g in zip(answered.tolist(), granted.tolist(), strict=True)]
        self.store.park(self._parked(requests, contexts, decided))
        ok, late = int(ActionStatus.succeeded), int(ActionStatus.timed_out)
        return [(ok, GRANTED if g else REJECTED) if a else (late, GRANTED if default else REJECTED)
                for a, g in zip(answered.tolist(), granted.tolist(), strict=True)]

    async def _person(self, calls: list[int]) -> dict[int, ParkedCall]:
        """A person's decisions on `calls`, waiting for them up to the policy's time-out."""
        if (got := self._desk.recorded(calls)) is not None:
            return got
        deadline = self._desk.deadline()
        while (got := self._desk.look(calls, deadline)) is None:
            await asyncio.sleep(POLL_SECONDS)
        return got

    def _parked(self, requests: np.ndarray, contexts: list[str],
                decided: list[tuple[str, str]] | None = None,
                notes: list[str] | None = None) -> list[ParkedCall]:
        """The requests as parked calls. Built unvalidated (`model_construct`): they come
        from the run's own groups, and a store's rows are validated when read back."""
        parked = []
        decided = decided or [("parked", "")] * len(requests)
        notes = notes or [""] * len(requests)
        for call, tick, due, agent, task, text, (status, by), note in zip(
                requests["call"].tolist(), requests["tick"].tolist(), requests["due"].tolist(),
                requests["agent"].tolist(), requests["task"].tolist(), contexts, decided, notes,
                strict=True):
            context = json.loads(text) if text and text != "{}" else {}
            parked.append(ParkedCall.model_construct(
                call=call, tick=tick, due=due, agent=self._agent_ids[agent], task=task,
                tool=context.get("tool", ""), arguments=context.get("arguments", {}),
                rule=context.get("rule", ""), reason=context.get("reason", ""),
                risk_tier=context.get("risk_tier", ""), status=status, decided_by=by,
                note=note))
        return parked

    def state(self) -> dict[str, int]:
        return {"tick": self.tick}

    def restore(self, state: dict[str, int]) -> None:
        self.tick = int(state["tick"])

    def close(self) -> None:
        if self._judge is not None:
            self._judge.close()
        self._desk.close()


def _outcomes(calls: list[int], decided: dict[int, ParkedCall]) -> list[Outcome]:
    ok, late = int(ActionStatus.succeeded), int(ActionStatus.timed_out)
    return [(late if decided[c].decided_by == "timeout" else ok,
             GRANTED if decided[c].status == "granted" else REJECTED) for c in calls]
