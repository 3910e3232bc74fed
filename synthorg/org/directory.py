"""The org chart as arrays: one version of it, shared by every actor.

Agents live in slots with stable ids, never reused: the company's agents first, then every
hire of the scenario. A version says who is in (`active`), where and at what level; the
lookup tables derived from it (members, handlers, helpers, heads, salaries) are rebuilt for
each version (`OrgDirectory.revised`). Versions change only at tick boundaries (org/timeline.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

import numpy as np

from synthorg.actions.executors import APPROVALS, LLM
from synthorg.config.hr import HrSpec
from synthorg.config.models import CompanyConfig, SecurityPolicy
from synthorg.config.scenario import Hire
from synthorg.domain.enums import Autonomy, ModelTier, RiskTier, Seniority

# Competence added by seniority: seniors do harder work better.
SENIORITY_BONUS = np.array([0.0, 0.08, 0.15, 0.2, 0.22], dtype=np.float64)
MICRO = 1_000_000
HELPER_CANDIDATES = 3
NEVER = -1  # in `joined` / `left`: not (yet)
HR_HIRE_PREFIX = "hire-"


def held_autonomy(policy: SecurityPolicy, asked: str, seniority: str) -> int:
    """The autonomy an agent of `seniority` holds when `asked` for one: no more than its
    seniority's ceiling (policies.security.autonomy_cap)."""
    ceiling = policy.autonomy_cap.get(seniority, "full")  # type: ignore[call-overload]
    return min(int(Autonomy[asked]), int(Autonomy[ceiling]))


def hr_hire_ids(cfg: CompanyConfig) -> list[str]:
    """The ids of the slots kept for HR's hires (hr.hiring.max_hires)."""
    return [f"{HR_HIRE_PREFIX}{i:04d}" for i in range(1, cfg.hr.reserved_slots() + 1)]


def model_tier_of(hr: HrSpec, level: int) -> int:
    """The ModelTier agents of seniority `level` work with (hr.model_tiers)."""
    return int(ModelTier[hr.model_tiers[Seniority(level).name]])  # type: ignore[index]


def strength(skill: np.ndarray, seniority: np.ndarray) -> np.ndarray:
    """How strong an agent is at a skill: its level plus what its seniority adds."""
    return skill + SENIORITY_BONUS[seniority]


def to_micro(usd: float) -> int:
    return round(usd * MICRO)


