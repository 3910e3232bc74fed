"""Deterministic strategies: seeded, no LLM. Outcomes depend on skill, seniority, difficulty,
load and help, so the organisation behaves like one: overloaded agents lose confidence,
seniors take on harder work, help raises competence but costs a tick on both sides."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from synthorg.config.models import Policies
from synthorg.domain.decision import decide_many
from synthorg.domain.enums import ActionKind, BudgetRule, DecisionType, Priority
from synthorg.domain.rng import Stream
from synthorg.loop.protocols import Evaluation, Plan, Spending, WorkBatch
from synthorg.org.directory import strength

RUSH_SPEEDUP = 1.3
RUSH_QUALITY_COST = 0.1
WAIT_CONFIDENCE_GAIN = 0.08


@dataclass(frozen=True)
class SeededEvaluator:
    policies: Policies

    def evaluate(self, batch: WorkBatch) -> Evaluation:
        competence = (
            strength(batch.skill, batch.seniority) + batch.help_bonus + batch.guidance
            + batch.experience
        )
        noise = batch.draw(Stream.confidence) - 0.5
        load = np.minimum(batch.queue_len, 10) * self.policies.work.load_penalty
        confidence = np.clip(
            0.5 + (competence - batch.tasks["difficulty"]) + 0.3 * noise - load
            + WAIT_CONFIDENCE_GAIN * batch.wait_streak,
            0.0, 1.0,
        )
        rate = (0.5 + competence) * np.where(batch.rushed, RUSH_SPEEDUP, 1.0)
        remaining = batch.tasks["effort"] - batch.progress
        slack = (batch.tasks["deadline"] - batch.tick) - remaining / rate
        return Evaluation(competence=competence, confidence=confidence, rate=rate, slack=slack)


@dataclass(frozen=True)
class DeadlineReviser:
    """Near the deadline, replace the goal by a rushed one: faster, lower quality."""

    policies: Policies

    def revise(self, batch: WorkBatch, evaluation: Evaluation) -> np.ndarray:
        return ~batch.rushed & (evaluation.slack < self.policies.work.rush_slack_ticks)


@dataclass(frozen=True)
class ThresholdPlanner:
    policies: Policies

    def plan(self, batch: WorkBatch, evaluation: Evaluation) -> Plan:
        p = self.policies
        critical = batch.tasks["priority"] == Priority.critical.value
        decision = decide_many(evaluation.confidence, critical, p.decision)
        action = np.full(len(batch), ActionKind.call_tool, dtype=np.int8)
        helper = np.full(len(batch), -1, dtype=np.int32)
        would_ask = np.nonzero((decision == DecisionType.investigate.value)
                               & (batch.asks < p.collaboration.max_help_requests_per_task))[0]
        helper[would_ask] = batch.helpers(would_ask)
        action[helper >= 0] = ActionKind.send_message
        action[decision == DecisionType.wait.value] = ActionKind.none
        action[decision == DecisionType.escalate.value] = ActionKind.ask_human
        action[batch.progress >= batch.tasks["effort"]] = ActionKind.finish
        overdue = batch.tick > batch.tasks["deadline"] + p.work.deadline_grace_ticks
        action[overdue & (action != ActionKind.finish.value)] = ActionKind.fail
        return Plan(action=action, decision=decision, helper=helper)


@dataclass(frozen=True)
class BudgetConstraint:
    """A department's tool calls stop at `block_tools_at` of its budget for the period; an
    agent with a budget of its own makes no call that would take it past that budget."""

    policies: Policies
    dept_budget_micro: np.ndarray  # per department
    agent_budget_micro: np.ndarray  # per agent slot, -1 = none
    tool_cost_micro: np.ndarray

    def blocked(self, batch: WorkBatch, plan: Plan, spent: Spending) -> np.ndarray:
        rule = np.zeros(len(batch), dtype=np.int8)
        budget = self.policies.budget
        if not budget.enforce:
            return rule
        calls = plan.action == ActionKind.call_tool.value
        dept_over = (spent.dept[batch.dept]
                     >= budget.block_tools_at * self.dept_budget_micro[batch.dept])
        rule[calls & dept_over] = BudgetRule.department_budget
        if self.agents_have_budgets:
            own = self.agent_budget_micro[batch.agents]
            cost = self.tool_cost_micro[batch.tasks["tool"]]
            over = (own >= 0) & (spent.of_agents(batch.agents) + cost > own)
            rule[calls & ~dept_over & over] = BudgetRule.agent_budget
        return rule

    @cached_property
    def agents_have_budgets(self) -> bool:
        return bool((self.agent_budget_micro >= 0).any())


@dataclass(frozen=True)
class NoConstraint:
    """Nothing blocks a planned action (budgets are only watched)."""

    def blocked(self, batch: WorkBatch, plan: Plan, spent: Spending) -> np.ndarray:
        return np.zeros(len(batch), dtype=np.int8)


def task_quality(batch: WorkBatch, evaluation: Evaluation) -> np.ndarray:
    """Quality of one tick of work, in [0, 1]."""
    noise = batch.draw(Stream.quality) - 0.5
    q = (0.35 + 0.6 * evaluation.competence - 0.3 * batch.tasks["difficulty"] + 0.1 * noise
         - RUSH_QUALITY_COST * batch.rushed)
    return np.clip(q, 0.0, 1.0)
