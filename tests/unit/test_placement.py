"""Where departments are routed: at home by default, towards the faster groups when balanced."""

from __future__ import annotations

import numpy as np

import synthorg
from synthorg.org.directory import OrgDirectory
from synthorg.sim.backend import group_bounds
from synthorg.sim.group_host import StepTiming
from synthorg.sim.placement import BalancedPlacement, HomePlacement, home_groups
from tests.conftest import ENTERPRISE


def _setup():
    d = OrgDirectory.from_config(synthorg.load_config(ENTERPRISE))
    bounds = group_bounds(d.size, "auto", 2, min_agents=1)
    counts = np.full(len(d.dept_ids), 10)  # tasks routed per department in a tick
    return d, bounds, counts


def _timing(seconds: float, routing_per_task: float, routed: np.ndarray) -> StepTiming:
    return StepTiming(seconds, routed * routing_per_task, routed)


def test_home_placement_routes_each_department_at_its_heads_group():
    d, bounds, _ = _setup()
    route = HomePlacement(d, bounds).assign()
    for k, head in enumerate(d.dept_head):
        lo, hi = bounds[route[k]]
        assert lo <= head < hi
    assert set(route.tolist()) == {0, 1}  # the enterprise has heads in both groups


def test_balanced_placement_starts_at_home_and_moves_routing_to_the_faster_group():
    d, bounds, counts = _setup()
    placement = BalancedPlacement(d, bounds)
    home = home_groups(d, bounds)
    assert placement.assign().tolist() == home.tolist()
    for _ in range(5):  # group 0 steps take four times as long as group 1's
        placement.observe([_timing(0.040, 0.0001, np.where(home == 0, counts, 0)),
                           _timing(0.010, 0.0001, np.where(home == 1, counts, 0))])
    assert (placement.assign() == 1).all()


def test_balanced_placement_evens_out_two_equal_groups_and_ignores_one_slow_step():
    d, bounds, counts = _setup()
    placement = BalancedPlacement(d, bounds)
    for seconds in (0.02, 0.02, 0.5, 0.02, 0.02):  # one slow step (a flush) in group 0
        placement.observe([_timing(seconds, 0.0001, counts), _timing(0.014, 0.0001, counts * 0)])
    route = placement.assign()
    assert set(route.tolist()) == {0, 1}  # both groups route something
    assert len(route) == len(d.dept_ids)


def test_balanced_placement_leaves_departments_without_tasks_at_home():
    d, bounds, counts = _setup()
    placement = BalancedPlacement(d, bounds)
    home = home_groups(d, bounds)
    idle = np.zeros_like(counts)
    idle[0] = counts[0]  # only department 0 had tasks
    for _ in range(5):
        placement.observe([_timing(0.040, 0.0001, idle), _timing(0.010, 0.0, idle * 0)])
    route = placement.assign()
    assert route[0] == 1
    assert route[1:].tolist() == home[1:].tolist()
