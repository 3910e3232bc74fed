"""Strategy protocols of the loop, chosen in config (`loop:`; loop/registry.py) and built once
per group. They work on a batch of agents at once: the deterministic implementation is
vectorised; one that needs a model or a service fans out the batch's requests concurrently,
or issues them as actions (synthorg/actions) whose results arrive at a tick the simulation
fixes. The loop around them is the same in every mode."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from synthorg.domain.rng import Stream

# the seeded draws every working agent gets each tick, made together (see `uniforms`)
BATCH_STREAMS = (Stream.confidence, Stream.helper, Stream.quality)


@dataclass(frozen=True, eq=False)
class WorkBatch:
    """What the working agents perceive this tick (one row per agent)."""

    tick: int
    agents: np.ndarray  # global agent index
    seniority: np.ndarray
    dept: np.ndarray
    skill: np.ndarray  # level in the task's required skill
    tasks: np.ndarray  # TASK_DTYPE rows of the current task
    progress: np.ndarray
    asks: np.ndarray  # help requests already made for this task
    help_bonus: np.ndarray
    guidance: np.ndarray
    experience: np.ndarray  # competence remembered experience adds (0 without memory)
    rushed: np.ndarray
    wait_streak: np.ndarray
    queue_len: np.ndarray
    draws: np.ndarray  # uniform [0, 1): one row per BATCH_STREAMS stream, one column per agent
    # a colleague to ask for each of the given rows (-1: nobody), among the strongest three;
    # asked only for the rows that would ask (each row's choice is its own seeded draw)
    helpers: Callable[[np.ndarray], np.ndarray]

    def __len__(self) -> int:
        return len(self.agents)

    def draw(self, stream: Stream) -> np.ndarray:
        """Each agent's seeded draw of `stream` (one of BATCH_STREAMS) for this tick."""
        return self.draws[BATCH_STREAMS.index(stream)]


@dataclass(frozen=True, eq=False)
class Spending:
    """What was spent in the current budget period, in micro-USD."""

    dept: np.ndarray  # per department, up to the last tick
    agent: np.ndarray  # per agent of the group (slots from `first_slot`), up to now
    first_slot: int

    def of_agents(self, agents: np.ndarray) -> np.ndarray:
        return self.agent[agents - self.first_slot]


@dataclass(frozen=True, eq=False)
class Evaluation:
    competence: np.ndarray
    confidence: np.ndarray
    rate: np.ndarray  # work units per tick if the agent acts
    slack: np.ndarray  # ticks to spare at the deadline at the current rate


@dataclass(frozen=True, eq=False)
class Plan:
    action: np.ndarray  # ActionKind per agent
    decision: np.ndarray  # DecisionType per agent (meaningful where a decision was taken)
    helper: np.ndarray  # whom an agent that asks for help asks (-1 elsewhere)


class Evaluator(Protocol):
    def evaluate(self, batch: WorkBatch) -> Evaluation: ...


class Reviser(Protocol):
    def revise(self, batch: WorkBatch, evaluation: Evaluation) -> np.ndarray:
        """A boolean mask of agents whose goal is replaced by a revised one (rush)."""


class Planner(Protocol):
    def plan(self, batch: WorkBatch, evaluation: Evaluation) -> Plan: ...


class ConstraintChecker(Protocol):
    def blocked(self, batch: WorkBatch, plan: Plan, spent: Spending) -> np.ndarray:
        """Per row, the BudgetRule that forbids its planned tool call this tick (0: none)."""
