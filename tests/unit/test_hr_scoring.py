"""HR's scorers and trends on constructed ledgers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import theilslopes

from synthorg.config.hr import HrSpec
from synthorg.domain.enums import EventKind, MessageKind, TaskStatus
from synthorg.domain.records import EVENT_DTYPE, RESULT_DTYPE, TASK_DTYPE
from synthorg.hr.criteria import criteria_met
from synthorg.hr.feed import Feed
from synthorg.hr.history import History
from synthorg.hr.pillars import pillar_scores
from synthorg.hr.scoring import collaboration, review_frame, window_scores
from synthorg.hr.trends import theil_sen

DONE, FAILED = int(TaskStatus.completed), int(TaskStatus.failed)


def _results(rows: list[tuple[int, int, int, int, float]]) -> np.ndarray:
    """(task, agent, status, finished, quality) rows."""
    out = np.zeros(len(rows), dtype=RESULT_DTYPE)
    for i, (task, agent, status, finished, quality) in enumerate(rows):
        out[i] = (task, agent, status, 0, finished, finished - 1, quality, 1000, 1, 0, 0)
    return out


def _created(tasks: list[tuple[int, int]]) -> np.ndarray:
    """(task, deadline) rows."""
    out = np.zeros(len(tasks), dtype=TASK_DTYPE)
    out["task"] = [t for t, _ in tasks]
    out["deadline"] = [d for _, d in tasks]
    return out


def _events(rows: list[tuple[int, int, EventKind, int, int, float]]) -> np.ndarray:
    """(tick, actor, kind, task, target, value) rows."""
    out = np.zeros(len(rows), dtype=EVENT_DTYPE)
    for i, (tick, actor, kind, task, target, value) in enumerate(rows):
        out[i] = (tick, actor, i, int(kind), task, target, value, 0)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_theil_sen_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    frames, expected = [], {}
    for agent in range(5):
        n = int(rng.integers(3, 30))
        x = rng.choice(np.arange(200), size=n, replace=agent % 2 == 0).astype(float)  # ties too
        y = 0.01 * agent * x + rng.normal(0, 0.3, n)
        if len(np.unique(x)) < 2:
            continue
        frames.append(pl.DataFrame({"agent": [agent] * n, "x": x, "y": y}))
        ref = theilslopes(y, x)
        expected[agent] = (ref.slope, ref.intercept)
    got = theil_sen(pl.concat(frames))
    for row in got.iter_rows(named=True):
        slope, intercept = expected[row["agent"]]
        assert row["slope"] == pytest.approx(slope, rel=1e-9, abs=1e-12)
        assert row["intercept"] == pytest.approx(intercept, rel=1e-9, abs=1e-12)
    assert sorted(got["agent"].to_list()) == sorted(expected)


def test_a_window_needs_its_minimum_of_points():
    # agent 0: 5 tasks in the last 7 ticks; agent 1: 4
    rows = [(i, 0, DONE, 95 + i, 0.8) for i in range(5)] + \
           [(10 + i, 1, DONE, 95 + i, 0.9) for i in range(4)]
    h = History(90)
    h.ingest(Feed(_results(rows), _created([(r[0], 200) for r in rows]), _events([])), 100)
    scores = window_scores(h.results, 100, 7, 5).sort("agent")
    assert scores["valid"].to_list() == [True, False]
    assert scores["n"].to_list() == [5, 4]


def test_window_scores_count_completion_quality_and_lateness():
    rows = [(1, 0, DONE, 90, 0.6), (2, 0, DONE, 92, 1.0), (3, 0, FAILED, 93, 0.0),
            (4, 0, DONE, 94, 0.8), (5, 0, DONE, 40, 0.1)]  # the last: outside 30 ticks
    h = History(90)
    h.ingest(Feed(_results(rows), _created([(1, 95), (2, 91), (3, 99), (4, 99), (5, 50)]),
                  _events([])), 100)
    s = window_scores(h.results, 100, 30, 1).row(0, named=True)
    assert s["n"] == 4
    assert s["completion"] == pytest.approx(0.75)
    assert s["quality"] == pytest.approx(0.8)
    assert s["on_time"] == pytest.approx(2 / 3)  # task 2 finished after its deadline


def test_history_forgets_what_is_older_than_the_longest_window():
    h = History(30)
    h.ingest(Feed(_results([(1, 0, DONE, 10, 0.5)]), _created([(1, 20)]), _events([])), 25)
    h.ingest(Feed(_results([(2, 0, DONE, 49, 0.5)]), _created([(2, 60)]), _events([])), 50)
    assert h.results["task"].to_list() == [2]
    assert h.open.is_empty()  # both tasks finished


def test_collaboration_from_behaviour():
    d = float(MessageKind.delegate)
    ev = _events([
        (1, 0, EventKind.message_sent, 100, 1, d),  # 0 delegates 100 to 1: completed
        (1, 0, EventKind.message_sent, 101, 2, d),  # ... 101 to 2, who hands it back to 0
        (3, 2, EventKind.message_sent, 101, 0, d),
        (2, 5, EventKind.help_given, 7, 0, 0.5), (2, 5, EventKind.help_declined, 8, 1, 0.0),
        (2, 5, EventKind.help_given, 9, 2, 0.5)])
    res = _results([(100, 1, DONE, 5, 0.7), (101, 0, FAILED, 6, 0.0)])
    h = History(90)
    h.ingest(Feed(res, _created([(100, 50), (101, 50)]), ev), 10)
    c = {r["agent"]: r for r in collaboration(h.events, h.results).iter_rows(named=True)}
    assert c[0]["delegation_success"] == pytest.approx(0.5)
    assert c[0]["loop_prevention"] == pytest.approx(0.5)  # 101 came back to it
    assert c[0]["handoff_completeness"] == pytest.approx(0.5)  # 2 handed 101 on again
    assert c[5]["responsiveness"] == pytest.approx(2 / 3)
    assert c[2]["loop_prevention"] == pytest.approx(1.0)


def test_quality_layers_reviewer_signal_and_override():
    spec = HrSpec(enabled=True, windows=(30,), min_points=1, peer_weight=0.5,
                  overrides={})
    rows = [(1, 0, DONE, 90, 0.6), (2, 1, DONE, 90, 0.6)]
    ev = _events([(80, 0, EventKind.approval_granted, 1, 0, 0.0),
                  (81, 0, EventKind.approval_rejected, 1, 0, 0.0)])
    h = History(30)
    h.ingest(Feed(_results(rows), _created([(1, 99), (2, 99)]), ev), 100)
    frame = review_frame(h, 100, spec, np.array([0, 1, 2]), {1: 0.1})
    q = dict(zip(frame["agent"].to_list(), frame["quality_30"].to_list(), strict=True))
    assert q[0] == pytest.approx(0.5 * 0.6 + 0.5 * 0.5)  # outcome and reviewer
    assert q[1] == pytest.approx(0.1)  # a person's score stands
    assert q[2] is None  # nothing finished: no score


def test_n_of_m_counts_criteria_met_in_every_valid_window():
    spec = HrSpec(enabled=True, windows=(7, 30), min_points=2)
    frame = pl.DataFrame({
        "agent": [0, 1], "quality_7": [0.9, 0.9], "valid_7": [True, True],
        "quality_30": [0.9, 0.5], "valid_30": [True, True],
        "completion_7": [1.0, 1.0], "completion_30": [1.0, 1.0],
        "on_time_7": [None, None], "on_time_30": [0.95, 0.95],
        "collaboration": [0.9, None], "slope": [0.01, -0.01], "overall": [0.9, 0.9]})
    met = criteria_met(frame, spec).sort("agent")
    assert met["met_quality"].to_list() == [True, False]  # 1 misses in the 30-tick window
    assert met["met_collaboration"].to_list() == [True, False]
    assert met["met_trend"].to_list() == [True, False]
    assert met["met"].to_list() == [6, 3]


def test_pillar_weights_go_to_the_metrics_left_on():
    on = HrSpec(enabled=True, windows=(30,))
    off = HrSpec.model_validate({"enabled": True, "windows": [30], "pillars": {
        "quality": {"metrics": {"on_time": False}}}})
    frame = pl.DataFrame({"agent": [0], "dept": [0], "n_30": [10], "completion_30": [1.0],
                          "quality_30": [0.5], "on_time_30": [1.0], "collaboration": [None],
                          "responsiveness": [None], "denied": [0], "incidents": [0],
                          "cost_micro_30": [100.0]})
    assert pillar_scores(frame, on)["pillar_quality"][0] == pytest.approx(0.7 * 0.5 + 0.3)
    assert pillar_scores(frame, off)["pillar_quality"][0] == pytest.approx(0.5)
    assert pillar_scores(frame, on)["pillar_collaboration"][0] is None
