"""SecOps inside a simulation: calls carry arguments from their tool's forms, threats make
harmful calls with a ground truth SecOps never sees, and what SecOps lets through becomes a
security incident. The counts agree with the events a researcher reads."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import synthorg
from synthorg.domain.enums import Autonomy
from synthorg.secops.catalog import checker_for
from synthorg.secops.forms import CANONICAL, secops_tables
from tests.conftest import ASK_EVERY_FAMILY, ENTERPRISE, STARTUP


def _run(tmp_path, name: str, overrides: list[str], seed: int = 0, ticks: int = 300,
         config=STARTUP):
    cfg = synthorg.load_config(config, ["runtime.backend=local", *overrides])
    return synthorg.Simulation(cfg, seed=seed, out=tmp_path / name).run(ticks=ticks)


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The default company as `make run` runs it: 300 ticks, threats on."""
    return _run(tmp_path_factory.mktemp("secops"), "default", [])


@pytest.mark.parametrize("config", [STARTUP, ENTERPRISE])
def test_a_forms_verdict_does_not_depend_on_how_its_fields_are_filled(config):
    """The table's premise: a form filled with other identifiers gets the verdict of its
    canonical fill, for every autonomy."""
    cfg = synthorg.load_config(config)
    tables = secops_tables(cfg)
    checker = checker_for(cfg)
    fills = [CANONICAL, {"task": 987654, "type": "bugfix", "agent": "eng-0003",
                         "department": "engineering", "tick": 4321}]
    for form in range(len(tables.forms)):
        tool = cfg.tools[int(tables.forms.tool[form])].name
        for fields in fills:
            call = checker.call(tool, tables.forms.arguments(form, fields),
                                tables.forms.task_text[form])
            for autonomy in Autonomy:
                v = checker.check(call, autonomy)
                assert int(v.verdict) == tables.verdicts.verdict[form, autonomy, 0], (
                    form, fields, autonomy, v)


def test_the_default_company_shows_what_secops_allowed_denied_and_let_through(default_run):
    s = default_run.summary
    assert s.ticks == 300
    assert s.tool_calls_executed > 0 and s.tool_calls_denied > 0 and s.tool_calls_escalated > 0
    assert s.harmful_calls > 0 and s.harmful_blocked > 0 and s.security_incidents > 0
    assert s.security_incident_cost_usd > 0
    e = default_run.events
    threats = e.filter(pl.col("kind") == "threat")
    incidents = e.filter(pl.col("kind") == "security_incident")
    assert threats.height == s.harmful_calls
    assert incidents.height == s.security_incidents
    assert incidents["amount_usd"].sum() == pytest.approx(s.security_incident_cost_usd)
    # every harmful attempt ends blocked, run, or still waiting for a person at the end
    assert s.harmful_blocked + s.security_incidents <= s.harmful_calls
    # the ground truth is on every call event, and only harmful forms carry a threat kind
    calls = e.filter(pl.col("kind").is_in(["tool_call", "tool_denied", "tool_escalated"]))
    assert calls["form"].null_count() == 0
    assert (calls["harmful"] == calls["threat_kind"].is_not_null()).all()
    assert set(threats["threat_kind"].unique()) >= {"injection", "mistake"}
    # a run call is an executed tool call of the same agent, task and tick
    ran = incidents.select("tick", "actor", "task", "form").join(
        e.filter(pl.col("kind") == "tool_call").select("tick", "actor", "task", "form"),
        on=["tick", "actor", "task", "form"], how="anti")
    assert ran.height == 0


def test_call_events_read_like_real_work(default_run):
    e = default_run.events
    calls = e.filter(pl.col("kind") == "tool_call")
    shells = calls.filter(pl.col("call_tool") == "run_shell")
    assert shells.height > 0
    for text in shells["arguments"].head(20):
        args = json.loads(text)
        assert set(args) == {"command"} and "{" not in args["command"]
    first = shells.row(0, named=True)
    if "pytest" in first["arguments"]:
        assert f"t{first['task']}" in first["arguments"]
    denied = e.filter(pl.col("kind") == "tool_denied")
    assert denied["rule"].null_count() == 0 and denied["reason"].null_count() == 0
    assert set(denied["risk_tier"].unique()) <= {"low", "medium", "high", "critical"}
    assert (denied["verdict"] == "deny").all()


def _shared_folder_reads(events: pl.DataFrame, folder: str) -> set[str]:
    """The kinds of event SecOps gave the calls that read the folder (`diff` against it)."""
    calls = events.filter(pl.col("kind").is_in(["tool_call", "tool_denied", "tool_escalated"])
                          & pl.col("arguments").str.contains(folder, literal=True))
    return set(calls.filter(pl.col("arguments").str.contains('"diff ', literal=True))["kind"])


def test_the_default_companys_shared_folder_is_read_as_ordinary_work(tmp_path, default_run):
    """policies.security.shared_folders in a run: the default company declares
    /srv/eng-shared, where its engineers compare API schemas (ordinary work, allowed).
    Without the declaration the same calls reach outside the workspace and are refused.
    (Writes there are asked about: test_secops_checker's shared-folder cases.)"""
    assert _shared_folder_reads(default_run.events, "/srv/eng-shared/") == {"tool_call"}
    undeclared = _run(tmp_path, "no-shared", ["policies.security.shared_folders=[]"], ticks=150).events
    assert _shared_folder_reads(undeclared, "/srv/eng-shared/") == {"tool_denied"}


