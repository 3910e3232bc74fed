"""The local backend: the same departments, groups, SecOps engine and ledger, in one process."""

from __future__ import annotations

import numpy as np

from synthorg.engine.group import AgentGroup
from synthorg.ledger.ledger import Ledger, LedgerTotals
from synthorg.org.routing import Department
from synthorg.secops.rules import RuleEngine
from synthorg.sim.backend import RunPlan, TickReport


class LocalBackend:
    def __init__(self, plan: RunPlan) -> None:
        cfg, d = plan.config, plan.directory
        self.departments = [Department(d, i) for i in range(len(d.dept_ids))]
        self.groups = [AgentGroup(cfg, d, plan.key, lo, hi) for lo, hi in plan.group_bounds]
        self.secops = RuleEngine(d, cfg.policies.security)
        self.ledger = Ledger(plan.run_dir, plan.sources)

    def tick(self, tick: int, arrivals: list[np.ndarray], inboxes: list[np.ndarray],
             loads: np.ndarray, dept_spent: np.ndarray) -> TickReport:
        routed = [dept.route(tick, tasks, loads) for dept, tasks in zip(self.departments, arrivals,
                                                                       strict=True)]
        stepped = []
        for group, inbox in zip(self.groups, inboxes, strict=True):
            out = group.step(tick, inbox, loads, dept_spent, self.secops)
            self.ledger.append(tick, out.events, out.results)
            stepped.append(out)
        return TickReport(
            dept_messages=[r[0] for r in routed],
            dept_events=[r[1] for r in routed],
            dept_failed=[r[2] for r in routed],
            group_messages=[s.messages for s in stepped],
            group_loads=[s.loads for s in stepped],
            group_spend=[s.spend for s in stepped],
        )

    def record(self, tick: int, events: np.ndarray, results: np.ndarray,
               created: np.ndarray) -> None:
        self.ledger.append(tick, events, results, created)

    def totals(self) -> LedgerTotals:
        return self.ledger.totals()

    def agent_rows(self) -> list[dict[str, np.ndarray]]:
        return [g.agent_rows() for g in self.groups]

    def open_task_ids(self) -> list[int]:
        return [t for g in self.groups for t in g.open_task_ids()]

    def snapshot(self) -> tuple[list[dict[str, object]], dict[str, object]]:
        return [g.state_dict() for g in self.groups], self.ledger.state()

    def restore(self, groups: list[dict[str, object]], ledger: dict[str, object]) -> None:
        for group, state in zip(self.groups, groups, strict=True):
            group.load_state(state)
        self.ledger.restore(ledger)

    def record_incident(self, tick: int, rows: np.ndarray) -> None:
        self.ledger.record_incident(tick, rows)

    def close(self) -> None:
        pass
