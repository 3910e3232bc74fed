"""The teleological metrics on constructed tables, each by its formula."""

from __future__ import annotations

import math

import polars as pl
import pytest

from synthorg.hr.teleology import teleological_metrics


def _tables(tmp_path):
    ev = [  # (actor, kind, task)
        ("a", "task_started", 1), ("a", "task_started", 2), ("a", "task_started", 3),
        ("a", "tool_call", 1), ("a", "tool_call", 2), ("a", "tool_call", 2),
        ("a", "tool_denied", 3), ("a", "waited", 3), ("a", "escalated", 3),
        ("a", "approval_granted", 3), ("a", "goal_revised", 1), ("a", "goal_revised", 3),
        ("b", "task_started", 4), ("b", "tool_call", 4), ("b", "security_incident", 4)]
    pl.DataFrame({"actor": [e[0] for e in ev], "kind": [e[1] for e in ev],
                  "task": [e[2] for e in ev], "actor_index": [0 if e[0] == "a" else 1 for e in ev]}
                 ).write_parquet(tmp_path / "events.parquet")
    pl.DataFrame({"task": [1, 2, 3, 4], "type": ["t"] * 4, "agent": ["a", "a", "a", "b"],
                  "status": ["completed", "completed", "failed", "completed"],
                  "quality": [0.9, 0.5, 0.0, 0.7], "turns": [2, 3, 5, 4],
                  "finished": [10, 12, 14, 11], "deadline": [11, 20, 13, 20]}
                 ).write_parquet(tmp_path / "tasks.parquet")


def test_each_metric_by_its_formula(tmp_path):
    _tables(tmp_path)
    per, run = teleological_metrics(tmp_path)
    a = per.filter(pl.col("agent") == "a").row(0, named=True)
    assert a["goal_persistence"] == pytest.approx(2 / 3)
    assert a["teleological_coherence"] == pytest.approx(3 / (3 + 1 + 1))  # 1 denied, 1 wait
    assert a["reflective_efficiency"] == pytest.approx((0.9 + 0.5) / 10)
    assert a["adaptivity"] == pytest.approx(1 / 2)  # task 1 on time, task 3 failed
    assert a["normative_fidelity"] == pytest.approx(1 - 1 / 4)
    # p90 of type t over completed (0.9, 0.5, 0.7) is 0.9: nothing strictly above it
    assert a["innovation_yield"] == pytest.approx(0.0)
    assert a["reasoning_quality"] == pytest.approx((2 + 1) / (3 + 1))
    mean = 0.7  # of a's completed: deviations 0.2, 0.2
    assert a["lyapunov_exponent"] == pytest.approx(
        math.log((abs(0.5 - mean) + 0.01) / (abs(0.9 - mean) + 0.01)))
    b = per.filter(pl.col("agent") == "b").row(0, named=True)
    assert b["normative_fidelity"] == pytest.approx(0.0)  # its one call was an incident
    assert b["adaptivity"] is None  # never revised
    assert run["goal_persistence"] == pytest.approx(3 / 4)
