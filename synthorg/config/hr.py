"""The `hr` section: reviews that score agents from the ledger and change the org chart
(promotions, demotions, hires, fires, reassignments), and what departments decide at them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from synthorg.config.base import Frozen, Identifier, Probability, SeniorityName

Criterion = Literal["quality", "completion", "on_time", "collaboration", "trend", "pillars"]
PILLARS = ("performance", "quality", "collaboration", "reliability", "efficiency")
Pillar = Literal["performance", "quality", "collaboration", "reliability", "efficiency"]


class PromotionPolicy(Frozen):
    """N of M criteria over the review's windows, per level reached."""

    policy: Literal["n_of_m", "none"] = "n_of_m"
    min_criteria: int = Field(default=4, ge=1, le=6, description=(
        "criteria (of those in `thresholds`) an agent must meet to be promoted"))
    per_level: dict[SeniorityName, Annotated[int, Field(ge=1, le=6)]] = Field(
        default_factory=lambda: {"lead": 5, "executive": 6}, description=(  # type: ignore[arg-type]
            "a stricter N to reach some levels (the level reached: N)"))
    thresholds: dict[Criterion, float] = Field(
        default_factory=lambda: {  # type: ignore[arg-type]
            "quality": 0.72, "completion": 0.9, "on_time": 0.85, "collaboration": 0.5,
            "trend": 0.0, "pillars": 0.65},
        description="per criterion, the score to reach (trend: the slope, per tick, of quality)")
    min_tasks: int = Field(default=8, ge=1, description=(
        "tasks finished in the longest window for a promotion to be considered"))
    tenure_reviews: int = Field(default=4, ge=1, description=(
        "reviews an agent spends at a level before it can be promoted again"))
    approval_from: SeniorityName = Field(default="senior", description=(
        "promotions to this level and above need the approver's yes (policies.approvals: "
        "in human mode a person's, through `synthorg approvals`)"))
    top: SeniorityName = Field(default="lead", description="the highest level reviews promote to")


class DemotionPolicy(Frozen):
    policy: Literal["n_of_m", "none"] = "n_of_m"
    max_criteria: int = Field(default=1, ge=0, le=6, description=(
        "an agent meeting at most this many criteria, for `reviews` reviews running, steps down"))
    reviews: int = Field(default=3, ge=1)


class FiringPolicy(Frozen):
    policy: Literal["persistent", "none"] = "persistent"
    below_quality: Probability = Field(default=0.45, description=(
        "quality score (the longest window) under which a review counts against the agent"))
    reviews: int = Field(default=4, ge=1, description="reviews running that count against it")
    priority_boost: int = Field(default=1, ge=0, le=3, description=(
        "priority levels a leaver's open tasks gain when they return to the queue"))
    max_per_review: int = Field(default=2, ge=0)


class HiringPolicy(Frozen):
    policy: Literal["queue_pressure", "none"] = "queue_pressure"
    max_hires: int = Field(default=8, ge=0, le=10_000, description=(
        "agent slots kept for hires over the run (ids hire-0001, ...)"))
    queue_per_agent: float = Field(default=2.5, gt=0, description=(
        "open tasks per member at which a department's load counts as high"))
    reviews: int = Field(default=2, ge=1, description=(
        "reviews running a department's load must stay high before it asks to hire"))
    min_budget_left: Probability = Field(default=0.25, description=(
        "share of its budget a department must have left to hire"))
    role_templates: tuple[Identifier, ...] = Field(default=(), description=(
        "role templates (templates/roles/NAME.yaml) hires are made from; none: the "
        "department's most common role, at its levels"))


class ReassignmentPolicy(Frozen):
    policy: Literal["load_balance", "none"] = "load_balance"
    load_ratio: float = Field(default=2.5, gt=1.0, description=(
        "a department this many times as loaded per member as another takes one of its agents"))
    max_per_review: int = Field(default=1, ge=0)
    cooldown_reviews: int = Field(default=4, ge=0, description=(
        "reviews before a moved agent may be moved again"))


class DepartmentPolicy(Frozen):
    routing: Literal["fixed", "adaptive"] = Field(default="adaptive", description=(
        "adaptive: a department whose load stays high routes load-balanced until it eases"))


class PillarSpec(Frozen):
    weight: float = Field(default=1.0, ge=0.0)
    metrics: dict[str, bool] = Field(default_factory=dict, description=(
        "metric toggles (name: false turns it off; its weight goes to the others)"))


class HrSpec(Frozen):
    enabled: bool = False
    review_every: int = Field(default=25, ge=2, le=100_000, description="ticks between reviews")
    decision_lag: int = Field(default=1, ge=1, le=1000, description=(
        "ticks from a review to its decisions taking effect (the review runs meanwhile)"))
    windows: tuple[Annotated[int, Field(ge=1, le=100_000)], ...] = Field(
        default=(7, 30, 90), min_length=1, max_length=8, description="scoring windows, ticks")
    min_points: int = Field(default=5, ge=1, description=(
        "finished tasks a window needs for its scores to count"))
    trend_points: int = Field(default=12, ge=3, le=1000, description=(
        "latest tasks (of the longest window) the Theil-Sen trend is fitted on"))
    trend_epsilon: float = Field(default=0.0005, ge=0.0, description=(
        "|slope| per tick below which a trend is stable"))
    peer_weight: Probability = Field(default=0.25, description=(
        "weight of the reviewer signal (approvals of its requests) in the quality score"))
    overrides: dict[Identifier, Probability] = Field(default_factory=dict, description=(
        "a person's quality score for an agent, over what the ledger says"))
    promotion: PromotionPolicy = PromotionPolicy()
    demotion: DemotionPolicy = DemotionPolicy()
    firing: FiringPolicy = FiringPolicy()
    hiring: HiringPolicy = HiringPolicy()
    reassignment: ReassignmentPolicy = ReassignmentPolicy()
    departments: DepartmentPolicy = DepartmentPolicy()
    model_tiers: dict[SeniorityName, Literal["small", "medium", "large"]] = Field(
        default_factory=lambda: {  # type: ignore[arg-type]
            "junior": "small", "mid": "small", "senior": "medium", "lead": "large",
            "executive": "large"},
        description="the model tier each level works with (changed at task boundaries)")
    pillars: dict[Pillar, PillarSpec] = Field(
        default_factory=lambda: {p: PillarSpec() for p in PILLARS})  # type: ignore[arg-type]

    @model_validator(mode="after")
    def _windows_sorted(self) -> HrSpec:
        if list(self.windows) != sorted(set(self.windows)):
            raise ValueError("windows must be distinct and ascending")
        if self.decision_lag >= self.review_every:
            raise ValueError("decision_lag must be less than review_every")
        return self

    @property
    def longest(self) -> int:
        return self.windows[-1]

    def reviews_at(self, tick: int) -> bool:
        return self.enabled and tick > 0 and tick % self.review_every == 0

    def reserved_slots(self) -> int:
        return self.hiring.max_hires if self.enabled and self.hiring.policy != "none" else 0
