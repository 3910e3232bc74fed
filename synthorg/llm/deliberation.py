"""One deliberation: an agent asks the model to evaluate its situation, revise its goal, plan
its next step and check that plan against its constraints, in one structured reply.

The agent's situation travels as the action's arguments (JSON, hashed into the ledger); the
reply's decision comes back packed in the action's value (`pack`/`unpack`), so the engine
keeps its numeric columns."""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
    if not content:
        return None
    try:
        return Deliberation.model_validate(json.loads(content))
    except (ValidationError, ValueError, TypeError, RecursionError):
        return None


def decided(d: Deliberation) -> tuple[PlanChoice, bool, float]:
    """The plan taken, rushed or not, and the confidence. A plan the model itself found
    outside its constraints is not carried out: the agent waits (fails closed)."""
    plan = PlanChoice[d.plan]
    if plan is PlanChoice.work and not d.within_constraints:
        plan = PlanChoice.wait
    return plan, d.revise == "rush", float(d.evaluate.confidence)


def pack(plan: PlanChoice, rush: bool, confidence: float) -> float:
    """4·plan + 2·rush + confidence (confidence in [0, 1]): one float, unpacked exactly."""
    return 4.0 * int(plan) + 2.0 * rush + min(max(confidence, 0.0), 1.0)


def unpack(values: Any) -> tuple[Any, Any, Any]:
    """Arrays of plan, rush and confidence from packed values (numpy in, numpy out)."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    plan = np.minimum(np.floor(v / 4.0), 3).astype(np.int8)
    rest = v - 4.0 * plan
    rush = rest >= 2.0
    return plan, rush, np.clip(rest - 2.0 * rush, 0.0, 1.0)


SYSTEM = (
    "You are {agent}, a {seniority} {role} in the {department} department of {company}. "
    "Your goal: {goal}. Each turn you decide what to do next on your current task. "
    "Evaluate how confident you are that you can do it well, decide whether to rush to "
    "meet the deadline, plan one step (work: make the task's tool call; ask_help: ask a "
    "colleague; escalate: ask a person; wait), and check that the plan respects your budget, "
    "your autonomy level and your role. Answer with JSON only, in the given schema.")


def messages(situation: dict[str, Any]) -> tuple[dict[str, str], ...]:
    """The prompt: who the agent is (system), then its situation as JSON (user)."""
    who = situation.get("you", {})
    system = SYSTEM.format(
        agent=who.get("id", "an agent"), seniority=who.get("seniority", ""),
        role=who.get("role", "member"), department=who.get("department", ""),
        company=who.get("company", "the company"), goal=who.get("goal", "finish your tasks well"))
    user = json.dumps({k: v for k, v in situation.items() if k != "you"}, sort_keys=True,
                      separators=(",", ":"))
    return ({"role": "system", "content": system}, {"role": "user", "content": user})
