"""LLM mode: the model states the facts a memory keeps (fact extraction, what Mem0 does with
`infer=True`), asked through the project's own client (llm/line.py: providers, retries,
cassettes) instead of Mem0's, so ids stay the project's keys and a run replays.

A write is asked about when it reaches the memory service and its facts are taken when the
write is applied, CONSOLIDATION_TICKS later: the model has those ticks to answer, and what is
stored depends on the reply, never on when it came (a late reply is waited for). One request
per (owner, record): the record is the text deterministic mode would store, so a record the
owner already holds is never asked about again. A reply that is not JSON of the schema is asked
again (`llm.invalid_retries`); then, or when the providers fail, the record itself is stored
and the failure counted. An empty list of facts stores nothing, as in Mem0."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from synthorg.config.llm import LlmSpec
from synthorg.llm.cassette import CassetteSpec
from synthorg.llm.line import ModelLine
from synthorg.llm.messages import parsed
from synthorg.memory.records import ORG, Category

SCHEMA_NAME = "memory_facts"
MAX_FACTS = 5
SEPARATOR = "; "
FACTS_TAG = "facts"  # a memory whose text the model stated

SYSTEM = (
    "You keep the long-term memory of {agent}, an agent of {company}. From what just "
    "happened, state the facts worth remembering for future work, as short self-contained "
    "statements (what worked, what failed, who helped with what, how hard it was), at most "
    f"{MAX_FACTS}. Leave out what every task of that kind says anyway. Answer with JSON only, "
    'in the given schema: {{"facts": [...]}}; an empty list when nothing is worth keeping.')

# the counts a service keeps (its part of summary.json's memory_facts_* fields)
STATS = ("extracted", "failed", "empty", "tokens_in", "tokens_out", "cost_micro")


class Facts(BaseModel):
    """The reply's schema (response_format)."""

    model_config = ConfigDict(extra="forbid")

    facts: list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] = Field(
        max_length=MAX_FACTS)


@dataclass(frozen=True)
class Stated:
    """What the model made of one record: its facts joined (None: nothing worth keeping), or
    the record itself when no valid reply came (`ok` False)."""

    text: str | None
    ok: bool
    used: np.ndarray  # tokens in, tokens out, micro-USD


class FactExtractor:
    def __init__(self, spec: LlmSpec, cassette: CassetteSpec | None, reasoning: np.ndarray,
                 agents: Sequence[str], company: str) -> None:
        self._spec, self._reasoning, self._agents = spec, reasoning, agents
        self._company = company
        self._line = ModelLine(spec, cassette)
        self._schema = Facts.model_json_schema()
        self._asked: dict[tuple[int, str], concurrent.futures.Future[Stated]] = {}
        # the model is asked from a loop of the extractor's own: the service stays synchronous
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="memory-facts")
        self._thread.start()

    def wanted(self, agent: int) -> bool:
        """Whether `agent`'s writes have their facts extracted (it reasons with the model)."""
        return 0 <= agent < len(self._reasoning) and bool(self._reasoning[agent])

    def ask(self, owner: int, agent: int, category: int, record: str) -> None:
        if (owner, record) in self._asked:
            return
        messages = self._messages(owner, agent, category, record)
        self._asked[(owner, record)] = asyncio.run_coroutine_threadsafe(
            self._extract(messages, record), self._loop)

    def take(self, owner: int, record: str) -> Stated:
        """The model's facts about a record asked about earlier (waits for the reply)."""
        return self._asked.pop((owner, record)).result()

    def _messages(self, owner: int, agent: int, category: int, record: str
                  ) -> tuple[dict[str, str], ...]:
        name = self._agents[agent] if 0 <= agent < len(self._agents) else f"agent {agent}"
        told = {"memory": Category(category).name,
                "kept_for": "the whole organisation" if owner == ORG else name,
                "what_happened": record}
        return ({"role": "system", "content": SYSTEM.format(agent=name, company=self._company)},
                {"role": "user", "content": json.dumps(told, sort_keys=True)})

    async def _extract(self, messages: tuple[dict[str, str], ...], record: str) -> Stated:
        tier = self._spec.memory_facts_tier
        request = self._line.request(tier, messages, SCHEMA_NAME, self._schema)
        used = np.zeros(3, dtype=np.int64)
        for _ in range(1 + self._spec.invalid_retries):
            reply, _error = await self._line.ask(request, tier)
            if reply is None:
                break
            used += self._line.usage(reply)
            facts = parsed(Facts, reply.content)
            if facts is not None:
                kept = [" ".join(f.split()) for f in facts.facts]
                kept = [f for f in kept if f]
                return Stated(SEPARATOR.join(kept) if kept else None, True, used)
        return Stated(record, False, used)

    def close(self) -> None:
        for future in self._asked.values():
            future.cancel()
        self._asked.clear()
        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            asyncio.run_coroutine_threadsafe(self._line.aclose(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()


def tally(stats: np.ndarray, stated: Stated) -> None:
    """Counts one extraction into a service's STATS."""
    if not stated.ok:
        stats[1] += 1
    elif stated.text is None:
        stats[2] += 1
    else:
        stats[0] += 1
    stats[3:] += stated.used


def figures(parts: Sequence[np.ndarray]) -> dict[str, Any]:
    """summary.json's memory_facts_* fields from each service's STATS."""
    total = np.sum(np.asarray(parts, dtype=np.int64).reshape(-1, len(STATS)), axis=0)
    return {"memory_facts_extracted": int(total[0]), "memory_facts_failed": int(total[1]),
            "memory_facts_empty": int(total[2]),
            "memory_facts_tokens": int(total[3] + total[4]),
            "memory_facts_cost_usd": round(int(total[5]) / 1_000_000, 6)}
