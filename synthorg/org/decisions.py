"""Org changes decided during a run (HR reviews, department actors), as opposed to those the
config's scenario schedules. Each takes effect at a tick boundary fixed when it is decided,
in every host alike, and travels in checkpoints as a row of numbers."""

from __future__ import annotations

from dataclasses import dataclass

from synthorg.domain.enums import EventKind


@dataclass(frozen=True)
class OrgDecision:
    tick: int  # the tick it takes effect at
    kind: EventKind  # agent_promoted / _demoted / _left / _joined / _moved, model_tier_changed,
    # routing_changed, promotion_refused
    agent: int  # slot; for routing_changed the department's index
    target: int = -1  # new seniority / department / tier / routing kind, by kind
    role: int = -1  # hire and move: the role taken (-1: unchanged)
    reason: int = 0  # HrReason
    level: int = -1  # hire: its seniority
    skills: tuple[float, ...] = ()  # hire: skill levels on joining

    def row(self) -> list[float]:
        return [self.tick, int(self.kind), self.agent, self.target, self.role, self.reason,
                self.level, *self.skills]

    @staticmethod
    def of_row(row: list[float]) -> OrgDecision:
        if len(row) < 7:
            raise ValueError(f"an org decision row has {len(row)} numbers, not at least 7")
        tick, kind, agent, target, role, reason, level = (int(v) for v in row[:7])
        return OrgDecision(tick, EventKind(kind), agent, target, role, reason, level,
                           tuple(float(v) for v in row[7:]))


def rows_of(decisions: list[OrgDecision]) -> list[list[float]]:
    return [d.row() for d in decisions]


def decisions_of(rows: object) -> list[OrgDecision]:
    if not isinstance(rows, list):
        raise ValueError("org decisions must be a list of rows")
    return [OrgDecision.of_row(list(r)) for r in rows]
