"""Autonomy falls by itself (denials, incidents, budgets) and rises only through an approval
(synthorg/engine/autonomy.py); the lowered level governs the agent's next calls."""

from __future__ import annotations

import json
import sqlite3

import polars as pl
import pytest

import synthorg
from synthorg.secops.parking import FILE
from tests.conftest import STARTUP

LOCAL = ["runtime.backend=local"]
OFF = ["policies.security.downgrade.after_denials=null",
       "policies.security.downgrade.on_incident=false",
       "policies.security.downgrade.on_budget=false"]


def _run(tmp_path, overrides, ticks=300, seed=None):
    cfg = synthorg.load_config(STARTUP, [*LOCAL, *overrides])
    return synthorg.Simulation(cfg, seed=seed, out=tmp_path).run(ticks=ticks)


def _autonomy_events(result) -> pl.DataFrame:
    return result.events.filter(pl.col("kind").str.starts_with("autonomy_"))


def test_repeated_denials_lower_autonomy_and_the_next_calls_are_checked_at_it(tmp_path):
    # nothing approved: a supervised agent can run low-risk calls only
    result = _run(tmp_path, ["policies.approvals.approve_probability=0",
                             "policies.security.downgrade.restore_after_ticks=null"])
    ev = result.events
    lowered = ev.filter((pl.col("kind") == "autonomy_lowered")
                        & (pl.col("lowered_for") == "denials"))
    assert lowered.height > 0 and set(lowered["autonomy"]) <= {"supervised", "assisted",
                                                               "autonomous"}
    window, needed = 20, 3
    denied = ev.filter(pl.col("kind") == "tool_denied")
    for actor, tick in lowered.select("actor", "tick").rows():
        recent = denied.filter((pl.col("actor") == actor) & (pl.col("tick") <= tick)
                               & (pl.col("tick") > tick - window * needed))
        assert recent.height >= needed
    # once supervised (and never restored), an agent's calls that ran are all low risk
    supervised = lowered.filter(pl.col("autonomy") == "supervised")
    assert supervised.height > 0
    for actor, since in supervised.group_by("actor").agg(pl.col("tick").min()).rows():
        ran = ev.filter((pl.col("actor") == actor) & (pl.col("tick") > since)
                        & (pl.col("kind") == "tool_call"))
        assert set(ran["risk_tier"].drop_nulls()) <= {"low"}, actor


def test_an_incident_lowers_its_agent_to_supervised(tmp_path):
    result = _run(tmp_path, ["policies.security.downgrade.after_denials=null"])
    ev = result.events
    incidents = ev.filter(pl.col("kind") == "security_incident").select("actor", "tick")
    assert incidents.height > 0
    lowered = ev.filter((pl.col("kind") == "autonomy_lowered")
                        & (pl.col("lowered_for") == "incident"))
    assert lowered.height > 0 and set(lowered["autonomy"]) == {"supervised"}
    assert set(lowered.select("actor", "tick").rows()) <= set(incidents.rows())
    assert result.summary.autonomy_lowered == lowered.height


def test_a_refusing_budget_lowers_once_until_given_back(tmp_path):
    result = _run(tmp_path, ["policies.budget.agent_usd=2", "policies.budget.period_ticks=50",
                             "policies.security.downgrade.after_denials=null",
                             "policies.security.downgrade.on_incident=false",
                             "policies.security.downgrade.restore_after_ticks=null"])
    ev = result.events
    assert ev.filter(pl.col("kind") == "budget_blocked").height > 0
    lowered = ev.filter(pl.col("kind") == "autonomy_lowered")
    assert lowered.height > 0 and set(lowered["lowered_for"]) == {"budget"}
    assert lowered["actor"].is_unique().all()  # never lowered again while lowered


def test_autonomy_comes_back_only_through_granted_approvals(tmp_path):
    result = _run(tmp_path / "on", [])
    back = _autonomy_events(result).filter(pl.col("kind") == "autonomy_restored")
    assert back.height > 0 and result.summary.autonomy_restored == back.height
    with sqlite3.connect(tmp_path / "on" / FILE) as db:
        asked = {(agent, due): (status, reason) for agent, due, status, reason in db.execute(
            "SELECT agent, due, status, reason FROM parked WHERE rule = 'autonomy.restore'")}
    for actor, tick in back.select("actor", "tick").rows():
        status, reason = asked[(actor, tick)]
        assert status == "granted" and "asks for autonomy" in reason
    never = _run(tmp_path / "refused", ["policies.approvals.approve_probability=0"])
    kinds = set(_autonomy_events(never)["kind"])
    assert "autonomy_restored" not in kinds and {"autonomy_lowered",
                                                 "autonomy_kept_low"} <= kinds


def test_off_means_no_change_and_lowering_reproduces_whatever_the_layout(tmp_path):
    off = _run(tmp_path / "off", OFF, ticks=150)
    assert _autonomy_events(off).height == 0
    one = _run(tmp_path / "one", [], ticks=150, seed=5)
    many = _run(tmp_path / "many", ["runtime.agents_per_actor=3"], ticks=150, seed=5)
    assert _autonomy_events(one).height > 0
    assert one.summary.ledger_sha256 == many.summary.ledger_sha256


@pytest.mark.parametrize("field,value", [("after_denials", 0), ("window_ticks", 0),
                                         ("restore_after_ticks", -1)])
def test_bad_downgrade_settings_are_refused(tmp_path, field, value):
    from typer.testing import CliRunner

    from synthorg.cli.app import app

    r = CliRunner().invoke(app, ["validate", str(STARTUP), "--set",
                                 f"policies.security.downgrade.{field}={json.dumps(value)}"])
    assert r.exit_code == 2 and f"downgrade.{field}" in r.output
