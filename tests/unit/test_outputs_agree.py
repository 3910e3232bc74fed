"""summary.json, tasks, agents, events and timeseries agree on every count and cost, so a
researcher can trust each of them alone (startup and enterprise, several seeds)."""

from __future__ import annotations

import polars as pl
import pytest

import synthorg
from tests.conftest import ENTERPRISE, STARTUP

CASES = [(STARTUP, 1, 200), (STARTUP, 2, 200), (STARTUP, 3, 200), (ENTERPRISE, 1, 60),
         (ENTERPRISE, 2, 60)]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{c[0].stem}-{c[1]}")
def run(request, tmp_path_factory):
    config, seed, ticks = request.param
    cfg = synthorg.load_config(config, ["runtime.backend=local"])
    return synthorg.Simulation(cfg, seed=seed, out=tmp_path_factory.mktemp("agree")).run(
        ticks=ticks)


def test_task_counts_agree(run):
    s, tasks, events = run.summary, run.tasks, run.events
    by_status = dict(tasks.group_by("status").len().iter_rows())
    assert tasks.height == s.tasks_created
    assert by_status.get("completed", 0) == s.tasks_completed
    assert by_status.get("failed", 0) == s.tasks_failed
    assert by_status.get("open", 0) == s.tasks_open
    kinds = dict(events.group_by("kind").len().iter_rows())
    assert kinds.get("task_completed", 0) == s.tasks_completed
    assert kinds.get("task_failed", 0) == s.tasks_failed
    reasons = dict(tasks.filter(pl.col("status") == "failed").group_by("fail_reason").len()
                   .iter_rows())
    assert reasons == s.tasks_failed_by_reason
    assert s.failure_rate == pytest.approx(s.tasks_failed / (s.tasks_failed
                                                             + s.tasks_completed), abs=1e-6)


def test_tasks_say_who_holds_them_and_failures_have_no_quality(run):
    tasks = run.tasks
    assert tasks.filter(pl.col("status") == "open")["agent"].null_count() == 0
    assert tasks.filter(pl.col("status") == "failed")["quality"].null_count() == \
        tasks.filter(pl.col("status") == "failed").height
    done = tasks.filter(pl.col("status") == "completed")
    assert done["quality"].null_count() == 0
    assert run.summary.mean_quality == pytest.approx(done["quality"].mean())
    assert run.summary.lead_time_mean == pytest.approx(done["lead_time_ticks"].mean(), abs=1e-4)
    assert run.summary.lead_time_p50 <= run.summary.lead_time_p90


def test_event_counts_agree(run):
    s = run.summary
    kinds = dict(run.events.group_by("kind").len().iter_rows())
    assert kinds.get("escalated", 0) == s.escalations == s.approvals_requested
    assert kinds.get("approval_granted", 0) == s.approvals
    assert kinds.get("approval_rejected", 0) == s.approvals_rejected
    assert kinds.get("tool_call", 0) == s.tool_calls_executed
    assert (s.tool_calls_executed + s.tool_calls_denied + s.tool_calls_escalated
            == s.tool_calls)
    assert kinds.get("help_declined", 0) == s.help_declined
    assert kinds.get("budget_blocked", 0) == s.budget_blocked


def test_agents_account_for_every_ended_task(run):
    agents, tasks = run.agents, run.tasks
    ended = tasks.filter(pl.col("status") != "open")
    by_agent = ended.group_by("agent", "status").len()
    for status in ("completed", "failed"):
        per = dict(by_agent.filter(pl.col("status") == status).select("agent", "len")
                   .iter_rows())
        stats = dict(agents.select("agent", status).iter_rows())
        # a task no department could route has no agent; every other one is some agent's
        assert {a: n for a, n in per.items() if a is not None} == {
            a: n for a, n in stats.items() if n}


def test_costs_add_up_to_the_cent(run):
    s = run.summary
    ts = pl.read_parquet(run.run_dir / "timeseries.parquet")
    assert s.cost_salaries_usd + s.cost_tools_usd + s.cost_llm_usd == pytest.approx(
        s.cost_usd, abs=0.005)
    assert ts["cost_salary_usd"].sum() == pytest.approx(s.cost_salaries_usd, abs=0.005)
    assert ts["cost_tools_usd"].sum() == pytest.approx(s.cost_tools_usd, abs=0.005)
    tool_events = run.events.filter(pl.col("kind") == "tool_call")["amount_usd"].sum()
    assert tool_events == pytest.approx(s.cost_tools_usd, abs=0.005)
    assert 0.0 < s.utilisation < 1.0


def test_events_read_out_their_codes(run):
    """Events name the tool, SecOps rule, fail reason and message kind they carry as codes,
    and those names agree with the summary."""
    events, s = run.events, run.summary
    calls = events.filter(pl.col("kind") == "tool_call")
    assert calls["tool"].null_count() == 0 and calls.height > 0
    checked = events.filter(pl.col("kind").is_in(["tool_denied", "tool_escalated"]))
    assert checked["rule"].null_count() == 0
    failed = events.filter(pl.col("kind") == "task_failed")
    assert dict(failed.group_by("fail_reason").len().iter_rows()) == s.tasks_failed_by_reason
    asks = events.filter(pl.col("message_kind") == "ask").height
    assert asks == s.help_requests
    assert events.filter(pl.col("kind") == "task_completed")["tool"].null_count() == \
        s.tasks_completed  # no code to read there


def test_agents_costs_add_up_to_the_runs(run):
    """What each agent was paid and spent on tools adds up to the run's cost, to the cent."""
    agents, s = run.agents, run.summary
    assert agents["paid_usd"].sum() == pytest.approx(s.cost_salaries_usd, abs=0.005)
    assert agents["tool_spend_usd"].sum() == pytest.approx(s.cost_tools_usd, abs=0.005)
    assert (agents["paid_usd"] + agents["tool_spend_usd"]).sum() == pytest.approx(
        s.cost_usd, abs=0.005)
