"""`synthorg bench --careers`: one HR review of a 10,000-agent company over a 200-tick ledger
(goal: under 1 s), and megacorp's throughput with HR on against HR off (goal: at least 90 %)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from synthorg.bench import MEGACORP, _run
from synthorg.config.loader import load_config
from synthorg.domain.enums import EventKind, MessageKind, TaskStatus
from synthorg.domain.records import EVENT_DTYPE, RESULT_DTYPE, TASK_DTYPE
from synthorg.domain.rng import root_key
from synthorg.hr.departments import DepartmentDesk
from synthorg.hr.feed import Feed
from synthorg.hr.office import HrOffice, local_departments
from synthorg.org.directory import OrgDirectory


def synthetic_feed(d: OrgDirectory, ticks: int, tasks_per_agent_tick: float = 0.2,
                   seed: int = 0) -> Feed:
    """A ledger's worth of HR rows: tasks finished by every agent, delegations, help."""
    rng = np.random.default_rng(seed)
    agents = np.flatnonzero(d.active)
    n = int(len(agents) * ticks * tasks_per_agent_tick)
    results = np.zeros(n, dtype=RESULT_DTYPE)
    results["task"] = np.arange(n)
    results["agent"] = rng.choice(agents, n)
    results["finished"] = rng.integers(0, ticks, n)
    results["started"] = np.maximum(results["finished"] - rng.integers(1, 8, n), 0)
    results["status"] = np.where(rng.random(n) < 0.85, TaskStatus.completed, TaskStatus.failed)
    results["quality"] = np.clip(rng.normal(0.7, 0.15, n), 0, 1)
    results["cost_micro"] = rng.integers(1, 5_000_000, n)
    created = np.zeros(n, dtype=TASK_DTYPE)
    created["task"], created["deadline"] = results["task"], results["finished"] + 3
    m = n // 2
    events = np.zeros(m, dtype=EVENT_DTYPE)
    events["tick"] = rng.integers(0, ticks, m)
    events["actor"] = rng.choice(agents, m)
    events["seq"] = np.arange(m)
    kinds = np.array([EventKind.message_sent, EventKind.help_given, EventKind.help_declined,
                      EventKind.approval_granted], dtype=np.int8)
    events["kind"] = rng.choice(kinds, m)
    events["task"] = rng.integers(0, n, m)
    events["target"] = rng.choice(agents, m)
    events["value"] = float(MessageKind.delegate)
    loads = np.zeros(d.size, dtype=np.int64)
    loads[agents] = rng.integers(0, 4, len(agents))
    return Feed(results, created, events, loads, np.zeros(len(d.dept_ids), dtype=np.int64))


def review_speed(agents: int = 10_000, ticks: int = 200) -> dict[str, Any]:
    from synthorg.bench import scaled

    cfg = scaled(load_config(MEGACORP, ["hr.enabled=true"]), agents, "local")
    d = OrgDirectory.from_config(cfg)
    feed = synthetic_feed(d, ticks)
    desks = [DepartmentDesk(cfg, k) for k in range(len(d.dept_ids))]
    office = HrOffice(cfg, d, root_key(0), 1, local_departments(desks))
    office.take(ticks, 0, feed)
    t0 = time.perf_counter()
    decisions = office.decisions(ticks)
    seconds = time.perf_counter() - t0
    return {"bench": "hr_review", "agents": cfg.agent_count(), "ledger_ticks": ticks,
            "task_rows": len(feed.results), "event_rows": len(feed.events),
            "seconds": round(seconds, 3), "decisions": len(decisions), "goal_seconds": 1.0}


def megacorp_with_hr(ticks: int, backend: str, repeat: int = 2) -> dict[str, Any]:
    """Megacorp's throughput with HR off and on (best of `repeat` runs each)."""
    best = {}
    for on in (False, True):
        cfg = load_config(MEGACORP, [f"hr.enabled={str(on).lower()}",
                                     f"runtime.backend={backend}"])
        best[on] = max(_run(cfg, ticks)["agent_steps_per_second"] for _ in range(repeat))
    return {"bench": "megacorp_hr", "ticks": ticks, "backend": backend,
            "steps_per_second_hr_off": best[False], "steps_per_second_hr_on": best[True],
            "ratio": round(best[True] / best[False], 3), "goal_ratio": 0.9}
