"""The organisation over time: the scenario's org changes and shocks, applied at tick
boundaries.

Every host (and the driver) keeps its own timeline built from the config and advances it tick
by tick, so all of them hold the same org version at every tick without a message passing
between them. A change is resolved when its tick comes (a pattern selects the agents in the org
at that moment), in the order the scenario lists changes of one tick.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import numpy as np

from synthorg.config.models import CompanyConfig
from synthorg.config.scenario import (
    Absence,
    ChangeAutonomy,
    Demand,
    Fire,
    Hire,
    Move,
    Outage,
    Promote,
)
from synthorg.domain.enums import Autonomy, EventKind, ModelTier, RoutingKind, Seniority
from synthorg.org.decisions import OrgDecision
from synthorg.org.directory import NEVER, OrgDirectory, held_autonomy, model_tier_of


@dataclass(frozen=True)
class OrgChange:
    """One agent's change at a tick boundary (becomes a ledger event of that agent)."""

    kind: EventKind
    agent: int
    target: int = -1
    value: float = 0.0


class OrgTimeline:
    def __init__(self, config: CompanyConfig, base: OrgDirectory | None = None,
                 decisions: list[OrgDecision] | None = None) -> None:
        self._cfg = config
        self._hr = config.hr
        self.decisions: list[OrgDecision] = []  # decided during the run, in order
        self._decided: dict[int, list[OrgDecision]] = {}
        self._security = config.policies.security
        self.directory = base if base is not None else OrgDirectory.from_config(config)
        self.tick = -1  # the last tick advanced to
        self._away_until = np.full(self.directory.size, NEVER, dtype=np.int64)
        self._hire_slots = self._hire_slot_ranges()
        self._org_ticks = {e.tick for e in config.scenario if _is_org(e)}
        # the shocks, apart: they are looked at every tick
        self._demands = [e for e in config.scenario if isinstance(e, Demand)]
        self._outages = [e for e in config.scenario if isinstance(e, Outage)]
        self._shock_ticks = {e.tick: [i for i, f in enumerate(config.scenario)
                                      if isinstance(f, Demand | Outage) and f.tick == e.tick]
                             for e in (*self._demands, *self._outages)}
        self._type_ids = {t: i for i, t in enumerate(self.directory.type_ids)}
        self._tool_ids = {t: i for i, t in enumerate(self.directory.tool_ids)}
        self._dept_ids = {d: i for i, d in enumerate(self.directory.dept_ids)}
        self._role_ids = {r: i for i, r in enumerate(self.directory.role_ids)}
        self.decide(decisions or [])

    def decide(self, decisions: list[OrgDecision]) -> None:
        """Org changes decided during the run; each must take effect after the last tick
        advanced to."""
        for d in decisions:
            if d.tick <= self.tick:
                raise ValueError(f"an org decision for tick {d.tick} came at tick {self.tick}")
            self._check(d)
            self.decisions.append(d)
            self._decided.setdefault(d.tick, []).append(d)

    # ---- org versions ---------------------------------------------------------------------
    def advance(self, tick: int, skills: np.ndarray | None = None) -> list[OrgChange] | None:
        """Move to `tick` (ticks in between included); the changes applied at `tick` itself,
        or None when the org did not change at it. `skills`: every slot's current skill
        levels, which the new version's tables (routing, helpers) are built on."""
        changes: list[OrgChange] | None = None
        while self.tick < tick:
            self.tick += 1
            changes = self._apply(self.tick, skills if self.tick == tick else None)
        return changes

    def _check(self, d: OrgDecision) -> None:
        """A decision read back from a checkpoint names slots, departments and levels that
        exist (else ValueError: never an index error mid-run)."""
        dr = self.directory
        n_depts, n_roles = len(dr.dept_ids), len(dr.role_ids)
        levels, k = range(len(Seniority)), d.kind
        checks = {
            EventKind.routing_changed: 0 <= d.agent < n_depts and d.target in (0, 1),
            EventKind.agent_joined: 0 <= d.target < n_depts and 0 <= d.role < n_roles
            and d.level in levels and len(d.skills) == len(dr.skill_ids),
            EventKind.agent_moved: 0 <= d.target < n_depts and -1 <= d.role < n_roles,
            EventKind.agent_promoted: d.target in levels,
            EventKind.agent_demoted: d.target in levels,
            EventKind.model_tier_changed: d.target in range(len(ModelTier)),
            EventKind.promotion_refused: True, EventKind.agent_left: True}
        ok = checks.get(k, False) and (k == EventKind.routing_changed or 0 <= d.agent < dr.size)
        if not ok:
            raise ValueError(f"org decision {d.row()[:7]} names what this org does not have")

    def changes_due(self, tick: int) -> bool:
        """Whether the org changes at `tick` (ask once the tick before has been applied)."""
        return (tick in self._org_ticks or tick in self._decided
                or self._hr.reviews_at(tick - self._hr.decision_lag)
                or bool(np.any(self._away_until == tick)))

    def _apply(self, tick: int, skills: np.ndarray | None) -> list[OrgChange] | None:
        if not self.changes_due(tick):
            return None
        d = self.directory
        slots = {name: getattr(d, name).copy() for name in (
            "agent_role", "agent_dept", "seniority", "autonomy", "active", "joined", "left",
            "model_tier", "skills")}
        active, present = slots["active"], (slots["joined"] != NEVER) & (slots["left"] == NEVER)
        changes: list[OrgChange] = []
        if skills is not None:
            slots["skills"] = skills
        back = np.flatnonzero(self._away_until == tick)
        for a in back.tolist():
            self._away_until[a] = NEVER
            if present[a]:
                active[a] = True
                changes.append(OrgChange(EventKind.agent_back, a))
        for i, event in enumerate(self._cfg.scenario):
            if event.tick != tick or not _is_org(event):
                continue
            if isinstance(event, Hire):
                lo, hi = self._hire_slots[i]
                for a in range(lo, hi):
                    active[a], present[a] = True, True
                    slots["joined"][a] = tick
                    changes.append(OrgChange(EventKind.agent_joined, a,
                                             int(slots["agent_dept"][a])))
                continue
            for a in self._select(event.agents, present):  # type: ignore[union-attr]
                if isinstance(event, Fire):
                    active[a], present[a] = False, False
                    slots["left"][a] = tick
                    self._away_until[a] = NEVER
                    changes.append(OrgChange(EventKind.agent_left, a, int(slots["agent_dept"][a])))
                elif isinstance(event, Absence):
                    if active[a]:
                        active[a] = False
                        self._away_until[a] = tick + event.ticks
                        changes.append(OrgChange(EventKind.agent_away, a, value=event.ticks))
                elif isinstance(event, Move):
                    slots["agent_dept"][a] = self._dept_ids[event.to]
                    if event.role is not None:
                        slots["agent_role"][a] = self._role_ids[event.role]
                    changes.append(OrgChange(EventKind.agent_moved, a, self._dept_ids[event.to]))
                elif isinstance(event, Promote):
                    slots["seniority"][a] = int(Seniority[event.to])
                    changes.append(OrgChange(EventKind.agent_promoted, a, int(Seniority[event.to])))
                    held = self._cap(int(slots["autonomy"][a]), event.to)
                    if held != slots["autonomy"][a]:  # a demotion below what it held
                        slots["autonomy"][a] = held
                        changes.append(OrgChange(EventKind.autonomy_changed, a, held))
                elif isinstance(event, ChangeAutonomy):
                    held = self._cap(int(Autonomy[event.to]),
                                     Seniority(int(slots["seniority"][a])).name)
                    slots["autonomy"][a] = held
                    changes.append(OrgChange(EventKind.autonomy_changed, a, held))
        routing = list(d.dept_routing)
        for decision in self._decided.get(tick, []):
            change = self._carry_out(decision, slots, present, routing)
            if change is not None:
                changes.append(change)
        self.directory = d.revised(**slots, dept_routing=tuple(routing))  # type: ignore[arg-type]
        return changes

    def _carry_out(self, dn: OrgDecision, slots: dict[str, np.ndarray], present: np.ndarray,
                   routing: list[str]) -> OrgChange | None:
        """Apply one decided change to the next version's arrays; the change it records."""
        a, k = dn.agent, dn.kind
        if k == EventKind.routing_changed:
            routing[a] = RoutingKind(dn.target).name
            return OrgChange(k, -1 - a, dn.target, float(dn.reason))
        if k == EventKind.agent_joined:
            slots["agent_role"][a], slots["agent_dept"][a] = dn.role, dn.target
            slots["seniority"][a] = dn.level
            slots["model_tier"][a] = model_tier_of(self._hr, dn.level)
            dept = self._cfg.departments[dn.target]
            slots["autonomy"][a] = held_autonomy(self._security, dept.autonomy
                                                 or self._cfg.company.autonomy,
                                                 Seniority(dn.level).name)
            slots["skills"][a] = dn.skills
            slots["active"][a], present[a], slots["joined"][a] = True, True, dn.tick
        elif not present[a]:
            return None  # gone meanwhile (a scenario change of the same tick)
        elif k == EventKind.agent_left:
            slots["active"][a], present[a], slots["left"][a] = False, False, dn.tick
            self._away_until[a] = NEVER
        elif k == EventKind.agent_moved:
            slots["agent_dept"][a] = dn.target
            if dn.role >= 0:
                slots["agent_role"][a] = dn.role
        elif k in (EventKind.agent_promoted, EventKind.agent_demoted):
            slots["seniority"][a] = dn.target
            slots["autonomy"][a] = self._cap(int(slots["autonomy"][a]), Seniority(dn.target).name)
        elif k == EventKind.model_tier_changed:
            slots["model_tier"][a] = dn.target
        return OrgChange(k, a, dn.target, float(dn.reason))

    def _cap(self, autonomy: int, seniority: str) -> int:
        return held_autonomy(self._security, Autonomy(autonomy).name, seniority)

    def _select(self, patterns: tuple[str, ...], present: np.ndarray) -> list[int]:
        """Slots in the org (not fired, joined) whose id matches a pattern, in slot order."""
        ids = self.directory.agent_ids
        here = np.flatnonzero(present).tolist()
        return [i for i in here if any(fnmatch.fnmatchcase(ids[i], p) for p in patterns)]

    def _hire_slot_ranges(self) -> dict[int, tuple[int, int]]:
        """Per scenario index of a hire, its slots (after the company's agents, in order)."""
        at, out = self._cfg.agent_count(), {}
        for i, event in enumerate(self._cfg.scenario):
            if isinstance(event, Hire):
                out[i] = (at, at + event.count)
                at += event.count
        return out

    # ---- shocks ---------------------------------------------------------------------------
    def rate_factors(self, tick: int) -> np.ndarray | None:
        """Per task type, the arrival-rate factor of the demand spikes running at `tick`
        (None: none run)."""
        factors = None
        for event in self._demands:
            if event.tick <= tick < event.tick + event.ticks:
                if factors is None:
                    factors = np.ones(len(self._type_ids))
                factors[self._spiked_types(event)] *= event.factor
        return factors

    def _spiked_types(self, event: Demand) -> np.ndarray:
        chosen = np.ones(len(self._type_ids), dtype=bool)
        if event.department is not None:
            chosen &= self.directory.type_dept == self._dept_ids[event.department]
        if event.task_types:
            listed = np.zeros(len(self._type_ids), dtype=bool)
            listed[[self._type_ids[t] for t in event.task_types]] = True
            chosen &= listed
        return chosen

    def tools_down(self, tick: int) -> np.ndarray | None:
        """Per tool, whether an outage has it down at `tick` (None: nothing is down)."""
        down = None
        for event in self._outages:
            if event.tick <= tick < event.tick + event.ticks:
                if down is None:
                    down = np.zeros(len(self._tool_ids), dtype=bool)
                down[[self._tool_ids[t] for t in event.tools]] = True
        return down

    def shocks_starting(self, tick: int) -> list[int]:
        """Scenario indices of the demand spikes and outages that start at `tick`."""
        return self._shock_ticks.get(tick, [])


def _is_org(event: object) -> bool:
    return isinstance(event, Fire | Absence | Hire | Move | Promote | ChangeAutonomy)
