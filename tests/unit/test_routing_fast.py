"""The shortlist-based routing strategies make exactly the choices of the plain rules: per task,
an argmin over all of the type's candidates, ties to the earlier position in the pool."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthorg.config import load_config
from synthorg.domain.records import TASK_DTYPE
from synthorg.org.directory import OrgDirectory
from synthorg.org.routing import Department, LoadBalanced, Pool, RoleBased
from synthorg.org.workload import WorkloadGenerator
from tests.conftest import ENTERPRISE, STARTUP


def plain_load_balanced(tasks: np.ndarray, pools: list[Pool | None], loads: np.ndarray) -> np.ndarray:
    """Least load - strength * 1e-3 over every candidate, per task."""
    assigned = np.full(len(tasks), -1, dtype=np.int32)
    load = loads.astype(np.float64)
    for i, ttype in enumerate(tasks["type"].tolist()):
        pool = pools[ttype]
        if pool is None or not len(pool[0]):
            continue
        cands, strength = pool
        agent = cands[int(np.argmin(load[cands] - strength * 1e-3))]  # argmin: first of equals
        assigned[i] = agent
        load[agent] += 1.0
    return assigned


def plain_role_based(tasks: np.ndarray, pools: list[Pool | None], loads: np.ndarray) -> np.ndarray:
    """Least |strength - difficulty - 0.1| + 0.05 * load over every candidate, per task."""
    assigned = np.full(len(tasks), -1, dtype=np.int32)
    load = loads.astype(np.float64)
    for i, (ttype, difficulty) in enumerate(zip(tasks["type"].tolist(),
                                               tasks["difficulty"].tolist(), strict=True)):
        pool = pools[ttype]
        if pool is None or not len(pool[0]):
            continue
        cands, strength = pool
        agent = cands[int(np.argmin(np.abs(strength - difficulty - 0.1) + 0.05 * load[cands]))]
        assigned[i] = agent
        load[agent] += 1.0
    return assigned


def check(tasks: np.ndarray, pools: list[Pool | None], loads: np.ndarray) -> None:
    before = loads.copy()
    for fast, plain in ((LoadBalanced(), plain_load_balanced), (RoleBased(), plain_role_based)):
        got = fast.assign(tasks, pools, loads)
        assert got.dtype == np.int32
        assert got.tolist() == plain(tasks, pools, loads).tolist(), type(fast).__name__
    assert loads.tobytes() == before.tobytes()  # the caller's loads are left alone


def make_tasks(types: list[int], difficulty: list[float]) -> np.ndarray:
    tasks = np.zeros(len(types), dtype=TASK_DTYPE)
    tasks["task"] = np.arange(len(types))
    tasks["type"] = types
    tasks["difficulty"] = difficulty
    return tasks


# Strengths from a small set give ties; the large ones make load - strength * 1e-3 tie across
# loads one apart; 0.0 and 1.0 are exactly as far from a difficulty of 0.4 (+ 0.1).
STRENGTHS = [0.0, 0.5, 0.58, 0.65, 0.7, 0.72, 1.0, 1000.0, 2000.0]
DIFFICULTIES = [0.3, 0.4, 0.5, 0.55, 0.6]


def random_case(rng: np.random.Generator) -> tuple[np.ndarray, list[Pool | None], np.ndarray]:
    n_agents = int(rng.integers(1, 700))
    n_types = int(rng.integers(1, 5))
    shared = rng.permutation(n_agents)  # types overlap heavily in who can take them
    levels = rng.choice(STRENGTHS, size=int(rng.integers(1, 5)))
    pools: list[Pool | None] = []
    for _ in range(n_types):
        kind = rng.choice(["none", "empty", "pool", "pool", "pool", "pool"])
        if kind == "none":
            pools.append(None)
            continue
        size = 0 if kind == "empty" else int(rng.integers(1, n_agents + 1))
        cands = (shared[:size] if rng.random() < 0.5 else rng.permutation(n_agents)[:size])
        if rng.random() < 0.5:
            cands = np.sort(cands)
        if size and rng.random() < 0.1:  # the same agent twice in a pool
            cands = np.concatenate([cands, cands[: int(rng.integers(1, size + 1))]])
        strength = (rng.choice(levels, size=len(cands)) if rng.random() < 0.8
                    else rng.uniform(0.0, 1.5, size=len(cands)))
        pools.append((cands.astype(np.int32), strength.astype(np.float64)))
    largest = max((len(p[0]) for p in pools if p is not None), default=0)
    n_tasks = int(rng.integers(0, min(600, 3 * largest + 20)))  # at times more than candidates
    types = rng.integers(0, n_types, n_tasks).tolist()
    difficulty = (rng.choice(DIFFICULTIES, size=n_tasks) if rng.random() < 0.5
                  else rng.uniform(0.2, 0.95, size=n_tasks))
    tasks = make_tasks(types, difficulty.tolist())
    kind = rng.choice(["int32", "int32", "int64", "halves", "huge"])
    if kind == "halves":  # not whole: RoleBased must not rely on its strength levels
        loads = rng.integers(0, 12, n_agents).astype(np.float64) / 2
    elif kind == "huge":
        loads = rng.integers(2**21, 2**21 + 3, n_agents).astype(np.int64)
    else:
        loads = rng.integers(0, int(rng.integers(1, 8)), n_agents).astype(kind)
    return tasks, pools, loads


@pytest.mark.parametrize("seed", range(150))
def test_matches_the_plain_rule_on_random_pools(seed):
    check(*random_case(np.random.default_rng(seed)))


@st.composite
def routing_inputs(draw):
    n_agents = draw(st.integers(1, 150))
    n_types = draw(st.integers(1, 4))
    levels = draw(st.lists(st.sampled_from(STRENGTHS), min_size=1, max_size=3))
    pools: list[Pool | None] = []
    for _ in range(n_types):
        if draw(st.booleans()) and draw(st.booleans()):
            pools.append(None if draw(st.booleans()) else
                         (np.zeros(0, np.int32), np.zeros(0, np.float64)))
            continue
        cands = draw(st.lists(st.integers(0, n_agents - 1), min_size=1, max_size=n_agents,
                              unique=True))
        strength = draw(st.lists(st.sampled_from(levels), min_size=len(cands),
                                 max_size=len(cands)))
        pools.append((np.array(cands, np.int32), np.array(strength, np.float64)))
    types = draw(st.lists(st.integers(0, n_types - 1), max_size=200))
    difficulty = draw(st.lists(st.sampled_from([*DIFFICULTIES, 2.0**21]) |
                               st.floats(0.0, 1.0, allow_nan=False),
                               min_size=len(types), max_size=len(types)))
    loads = np.array(draw(st.lists(st.integers(0, 6), min_size=n_agents, max_size=n_agents)),
                     dtype=np.int32)
    return make_tasks(types, difficulty), pools, loads


@settings(max_examples=300, deadline=None)
@given(routing_inputs())
def test_matches_the_plain_rule_hypothesis(inputs):
    check(*inputs)


def test_shortlist_widens_when_another_type_loads_its_agents():
    # type 0 shortlists two of ten idle agents (0 and 1) and takes agent 0; type 1 then takes
    # agents 1 to 8, so type 0's second task must look beyond its shortlist, to agent 9
    pool = (np.arange(10, dtype=np.int32), np.full(10, 0.5))
    tasks = make_tasks([0] + [1] * 8 + [0], [0.5] * 10)
    loads = np.zeros(10, dtype=np.int32)
    assert LoadBalanced().assign(tasks, [pool, pool], loads).tolist() == list(range(10))
    check(tasks, [pool, pool], loads)


def test_more_tasks_than_candidates():
    pool = (np.array([4, 2, 7], np.int32), np.array([0.6, 0.6, 0.7]))
    tasks = make_tasks([0] * 10, [0.5] * 10)
    loads = np.zeros(8, dtype=np.int32)
    got = LoadBalanced().assign(tasks, [pool], loads)
    assert got.tolist() == [7, 4, 2] * 3 + [7]
    check(tasks, [pool], loads)


def test_no_pool_or_no_tasks():
    loads = np.arange(5, dtype=np.int32)
    pools: list[Pool | None] = [None, (np.zeros(0, np.int32), np.zeros(0)),
                                (np.array([1, 3], np.int32), np.array([0.5, 0.5]))]
    tasks = make_tasks([0, 1, 2, 0, 2], [0.5] * 5)
    assert LoadBalanced().assign(tasks, pools, loads).tolist() == [-1, -1, 1, -1, 1]
    check(tasks, pools, loads)
    check(make_tasks([], []), pools, loads)


@pytest.mark.parametrize("template", [STARTUP, ENTERPRISE])
def test_departments_route_as_the_plain_rule(template):
    cfg = load_config(template)
    directory = OrgDirectory.from_config(cfg)
    gen = WorkloadGenerator(cfg.workload, directory, 3)
    tasks = np.concatenate([gen.arrivals(t, 0) for t in range(20)])
    rng = np.random.default_rng(0)
    for dept in range(len(directory.dept_ids)):
        mine = tasks[tasks["dept"] == dept]
        dep = Department(directory, dept)
        plain = (plain_load_balanced if directory.dept_routing[dept] == "load_balanced"
                 else plain_role_based)
        for loads in (np.zeros(directory.size, np.int32),
                      rng.integers(0, 6, directory.size).astype(np.int32)):
            messages, _, failed = dep.route(0, mine, loads)
            expected = plain(mine, dep._pools, loads)
            assert messages["dst"].tolist() == expected[expected >= 0].tolist()
            assert failed["task"].tolist() == mine["task"][expected < 0].tolist()


def test_role_based_equal_scores_go_to_the_earlier_position():
    # strengths 1.0 and 0.0 score the same at difficulty 0.4; the stronger agents come first
    pool = (np.arange(64, dtype=np.int32), np.repeat([1.0, 0.0], 32))
    tasks = make_tasks([0] * 3, [0.4] * 3)
    loads = np.zeros(64, dtype=np.int32)
    assert RoleBased().assign(tasks, [pool], loads).tolist() == [0, 1, 2]
    check(tasks, [pool], loads)


def test_role_based_loads_too_close_to_tell_apart():
    # 0.05 * 1e-300 vanishes next to the difficulty gap: the plain rule sees a tie and takes
    # the earlier agent even though it has the higher load
    pool = (np.arange(64, dtype=np.int32), np.full(64, 0.6))
    loads = np.zeros(64)
    loads[0] = 1e-300
    tasks = make_tasks([0], [0.5])
    assert RoleBased().assign(tasks, [pool], loads).tolist() == [0]
    check(tasks, [pool], loads)
