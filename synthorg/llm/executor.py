"""The llm executor: runs a tick's deliberations (actions of the `llm` executor) against the
model, many in flight at once, each within the run's budgets and retries.

A deliberation's arguments are the agent's situation (JSON, built by engine/llm_desk.py). Its
outcome: succeeded with the decision packed in the value (llm/deliberation.py), or failed
(the step fails closed) with the reason in the value; tokens and cost either way. What the
simulation sees depends only on the replies, which a cassette records or replays."""

from __future__ import annotations

import asyncio
import json

import numpy as np

from synthorg.actions.executors import ExecutorContext, Outcome
from synthorg.config.llm import LlmSpec, TierName
from synthorg.domain.enums import ActionStatus, LlmFailReason
from synthorg.llm import deliberation
from synthorg.llm.line import ModelLine


class LlmExecutor:
    def __init__(self, spec: LlmSpec, context: ExecutorContext) -> None:
        self._spec = spec
        self._line = ModelLine(spec, context.cassette)
        self._schema = deliberation.reply_schema()

    async def run(self, actions: np.ndarray, arguments: list[str]) -> list[Outcome]:
        return list(await asyncio.gather(*(self._deliberate(text) for text in arguments)))

    async def _deliberate(self, situation_json: str) -> Outcome:
        situation = json.loads(situation_json)
        tier: TierName = situation["you"]["tier"]
        request = self._line.request(tier, deliberation.messages(situation),
                                     deliberation.SCHEMA_NAME, self._schema,
                                     deliberation.tool_offer(situation)
                                     if self._spec.offer_tools else ())
        used = np.zeros(3, dtype=np.int64)  # tokens in, tokens out, micro-USD
        for _ in range(1 + self._spec.invalid_retries):
            reply, error = await self._line.ask(request, tier)
            if reply is None:
                timed_out = "Timeout" in (error or "")
                status = ActionStatus.timed_out if timed_out else ActionStatus.failed
                why = LlmFailReason.timed_out if timed_out else LlmFailReason.provider
                return int(status), float(why), *map(int, used)  # type: ignore[return-value]
            used += self._line.usage(reply)
            call = deliberation.chosen_call(situation, reply.tool_calls)
            decided = deliberation.parse(reply.content)
            if call is None or (decided is None and not call):
                continue  # a call the task does not allow, or nothing usable: ask again
            if decided is None:  # it only called the tool: it works, as it chose
                plan, rush, confidence = deliberation.PlanChoice.work, False, 1.0
            else:
                plan, rush, confidence = deliberation.decided(decided)
            return (int(ActionStatus.succeeded),
                    deliberation.pack(plan, rush, confidence, call),
                    *map(int, used))  # type: ignore[return-value]
        return (int(ActionStatus.failed), float(LlmFailReason.invalid_reply),
                *map(int, used))  # type: ignore[return-value]

    async def aclose(self) -> None:
        await self._line.aclose()
