"""HR's policies on constructed ledgers: the office reviewing feeds it is handed."""

from __future__ import annotations

import numpy as np
import pytest

from synthorg.config.loader import load_config
from synthorg.domain.enums import EventKind, HrReason, Seniority, TaskStatus
from synthorg.domain.records import EVENT_DTYPE, RESULT_DTYPE, TASK_DTYPE
from synthorg.domain.rng import root_key
from synthorg.hr.departments import DepartmentDesk
from synthorg.hr.feed import Feed
from synthorg.hr.office import HrOffice, local_departments
from synthorg.org.directory import OrgDirectory
from tests.conftest import CAREERS

EVERY = 25


def _office(overrides: list[str]) -> tuple[HrOffice, OrgDirectory]:
    cfg = load_config(CAREERS, ["policies.approvals.approve_probability=1.0", *overrides])
    d = OrgDirectory.from_config(cfg)
    desks = [DepartmentDesk(cfg, k) for k in range(len(d.dept_ids))]
    return HrOffice(cfg, d, root_key(0), 1, local_departments(desks)), d


def _feed(d: OrgDirectory, tick: int, quality: dict[str, float], per_agent: int = 8,
          loads: dict[str, int] | None = None, first_task: int = 0) -> Feed:
    """Each listed agent finished `per_agent` tasks in the review period, at `quality`
    (0: failed), all on time."""
    rows = []
    task = first_task
    for aid, q in quality.items():
        a = d.agent_ids.index(aid)
        for i in range(per_agent):
            status = TaskStatus.completed if q > 0 else TaskStatus.failed
            rows.append((task, a, int(status), 0, tick - EVERY + 1 + 3 * i, tick - EVERY + 3 * i,
                         q, 1000, 2, 0, 0))
            task += 1
    results = np.array(rows, dtype=RESULT_DTYPE)
    created = np.zeros(len(rows), dtype=TASK_DTYPE)
    created["task"], created["deadline"] = results["task"], results["finished"] + 5
    load = np.zeros(d.size, dtype=np.int64)
    for aid, n in (loads or {}).items():
        load[d.agent_ids.index(aid)] = n
    return Feed(results, created, np.zeros(0, dtype=EVENT_DTYPE), load,
                np.zeros(len(d.dept_ids), dtype=np.int64))


def _review(office: HrOffice, d: OrgDirectory, reviews: int, quality: dict[str, float],
            loads: dict[str, int] | None = None) -> list:
    out = []
    for r in range(1, reviews + 1):
        tick = r * EVERY
        office.take(tick, 0, _feed(d, tick, quality, loads=loads, first_task=r * 10_000))
        out += office.decisions(tick)
    return out


def _of(decisions, kind):
    return [x for x in decisions if x.kind == kind]


def test_a_persistent_under_performer_is_fired_and_never_a_departments_last(tmp_path):
    office, d = _office(["hr.promotion.policy=none", "hr.demotion.policy=none",
                         "hr.reassignment.policy=none", "hr.hiring.policy=none"])
    fired = _of(_review(office, d, 4, {"eng-0001": 0.3, "eng-0002": 0.9, "sre-0001": 0.3}),
                EventKind.agent_left)
    assert [d.agent_ids[x.agent] for x in fired] == ["eng-0001", "sre-0001"]
    assert all(x.reason == HrReason.under_performing and x.tick == 4 * EVERY + 1 for x in fired)
    office2, _ = _office(["hr.firing.reviews=5"])
    assert not _of(_review(office2, d, 4, {"eng-0001": 0.3}), EventKind.agent_left)


def test_promotion_needs_n_of_m_and_tenure(tmp_path):
    office, d = _office(["hr.firing.policy=none", "hr.reassignment.policy=none",
                         "hr.hiring.policy=none", "hr.promotion.tenure_reviews=2",
                         "hr.promotion.min_criteria=5"])
    # both complete everything on time at a steady quality (trend and pillars met, no
    # collaboration seen); only eng-0001's quality reaches the bar: 5 criteria against 4
    decided = _review(office, d, 2, {"eng-0001": 0.95, "eng-0005": 0.5})
    up = _of(decided, EventKind.agent_promoted)
    assert [d.agent_ids[x.agent] for x in up] == ["eng-0001"]
    once = _review(_office(["hr.promotion.tenure_reviews=3", "hr.promotion.min_criteria=5"])[0],
                   d, 2, {"eng-0001": 0.95})
    assert not _of(once, EventKind.agent_promoted)  # two reviews at the level, three asked
    assert up[0].target == Seniority.mid and up[0].reason == HrReason.criteria_met


def test_the_approver_can_refuse_a_promotion_to_senior():
    office, d = _office(["hr.firing.policy=none", "hr.reassignment.policy=none",
                         "hr.hiring.policy=none", "hr.promotion.tenure_reviews=1",
                         "hr.promotion.min_criteria=3",
                         "policies.approvals.approve_probability=0.0"])
    decided = _review(office, d, 1, {"eng-0002": 0.95})  # a mid
    refused = _of(decided, EventKind.promotion_refused)
    assert [d.agent_ids[x.agent] for x in refused] == ["eng-0002"]
    assert refused[0].target == Seniority.senior and not _of(decided, EventKind.agent_promoted)


def test_demotion_after_reviews_meeting_too_few_criteria():
    office, d = _office(["hr.firing.policy=none", "hr.reassignment.policy=none",
                         "hr.hiring.policy=none", "hr.promotion.policy=none",
                         "hr.demotion.reviews=2"])
    decided = _review(office, d, 2, {"eng-0003": 0.0})  # a senior failing everything
    down = _of(decided, EventKind.agent_demoted)
    assert [(d.agent_ids[x.agent], x.target) for x in down] == [("eng-0003", Seniority.mid)]


def test_a_loaded_department_hires_from_its_template_and_takes_a_colleague():
    office, d = _office(["hr.firing.policy=none", "hr.promotion.policy=none",
                         "hr.demotion.policy=none", "hr.hiring.reviews=2"])
    loads = {"pm-lead": 6, "pm-0001": 6, "pm-0002": 6}  # product: 6 open tasks a member
    decided = _review(office, d, 2, {"pm-0001": 0.7}, loads=loads)
    hires = _of(decided, EventKind.agent_joined)
    assert len(hires) == 1 and d.agent_ids[hires[0].agent] == "hire-0001"
    assert d.dept_ids[hires[0].target] == "product"
    assert d.role_ids[hires[0].role] == "product_manager"
    assert hires[0].reason == HrReason.queue_pressure
    moves = _of(decided, EventKind.agent_moved)
    assert moves and all(d.dept_ids[m.target] == "product" for m in moves)
    assert all(m.reason == HrReason.load_balance for m in moves)
    routing = _of(decided, EventKind.routing_changed)
    assert [d.dept_ids[r.agent] for r in routing] == ["product"]  # role_based -> load-balanced


@pytest.mark.parametrize("cut", ["hr.hiring.min_budget_left=0.99", "hr.hiring.policy=none"])
def test_no_hire_without_budget_or_policy(cut):
    office, d = _office(["hr.hiring.reviews=1", cut])
    feed = _feed(d, EVERY, {"pm-0001": 0.7}, loads={"pm-lead": 6, "pm-0001": 6, "pm-0002": 6})
    spent = d.dept_budget_micro // 50  # 2 % of every budget spent
    office.take(EVERY, 0, Feed(feed.results, feed.created, feed.events, feed.loads, spent))
    assert not _of(office.decisions(EVERY), EventKind.agent_joined)
