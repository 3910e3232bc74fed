"""A request to the model and its reply, in the simulation's terms (no SDK types)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ChatRequest:
    """What is asked: the same request hashes the same (cassettes key on it). A plain
    dataclass: it is built by synthorg itself, many times a tick, and never read from outside."""

    model: str
    messages: tuple[dict[str, str], ...]
    schema_name: str | None = None
    json_schema: dict[str, Any] | None = None  # the reply's JSON schema (response_format)
    tools: tuple[dict[str, Any], ...] = ()  # OpenAI tool definitions
    max_tokens: int = 300
    temperature: float = 0.0

    def digest(self) -> str:
        text = json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


class ToolCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    arguments: str  # JSON text, as the model wrote it


class ChatReply(BaseModel):
    model_config = ConfigDict(frozen=True)

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    model: str = ""  # the model that answered (as asked: prices are looked up by it)
    provider: str = ""


def parsed(model: type[M], content: str | None) -> M | None:
    """A reply's content as `model`, or None when it is not valid JSON of its schema."""
    if not content:
        return None
    try:
        return model.model_validate(json.loads(content))
    except (ValidationError, ValueError, TypeError, RecursionError):
        return None
