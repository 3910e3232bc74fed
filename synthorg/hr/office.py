"""The HR/metrics office: every `hr.review_every` ticks it takes the groups' feeds, scores
every agent in the org (scoring.py, pillars.py, criteria.py), hears its departments, and
decides the org changes that take effect `hr.decision_lag` ticks later, each with its reason.
Its decisions depend only on the ledger's rows, so they are the same whatever the layout."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from synthorg.config.models import CompanyConfig
from synthorg.config.role_templates import role_template
from synthorg.domain.enums import EventKind, HrReason, Seniority
from synthorg.domain.rng import Stream, uniform
from synthorg.hr.approvals import PromotionApprover, SeededApprover
from synthorg.hr.criteria import criteria_met
from synthorg.hr.departments import DepartmentDesk, DeptPlan, DeptStats
from synthorg.hr.feed import Feed
from synthorg.hr.history import History
from synthorg.hr.pillars import pillar_scores
from synthorg.hr.scoring import review_frame
from synthorg.org.decisions import OrgDecision, decisions_of, rows_of
from synthorg.org.directory import HR_HIRE_PREFIX, NEVER, OrgDirectory, model_tier_of
from synthorg.org.timeline import OrgTimeline

PlanDepartments = Callable[[list[DeptStats]], list[DeptPlan]]
STATE_ARRAYS = ("low_reviews", "poor_reviews", "at_level", "since_move")


def local_departments(desks: list[DepartmentDesk]) -> PlanDepartments:
    return lambda stats: [d.review(s) for d, s in zip(desks, stats, strict=True)]


class HrOffice:
    def __init__(self, config: CompanyConfig, directory: OrgDirectory, key: np.uint64,
                 groups: int, departments: PlanDepartments,
                 approver: PromotionApprover | None = None) -> None:
        """approver: who says yes to a promotion that needs it (the seeded approver if none)."""
        self.cfg, self.spec, self.key = config, config.hr, key
        self.approver = approver or SeededApprover(config, key)
        self._base = directory
        self.timeline = OrgTimeline(config, directory)
        self.history = History(self.spec.longest)
        self._groups = groups
        self._departments = departments
        n = directory.size
        self.low_reviews = np.zeros(n, dtype=np.int32)  # reviews running below demotion bar
        self.poor_reviews = np.zeros(n, dtype=np.int32)  # ... under the quality floor
        self.at_level = np.zeros(n, dtype=np.int32)  # reviews at the current level
        self.since_move = np.full(n, 1 << 20, dtype=np.int32)  # reviews since last moved
        self._hire_slots = [i for i, a in enumerate(directory.agent_ids)
                            if a.startswith(HR_HIRE_PREFIX)]
        self.hires_made = 0
        self._feeds: dict[int, list[Feed | None]] = {}
        self.decided: dict[int, list[OrgDecision]] = {}  # by review tick
        self.last_scores: pl.DataFrame | None = None
        self.reviews = 0

    # ---- the groups' side ---------------------------------------------------------------
    def take(self, tick: int, group: int, feed: Feed) -> None:
        """A group's rows for the review at `tick`."""
        self._feeds.setdefault(tick, [None] * self._groups)[group] = feed

    def fed(self, tick: int) -> bool:
        """Whether every group's rows for the review at `tick` are in."""
        feeds = self._feeds.get(tick)
        return feeds is not None and all(f is not None for f in feeds)

    def decisions(self, tick: int) -> list[OrgDecision]:
        """The decisions of the review at `tick` (reviewing first, if not done yet)."""
        if tick not in self.decided:
            feeds = self._feeds.pop(tick, None)
            if feeds is None or any(f is None for f in feeds):
                missing = [g for g, f in enumerate(feeds or [None] * self._groups) if f is None]
                raise RuntimeError(f"HR review at tick {tick}: no feed from groups {missing}")
            self.decided[tick] = self.review(tick, Feed.joined(feeds))  # type: ignore[arg-type]
            for old in [t for t in self.decided if t < tick]:  # every group has them by now
                del self.decided[old]
        return self.decided[tick]

    # ---- the review -----------------------------------------------------------------------
    def review(self, tick: int, feed: Feed) -> list[OrgDecision]:
        spec = self.spec
        effective = tick + spec.decision_lag
        self.timeline.advance(tick - 1)
        d = self.timeline.directory
        self.history.ingest(feed, tick)
        present = np.flatnonzero((d.joined != NEVER) & (d.left == NEVER))
        overrides = {d.agent_ids.index(a): v for a, v in spec.overrides.items()}
        frame = review_frame(self.history, tick, spec, present, overrides).with_columns(
            pl.Series("dept", d.agent_dept[present]), pl.Series("seniority", d.seniority[present]))
        frame = criteria_met(pillar_scores(frame, spec), spec)
        self.last_scores = frame.with_columns(pl.lit(tick).alias("review_tick"))
        self.reviews += 1
        self.at_level[present] += 1
        self.since_move[present] += 1
        loads = feed.loads if feed.loads is not None else np.zeros(d.size, dtype=np.int64)
        plans = self._departments(self._dept_stats(d, loads, feed.spent))
        out: list[OrgDecision] = []
        leaving = self._fire(frame, d, effective, out)
        moved = self._reassign(d, loads, plans, leaving, effective, out)
        self._promote_or_demote(frame, d, effective, leaving | moved, out)
        self._hire(d, plans, tick, effective, out)
        self._tiers(d, loads, present, leaving, effective, out)
        out += [OrgDecision(effective, EventKind.routing_changed, k, p.routing,
                            reason=p.routing_reason)
                for k, p in enumerate(plans) if p.routing >= 0]
        self.timeline.decide(out)
        return out

    def _dept_stats(self, d: OrgDirectory, loads: np.ndarray, spent: np.ndarray | None
                    ) -> list[DeptStats]:
        n = len(d.dept_ids)
        active = np.flatnonzero(d.active)
        heads = np.bincount(d.agent_dept[active], minlength=n)
        work = np.bincount(d.agent_dept[active], weights=loads[active], minlength=n)
        spent = spent if spent is not None else np.zeros(n, dtype=np.int64)
        return [DeptStats(int(heads[k]), int(work[k]), int(spent[k]), int(d.dept_budget_micro[k]))
                for k in range(n)]

    def _fire(self, frame: pl.DataFrame, d: OrgDirectory, at: int, out: list[OrgDecision]
              ) -> set[int]:
        policy = self.spec.firing
        long = self.spec.longest
        agents = frame["agent"].to_numpy()
        poor = (frame[f"valid_{long}"].to_numpy()
                & (frame[f"quality_{long}"].fill_null(1.0).to_numpy() < policy.below_quality))
        self.poor_reviews[agents] = np.where(poor, self.poor_reviews[agents] + 1, 0)
        if policy.policy == "none" or policy.max_per_review == 0:
            return set()
        due = agents[self.poor_reviews[agents] >= policy.reviews]
        quality = dict(zip(agents.tolist(), frame[f"quality_{long}"].fill_null(1.0).to_list(),
                           strict=True))
        members = np.bincount(d.agent_dept[np.flatnonzero(d.active)], minlength=len(d.dept_ids))
        fired: set[int] = set()
        for a in sorted(due.tolist(), key=lambda a: (quality[a], a)):
            k = int(d.agent_dept[a])
            if len(fired) >= policy.max_per_review or members[k] <= 1:
                continue
            members[k] -= 1
            fired.add(a)
            self.poor_reviews[a] = 0
            out.append(OrgDecision(at, EventKind.agent_left, a, k,
                                   reason=int(HrReason.under_performing)))
        return fired

    def _reassign(self, d: OrgDirectory, loads: np.ndarray, plans: list[DeptPlan],
                  busy: set[int], at: int, out: list[OrgDecision]) -> set[int]:
        policy = self.spec.reassignment
        if policy.policy == "none" or len(plans) < 2:
            return set()
        moved: set[int] = set()
        per = np.array([p.load_per_member for p in plans])
        for _ in range(policy.max_per_review):
            to, src = int(np.argmax(per)), int(np.argmin(per))
            if per[to] < policy.load_ratio * max(per[src], 0.5) or to == src:
                break
            cands = [int(a) for a in d.dept_members[src]
                     if a != d.dept_head[src] and a not in busy and a not in moved
                     and self.since_move[a] > policy.cooldown_reviews]
            if len(d.dept_members[src]) - sum(1 for a in moved if d.agent_dept[a] == src) <= 1 \
                    or not cands:
                break
            skill = self._main_skill(d, to)
            agent = max(cands, key=lambda a: (d.skills[a, skill] - 0.3 * loads[a], -a))
            role = -1 if d.role_types[d.agent_role[agent], d.type_dept == to].any() \
                else self._common_role(d, to)
            moved.add(agent)
            self.since_move[agent] = 0
            out.append(OrgDecision(at, EventKind.agent_moved, agent, to, role,
                                   int(HrReason.load_balance)))
            per[to], per[src] = per[to] * 0.8, per[src] * 1.2  # one move per pair per review
        return moved

    def _promote_or_demote(self, frame: pl.DataFrame, d: OrgDirectory, at: int,
                           skip: set[int], out: list[OrgDecision]) -> None:
        spec, promo, demo = self.spec, self.spec.promotion, self.spec.demotion
        long = spec.longest
        agents = frame["agent"].to_numpy()
        met = frame["met"].to_numpy()
        valid = frame[f"valid_{long}"].to_numpy()
        n_long = frame[f"n_{long}"].to_numpy()
        level = d.seniority[agents].astype(np.int64)
        low = valid & (met <= demo.max_criteria)
        self.low_reviews[agents] = np.where(low, self.low_reviews[agents] + 1, 0)
        top = int(Seniority[promo.top])
        # per level now held: the criteria the next level asks
        asks = np.array([promo.per_level.get(Seniority(min(v + 1, 4)).name,  # type: ignore[call-overload]
                                             promo.min_criteria) for v in range(len(Seniority))])
        need = asks[level]
        up = ((promo.policy != "none") & (level < top) & (n_long >= promo.min_tasks)
              & (self.at_level[agents] >= promo.tenure_reviews) & (met >= need))
        down = ((demo.policy != "none") & (self.low_reviews[agents] >= demo.reviews)
                & (level > 0) & ~up)
        asking = up & (level + 1 >= int(Seniority[promo.approval_from])) \
            & ~np.isin(agents, np.array(sorted(skip), dtype=agents.dtype))
        granted, late = self._ask(at - spec.decision_lag, at, agents[asking], level[asking] + 1,
                                  met[asking], need[asking])
        answer = dict(zip(agents[asking].tolist(), zip(granted.tolist(), late.tolist(),
                                                       strict=True), strict=True))
        for i in np.flatnonzero(up | down).tolist():
            a = int(agents[i])
            if a in skip:
                continue
            self.at_level[a] = 0
            if down[i]:
                self.low_reviews[a] = 0
                out.append(OrgDecision(at, EventKind.agent_demoted, a, int(level[i]) - 1,
                                       reason=int(HrReason.criteria_missed)))
            elif a in answer and not answer[a][0]:
                why = HrReason.approval_timed_out if answer[a][1] else HrReason.approver_refused
                out.append(OrgDecision(at, EventKind.promotion_refused, a, int(level[i]) + 1,
                                       reason=int(why)))
            else:
                out.append(OrgDecision(at, EventKind.agent_promoted, a, int(level[i]) + 1,
                                       reason=int(HrReason.criteria_met)))

    def _ask(self, review: int, at: int, agents: np.ndarray, levels: np.ndarray,
             met: np.ndarray, need: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The approver's answers on the promotions that need one (granted, timed out)."""
        top = self.spec.promotion.approval_from
        reasons = [f"promotion to {Seniority(int(v)).name}: meets {m} criteria, {n} needed "
                   f"(hr.promotion.approval_from: {top})"
                   for v, m, n in zip(levels.tolist(), met.tolist(), need.tolist(), strict=True)]
        return self.approver.decide(review, at, agents, levels, reasons)

    def _hire(self, d: OrgDirectory, plans: list[DeptPlan], tick: int, at: int,
              out: list[OrgDecision]) -> None:
        for k, plan in enumerate(plans):
            if not plan.hire or self.hires_made >= len(self._hire_slots):
                continue
            slot = self._hire_slots[self.hires_made]
            self.hires_made += 1
            role, level, skills = self._template_for(d, k, slot, tick)
            out.append(OrgDecision(at, EventKind.agent_joined, slot, k, role,
                                   int(HrReason.queue_pressure), level, skills))

    def _tiers(self, d: OrgDirectory, loads: np.ndarray, present: np.ndarray, leaving: set[int],
               at: int, out: list[OrgDecision]) -> None:
        """An idle agent (between tasks) whose tier is not its level's takes its level's."""
        tiers = np.array([model_tier_of(self.spec, level) for level in range(len(Seniority))])
        wanted = tiers[d.seniority[present]]
        for i in np.flatnonzero((wanted != d.model_tier[present]) & (loads[present] == 0)):
            a = int(present[i])
            if a not in leaving:
                out.append(OrgDecision(at, EventKind.model_tier_changed, a, int(wanted[i]),
                                       reason=int(HrReason.seniority_tier)))

    # ---- helpers ----------------------------------------------------------------------------
    def _main_skill(self, d: OrgDirectory, dept: int) -> int:
        types = np.flatnonzero(d.type_dept == dept)
        return int(np.bincount(d.type_skill[types]).argmax()) if len(types) else 0

    def _common_role(self, d: OrgDirectory, dept: int) -> int:
        members = d.dept_members[dept]
        if len(members):
            return int(np.bincount(d.agent_role[members]).argmax())
        handles = np.flatnonzero(d.role_types[:, d.type_dept == dept].any(axis=1))
        return int(handles[0]) if len(handles) else 0

    def _template_for(self, d: OrgDirectory, dept: int, slot: int, tick: int
                      ) -> tuple[int, int, tuple[float, ...]]:
        """Role, level and skill levels of a hire into `dept`: the first role template whose
        role handles the department's work, else the department's most common role."""
        handles = np.asarray(d.role_types[:, d.type_dept == dept].any(axis=1))
        roles = {r.id: i for i, r in enumerate(self.cfg.roles)}
        for name in self.spec.hiring.role_templates:
            t = role_template(name)
            if handles[roles[t.role]]:
                base = {**self.cfg.roles[roles[t.role]].skills, **t.skills}
                return roles[t.role], int(Seniority[t.seniority]), self._skills(
                    d, base, t.spread, slot, tick)
        role = self._common_role(d, dept)
        return role, 0, self._skills(d, self.cfg.roles[role].skills, 0.0, slot, tick)

    def _skills(self, d: OrgDirectory, base: dict[str, float], spread: float, slot: int,
                tick: int) -> tuple[float, ...]:
        levels = np.zeros(len(d.skill_ids))
        for name, v in base.items():
            levels[d.skill_ids.index(name)] = v
        draws = uniform(self.key, slot * 64 + np.arange(len(levels)), tick, Stream.hire)
        return tuple(np.clip(levels + (2 * draws - 1) * spread * (levels > 0), 0, 1).tolist())

    # ---- state ------------------------------------------------------------------------------
    def state(self) -> dict[str, object]:
        return {"history": self.history.state(), "decided": {
                    str(t): rows_of(ds) for t, ds in self.decided.items()},
                "decisions": rows_of(self.timeline.decisions),
                "hires_made": self.hires_made, "reviews": self.reviews,
                **{name: getattr(self, name).copy() for name in STATE_ARRAYS}}

    def load(self, state: dict[str, object]) -> None:
        self.history.load(state["history"])  # type: ignore[arg-type]
        self.decided = {int(t): decisions_of(rows)
                        for t, rows in state["decided"].items()}  # type: ignore[attr-defined]
        self.timeline = OrgTimeline(self.cfg, self._base, decisions_of(state["decisions"]))
        self.hires_made = int(state["hires_made"])  # type: ignore[call-overload]
        self.reviews = int(state["reviews"])  # type: ignore[call-overload]
        for name in STATE_ARRAYS:
            arr = np.asarray(state[name], dtype=np.int32)
            if arr.shape != getattr(self, name).shape:
                raise ValueError(f"hr state: {name} has {arr.shape}, not {getattr(self, name).shape}")
            setattr(self, name, arr.copy())
        self._feeds = {}



def state_of(office: HrOffice | None, departments: list[list[int]]) -> dict[str, object]:
    """A run's HR state for its checkpoint: the office's and each department desk's."""
    if office is None:
        return {}
    return {"office": office.state(), "departments": departments}


def load_hr(state: dict[str, object], office: HrOffice, desks: list[DepartmentDesk]) -> None:
    """Restore the office and local desks from `state_of`'s output."""
    office.load(state["office"])  # type: ignore[arg-type]
    for desk, s in zip(desks, state["departments"], strict=True):  # type: ignore[call-overload]
        desk.load(s)


def scores_of(office: HrOffice | None) -> pl.DataFrame | None:
    """The last review's scores, one row per agent (None: no review yet)."""
    return None if office is None else office.last_scores
