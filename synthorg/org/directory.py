"""The static org chart as arrays, built once from the config and shared by every actor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import Autonomy, RiskTier, Seniority

# Competence added by seniority: seniors do harder work better.
SENIORITY_BONUS = np.array([0.0, 0.08, 0.15, 0.2, 0.22], dtype=np.float64)
MICRO = 1_000_000
HELPER_CANDIDATES = 3


def to_micro(usd: float) -> int:
    return round(usd * MICRO)


@dataclass(frozen=True, eq=False)
class OrgDirectory:
    agent_ids: tuple[str, ...]
    dept_ids: tuple[str, ...]
    role_ids: tuple[str, ...]
    skill_ids: tuple[str, ...]
    tool_ids: tuple[str, ...]
    type_ids: tuple[str, ...]
    agent_role: np.ndarray  # int32 [n]
    agent_dept: np.ndarray  # int32 [n]
    seniority: np.ndarray  # int8 [n]
    autonomy: np.ndarray  # int8 [n]
    skills: np.ndarray  # float64 [n, n_skills], initial levels
    salary_micro: np.ndarray  # int64 [n]
    dept_head: np.ndarray  # int32 [n_depts]
    dept_budget_micro: np.ndarray  # int64 [n_depts]
    dept_routing: tuple[str, ...]
    dept_members: tuple[np.ndarray, ...]
    handlers: dict[tuple[int, int], np.ndarray]  # (dept, type) -> agent indices
    helpers: np.ndarray  # int32 [n_depts, n_skills, HELPER_CANDIDATES], -1 = none
    tool_risk: np.ndarray  # int8 [n_tools]
    tool_destructive: np.ndarray  # bool [n_tools]
    tool_cost_micro: np.ndarray  # int64 [n_tools]
    type_dept: np.ndarray  # int32 [n_types]
    type_skill: np.ndarray  # int32 [n_types]
    type_tool: np.ndarray  # int32 [n_types]

    @property
    def size(self) -> int:
        return len(self.agent_ids)

    @classmethod
    def from_config(cls, cfg: CompanyConfig) -> OrgDirectory:
        dept_ids = tuple(d.id for d in cfg.departments)
        role_ids = tuple(r.id for r in cfg.roles)
        type_ids = tuple(t.name for t in cfg.workload.task_types)
        tool_ids = tuple(t.name for t in cfg.tools)
        skill_ids = tuple(sorted(
            {s for r in cfg.roles for s in r.skills}
            | {s for a in cfg.agents for s in a.skills}
            | {t.skill for t in cfg.workload.task_types}
        ))
        dept_of = {d: i for i, d in enumerate(dept_ids)}
        role_of = {r: i for i, r in enumerate(role_ids)}
        skill_of = {s: i for i, s in enumerate(skill_ids)}
        salaries: dict[str, float] = {
            str(k): v for k, v in cfg.policies.budget.salary_usd_per_tick.items()}

        def salary_of(level: str) -> float:
            return salaries.get(level, 0.0)

        ids: list[str] = []
        role, dept, senior, auton = [], [], [], []
        skill_rows: list[np.ndarray] = []
        for spec in cfg.agents:
            dept_spec = cfg.departments[dept_of[spec.department]]
            autonomy = spec.autonomy or dept_spec.autonomy or cfg.company.autonomy
            base = np.zeros(len(skill_ids))
            for name, level in cfg.roles[role_of[spec.role]].skills.items():
                base[skill_of[name]] = level
            for name, level in spec.skills.items():
                base[skill_of[name]] = level
            for k, aid in enumerate(spec.expanded_ids()):
                ids.append(aid)
                role.append(role_of[spec.role])
                dept.append(dept_of[spec.department])
                senior.append(int(Seniority[spec.seniority_of(k)]))
                auton.append(int(Autonomy[autonomy]))
                skill_rows.append(base)
        n = len(ids)
        agent_dept = np.array(dept, dtype=np.int32)
        seniority = np.array(senior, dtype=np.int8)
        skills = np.array(skill_rows, dtype=np.float64).reshape(n, len(skill_ids))
        members = tuple(np.nonzero(agent_dept == d)[0].astype(np.int32) for d in range(len(dept_ids)))

        index_of = {a: i for i, a in enumerate(ids)}
        heads = []
        for d, spec_d in enumerate(cfg.departments):
            if spec_d.head is not None:
                heads.append(index_of[spec_d.head])
            elif len(members[d]):
                # the most senior member, first in declaration order
                heads.append(int(members[d][np.argmax(seniority[members[d]])]))
            else:
                heads.append(-1)

        agent_role = np.array(role, dtype=np.int32)
        role_types = [set(r.task_types) for r in cfg.roles]
        handlers = {}
        for t, tt in enumerate(cfg.workload.task_types):
            d = dept_of[tt.department]
            ok = [a for a in members[d] if tt.name in role_types[agent_role[a]]]
            handlers[(d, t)] = np.array(ok, dtype=np.int32)

        strength = skills + SENIORITY_BONUS[seniority][:, None]
        helpers = np.full((len(dept_ids), len(skill_ids), HELPER_CANDIDATES), -1, dtype=np.int32)
        for d in range(len(dept_ids)):
            m = members[d]
            for s in range(len(skill_ids)):
                # strongest first; ties to the lower index (stable sort)
                order = m[np.argsort(-strength[m, s], kind="stable")][:HELPER_CANDIDATES]
                helpers[d, s, : len(order)] = order

        budget = cfg.company.budget_usd
        return cls(
            agent_ids=tuple(ids),
            dept_ids=dept_ids,
            role_ids=role_ids,
            skill_ids=skill_ids,
            tool_ids=tool_ids,
            type_ids=type_ids,
            agent_role=agent_role,
            agent_dept=agent_dept,
            seniority=seniority,
            autonomy=np.array(auton, dtype=np.int8),
            skills=skills,
            salary_micro=np.array(
                [to_micro(salary_of(Seniority(s).name)) for s in senior], dtype=np.int64
            ),
            dept_head=np.array(heads, dtype=np.int32),
            dept_budget_micro=np.array(
                [to_micro(budget * d.budget_share) for d in cfg.departments], dtype=np.int64
            ),
            dept_routing=tuple(d.routing for d in cfg.departments),
            dept_members=members,
            handlers=handlers,
            helpers=helpers,
            tool_risk=np.array([int(RiskTier[t.risk]) for t in cfg.tools], dtype=np.int8),
            tool_destructive=np.array([t.destructive for t in cfg.tools], dtype=bool),
            tool_cost_micro=np.array([to_micro(t.cost_usd) for t in cfg.tools], dtype=np.int64),
            type_dept=np.array(
                [dept_of[t.department] for t in cfg.workload.task_types], dtype=np.int32
            ),
            type_skill=np.array(
                [skill_of[t.skill] for t in cfg.workload.task_types], dtype=np.int32
            ),
            type_tool=np.array(
                [tool_ids.index(t.tool) for t in cfg.workload.task_types], dtype=np.int32
            ),
        )
