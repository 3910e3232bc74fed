"""One deliberation: an agent asks the model to evaluate its situation, revise its goal, plan
its next step and check that plan against its constraints, in one structured reply.

The agent's situation travels as the action's arguments (JSON, hashed into the ledger); the
reply's decision comes back packed in the action's value (`pack`/`unpack`), so the engine
keeps its numeric columns."""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from synthorg.llm.messages import parsed

SCHEMA_NAME = "deliberation"


class PlanChoice(IntEnum):
    work = 0  # make the task's tool call
    ask_help = 1  # ask a colleague
    escalate = 2  # ask a person
    wait = 3  # do nothing this tick


class Assessment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    confidence: float = Field(ge=0.0, le=1.0, description="that you can do the task well")
    reason: str = Field(max_length=400)


class Deliberation(BaseModel):
    """The reply's schema (response_format)."""

    model_config = ConfigDict(extra="forbid")

    evaluate: Assessment
    revise: Literal["keep", "rush"] = Field(description=(
        "rush: work faster at lower quality, to meet the deadline"))
    plan: Literal["work", "ask_help", "escalate", "wait"]
    within_constraints: bool = Field(description=(
        "your plan respects your budget, your autonomy level and your role"))


def reply_schema() -> dict[str, Any]:
    return Deliberation.model_json_schema()


def parse(content: str | None) -> Deliberation | None:
    """The reply as a Deliberation, or None when it is not valid JSON of the schema."""
    return parsed(Deliberation, content)


def decided(d: Deliberation) -> tuple[PlanChoice, bool, float]:
    """The plan taken, rushed or not, and the confidence. A plan the model itself found
    outside its constraints is not carried out: the agent waits (fails closed)."""
    plan = PlanChoice[d.plan]
    if plan is PlanChoice.work and not d.within_constraints:
        plan = PlanChoice.wait
    return plan, d.revise == "rush", float(d.evaluate.confidence)


def pack(plan: PlanChoice, rush: bool, confidence: float, call: int = 0) -> float:
    """2·(8·call + 2·plan + rush) + confidence, confidence in [0, 1] and call the chosen
    call's number among those offered, from 1 (0: none chosen): one float, unpacked exactly."""
    whole = 8 * call + 2 * int(plan) + int(rush)
    return 2.0 * whole + min(max(confidence, 0.0), 1.0)


def unpack(values: Any) -> tuple[Any, Any, Any, Any]:
    """Arrays of plan, rush, confidence and call from packed values (numpy in, numpy out)."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    whole = np.floor(v / 2.0)
    confidence = np.clip(v - 2.0 * whole, 0.0, 1.0)
    whole = whole.astype(np.int64)
    return ((whole // 2) % 4).astype(np.int8), (whole % 2).astype(bool), confidence, \
        (whole // 8).astype(np.int32)


SYSTEM = (
    "You are {agent}, a {seniority} {role} in the {department} department of {company}. "
    "Your goal: {goal}. Each turn you decide what to do next on your current task. "
    "Evaluate how confident you are that you can do it well, decide whether to rush to "
    "meet the deadline, plan one step (work: make the task's tool call; ask_help: ask a "
    "colleague; escalate: ask a person; wait), and check that the plan respects your budget, "
    "your autonomy level and your role. Answer with JSON only, in the given schema; to work, "
    "also call the task's tool with the arguments you choose.")


def tool_offer(situation: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The task's tool as the API's `tools`: its arguments may take the values of the calls the
    task allows (the situation's `calls`)."""
    tool = situation.get("tool")
    if not isinstance(tool, dict) or not tool.get("calls"):
        return ()
    calls = tool["calls"]
    names = sorted({k for c in calls for k in c})
    properties = {k: {"type": "string", "enum": sorted({c[k] for c in calls if k in c})}
                  for k in names}
    return ({"type": "function", "function": {
        "name": tool["name"], "description": tool.get("description") or tool["name"],
        "parameters": {"type": "object", "properties": properties, "required": names,
                       "additionalProperties": False}}},)


def chosen_call(situation: dict[str, Any], tool_calls: Any) -> int | None:
    """The number (from 1) of the offered call the model made: the one its arguments agree
    with on most arguments (the first of equals; a model may mix the values offered); 0: it
    made none; None: a call of another tool, or one that agrees with no offered call on any
    argument (it fails closed)."""
    if not tool_calls:
        return 0
    tool = situation.get("tool") or {}
    call = tool_calls[0]
    if call.name != tool.get("name"):
        return None
    try:
        arguments = json.loads(call.arguments)
    except (ValueError, RecursionError):
        return None
    if not isinstance(arguments, dict):
        return None
    best, agreed = None, 0
    for number, offered in enumerate(tool.get("calls") or (), start=1):
        same = sum(1 for k, v in offered.items() if arguments.get(k) == v)
        if same > agreed:
            best, agreed = number, same
    return best


def messages(situation: dict[str, Any]) -> tuple[dict[str, str], ...]:
    """The prompt: who the agent is (system), then its situation as JSON (user)."""
    who = situation.get("you", {})
    system = SYSTEM.format(
        agent=who.get("id", "an agent"), seniority=who.get("seniority", ""),
        role=who.get("role", "member"), department=who.get("department", ""),
        company=who.get("company", "the company"), goal=who.get("goal", "finish your tasks well"))
    told = {k: v for k, v in situation.items() if k != "you"}
    if isinstance(told.get("tool"), dict):  # the calls themselves are offered as `tools`
        told["tool"] = {k: v for k, v in told["tool"].items() if k != "calls"}
    user = json.dumps(told, sort_keys=True, separators=(",", ":"))
    return ({"role": "system", "content": system}, {"role": "user", "content": user})
