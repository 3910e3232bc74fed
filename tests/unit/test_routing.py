"""Departments route arriving tasks to their agents; arrivals are seeded per tick."""

from __future__ import annotations

import numpy as np
import pytest

from synthorg.config import load_config
from synthorg.domain.enums import EventKind, FailReason, MessageKind, TaskStatus
from synthorg.domain.records import TASK_DTYPE, dept_actor
from synthorg.org.directory import OrgDirectory
from synthorg.org.routing import Department
from synthorg.org.workload import WorkloadGenerator
from tests.conftest import STARTUP

CFG = load_config(STARTUP)
DIR = OrgDirectory.from_config(CFG)
ENG, PRODUCT, OPS = 0, 1, 2


def _arrivals(seed: int, ticks: range) -> np.ndarray:
    gen = WorkloadGenerator(CFG.workload, DIR, seed)
    chunks, next_id = [], 0
    for t in ticks:
        rows = gen.arrivals(t, next_id)
        next_id += len(rows)
        chunks.append(rows)
    return np.concatenate(chunks)


TASKS = _arrivals(seed=11, ticks=range(60))


def _zero_loads() -> np.ndarray:
    return np.zeros(DIR.size, dtype=np.int32)


def test_directory_matches_the_template():
    assert DIR.size == 12 + 2  # the company's agents, then the slots of the scenario's hires
    assert DIR.active.sum() == 12
    assert DIR.dept_ids == ("engineering", "product", "operations")
    assert DIR.dept_routing == ("load_balanced", "role_based", "load_balanced")
    eng_types = [DIR.type_ids.index("feature"), DIR.type_ids.index("bugfix")]
    for t in eng_types:
        assert len(DIR.handlers[(ENG, t)]) == 6


@pytest.mark.parametrize("dept", [ENG, PRODUCT, OPS])
def test_every_task_assigned_exactly_once(dept):
    tasks = TASKS[TASKS["dept"] == dept]
    assert len(tasks) > 10
    messages, events, failed = Department(DIR, dept).route(5, tasks, _zero_loads())
    assert len(failed) == 0
    assert sorted(messages["t_task"].tolist()) == sorted(tasks["task"].tolist())
    assert len(np.unique(messages["t_task"])) == len(tasks)
    assert (messages["kind"] == MessageKind.assign).all()
    assert (messages["src"] == dept_actor(dept)).all()
    assert messages["seq"].tolist() == list(range(len(messages)))
    # the message carries the whole task
    by_id = {int(t["task"]): t for t in tasks}
    for m in messages:
        t = by_id[int(m["t_task"])]
        for name in TASK_DTYPE.names:
            assert m[f"t_{name}"] == t[name], name
    # one task_routed event per assignment, by the department, naming the assignee
    assert len(events) == len(tasks)
    assert (events["kind"] == EventKind.task_routed).all()
    assert (events["actor"] == dept_actor(dept)).all()
    assert (events["tick"] == 5).all()
    assert events["seq"].tolist() == list(range(len(events)))
    assert events["task"].tolist() == messages["t_task"].tolist()
    assert events["target"].tolist() == messages["dst"].tolist()


@pytest.mark.parametrize("dept", [ENG, PRODUCT, OPS])
def test_assignee_is_a_handler_of_the_department(dept):
    tasks = TASKS[TASKS["dept"] == dept]
    loads = np.random.default_rng(0).integers(0, 5, DIR.size).astype(np.int32)
    messages, _, _ = Department(DIR, dept).route(0, tasks, loads)
    for m in messages:
        dst, ttype = int(m["dst"]), int(m["t_type"])
        assert DIR.agent_dept[dst] == dept
        assert dst in DIR.handlers[(dept, ttype)].tolist()
        role = CFG.roles[int(DIR.agent_role[dst])]
        assert DIR.type_ids[ttype] in role.task_types


@pytest.mark.parametrize("dept", [ENG, PRODUCT, OPS])
def test_single_task_goes_to_the_idle_handler(dept):
    task = TASKS[TASKS["dept"] == dept][:1]
    handlers = DIR.handlers[(dept, int(task["type"][0]))]
    for idle in handlers.tolist():
        loads = np.full(DIR.size, 100, dtype=np.int32)
        loads[idle] = 0
        messages, _, failed = Department(DIR, dept).route(0, task, loads)
        assert len(failed) == 0
        assert messages["dst"].tolist() == [idle]


def test_load_balancing_spreads_tasks_evenly():
    assert DIR.dept_routing[ENG] == "load_balanced"
    tasks = TASKS[TASKS["dept"] == ENG]
    assert len(tasks) > 30
    messages, _, _ = Department(DIR, ENG).route(0, tasks, _zero_loads())
    handlers = np.union1d(*(DIR.handlers[(ENG, t)] for t in np.unique(tasks["type"])))
    assert len(handlers) == 6
    counts = np.array([(messages["dst"] == h).sum() for h in handlers])
    assert counts.sum() == len(tasks)
    assert counts.max() - counts.min() <= 1


def test_load_balancing_fills_the_least_loaded_first():
    tasks = TASKS[TASKS["dept"] == ENG][:6]
    handlers = DIR.handlers[(ENG, int(tasks["type"][0]))]
    loads = _zero_loads()
    loads[handlers] = np.arange(len(handlers)) * 10  # one agent much less loaded than the rest
    messages, _, _ = Department(DIR, ENG).route(0, tasks, loads)
    # every task fits on the least-loaded agent before it reaches the next one's load of 10
    assert set(messages["dst"].tolist()) == {int(handlers[0])}


