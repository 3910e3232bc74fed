"""The loop's strategies are chosen in config and are what the groups call."""

from __future__ import annotations

import numpy as np
import pytest

import synthorg
from synthorg.engine.group import AgentGroup
from synthorg.errors import ConfigError
from synthorg.loop.deterministic import BudgetConstraint, NoConstraint, ThresholdPlanner
from synthorg.org.directory import OrgDirectory
from tests.conftest import STARTUP

# tool calls refused from the first dollar (the budget itself lasts the run)
BROKE = ["runtime.backend=local", "policies.budget.block_tools_at=0.0"]


def _group(overrides: list[str]) -> AgentGroup:
    cfg = synthorg.load_config(STARTUP, overrides)
    d = OrgDirectory.from_config(cfg)
    return AgentGroup(cfg, d, np.uint64(1), 0, d.size)


def test_the_group_calls_the_configured_strategies():
    assert isinstance(_group([]).strategies.constraints, BudgetConstraint)
    assert isinstance(_group([]).strategies.planner, ThresholdPlanner)
    assert isinstance(_group(["loop.constraints=none"]).strategies.constraints, NoConstraint)


def test_the_chosen_constraint_changes_what_agents_do(tmp_path):
    def run(extra: list[str]) -> synthorg.RunResult:
        cfg = synthorg.load_config(STARTUP, [*BROKE, *extra])
        return synthorg.Simulation(cfg, seed=1, out=tmp_path / str(len(extra))).run(ticks=60)

    enforced, watched = run([]), run(["loop.constraints=none"])
    blocked = enforced.events.filter(enforced.events["kind"] == "budget_blocked").height
    assert blocked > 0
    assert watched.events.filter(watched.events["kind"] == "budget_blocked").height == 0
    assert watched.summary.tool_calls > enforced.summary.tool_calls


@pytest.mark.parametrize("field", ["evaluator", "reviser", "planner", "constraints"])
def test_an_unknown_strategy_is_named(field):
    with pytest.raises(ConfigError, match=f"loop.{field}"):
        synthorg.load_config(STARTUP, [f"loop.{field}=oracle"])
