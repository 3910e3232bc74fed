"""Where departments are routed: at home by default, towards the faster groups when balanced."""

from __future__ import annotations

import numpy as np

import synthorg
from synthorg.domain.records import TASK_DTYPE
from synthorg.org.directory import OrgDirectory
from synthorg.sim.backend import group_bounds
from synthorg.sim.hosts import StepTiming
from synthorg.sim.placement import BalancedPlacement, HomePlacement, home_groups
from tests.conftest import ENTERPRISE


def _setup():
    d = OrgDirectory.from_config(synthorg.load_config(ENTERPRISE))
    bounds = group_bounds(d.size, "auto", 2, min_agents=1)
    arrivals = np.zeros(60, TASK_DTYPE)
    arrivals["task"] = np.arange(60)
    arrivals["dept"] = np.arange(60) % len(d.dept_ids)
    return d, bounds, arrivals


def _timing(seconds: float, routing_per_task: float, routed: np.ndarray) -> StepTiming:
    return StepTiming(seconds, routed * routing_per_task, routed)


def _depts(parts: list[np.ndarray]) -> list[set[int]]:
    return [set(p["dept"].tolist()) for p in parts]


def test_home_placement_routes_each_department_at_its_heads_group():
    d, bounds, arrivals = _setup()
    parts = HomePlacement(d, bounds).split(arrivals)
    home = home_groups(d, bounds)
    assert _depts(parts) == [set(np.flatnonzero(home == g).tolist()) for g in range(len(bounds))]
    for p in parts:  # arrival order kept
        assert (np.diff(p["task"]) > 0).all()


def test_balanced_placement_starts_at_home_and_moves_routing_to_the_faster_group():
    d, bounds, arrivals = _setup()
    placement = BalancedPlacement(d, bounds)
    assert _depts(placement.split(arrivals)) == _depts(HomePlacement(d, bounds).split(arrivals))
    counts = np.bincount(arrivals["dept"], minlength=len(d.dept_ids))
    home = HomePlacement(d, bounds).home
    for _ in range(5):  # group 0 steps take four times as long as group 1's
        placement.observe([_timing(0.040, 0.0001, np.where(home == 0, counts, 0)),
                           _timing(0.010, 0.0001, np.where(home == 1, counts, 0))])
    parts = placement.split(arrivals)
    assert len(parts[0]) == 0 and len(parts[1]) == len(arrivals)


def test_balanced_placement_evens_out_two_equal_groups_and_ignores_one_slow_step():
    d, bounds, arrivals = _setup()
    placement = BalancedPlacement(d, bounds)
    counts = np.bincount(arrivals["dept"], minlength=len(d.dept_ids))
    for seconds in (0.02, 0.02, 0.5, 0.02, 0.02):  # one slow step (a flush) in group 0
        placement.observe([_timing(seconds, 0.0001, counts), _timing(0.014, 0.0001, counts * 0)])
    parts = placement.split(arrivals)
    assert all(len(p) for p in parts)  # both groups route something
    assert sorted(np.concatenate(parts)["task"].tolist()) == arrivals["task"].tolist()
