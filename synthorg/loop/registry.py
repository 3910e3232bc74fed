"""The loop's strategies by the names the config's `loop:` section uses."""

from __future__ import annotations

from dataclasses import dataclass

from synthorg.config.models import CompanyConfig, LoopSpec
from synthorg.loop.deterministic import (
    BudgetConstraint,
    DeadlineReviser,
    NoConstraint,
    SeededEvaluator,
    ThresholdPlanner,
)
from synthorg.loop.protocols import ConstraintChecker, Evaluator, Planner, Reviser
from synthorg.org.directory import OrgDirectory


@dataclass(frozen=True)
class Strategies:
    evaluator: Evaluator
    reviser: Reviser
    planner: Planner
    constraints: ConstraintChecker


def strategies_for(config: CompanyConfig, directory: OrgDirectory) -> Strategies:
    spec: LoopSpec = config.loop
    p = config.policies
    evaluators: dict[str, Evaluator] = {"seeded": SeededEvaluator(p)}
    revisers: dict[str, Reviser] = {"deadline": DeadlineReviser(p)}
    planners: dict[str, Planner] = {"threshold": ThresholdPlanner(p)}
    constraints: dict[str, ConstraintChecker] = {
        "budget": BudgetConstraint(p, directory.dept_budget_micro,
                                   directory.agent_budget_micro, directory.tool_cost_micro),
        "none": NoConstraint()}
    return Strategies(evaluators[spec.evaluator], revisers[spec.reviser], planners[spec.planner],
                      constraints[spec.constraints])
