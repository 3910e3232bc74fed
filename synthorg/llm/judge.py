"""SecOps's slow path with a model (`policies.approvals.mode: llm`): the model reviews each
call SecOps escalated, as a person would, and grants or rejects it. It fails closed: a reply
that is missing, not JSON of the schema or off the point is a rejection."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from synthorg.actions.executors import Outcome
from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import ActionStatus
from synthorg.llm.cassette import CassetteSpec
from synthorg.llm.line import ModelLine
from synthorg.llm.messages import parsed

SCHEMA_NAME = "approval"
SYSTEM = (
    "You are the security reviewer (SecOps) of {company}. An AI agent asks for approval of a "
    "tool call that the rule engine escalated. Read the call, its arguments and why it was "
    "escalated. Grant it only if it is safe and serves the agent's task; reject anything "
    "destructive, exfiltrating, reaching secrets or outside the agent's workspace. Answer "
    "with JSON only, in the given schema.")


class Judgement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["grant", "reject"]
    reason: str = Field(max_length=400)


class ModelJudge:
    """Runs on an event loop of its own: the office is asked from the event loops of several
    group hosts (local backend) or of its actor, and the model's connections belong to one."""

    def __init__(self, config: CompanyConfig, cassette: CassetteSpec | None) -> None:
        self._config = config
        self._line = ModelLine(config.llm, cassette)
        self._schema = Judgement.model_json_schema()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="synthorg-judge")
        self._thread.start()

    async def decide(self, requests: np.ndarray, contexts: list[str]
                     ) -> list[tuple[Outcome, str]]:
        """Each request's outcome (GRANTED or REJECTED in the value, tokens and cost) and the
        reviewer's note."""
        return await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(self._decide(requests, contexts), self._loop))

    async def _decide(self, requests: np.ndarray, contexts: list[str]
                      ) -> list[tuple[Outcome, str]]:
        return list(await asyncio.gather(*(
            self._one(call, agent, text) for call, agent, text in
            zip(requests["call"].tolist(), requests["agent"].tolist(), contexts, strict=True))))

    async def _one(self, call: int, agent: int, context: str) -> tuple[Outcome, str]:
        from synthorg.secops.office import GRANTED, REJECTED

        tier = self._config.llm.judge_tier
        user = json.dumps({"request": call, "agent": agent,
                           "call": json.loads(context) if context and context != "{}" else {}},
                          sort_keys=True, separators=(",", ":"))
        request = self._line.request(tier, (
            {"role": "system", "content": SYSTEM.format(company=self._config.company.name)},
            {"role": "user", "content": user}), SCHEMA_NAME, self._schema)
        used = np.zeros(3, dtype=np.int64)
        note = "no valid answer: rejected (fails closed)"
        status = ActionStatus.failed
        for _ in range(1 + self._config.llm.invalid_retries):
            reply, error = await self._line.ask(request, tier)
            if reply is None:
                note = f"no answer: rejected (fails closed): {error}"[:400]
                break
            used += self._line.usage(reply)
            judged = parsed(Judgement, reply.content)
            if judged is not None:
                outcome = (int(ActionStatus.succeeded),
                           GRANTED if judged.decision == "grant" else REJECTED, *map(int, used))
                return outcome, judged.reason  # type: ignore[return-value]
        return (int(status), REJECTED, *map(int, used)), note  # type: ignore[return-value]

    def close(self) -> None:
        if not self._loop.is_running():
            return
        with contextlib.suppress(Exception):  # what is gone has nothing to close
            asyncio.run_coroutine_threadsafe(self._line.aclose(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

