"""What a department decides at each review: it follows its budget and spend, keeps a
headcount plan, asks HR to hire when its load stays high and its budget allows, and sets
its routing (adaptive: load-balanced while its load stays high). Hosted by `dept:NAME`
actors on Ray; the groups keep routing with the policy the department sets."""

from __future__ import annotations

from dataclasses import dataclass

from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import HrReason, RoutingKind


@dataclass(frozen=True)
class DeptStats:
    """A department as a review finds it."""

    headcount: int
    open_tasks: int
    spent_micro: int  # this budget period
    budget_micro: int


@dataclass(frozen=True)
class DeptPlan:
    hire: bool
    headcount_plan: int
    budget_left: float  # share of the budget left this period
    load_per_member: float
    routing: int = -1  # RoutingKind to switch to (-1: keep)
    routing_reason: int = 0  # HrReason


class DepartmentDesk:
    def __init__(self, config: CompanyConfig, dept: int) -> None:
        self.dept = dept
        self.name = config.departments[dept].id
        self._hiring = config.hr.hiring
        self._adaptive = config.hr.departments.routing == "adaptive"
        self._configured = int(RoutingKind[config.departments[dept].routing])
        self.routing = self._configured
        self.high_reviews = 0  # reviews running with the load high
        self.hires_asked = 0
        self.last: DeptStats | None = None

    def review(self, stats: DeptStats) -> DeptPlan:
        self.last = stats
        per_member = stats.open_tasks / max(stats.headcount, 1)
        high = per_member >= self._hiring.queue_per_agent
        self.high_reviews = self.high_reviews + 1 if high else 0
        left = 1.0 - stats.spent_micro / stats.budget_micro if stats.budget_micro else 0.0
        hire = (self._hiring.policy != "none" and self.high_reviews >= self._hiring.reviews
                and left >= self._hiring.min_budget_left)
        if hire:
            self.hires_asked += 1
            self.high_reviews = 0  # the hire needs time to tell
        routing, why = -1, 0
        if self._adaptive:
            wanted = int(RoutingKind.load_balanced) if high else self._configured
            if wanted != self.routing:
                routing = self.routing = wanted
                why = int(HrReason.load_high if high else HrReason.load_eased)
        return DeptPlan(hire, stats.headcount + int(hire), left, per_member, routing, why)

    def state(self) -> list[int]:
        return [self.routing, self.high_reviews, self.hires_asked]

    def load(self, state: list[int]) -> None:
        self.routing, self.high_reviews, self.hires_asked = (int(v) for v in state)