def test_without_threats_nothing_harmful_happens(tmp_path):
    run = _run(tmp_path, "calm", ["workload.threats.injection_rate=0",
                                  "workload.threats.insiders=[]",
                                  "workload.threats.mistake_probability=0"], ticks=150)
    s = run.summary
    assert s.harmful_calls == s.harmful_blocked == s.security_incidents == 0
    assert s.security_incident_cost_usd == 0.0
    assert run.events.filter(pl.col("harmful").fill_null(False)).height == 0


def test_an_insider_attempts_and_an_approver_catches(tmp_path):
    run = _run(tmp_path, "insider", ["workload.threats.insiders=[eng-0001, sre-0001]",
                                     "workload.threats.insider_attempt_probability=0.5"],
               ticks=150)
    threats = run.events.filter(pl.col("kind") == "threat")
    by_insiders = threats.filter(pl.col("threat_kind").is_in(["exfiltration", "sabotage"]))
    assert set(by_insiders["actor"].unique()) <= {"eng-0001", "sre-0001", "eng-0002"}
    assert by_insiders.height > 20


def _trade(tmp_path, strict: bool, seed: int):
    sets = ["company.autonomy=supervised",
            "policies.security.risk_tiers={fs:delete: medium, fs:write: medium}",
            ] if strict else []
    sets.append("tools.analyse.executor=null")  # in-process: this is about SecOps, not Docker
    return _run(tmp_path, f"{'strict' if strict else 'lax'}-{seed}", sets, seed=seed,
                ticks=200).summary


def test_stricter_settings_trade_incidents_for_delay(tmp_path):
    """Lower autonomy and higher tiers for writes and deletes: fewer incidents (a person
    sees the call and catches the harmful ones), more escalations and longer lead times."""
    seeds = range(4)
    lax = [_trade(tmp_path, False, s) for s in seeds]
    strict = [_trade(tmp_path, True, s) for s in seeds]
    assert sum(s.security_incidents for s in strict) < sum(s.security_incidents for s in lax)
    assert (sum(s.security_incident_cost_usd for s in strict)
            < sum(s.security_incident_cost_usd for s in lax))
    assert sum(s.escalations for s in strict) > 2 * sum(s.escalations for s in lax)
    assert np.mean([s.lead_time_mean for s in strict]) > np.mean([s.lead_time_mean for s in lax])


def test_asking_instead_of_refusing_trades_refusals_for_approvals(tmp_path, default_run):
    """Every detector family asking a person (policies.security.ask_instead_of_deny): no
    call is refused by a detector; the approver sees what was refused and lets some harmful
    calls through."""
    asking = _run(tmp_path, "asking", list(ASK_EVERY_FAMILY))
    s, d = asking.summary, default_run.summary
    denied = asking.events.filter(pl.col("kind") == "tool_denied")
    assert denied.filter(~pl.col("rule").str.contains(r"^(?:autonomy|tool|review)\.")).height == 0
    assert d.tool_calls_denied > s.tool_calls_denied
    assert s.tool_calls_escalated > d.tool_calls_escalated
    assert s.security_incidents > d.security_incidents


def test_same_seed_same_ledger_with_threats(tmp_path, default_run):
    again = _run(tmp_path, "again", [])
    assert again.summary.ledger_sha256 == default_run.summary.ledger_sha256
    assert again.summary.security_incidents == default_run.summary.security_incidents


def test_a_junior_cannot_hold_the_highest_autonomy(tmp_path):
    """Agent, department and company settings and scenario changes are all capped by the
    seniority's ceiling (policies.security.autonomy_cap: juniors at most autonomous)."""
    cfg = synthorg.load_config(STARTUP, [
        "company.autonomy=full",
        "scenario=[{tick: 5, kind: autonomy, agents: [eng-0005], to: full},"
        " {tick: 5, kind: promote, agents: [eng-0003], to: junior}]"])
    from synthorg.org.directory import OrgDirectory
    from synthorg.org.timeline import OrgTimeline
    d = OrgDirectory.from_config(cfg)
    held = {a: Autonomy(int(d.autonomy[i])).name for i, a in enumerate(d.agent_ids)}
    assert held["eng-0001"] == "autonomous" and held["eng-0005"] == "autonomous"  # juniors
    assert held["eng-0002"] == "full" and held["eng-lead"] == "autonomous"  # its own setting
    timeline = OrgTimeline(cfg, d)
    changes = timeline.advance(5)
    after = timeline.directory
    ids = list(after.agent_ids)
    assert Autonomy(int(after.autonomy[ids.index("eng-0005")])) == Autonomy.autonomous
    assert Autonomy(int(after.autonomy[ids.index("eng-0003")])) == Autonomy.autonomous
    assert any(c.kind.name == "autonomy_changed" for c in changes)
    run = _run(tmp_path, "capped", ["company.autonomy=full"], ticks=30)
    agents = run.agents if hasattr(run, "agents") else pl.read_parquet(
        run.run_dir / "agents.parquet")
    juniors = agents.filter(pl.col("seniority") == "junior")
    assert set(juniors["autonomy"]) == {"autonomous"}
