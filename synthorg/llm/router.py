"""Providers in priority order, with health tracking and cooldown; retries with exponential
backoff and jitter. Only the wall clock depends on which provider answered or how often it
was tried: what the simulation sees is the reply (or the final failure), which cassettes
keep."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from synthorg.config.llm import LlmSpec, ProviderSpec, TierName
from synthorg.llm.client import ChatModel, ProviderError, RequestRejected
from synthorg.llm.messages import ChatReply, ChatRequest


class LlmFailure(Exception):
    """Every attempt failed, or the request was refused: the step fails closed."""


@dataclass
class Health:
    failures: int = 0  # in a row
    resting_until: float = 0.0  # monotonic clock
    calls: int = 0
    errors: int = 0


@dataclass
class ProviderRouter:
    spec: LlmSpec
    providers: Sequence[tuple[ProviderSpec, ChatModel]]
    clock: random.Random = field(default_factory=random.Random)  # jitter only, never an outcome
    health: dict[str, Health] = field(init=False)

    def __post_init__(self) -> None:
        self.health = {p.name: Health() for p, _ in self.providers}

    def request_for(self, provider: ProviderSpec, tier: TierName, request: ChatRequest
                    ) -> ChatRequest:
        return dataclasses.replace(request, model=self.spec.model_for(provider, tier))

    async def complete(self, request: ChatRequest, tier: TierName) -> ChatReply:
        tried: set[str] = set()
        last = "no provider"
        for attempt in range(1 + self.spec.retries):
            if attempt:
                pause = self.spec.backoff_s * 2 ** (attempt - 1)
                await asyncio.sleep(pause * (0.5 + self.clock.random()))
            provider, model = self._pick(tried)
            tried.add(provider.name)
            h = self.health[provider.name]
            h.calls += 1
            try:
                reply = await model.complete(self.request_for(provider, tier, request))
            except RequestRejected as e:
                h.errors += 1
                raise LlmFailure(str(e)) from e
            except ProviderError as e:
                h.errors += 1
                h.failures += 1
                if h.failures >= self.spec.failures_to_cooldown:
                    h.resting_until = time.monotonic() + self.spec.cooldown_s
                last = str(e)
                continue
            h.failures = 0
            return reply
        raise LlmFailure(f"after {1 + self.spec.retries} attempts: {last}")

    def _pick(self, tried: set[str]) -> tuple[ProviderSpec, ChatModel]:
        """The first provider by priority that is not resting, preferring one this call has
        not tried yet; all resting: the one that rests least long."""
        now = time.monotonic()
        awake = [(p, m) for p, m in self.providers if self.health[p.name].resting_until <= now]
        if awake:
            fresh = [(p, m) for p, m in awake if p.name not in tried]
            return (fresh or awake)[0]
        return min(self.providers, key=lambda pm: self.health[pm[0].name].resting_until)
