"""The road to the model that one process's askers share (a group host's deliberations, the
SecOps office's judge): the providers behind their router, the limit on requests in flight,
and the cassette that records or replays every reply."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from synthorg.config.llm import LlmSpec, TierName
from synthorg.llm.cassette import CassetteSpec, Entry, Player, Recorder
from synthorg.llm.messages import ChatReply, ChatRequest


class ModelLine:
    def __init__(self, spec: LlmSpec, cassette: CassetteSpec | None) -> None:
        self._spec = spec
        self._player = Player(cassette.path) if cassette and cassette.mode == "replay" else None
        self._recorder = (Recorder(cassette.path) if cassette and cassette.mode == "record"
                          else None)
        self._seen: dict[str, int] = {}  # occurrences of each request so far
        self._limit: asyncio.Semaphore | None = None
        self._router: Any = None  # built at the first live request (imports the openai SDK)

    def request(self, tier: TierName, messages: tuple[dict[str, str], ...], schema_name: str,
                schema: dict[str, Any], tools: tuple[dict[str, Any], ...] = ()) -> ChatRequest:
        """A request as the first provider would get it (cassettes key on this one)."""
        spec = self._spec
        return ChatRequest(model=spec.model_for(spec.provider_list()[0], tier),
                           messages=messages, schema_name=schema_name, json_schema=schema,
                           tools=tools, max_tokens=spec.max_tokens,
                           temperature=spec.temperature)

    async def ask(self, request: ChatRequest, tier: TierName
                  ) -> tuple[ChatReply | None, str | None]:
        """The reply, or why there is none: from the cassette, or from the providers."""
        key, n = "", 0
        if self._player is not None or self._recorder is not None:  # keyed for the cassette
            key = request.digest()
            n = self._seen.get(key, 0)
            self._seen[key] = n + 1
        if self._player is not None:
            entry = self._player.get(key, n)
            return entry.reply, entry.error
        from synthorg.llm.router import LlmFailure

        if self._limit is None:  # made in the asker's event loop
            self._limit = asyncio.Semaphore(self._spec.max_in_flight)
        async with self._limit:
            try:
                reply, error = await self._routed().complete(request, tier), None
            except LlmFailure as e:
                reply, error = None, str(e)
        if self._recorder is not None:
            self._recorder.add(Entry(key=key, n=n, reply=reply, error=error))
        return reply, error

    def usage(self, reply: ChatReply) -> np.ndarray:
        """Tokens in, tokens out and micro-USD of a reply (USD per million tokens is micro-USD
        per token)."""
        price = self._spec.price_of(reply.model)
        cost = round(reply.tokens_in * price.input_per_mtok
                     + reply.tokens_out * price.output_per_mtok)
        return np.array([reply.tokens_in, reply.tokens_out, cost], dtype=np.int64)

    def _routed(self) -> Any:
        if self._router is None:
            from synthorg.llm.client import OpenAIChat
            from synthorg.llm.router import ProviderRouter

            self._router = ProviderRouter(self._spec, [
                (p, OpenAIChat(p, self._spec.timeout_s, self._spec.max_in_flight))
                for p in self._spec.provider_list()])
        return self._router

    async def aclose(self) -> None:
        if self._router is not None:
            for _, model in self._router.providers:
                await model.aclose()
