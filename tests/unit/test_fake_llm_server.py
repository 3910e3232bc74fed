"""The fake OpenAI-compatible server, through the openai SDK: schema-conforming and reproducible
replies, the broken modes, tool calls, injected failures, latency, scripts; and the bench on it."""

from __future__ import annotations

import asyncio
import json
import math
import time
from datetime import datetime
from enum import StrEnum
from typing import Literal

import aiohttp
import httpx
import openai
import pytest
from pydantic import BaseModel, Field, ValidationError

from synthorg.llm.bench import concurrency_curve, concurrency_point
from synthorg.llm.fake_server import FakeServerProcess

SCRIPT = [
    {"match": "weather", "content": "It is sunny."},
    {"match": "book a room", "tool_call": {"name": "book_room", "arguments": {"room": "B12", "hours": 2}}},
]


class Priority(StrEnum):
    low = "low"
    high = "high"


class Step(BaseModel):
    title: str = Field(max_length=12)
    hours: int = Field(ge=1, le=8)
    share: float = Field(gt=0, lt=1)
    substep: Step | None = None


class Plan(BaseModel):
    decision: Literal["approve", "reject", "defer"]
    priority: Priority
    steps: list[Step]
    owners: dict[str, int]
    due: datetime
    urgent: bool
    note: str | None = None


class Assign(BaseModel):
    assignee: str
    effort: int = Field(ge=1, le=5)


TOOLS = [{"type": "function", "function": {
    "name": "assign_task", "description": "Assign the task", "parameters": Assign.model_json_schema()}}]


def plan_format() -> dict:
    return {"type": "json_schema",
            "json_schema": {"name": "Plan", "schema": Plan.model_json_schema(), "strict": True}}


def ask(client: openai.OpenAI, text: str, **kw):
    messages = [{"role": "user", "content": text}]
    return client.chat.completions.create(model="fake-model", messages=messages, **kw)


def sync_client(server: FakeServerProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)


@pytest.fixture(scope="module")
def schema_server():
    with FakeServerProcess(mode="schema", script=SCRIPT) as server:
        yield server


@pytest.fixture(scope="module")
def client(schema_server):
    with sync_client(schema_server) as made:
        yield made


@pytest.fixture(scope="module")
def slow_server():
    with FakeServerProcess(latency=0.3) as server:
        yield server


def test_models_lists_the_model_name(client):
    assert [m.id for m in client.models.list().data] == ["fake-model"]


def test_schema_replies_validate_and_repeat(client):
    first = ask(client, "Plan the launch", response_format=plan_format())
    assert first.object == "chat.completion" and first.choices[0].finish_reason == "stop"
    plan = Plan.model_validate_json(first.choices[0].message.content)
    again = ask(client, "Plan the launch", response_format=plan_format())
    assert again.choices[0].message.content == first.choices[0].message.content
    replies = {ask(client, f"Plan launch {i}", response_format=plan_format()).choices[0].message.content
               for i in range(15)}
    for text in replies:
        Plan.model_validate_json(text)
    assert len(replies) > 5  # different requests, different replies
    assert plan.decision in ("approve", "reject", "defer")


def test_usage_counts_characters_over_four(client):
    reply = ask(client, "x" * 41, response_format=plan_format())
    usage = reply.usage
    assert usage.prompt_tokens == math.ceil(41 / 4)
    assert usage.completion_tokens == math.ceil(len(reply.choices[0].message.content) / 4) > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_no_response_format_gives_plain_text(client):
    content = ask(client, "How are you?").choices[0].message.content
    assert content and not content.startswith("{")


def test_script_first_match_wins(client):
    reply = ask(client, "What is the weather? Also book a room", response_format=plan_format())
    assert reply.choices[0].message.content == "It is sunny."
    booked = ask(client, "please book a room for me", tools=TOOLS).choices[0]
    assert booked.finish_reason == "tool_calls"
    call = booked.message.tool_calls[0]
    assert call.function.name == "book_room"
    assert json.loads(call.function.arguments) == {"room": "B12", "hours": 2}


def test_stream_is_refused(client):
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, "hello", stream=True)
    assert caught.value.status_code == 400


def test_malformed_request_json_is_a_400(schema_server):
    resp = httpx.post(f"{schema_server.base_url}/chat/completions", content=b"{nope",
                      headers={"content-type": "application/json"})
    assert resp.status_code == 400 and "error" in resp.json()


def test_malformed_mode_is_not_json():
    with FakeServerProcess(mode="malformed") as server, sync_client(server) as made:
        content = ask(made, "Plan it", response_format=plan_format()).choices[0].message.content
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)


def test_violate_mode_is_json_that_fails_the_schema():
    with FakeServerProcess(mode="violate") as server, sync_client(server) as made:
        content = ask(made, "Plan it", response_format=plan_format()).choices[0].message.content
    json.loads(content)
    with pytest.raises(ValidationError):
        Plan.model_validate_json(content)


def test_tool_mode_calls_the_first_tool_with_valid_arguments():
    with FakeServerProcess(mode="tool") as server, sync_client(server) as made:
        choice = ask(made, "Who does this?", tools=TOOLS).choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    assert call.type == "function" and call.id.startswith("call_")
    assert call.function.name == "assign_task"
    Assign.model_validate(json.loads(call.function.arguments))


def test_fail_rate_one_gives_503():
    with FakeServerProcess(fail_rate=1.0) as server, sync_client(server) as made, \
            pytest.raises(openai.InternalServerError) as caught:
        ask(made, "hello")
    assert caught.value.status_code == 503


def test_latency_holds_each_request(slow_server):
    with sync_client(slow_server) as made:
        start = time.perf_counter()
        ask(made, "hello")
        assert time.perf_counter() - start >= 0.3


def test_many_concurrent_requests_overlap(slow_server):
    async def run() -> float:
        body = {"model": "fake-model", "response_format": plan_format()}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=512)) as session:

            async def one(i: int) -> Plan:
                async with session.post(f"{slow_server.base_url}/chat/completions",
                                        json={**body, "messages": [{"role": "user", "content": f"task {i}"}]}
                                        ) as resp:
                    assert resp.status == 200
                    return Plan.model_validate_json((await resp.json())["choices"][0]["message"]["content"])

            start = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(256)))
            return time.perf_counter() - start

    # 256 requests of 0.3 s: one after another they would take 77 s; a bound this loose holds
    # on a loaded machine and still fails a server that answers in series
    assert asyncio.run(run()) < 20.0


def test_concurrency_point_respects_the_limit():
    active = peak = 0

    async def complete(i: int) -> None:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1

    point = asyncio.run(concurrency_point(complete, 4, 40))
    assert peak == 4 and point["requests"] == 40 and point["rps"] > 0


def test_concurrency_curve_with_the_default_client(slow_server):
    points = concurrency_curve(slow_server.base_url, 0.3, limits=(8,), min_seconds=0.3)
    assert [(p["in_flight"], p["requests"]) for p in points] == [(8, 32)]
    for p in points:
        assert p["ideal_rps"] == pytest.approx(p["in_flight"] / 0.3)
        assert 0.5 < p["efficiency"] <= 1.01


def test_start_failure_is_a_clear_error(tmp_path):
    bad = tmp_path / "script.json"
    bad.write_text('{"not": "a list"}')
    with pytest.raises(RuntimeError, match="stderr"):
        FakeServerProcess(script=bad)
