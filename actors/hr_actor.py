"""`hr` and `dept:NAME` actors. Groups hand the `hr` actor their rows at each review tick and
take its decisions at the tick they take effect; at the review, `hr` hears each department's
actor (its budget and spend, load, hiring request and routing). They act at review boundaries
only, never per tick."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import polars as pl
import ray

from actors.pipelines import wait
from synthorg.config.models import CompanyConfig
from synthorg.hr.approvals import promotion_approver
from synthorg.hr.departments import DepartmentDesk, DeptPlan, DeptStats
from synthorg.hr.feed import Feed
from synthorg.hr.link import HrLink
from synthorg.hr.office import HrOffice, PlanDepartments, scores_of
from synthorg.org.decisions import OrgDecision, rows_of
from synthorg.org.directory import OrgDirectory


@ray.remote(num_cpus=0)
class DepartmentActor:
    def __init__(self, config: CompanyConfig, dept: int) -> None:
        self._desk = DepartmentDesk(config, dept)

    def review(self, stats: DeptStats) -> DeptPlan:
        return self._desk.review(stats)

    def state(self) -> list[int]:
        return self._desk.state()

    def load(self, state: list[int]) -> None:
        self._desk.load(state)

    def pid(self) -> int:
        return os.getpid()

    def __repr__(self) -> str:  # the dashboard shows it beside the actor
        d = self._desk
        return f"dept:{d.name} routing={d.routing} hires_asked={d.hires_asked}"


def _ask_departments(depts: list[ray.actor.ActorHandle]) -> PlanDepartments:
    def plan(stats: list[DeptStats]) -> list[DeptPlan]:  # a lost actor: ActorCrashed
        return wait([d.review.remote(s) for d, s in zip(depts, stats, strict=True)], -1)
    return plan


@ray.remote(num_cpus=0)
class HrActor:
    def __init__(self, config: CompanyConfig, directory: OrgDirectory, key: int, groups: int,
                 departments: list[ray.actor.ActorHandle], run_dir: str,
                 record: str | None) -> None:
        """run_dir, record: where promotions wait for a person in human mode (and, replaying,
        the decisions they were given)."""
        self._office = HrOffice(config, directory, np.uint64(key), groups,
                                _ask_departments(departments), promotion_approver(
                                    config, np.uint64(key), directory.agent_ids, Path(run_dir),
                                    Path(record) if record else None))
        self._reviewing: tuple[int, threading.Thread, list] | None = None
        # a person decides promotions (human mode): the review waits for them when its
        # decisions are due, as the local backend's does, never for a review due after the
        # run's last tick
        self._ahead = config.policies.approvals.mode != "human"

    def take(self, tick: int, group: int, feed: Feed) -> None:
        """Once every group's feed is in, the review starts in the background: the groups
        step on meanwhile, until the tick its decisions take effect."""
        self._office.take(tick, group, feed)
        if self._ahead and self._office.fed(tick):
            self._finish_review()
            outcome: list = []

            def review() -> None:
                try:
                    outcome.append(self._office.decisions(tick))
                except BaseException as exc:  # raised to the groups in `decisions`
                    outcome.append(exc)

            thread = threading.Thread(target=review, name=f"hr-review-{tick}", daemon=True)
            thread.start()
            self._reviewing = (tick, thread, outcome)

    def decisions(self, tick: int) -> list[OrgDecision]:
        self._finish_review()
        return self._office.decisions(tick)

    def _finish_review(self) -> None:
        if self._reviewing is None:
            return
        _, thread, outcome = self._reviewing
        thread.join()
        self._reviewing = None
        if outcome and isinstance(outcome[0], BaseException):
            raise outcome[0]

    def state(self) -> dict[str, object]:
        self._finish_review()
        return self._office.state()

    def load(self, state: dict[str, object]) -> None:
        self._finish_review()
        self._office.load(state)

    def org_decisions(self) -> list[list[float]]:
        return rows_of(self._office.timeline.decisions)

    def scores(self) -> pl.DataFrame | None:
        return scores_of(self._office)

    def pid(self) -> int:
        return os.getpid()

    def __repr__(self) -> str:
        return f"hr reviews={self._office.reviews} hires={self._office.hires_made}"


class RemoteHr(HrLink):
    """A group's way to the `hr` actor; its process dying is an ActorCrashed."""

    def __init__(self, actor: ray.actor.ActorHandle) -> None:
        self._actor = actor

    def take(self, tick: int, group: int, feed: Feed) -> None:
        wait([self._actor.take.remote(tick, group, feed)], tick)

    def decisions(self, tick: int) -> list[OrgDecision]:
        return wait([self._actor.decisions.remote(tick)], tick)[0]
