"""Mechanisms of the organisation model, each against the outputs a researcher reads:
deadlines expire on time wherever the task is, a helper's time is finite, calls beyond an
agent's autonomy ask before they are refused, a rejected request ends its task."""

from __future__ import annotations

import polars as pl
import pytest

import synthorg
from synthorg.domain.enums import MessageKind
from tests.conftest import ENTERPRISE, STARTUP


def _run(tmp_path, name: str, overrides: list[str], config=STARTUP, seed: int = 1,
         ticks: int = 200):
    cfg = synthorg.load_config(config, ["runtime.backend=local", *overrides])
    return synthorg.Simulation(cfg, seed=seed, out=tmp_path / name).run(ticks=ticks)


@pytest.fixture(scope="module")
def startup(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("model"), "startup", [])


@pytest.fixture(scope="module")
def enterprise(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("model"), "enterprise", [], config=ENTERPRISE,
                ticks=120)


@pytest.mark.parametrize("which", ["startup", "enterprise"])
def test_deadlines_expire_on_time_wherever_the_task_is(which, request):
    """A task fails at the first tick past its deadline and grace, whether it waits in a
    queue or its agent holds it while waiting; none is open past it at the end."""
    run = request.getfixturevalue(which)
    grace = synthorg.load_config(STARTUP).policies.work.deadline_grace_ticks
    tasks = run.tasks
    late = tasks.filter(pl.col("fail_reason").is_in(["expired", "deadline"]))
    assert late.height > 0
    assert (late["finished"] == late["deadline"] + grace + 1).all(), late.filter(
        pl.col("finished") != pl.col("deadline") + grace + 1)
    last = run.summary.ticks - 1
    overdue_open = tasks.filter((pl.col("status") == "open")
                                & (pl.col("deadline") + grace < last))
    assert overdue_open.height == 0, overdue_open


def test_a_helper_answers_no_more_than_its_capacity_per_tick(tmp_path):
    for capacity in (1, 2):
        run = _run(tmp_path, f"cap{capacity}", [
            f"policies.collaboration.help_capacity={capacity}",
            "policies.collaboration.max_help_requests_per_task=3"], config=ENTERPRISE,
            ticks=60)
        events = run.events
        given = events.filter(pl.col("kind") == "help_given").group_by("tick", "actor").len()
        declined = events.filter(pl.col("kind") == "help_declined")
        assert given["len"].max() == capacity
        assert declined.height > 0  # demand exceeded it: the rest were declined, not lost


def test_calls_beyond_autonomy_ask_for_approval_unless_the_policy_denies_them(tmp_path):
    """Supervised agents' high-risk calls (two tiers above) escalate by default, so their
    release tasks can complete; `beyond_autonomy: deny` refuses them outright."""
    supervised = ["company.autonomy=supervised"]
    asks = _run(tmp_path, "escalate", supervised)
    denies = _run(tmp_path, "deny", [*supervised, "policies.security.beyond_autonomy=deny"])
    released = asks.tasks.filter((pl.col("type") == "release")
                                 & (pl.col("status") == "completed")
                                 & pl.col("agent").str.starts_with("sre"))
    assert released.height > 0
    assert asks.summary.tool_calls_escalated > denies.summary.tool_calls_escalated
    def beyond(run):  # refusals by the autonomy rule (threats' harmful calls are denied anyway)
        return run.events.filter((pl.col("kind") == "tool_denied")
                                 & (pl.col("rule") == "autonomy.beyond")).height
    assert beyond(denies) > 0 == beyond(asks)
    refused = denies.tasks.filter((pl.col("type") == "release")
                                  & pl.col("agent").str.starts_with("sre"))
    assert (refused["status"] != "completed").all()


def test_a_rejected_request_ends_its_task_unless_the_policy_hands_it_to_the_head(tmp_path):
    strict = ["policies.approvals.approve_probability=0.3"]
    fail = _run(tmp_path, "fail", strict)
    head = _run(tmp_path, "head", [*strict, "policies.approvals.on_reject=head"])

    def handoffs(run) -> int:
        return run.events.filter((pl.col("kind") == "message_sent")
                                 & (pl.col("value") == float(MessageKind.handoff))).height

    rejected = fail.events.filter(pl.col("kind") == "approval_rejected").height
    assert rejected > 0 and handoffs(fail) == 0
    assert fail.tasks.filter(pl.col("fail_reason") == "rejected").height == rejected
    assert handoffs(head) > 0


def _dept_spend(run) -> dict[str, float]:
    ts = pl.read_parquet(run.run_dir / "timeseries.parquet")
    return dict(ts.group_by("department").agg(
        (pl.col("cost_salary_usd") + pl.col("cost_tools_usd")).sum().alias("usd")).iter_rows())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_budgets_bind_with_recorded_control_signals(tmp_path, seed):
    """Under a budget too small for the run, each department's spend stays within its share;
    the alerts at 75 and 90 % and the halt are recorded once each, in that order; work
    stops with reason `budget`. Watched only, the same budget is overrun, and said so."""
    tight = ["company.budget_usd=60000"]
    cfg = synthorg.load_config(STARTUP, tight)
    shares = {d.id: cfg.company.budget_usd * d.budget_share for d in cfg.departments}
    bound = _run(tmp_path, "bound", tight, seed=seed)
    watched = _run(tmp_path, "watched", [*tight, "policies.budget.enforce=false"], seed=seed)
    for dept, spent in _dept_spend(bound).items():
        assert spent <= shares[dept] + 1e-6, dept
    assert abs(sum(_dept_spend(bound).values()) - bound.summary.cost_usd) < 0.01
    assert any(spent > shares[d] for d, spent in _dept_spend(watched).items())
    for run, halts in ((bound, True), (watched, False)):
        alerts = run.events.filter(pl.col("kind") == "budget_alert").sort("tick", "seq")
        assert alerts["actor"].n_unique() == len(shares)  # every department ran out
        for _, rows in alerts.group_by("actor"):
            assert rows["value"].to_list() == ([0.75, 0.9, 1.0] if halts else [0.75, 0.9])
    assert bound.tasks.filter(pl.col("fail_reason") == "budget").height > 0
    assert watched.tasks.filter(pl.col("fail_reason") == "budget").height == 0
    assert bound.summary.tasks_completed < watched.summary.tasks_completed


