"""The `scenario` section: org changes and shocks scheduled at ticks.

Each event applies at the start of its tick, the same in every group host (they all read the
config), so a scenario costs no communication and the same seed gives the same ledger.
`agents` selects agents by id or shell-style pattern (`eng-*`), among those in the org at
that tick.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Discriminator, Field, Tag

from synthorg.config.base import AutonomyName, Frozen, Identifier, Level, SeniorityName

if TYPE_CHECKING:
    from synthorg.config.models import CompanyConfig, RoleSpec

Ticks = Annotated[int, Field(ge=1, le=10_000_000)]
Selector = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.\-*?\[\]]+$")]


class _Event(Frozen):
    tick: int = Field(ge=0, le=10_000_000)


class _OnAgents(_Event):
    agents: tuple[Selector, ...] = Field(min_length=1, max_length=10_000)


class Fire(_OnAgents):
    """Key-person loss: the agents leave for good; their open tasks go back to routing."""

    kind: Literal["fire"]


class Absence(_OnAgents):
    """The agents are away for `ticks`: they step nothing and get no new work; their queues
    wait for them."""

    kind: Literal["absence"]
    ticks: Ticks


class Hire(_Event):
    """A hiring wave: `count` new agents `<id>-0001`... (or `id` when count is 1) join."""

    kind: Literal["hire"]
    id: Identifier
    role: Identifier
    department: Identifier
    count: int = Field(default=1, ge=1, le=100_000)
    seniority: SeniorityName = "junior"
    skills: dict[Identifier, Level] = Field(default_factory=dict)
    autonomy: AutonomyName | None = None

    def expanded_ids(self) -> list[str]:
        if self.count == 1:
            return [self.id]
        return [f"{self.id}-{i:04d}" for i in range(1, self.count + 1)]


class Move(_OnAgents):
    """Reorganisation: the agents move to department `to` (and role `role`, if given); what
    they hold already they finish."""

    kind: Literal["move"]
    to: Identifier
    role: Identifier | None = None


class Promote(_OnAgents):
    kind: Literal["promote"]
    to: SeniorityName


class ChangeAutonomy(_OnAgents):
    kind: Literal["autonomy"]
    to: AutonomyName


class Demand(_Event):
    """A demand spike: arrival rates times `factor` for `ticks` (of `department`'s or the listed
    task types, or all)."""

    kind: Literal["demand"]
    factor: float = Field(ge=0.0, le=100.0)
    ticks: Ticks
    department: Identifier | None = None
    task_types: tuple[Identifier, ...] = ()


class Outage(_Event):
    """The tools are down for `ticks`: calls to them fail (recorded) and the agents retry."""

    kind: Literal["outage"]
    tools: tuple[Identifier, ...] = Field(min_length=1)
    ticks: Ticks


EVENT_KINDS: dict[str, type[_Event]] = {
    "fire": Fire, "absence": Absence, "hire": Hire, "move": Move, "promote": Promote,
    "autonomy": ChangeAutonomy, "demand": Demand, "outage": Outage}


def _kind_of(value: object) -> str | None:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if isinstance(kind, str) and kind in EVENT_KINDS else None


# tagged by `kind` (a callable discriminator: Frozen's number check runs before validation)
ScenarioEvent = Annotated[
    Annotated[Fire, Tag("fire")] | Annotated[Absence, Tag("absence")]
    | Annotated[Hire, Tag("hire")] | Annotated[Move, Tag("move")]
    | Annotated[Promote, Tag("promote")] | Annotated[ChangeAutonomy, Tag("autonomy")]
    | Annotated[Demand, Tag("demand")] | Annotated[Outage, Tag("outage")],
    Discriminator(_kind_of, custom_error_type="scenario_kind",
                  custom_error_message=f"kind must be one of {', '.join(EVENT_KINDS)}")]
ORG_KINDS = ("fire", "absence", "hire", "move", "promote", "autonomy")


def scenario_problems(cfg: CompanyConfig, depts: set[str], roles: dict[str, RoleSpec],
                      tools: set[str], task_types: set[str], agent_ids: list[str]) -> list[str]:
    """References of the scenario that name nothing, each naming its field."""
    problems: list[str] = []
    known = set(agent_ids)
    for i, event in enumerate(cfg.scenario):
        where = f"scenario[{i}]"
        if isinstance(event, Hire):
            if event.role not in roles:
                problems.append(f"{where}.role: unknown role '{event.role}'")
            if event.department not in depts:
                problems.append(f"{where}.department: unknown department '{event.department}'")
            for aid in event.expanded_ids():
                if aid in known:
                    problems.append(f"{where}.id: agent id '{aid}' is taken (ids are never reused)")
                known.add(aid)
        if isinstance(event, Move):
            if event.to not in depts:
                problems.append(f"{where}.to: unknown department '{event.to}'")
            if event.role is not None and event.role not in roles:
                problems.append(f"{where}.role: unknown role '{event.role}'")
        if isinstance(event, Fire | Absence | Move | Promote | ChangeAutonomy):
            for pattern in event.agents:
                if not fnmatch.filter(sorted(known), pattern):
                    problems.append(f"{where}.agents: '{pattern}' matches no agent")
        if isinstance(event, Demand):
            if event.department is not None and event.department not in depts:
                problems.append(f"{where}.department: unknown department '{event.department}'")
            problems += [f"{where}.task_types: unknown task type '{t}'"
                         for t in event.task_types if t not in task_types]
        if isinstance(event, Outage):
            problems += [f"{where}.tools: unknown tool '{t}'" for t in event.tools if t not in tools]
    return problems
