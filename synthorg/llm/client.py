"""The chat model seen by the simulation: one request in, one reply out. The client speaks the
OpenAI-compatible chat completions API through the official `openai` SDK, so vLLM, Ollama,
llama.cpp and hosted providers all work the same."""

from __future__ import annotations

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
        # sent as they are: the SDK would otherwise walk every node of the schema on every
        # request, its largest CPU cost at many requests in flight
        body: dict[str, Any] = {}
        if request.json_schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name or "reply", "schema": request.json_schema,
                "strict": True}}
        if request.tools:
            body["tools"] = list(request.tools)
        try:
            response = await self._client.chat.completions.create(
                model=request.model, messages=list(request.messages),  # type: ignore[arg-type]
                max_tokens=request.max_tokens, temperature=request.temperature,
                extra_body=body or None)
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
    """The reply in our terms; a server's odd body (no choices, no usage) is taken as it is."""
    choices = getattr(response, "choices", None) or []
    message = choices[0].message if choices else None
    calls = []
    for call in (getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        if function is not None:
            calls.append(ToolCall(name=str(function.name), arguments=str(function.arguments or "")))
    usage = getattr(response, "usage", None)
    return ChatReply(
        content=getattr(message, "content", None),
        tool_calls=tuple(calls),
        tokens_in=max(0, int(getattr(usage, "prompt_tokens", 0) or 0)),
        tokens_out=max(0, int(getattr(usage, "completion_tokens", 0) or 0)),
        model=model, provider=provider)