@dataclass(frozen=True, eq=False)
class OrgDirectory:
    version: int
    agent_ids: tuple[str, ...]
    dept_ids: tuple[str, ...]
    role_ids: tuple[str, ...]
    skill_ids: tuple[str, ...]
    tool_ids: tuple[str, ...]
    type_ids: tuple[str, ...]
    executor_ids: tuple[str, ...]
    # per slot
    agent_role: np.ndarray  # int32 [n]
    agent_dept: np.ndarray  # int32 [n]
    seniority: np.ndarray  # int8 [n]
    autonomy: np.ndarray  # int8 [n]
    skills: np.ndarray  # float64 [n, n_skills], levels on joining
    model_tier: np.ndarray  # int8 [n]: ModelTier, following seniority at task boundaries
    active: np.ndarray  # bool [n]: in the org and at work this version
    joined: np.ndarray  # int32 [n]: tick joined (0 for the company's agents), NEVER
    left: np.ndarray  # int32 [n]: tick fired, NEVER
    # fixed by the config
    role_types: np.ndarray  # bool [n_roles, n_types]: which task types a role handles
    configured_head: np.ndarray  # int32 [n_depts], -1 = none configured
    level_salary_micro: np.ndarray  # int64 per seniority level
    dept_budget_micro: np.ndarray  # int64 [n_depts]
    agent_budget_micro: np.ndarray  # int64 [n]: an agent's own budget per period, -1 = none
    dept_routing: tuple[str, ...]
    heads_help: bool  # whether department heads are among the colleagues asked for help
    tool_risk: np.ndarray  # int8 [n_tools]
    tool_destructive: np.ndarray  # bool [n_tools]
    tool_cost_micro: np.ndarray  # int64 [n_tools]
    tool_executor: np.ndarray  # int32 [n_tools], -1 = simulated in-process
    type_dept: np.ndarray  # int32 [n_types]
    type_skill: np.ndarray  # int32 [n_types]
    type_tool: np.ndarray  # int32 [n_types]
    # derived from the above, for this version
    salary_micro: np.ndarray = dataclasses.field(init=False)  # int64 [n]
    dept_head: np.ndarray = dataclasses.field(init=False)  # int32 [n_depts], -1 = none
    dept_members: tuple[np.ndarray, ...] = dataclasses.field(init=False)  # active only
    handlers: dict[tuple[int, int], np.ndarray] = dataclasses.field(init=False)  # (dept, type)
    helpers: np.ndarray = dataclasses.field(init=False)  # int32 [n_depts, n_skills, 3], -1

    def __post_init__(self) -> None:
        for name, value in _derived(self).items():
            object.__setattr__(self, name, value)

    @property
    def size(self) -> int:
        return len(self.agent_ids)

    def headcount(self) -> int:
        """Agents in the org, at work or away (joined and not fired)."""
        return int(((self.joined != NEVER) & (self.left == NEVER)).sum())

    def digest(self) -> str:
        """Identifies this version's org chart (who is where, at what level) across processes."""
        h = hashlib.sha256(repr(self.agent_ids).encode())
        for name in ("agent_role", "agent_dept", "seniority", "autonomy", "active", "joined",
                     "left", "model_tier"):
            h.update(np.ascontiguousarray(getattr(self, name)).tobytes())
        return h.hexdigest()[:16]

    def with_skills(self, skills: np.ndarray) -> OrgDirectory:
        """This version with other skill levels (a restore: those of the checkpoint)."""
        skills = np.asarray(skills, dtype=np.float64).reshape(self.skills.shape)
        return dataclasses.replace(self, skills=skills.copy())

    def revised(self, **slots: np.ndarray) -> OrgDirectory:
        """The next version, with the given per-slot arrays replaced; tables rebuilt."""
        return dataclasses.replace(self, version=self.version + 1, **slots)  # type: ignore[arg-type]

    @classmethod
    def from_config(cls, cfg: CompanyConfig) -> OrgDirectory:
        """Version 0: the company's agents at work, the scenario's hires in slots after them."""
        dept_ids = tuple(d.id for d in cfg.departments)
        role_ids = tuple(r.id for r in cfg.roles)
        type_ids = tuple(t.name for t in cfg.workload.task_types)
        tool_ids = tuple(t.name for t in cfg.tools)
        # the config's executors, the model's deliberations (llm), then the SecOps office's
        # approvals, always last (engine/group.py)
        executor_ids = (*sorted(cfg.executors), *((LLM,) if cfg.llm.enabled else ()), APPROVALS)
        hires = [e for e in cfg.scenario if isinstance(e, Hire)]
        skill_ids = tuple(sorted(
            {s for r in cfg.roles for s in r.skills}
            | {s for a in cfg.agents for s in a.skills}
            | {s for h in hires for s in h.skills}
            | {t.skill for t in cfg.workload.task_types}
        ))
        dept_of = {d: i for i, d in enumerate(dept_ids)}
        role_of = {r: i for i, r in enumerate(role_ids)}
        skill_of = {s: i for i, s in enumerate(skill_ids)}

        ids: list[str] = []
        role, dept, senior, auton, skill_rows, present = [], [], [], [], [], []
        own_budget: list[int] = []
        default_budget = cfg.policies.budget.agent_usd

        def add(aid: str, role_id: str, dept_id: str, level: str, autonomy: str | None,
                skills: dict[str, float], is_in: bool, budget_usd: float | None = None
                ) -> None:
            dept_spec = cfg.departments[dept_of[dept_id]]
            base = np.zeros(len(skill_ids))
            for name, value in {**cfg.roles[role_of[role_id]].skills, **skills}.items():
                base[skill_of[name]] = value
            ids.append(aid)
            role.append(role_of[role_id])
            dept.append(dept_of[dept_id])
            senior.append(int(Seniority[level]))
            auton.append(held_autonomy(cfg.policies.security,
                                       autonomy or dept_spec.autonomy or cfg.company.autonomy,
                                       level))
            skill_rows.append(base)
            present.append(is_in)
            usd = budget_usd if budget_usd is not None else default_budget
            own_budget.append(-1 if usd is None else to_micro(usd))

        for spec in cfg.agents:
            for k, aid in enumerate(spec.expanded_ids()):
                add(aid, spec.role, spec.department, spec.seniority_of(k), spec.autonomy,
                    spec.skills, True, spec.budget_usd)
        for h in hires:
            for aid in h.expanded_ids():
                add(aid, h.role, h.department, h.seniority, h.autonomy, h.skills, False)
        for aid in hr_hire_ids(cfg):  # what they are is decided when HR hires them
            add(aid, role_ids[0], dept_ids[0], "junior", None, {}, False)
        n = len(ids)
        index_of = {a: i for i, a in enumerate(ids)}
        role_types = np.zeros((len(role_ids), len(type_ids)), dtype=bool)
        type_of = {t: i for i, t in enumerate(type_ids)}
        for r, spec_r in enumerate(cfg.roles):
            role_types[r, [type_of[t] for t in spec_r.task_types]] = True
        salaries = cfg.policies.budget.salary_usd_per_tick
        budget = cfg.company.budget_usd
        executor_of = {e: i for i, e in enumerate(executor_ids)}
        return cls(
            version=0,
            agent_ids=tuple(ids),
            dept_ids=dept_ids,
            role_ids=role_ids,
            skill_ids=skill_ids,
            tool_ids=tool_ids,
            type_ids=type_ids,
            executor_ids=executor_ids,
            agent_role=np.array(role, dtype=np.int32),
            agent_dept=np.array(dept, dtype=np.int32),
            seniority=np.array(senior, dtype=np.int8),
            autonomy=np.array(auton, dtype=np.int8),
            skills=np.array(skill_rows, dtype=np.float64).reshape(n, len(skill_ids)),
            model_tier=np.array([model_tier_of(cfg.hr, s) for s in senior], dtype=np.int8),
            active=np.array(present, dtype=bool),
            joined=np.where(np.array(present, dtype=bool), 0, NEVER).astype(np.int32),
            left=np.full(n, NEVER, dtype=np.int32),
            role_types=role_types,
            configured_head=np.array([index_of[d.head] if d.head is not None else -1
                                      for d in cfg.departments], dtype=np.int32),
            level_salary_micro=np.array([to_micro(salaries.get(s.name, 0.0))  # type: ignore[call-overload]
                                         for s in Seniority], dtype=np.int64),
            dept_budget_micro=np.array(
                [to_micro(budget * d.budget_share) for d in cfg.departments], dtype=np.int64),
            agent_budget_micro=np.array(own_budget, dtype=np.int64),
            dept_routing=tuple(d.routing for d in cfg.departments),
            heads_help=cfg.policies.collaboration.heads_help,
            tool_risk=np.array([int(RiskTier[t.risk]) for t in cfg.tools], dtype=np.int8),
            tool_destructive=np.array([t.destructive for t in cfg.tools], dtype=bool),
            tool_cost_micro=np.array([to_micro(t.cost_usd) for t in cfg.tools], dtype=np.int64),
            tool_executor=np.array([executor_of[t.executor] if t.executor else -1
                                    for t in cfg.tools], dtype=np.int32),
            type_dept=np.array([dept_of[t.department] for t in cfg.workload.task_types],
                               dtype=np.int32),
            type_skill=np.array([skill_of[t.skill] for t in cfg.workload.task_types],
                                dtype=np.int32),
            type_tool=np.array([tool_ids.index(t.tool) for t in cfg.workload.task_types],
                               dtype=np.int32),
        )


