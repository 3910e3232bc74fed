"""Org changes decided during a run: applied at their tick, checked when read back."""

from __future__ import annotations

import pytest

from synthorg.config.loader import load_config
from synthorg.domain.enums import EventKind, HrReason, Seniority
from synthorg.org.decisions import OrgDecision, decisions_of, rows_of
from synthorg.org.directory import NEVER
from synthorg.org.timeline import OrgTimeline
from tests.conftest import CAREERS


@pytest.fixture(scope="module")
def cfg():
    return load_config(CAREERS)


def test_a_hire_fills_a_kept_slot_at_its_tick(cfg):
    t = OrgTimeline(cfg)
    d = t.directory
    slot = d.agent_ids.index("hire-0001")
    skills = tuple(0.5 for _ in d.skill_ids)
    t.decide([OrgDecision(10, EventKind.agent_joined, slot, 1, 1, int(HrReason.queue_pressure),
                          int(Seniority.mid), skills)])
    t.advance(9)
    assert t.directory.joined[slot] == NEVER
    changes = t.advance(10)
    assert changes is not None and changes[0].kind == EventKind.agent_joined
    assert changes[0].value == HrReason.queue_pressure
    d = t.directory
    assert d.active[slot] and d.joined[slot] == 10 and d.agent_dept[slot] == 1
    assert d.seniority[slot] == Seniority.mid and tuple(d.skills[slot]) == skills


def test_a_promotion_caps_autonomy_and_a_leaver_leaves(cfg):
    t = OrgTimeline(cfg)
    a = t.directory.agent_ids.index("eng-0001")
    t.decide([OrgDecision(5, EventKind.agent_promoted, a, int(Seniority.mid)),
              OrgDecision(7, EventKind.agent_left, a, 0)])
    t.advance(5)
    assert t.directory.seniority[a] == Seniority.mid
    t.advance(7)
    assert t.directory.left[a] == 7 and not t.directory.active[a]


@pytest.mark.parametrize("bad", [
    [5, int(EventKind.agent_promoted), 10_000, 1, -1, 0, -1],  # no such slot
    [5, int(EventKind.agent_moved), 0, 99, -1, 0, -1],  # no such department
    [5, int(EventKind.agent_joined), 0, 0, 0, 0, 1],  # skills missing
    [5, int(EventKind.task_created), 0, 0, -1, 0, -1],  # not an org change
])
def test_a_crafted_decision_is_refused(cfg, bad):
    with pytest.raises(ValueError):
        OrgTimeline(cfg, decisions=decisions_of([bad]))


def test_decisions_round_trip_as_rows():
    ds = [OrgDecision(3, EventKind.agent_moved, 2, 1, 0, 5), OrgDecision(
        4, EventKind.agent_joined, 9, 0, 1, 4, 0, (0.1, 0.2))]
    assert decisions_of(rows_of(ds)) == ds
