"""The loop's strategies by the names the config's `loop:` section uses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synthorg.config.models import CompanyConfig, LoopSpec
from synthorg.loop.deterministic import (
    BudgetConstraint,
    DeadlineReviser,
    NoConstraint,
    SeededEvaluator,
    ThresholdPlanner,
)
from synthorg.loop.protocols import ConstraintChecker, Evaluator, Planner, Reviser


@dataclass(frozen=True)
class Strategies:
    evaluator: Evaluator
    reviser: Reviser
    planner: Planner
    constraints: ConstraintChecker


def strategies_for(config: CompanyConfig, dept_budget_micro: np.ndarray) -> Strategies:
    spec: LoopSpec = config.loop
    p = config.policies
    evaluators: dict[str, Evaluator] = {"seeded": SeededEvaluator(p)}
    revisers: dict[str, Reviser] = {"deadline": DeadlineReviser(p)}
    planners: dict[str, Planner] = {"threshold": ThresholdPlanner(p)}
    constraints: dict[str, ConstraintChecker] = {
        "budget": BudgetConstraint(p, dept_budget_micro), "none": NoConstraint()}
    return Strategies(evaluators[spec.evaluator], revisers[spec.reviser], planners[spec.planner],
                      constraints[spec.constraints])