def test_heads_lead_rather_than_absorb_help_requests(tmp_path):
    """By default colleagues ask each other, not their department head (before, heads gave
    over a thousand helps in a run); `heads_help: true` puts them back among the helpers."""
    def head_helps(run) -> int:
        agents = run.agents
        return int(agents.filter(pl.col("agent").str.ends_with("-head"))["helps_given"].sum())

    leading = _run(tmp_path, "leading", [], config=ENTERPRISE, ticks=60)
    helping = _run(tmp_path, "helping", ["policies.collaboration.heads_help=true"],
                   config=ENTERPRISE, ticks=60)
    assert leading.summary.help_requests > 0
    assert head_helps(leading) == 0 < head_helps(helping)


def test_a_budget_per_period_binds_each_period_and_lifts_with_the_next(tmp_path):
    """With `period_ticks`, a department's share is for each period: spend within every
    period stays within it, its alerts come again each period, and work resumes after a
    halt when the next period begins."""
    period = 50
    overrides = [f"policies.budget.period_ticks={period}", "company.budget_usd=20000",
                 "scenario=[]"]
    cfg = synthorg.load_config(STARTUP, overrides)
    shares = {d.id: cfg.company.budget_usd * d.budget_share for d in cfg.departments}
    run = _run(tmp_path, "periods", overrides)
    ts = pl.read_parquet(run.run_dir / "timeseries.parquet").with_columns(
        (pl.col("tick") // period).alias("period"))
    spent = ts.group_by("department", "period").agg(
        (pl.col("cost_salary_usd") + pl.col("cost_tools_usd")).sum().alias("usd"))
    for dept, _, usd in spent.iter_rows():
        assert usd <= shares[dept] + 1e-6
    halts = run.events.filter((pl.col("kind") == "budget_alert") & (pl.col("value") == 1.0))
    assert halts.with_columns((pl.col("tick") // period).alias("p"))["p"].n_unique() == 4
    done = run.tasks.filter(pl.col("status") == "completed").with_columns(
        (pl.col("finished") // period).alias("p"))
    assert done["p"].n_unique() == 4  # every period gets work done again
    assert run.tasks.filter(pl.col("fail_reason") == "budget").height > 0


def test_an_agents_own_budget_caps_its_spending_in_each_period(tmp_path):
    """Budgets go company -> department -> agent: with `policies.budget.agent_usd` (or an
    agent's own `budget_usd`) no agent's tool spend in a period passes its budget; the
    calls refused are budget_blocked events whose rule is agent_budget. Without agent
    budgets the same run spends more and blocks nothing."""
    period, per_agent, eng_lead = 50, 8.0, 3.0
    overrides = [f"policies.budget.period_ticks={period}", f"policies.budget.agent_usd={per_agent}",
                 f"agents.eng-lead.budget_usd={eng_lead}"]
    capped = _run(tmp_path, "capped", overrides)
    free = _run(tmp_path, "free", [f"policies.budget.period_ticks={period}"])
    calls = capped.events.filter(pl.col("kind") == "tool_call").with_columns(
        (pl.col("tick") // period).alias("period"))
    spent = calls.group_by("actor", "period").agg(pl.col("amount_usd").sum())
    for agent, _, usd in spent.iter_rows():
        assert usd <= (eng_lead if agent == "eng-lead" else per_agent) + 1e-9, agent
    assert spent["amount_usd"].max() > per_agent / 2  # the cap is reached, not far off
    blocked = capped.events.filter(pl.col("kind") == "budget_blocked")
    assert blocked.height > 0 and set(blocked["rule"]) == {"agent_budget"}
    assert "eng-lead" in set(blocked["actor"])
    assert capped.summary.budget_blocked == blocked.height
    assert free.summary.budget_blocked == 0
    assert capped.summary.cost_tools_usd < free.summary.cost_tools_usd


def test_a_run_with_budget_periods_resumes_to_the_same_ledger(tmp_path):
    from tests.conftest import interrupted_at

    overrides = ["runtime.backend=local", "policies.budget.period_ticks=30",
                 "company.budget_usd=15000", "policies.budget.agent_usd=4",
                 "runtime.checkpoint_every=20", "simulation.ticks=120"]
    whole = synthorg.Simulation(synthorg.load_config(STARTUP, overrides), seed=4,
                                out=tmp_path / "whole").run(ticks=120)
    cut = synthorg.Simulation(synthorg.load_config(STARTUP, overrides), seed=4,
                              out=tmp_path / "cut")
    interrupted_at(cut, 120, 70)  # past a period boundary, between checkpoints
    resumed = synthorg.Simulation(synthorg.load_config(STARTUP, overrides), seed=4,
                                  out=tmp_path / "cut").resume()
    assert resumed.summary.ledger_sha256 == whole.summary.ledger_sha256
    assert whole.events.filter(pl.col("kind") == "budget_alert").height > 0
    assert whole.events.filter(pl.col("rule") == "agent_budget").height > 0