def _derived(d: OrgDirectory) -> dict[str, object]:
    """The lookup tables of one version."""
    n_depts = len(d.dept_ids)
    members = tuple(np.flatnonzero(d.active & (d.agent_dept == k)).astype(np.int32)
                    for k in range(n_depts))
    heads = []
    for k in range(n_depts):
        configured = int(d.configured_head[k])
        if configured >= 0 and d.active[configured] and d.agent_dept[configured] == k:
            heads.append(configured)
        elif len(members[k]):
            # the most senior member, first in slot order
            heads.append(int(members[k][np.argmax(d.seniority[members[k]])]))
        else:
            heads.append(-1)
    handlers = {}
    for t in range(len(d.type_ids)):
        k = int(d.type_dept[t])
        m = members[k]
        handlers[(k, t)] = m[d.role_types[d.agent_role[m], t]]
    strong = strength(d.skills, d.seniority[:, None])
    helpers = np.full((n_depts, len(d.skill_ids), HELPER_CANDIDATES), -1, dtype=np.int32)
    for k in range(n_depts):
        m = members[k]
        if not d.heads_help and len(m) > 1:  # heads lead: their colleagues ask each other
            m = m[m != heads[k]]
        for s in range(len(d.skill_ids)):
            # strongest first; ties to the lower slot (stable sort)
            order = m[np.argsort(-strong[m, s], kind="stable")][:HELPER_CANDIDATES]
            helpers[k, s, : len(order)] = order
    return {"salary_micro": d.level_salary_micro[d.seniority],
            "dept_head": np.array(heads, dtype=np.int32), "dept_members": members,
            "handlers": handlers, "helpers": helpers}
