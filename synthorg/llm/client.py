"""The chat model seen by the simulation: one request in, one reply out. The client speaks the
OpenAI-compatible chat completions API through the official `openai` SDK, so vLLM, Ollama,
llama.cpp and hosted providers all work the same."""

from __future__ import annotations

import json
import os
from typing import Any, Protocol

import openai

from synthorg.config.llm import ProviderSpec
from synthorg.llm.messages import ChatReply, ChatRequest, ToolCall


class ProviderError(Exception):
    """The provider failed (5xx, connection, time-out, rate limit): worth another try."""


class RequestRejected(Exception):
    """The provider refused the request itself (4xx): another try would get the same."""


class ChatModel(Protocol):
    async def complete(self, request: ChatRequest) -> ChatReply: ...


class OpenAIChat:
    """One OpenAI-compatible provider. Retries are the router's, not the SDK's."""

    def __init__(self, provider: ProviderSpec, timeout_s: float, max_connections: int) -> None:
        self.name = provider.name
        self._client = openai.AsyncOpenAI(
            base_url=provider.base_url,
            api_key=os.environ.get(provider.api_key_env) or "not-needed",
            timeout=timeout_s, max_retries=0, http_client=_http_client(max_connections, timeout_s))

    async def complete(self, request: ChatRequest) -> ChatReply:
        body: dict[str, Any] = {}
        if request.json_schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name or "reply", "schema": request.json_schema,
                "strict": True}}
        if request.tools:
            body["tools"] = list(request.tools)
        body.update(model=request.model, messages=list(request.messages),
                    max_tokens=request.max_tokens, temperature=request.temperature)
        try:
            # the SDK's client (auth, errors, connections) with the body sent as JSON bytes and
            # the reply read as JSON: its typed path walks (and copies) every node of the
            # schema and builds a model of the reply on every request, most of the client's
            # CPU at many requests in flight
            response = await self._client.post(
                "/chat/completions", cast_to=object, content=json.dumps(body).encode(),
                options={"headers": {"Content-Type": "application/json"}})
        except (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError,
                openai.InternalServerError) as e:
            raise ProviderError(f"{self.name}: {type(e).__name__}: {e}") from e
        except openai.APIStatusError as e:
            if e.status_code >= 500 or e.status_code in (408, 409, 429):
                raise ProviderError(f"{self.name}: HTTP {e.status_code}") from e
            raise RequestRejected(f"{self.name}: HTTP {e.status_code}: {e.message}") from e
        except openai.APIError as e:  # a body that is not a chat completion
            raise ProviderError(f"{self.name}: {type(e).__name__}: {e}") from e
        return _reply(response, request.model, self.name)

    async def aclose(self) -> None:
        await self._client.close()


def _http_client(connections: int, timeout_s: float) -> Any:
    """The SDK over aiohttp, with a pool that never caps the requests in flight (the SDK's
    default httpx pool scans every connection for every request: at 256 in flight it, not
    the server, is the bottleneck)."""
    import httpx2  # the SDK's own HTTP library

    pool = max(connections, 16)
    limits = httpx2.Limits(max_connections=pool, max_keepalive_connections=pool)
    try:
        return openai.DefaultAioHttpClient(limits=limits, timeout=httpx2.Timeout(timeout_s))
    except RuntimeError:  # no aiohttp: the SDK's httpx client
        return openai.DefaultAsyncHttpxClient(limits=limits, timeout=httpx2.Timeout(timeout_s))


def _reply(response: Any, model: str, provider: str) -> ChatReply:
    """The reply in our terms. A server's odd body (no choices, no usage, wrong types) is
    taken for what it holds: nothing usable is an empty reply, which fails closed."""
    body = response if isinstance(response, dict) else {}
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else {}
    message = first.get("message") if isinstance(first, dict) else None
    message = message if isinstance(message, dict) else {}
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            arguments = function.get("arguments")
            calls.append(ToolCall(name=function["name"],
                                  arguments=arguments if isinstance(arguments, str) else ""))
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    content = message.get("content")
    return ChatReply(
        content=content if isinstance(content, str) else None,
        tool_calls=tuple(calls),
        tokens_in=_count(usage.get("prompt_tokens")),
        tokens_out=_count(usage.get("completion_tokens")),
        model=model, provider=provider)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