def test_unroutable_tasks_fail():
    # engineering's task types have no handler in the product department
    tasks = TASKS[TASKS["dept"] == ENG][:4]
    messages, events, failed = Department(DIR, PRODUCT).route(9, tasks, _zero_loads())
    assert len(messages) == 0
    assert failed["task"].tolist() == tasks["task"].tolist()
    assert (failed["status"] == TaskStatus.failed).all()
    assert (failed["reason"] == FailReason.unroutable).all()
    assert (failed["finished"] == 9).all() and (failed["agent"] == -1).all()
    assert (events["kind"] == EventKind.task_failed).all()
    assert (events["target"] == FailReason.unroutable).all()


def test_routing_no_tasks():
    messages, events, failed = Department(DIR, ENG).route(0, np.zeros(0, TASK_DTYPE),
                                                          _zero_loads())
    assert len(messages) == len(events) == len(failed) == 0


def test_routing_is_deterministic():
    tasks = TASKS[TASKS["dept"] == PRODUCT]
    a = Department(DIR, PRODUCT).route(3, tasks, _zero_loads())
    b = Department(DIR, PRODUCT).route(3, tasks, _zero_loads())
    for x, y in zip(a, b, strict=True):
        assert x.tobytes() == y.tobytes()


# ---- workload ---------------------------------------------------------------------------------

def test_arrivals_are_well_formed():
    gen = WorkloadGenerator(CFG.workload, DIR, 1)
    rows = gen.arrivals(20, 100)
    assert rows.dtype == TASK_DTYPE
    assert rows["task"].tolist() == list(range(100, 100 + len(rows)))
    assert (rows["created"] == 20).all()
    assert (rows["deadline"] > 20).all()
    for r in rows:
        spec = CFG.workload.task_types[int(r["type"])]
        assert DIR.dept_ids[int(r["dept"])] == spec.department
        assert DIR.skill_ids[int(r["skill"])] == spec.skill
        assert DIR.tool_ids[int(r["tool"])] == spec.tool
        assert spec.difficulty.low <= r["difficulty"] <= spec.difficulty.high
        assert spec.effort.low <= r["effort"] <= spec.effort.high
        lo, hi = spec.deadline_ticks.low, spec.deadline_ticks.high
        assert lo <= r["deadline"] - 20 <= hi


def test_arrivals_deterministic_per_seed_and_tick():
    a = WorkloadGenerator(CFG.workload, DIR, 5)
    b = WorkloadGenerator(CFG.workload, DIR, 5)
    for tick in (0, 1, 17, 1000):
        x, y = a.arrivals(tick, 0), b.arrivals(tick, 0)
        assert x.tobytes() == y.tobytes()
    # order of calls does not matter: tick 17 is the same after other ticks were drawn
    assert a.arrivals(17, 0).tobytes() == WorkloadGenerator(CFG.workload, DIR, 5).arrivals(
        17, 0).tobytes()


def test_arrivals_differ_between_seeds():
    a = _arrivals(seed=1, ticks=range(30))
    b = _arrivals(seed=2, ticks=range(30))
    assert a.tobytes() != b.tobytes()


def test_arrival_rates_match_the_config():
    ticks = 2000
    rows = _arrivals(seed=0, ticks=range(ticks))
    for t, spec in enumerate(CFG.workload.task_types):
        n = int((rows["type"] == t).sum())
        expected = spec.rate * ticks
        assert abs(n - expected) < 5 * np.sqrt(expected) + 1, spec.name


def _arrivals_as_first_drawn(tick: int, seed: int) -> list[tuple[int, float, float, int, int]]:
    """The workload stream as synthorg first drew it (priorities by `Generator.choice`): a
    seed's tasks must not change between versions, or old runs no longer replay."""
    from synthorg.domain.enums import Priority
    from synthorg.domain.rng import workload_generator

    rng = workload_generator(seed, tick)
    out = []
    for t, tt in enumerate(CFG.workload.task_types):
        n = int(rng.poisson(tt.rate))
        if n == 0:
            continue
        difficulty = rng.uniform(tt.difficulty.low, tt.difficulty.high, n)
        effort = rng.uniform(tt.effort.low, tt.effort.high, n)
        weights = np.array([tt.priority.get(p.name, 0.0) for p in Priority])
        priority = rng.choice(len(Priority), size=n, p=weights / weights.sum())
        lo = int(np.ceil(tt.deadline_ticks.low))
        hi = max(lo, int(np.floor(tt.deadline_ticks.high)))
        deadline = tick + rng.integers(lo, hi + 1, n)
        out += list(zip([t] * n, difficulty.tolist(), effort.tolist(), priority.tolist(),
                        deadline.tolist(), strict=True))
    return out


@pytest.mark.parametrize("seed", [0, 11, 2**40 + 3])
def test_each_seed_draws_the_same_tasks_as_it_always_did(seed):
    gen = WorkloadGenerator(CFG.workload, DIR, seed)
    for tick in range(40):
        rows = gen.arrivals(tick, 0)
        got = list(zip(rows["type"].tolist(), rows["difficulty"].tolist(),
                       rows["effort"].tolist(), rows["priority"].tolist(),
                       rows["deadline"].tolist(), strict=True))
        assert got == _arrivals_as_first_drawn(tick, seed)
