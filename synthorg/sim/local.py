"""The local backend: the same group hosts, called in one process."""

from __future__ import annotations

import numpy as np
import polars as pl

from synthorg.hr.approvals import promotion_approver
from synthorg.hr.departments import DepartmentDesk
from synthorg.hr.office import HrOffice, load_hr, local_departments, scores_of
from synthorg.hr.office import state_of as hr_state_of
from synthorg.ledger.ledger import DirectorySink, ShardTotals
from synthorg.memory.factory import build_memory
from synthorg.org.decisions import rows_of
from synthorg.secops.office import SecOpsOffice
from synthorg.sim.backend import RunPlan
from synthorg.sim.channels import Exchange
from synthorg.sim.group_host import GroupHost
from synthorg.sim.placement import HomePlacement


class LocalBackend:
    def __init__(self, plan: RunPlan) -> None:
        cfg, d, bounds = plan.config, plan.directory, plan.group_bounds
        sink = DirectorySink(plan.run_dir)
        self.office = SecOpsOffice(cfg, plan.key, d.agent_ids, plan.run_dir,  # owns security
                                   plan.approvals_record, plan.cassette)
        # long-term memory: one service, which the groups call in turn
        self.memory = (build_memory(cfg, d, plan.run_dir, 0, plan.key, plan.cassette)
                       if cfg.memory.enabled else None)
        recall = self.memory.exchange if self.memory is not None else None
        # careers: the HR office and the departments' desks, reviewing between ticks
        self.desks = [DepartmentDesk(cfg, k) for k in range(len(d.dept_ids))]
        self.hr = (HrOffice(cfg, d, plan.key, len(bounds), local_departments(self.desks),
                            promotion_approver(cfg, plan.key, d.agent_ids, plan.run_dir,
                                               plan.approvals_record))
                   if cfg.hr.enabled else None)
        self.groups = [GroupHost(cfg, d, plan.key, plan.seed, bounds, i, sink, self.office.decide,
                                 context=plan.executors, recall=recall, hr=self.hr)
                       for i in range(len(bounds))]
        self.exchange = Exchange.initial(bounds, len(d.dept_ids))
        self.placement = HomePlacement(d, bounds)  # one process: nothing to balance

    def tick(self, tick: int) -> None:
        x, route = self.exchange, self.placement.assign()
        stepped = [g.step(tick, route, x.inputs[i]) for i, g in enumerate(self.groups)]
        self.exchange = Exchange.gather(stepped)

    def settle(self) -> Exchange:
        return self.exchange

    def snapshot(self) -> list[dict[str, object]]:
        return [g.state_dict() for g in self.groups]

    def restore(self, groups: list[dict[str, object]], exchange: Exchange,
                secops: dict[str, int], memory: list[dict[str, object]],
                hr: dict[str, object]) -> None:
        for group, state in zip(self.groups, groups, strict=True):
            group.load_state(state)
        self.exchange = exchange
        self.office.restore(secops)
        if self.memory is not None:
            if len(memory) != 1:
                raise ValueError(f"{len(memory)} memory shards in the checkpoint, not 1")
            self.memory.load(memory[0])
        if self.hr is not None:
            load_hr(hr, self.hr, self.desks)

    def hr_state(self) -> dict[str, object]:
        return hr_state_of(self.hr, [d.state() for d in self.desks])

    def org_decisions(self) -> list[list[float]]:
        return rows_of(self.hr.timeline.decisions) if self.hr is not None else []

    def hr_scores(self) -> pl.DataFrame | None:
        return scores_of(self.hr)

    def memory_state(self) -> list[dict[str, object]]:
        return [self.memory.export()] if self.memory is not None else []

    def memory_facts(self) -> list[np.ndarray]:
        return [self.memory.facts_stats.copy()] if self.memory is not None else []

    def secops_state(self) -> dict[str, int]:
        return self.office.state()

    def dept_spent(self) -> np.ndarray:
        return self.exchange.dept_spent(self.groups[0].dept_spent)

    def shard_totals(self) -> list[ShardTotals]:
        return [g.totals() for g in self.groups]

    def agent_rows(self) -> list[dict[str, np.ndarray]]:
        return [g.group.agent_rows() for g in self.groups]

    def open_tasks(self) -> list[tuple[int, int]]:
        return [t for g in self.groups for t in g.group.open_tasks()]

    def close(self) -> None:
        for g in self.groups:
            g.close()
        self.office.close()
        if self.hr is not None:
            self.hr.approver.close()
        if self.memory is not None:
            self.memory.close()
