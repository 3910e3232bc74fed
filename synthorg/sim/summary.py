"""summary.json: the contract every run writes (DESIGN.md)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from pydantic import BaseModel, ConfigDict

from synthorg.domain.enums import MessageKind
from synthorg.ledger.ledger import LedgerTotals

MICRO = 1_000_000


class Summary(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    company: str
    mode: str = "deterministic"  # llm: some agents deliberate with a model (config `llm`)
    forked_from: str | None = None  # a fork's parent run directory
    fork_tick: int | None = None
    backend: str
    seed: int
    ticks: int
    agents: int  # at the start
    headcount_end: int  # in the org (at work or away) at the end
    groups: int
    incidents: int = 0
    tasks_created: int
    tasks_completed: int
    tasks_failed: int
    tasks_open: int
    conservation_ok: bool
    tool_calls: int  # attempted: executed + denied + escalated
    tool_calls_executed: int = 0
    tool_calls_denied: int
    tool_calls_escalated: int
    budget_blocked: int = 0  # planned tool calls a department's budget refused
    approvals: int  # granted
    approvals_requested: int = 0  # = escalations: each asks the SecOps office
    approvals_rejected: int = 0
    approvals_timed_out: int = 0  # nobody answered in time: the default outcome applied
    autonomy_lowered: int = 0  # automatic lowerings (denials, incidents, budgets)
    autonomy_restored: int = 0  # levels given back through an approval
    harmful_calls: int = 0  # ground truth: harmful calls attempted (threats)
    harmful_blocked: int = 0  # of which denied, or escalated and rejected
    benign_blocked: int = 0  # ordinary calls denied, or escalated and rejected
    security_incidents: int = 0  # harmful calls that ran
    security_incident_cost_usd: float = 0.0  # their cost (a loss: not in cost_usd)
    escalations: int
    messages: int
    delegations: int
    help_requests: int
    help_declined: int = 0  # requests beyond a helper's capacity that tick
    budget_alerts: int = 0
    promotions: int = 0
    promotions_refused: int = 0  # needing approval (hr.promotion.approval_from), not given
    demotions: int = 0
    hires: int = 0
    fires: int = 0
    reassignments: int = 0
    actions: int = 0  # tool calls run by executors whose outcome was delivered
    actions_failed: int = 0  # of which failed or timed out
    tool_outages: int = 0  # calls that found their tool down
    memory_writes: int = 0  # memories agents wrote (episodic, lessons, organisation, social;
    # one an owner already holds word for word is stored once)
    memory_searches: int = 0  # retrievals: one per task taken up, with memory on
    # LLM mode: writes whose facts the model stated (memory/facts.py), those it found nothing
    # in (not stored), those with no valid reply (the record stored), and what it cost (the
    # memory system's, apart from the agents' budgets and cost_usd)
    memory_facts_extracted: int = 0
    memory_facts_empty: int = 0
    memory_facts_failed: int = 0
    memory_facts_tokens: int = 0
    memory_facts_cost_usd: float = 0.0
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float  # = cost_salaries_usd + cost_tools_usd + cost_llm_usd
    cost_salaries_usd: float = 0.0
    cost_tools_usd: float = 0.0
    cost_llm_usd: float = 0.0
    cost_per_completed_task_usd: float = 0.0
    mean_quality: float  # completed tasks
    failure_rate: float = 0.0  # failed / (completed + failed)
    tasks_failed_by_reason: dict[str, int] = {}
    lead_time_mean: float = 0.0  # ticks from creation to completion, completed tasks
    lead_time_p50: float = 0.0
    lead_time_p90: float = 0.0
    utilisation: float = 0.0  # agent-ticks busy (holding a task) / agent-ticks at work
    teleology: dict[str, float | None] = {}  # the teleological metrics, every agent pooled
    # (synthorg/hr/teleology.py; null: nothing to measure)
    ledger_sha256: str
    wall_seconds: float
    tick_seconds: float
    agent_steps_per_second: float


def summarise(totals: LedgerTotals, *, tasks_open: int, mean_quality: float, cost_usd: float,
              **fields: object) -> Summary:
    c = totals.event_counts
    created = c["task_created"]
    return Summary(
        tasks_created=created,
        tasks_completed=totals.completed,
        tasks_failed=totals.failed,
        tasks_open=tasks_open,
        conservation_ok=created == totals.completed + totals.failed + tasks_open,
        tool_calls=c["tool_call"] + c["tool_denied"] + c["tool_escalated"],
        tool_calls_executed=c["tool_call"],
        tool_calls_denied=c["tool_denied"],
        tool_calls_escalated=c["tool_escalated"],
        budget_blocked=c["budget_blocked"],
        approvals=c["approval_granted"],
        approvals_requested=c["escalated"],
        approvals_rejected=c["approval_rejected"],
        approvals_timed_out=c["approval_timed_out"],
        autonomy_lowered=c["autonomy_lowered"],
        autonomy_restored=c["autonomy_restored"],
        help_declined=c["help_declined"],
        budget_alerts=c["budget_alert"],
        escalations=c["escalated"],
        messages=c["message_sent"] + c["help_given"],
        delegations=totals.message_kinds.get(int(MessageKind.delegate), 0),
        help_requests=totals.message_kinds.get(int(MessageKind.ask), 0),
        hires=c["agent_joined"],
        fires=c["agent_left"],
        reassignments=c["agent_moved"],
        promotions=c["agent_promoted"],
        promotions_refused=c["promotion_refused"],
        demotions=c["agent_demoted"],
        actions=sum(totals.action_status.values()),
        actions_failed=(totals.action_status.get("failed", 0)
                        + totals.action_status.get("timed_out", 0)),
        tool_outages=c["tool_failed"],
        memory_writes=c["memory_written"],
        memory_searches=c["memory_searched"],
        cost_usd=cost_usd,
        mean_quality=mean_quality,
        ledger_sha256=totals.sha256,
        **fields,
    )


# summary fields known while a run goes (counts of the ledger so far, money spent): at the last
# tick they equal summary.json's, so a study can report progress in the units of its objective
LIVE_FIELDS = ("tasks_created", "tasks_completed", "tasks_failed", "tool_calls",
               "tool_calls_executed", "tool_calls_denied", "tool_calls_escalated",
               "budget_blocked", "approvals", "approvals_requested", "approvals_rejected",
               "escalations", "messages", "delegations", "help_requests", "help_declined",
               "promotions", "promotions_refused", "demotions", "hires", "fires", "reassignments",
               "memory_writes", "memory_searches", "security_incidents", "cost_usd")


def live_figures(totals: LedgerTotals, spent_micro: int) -> dict[str, float]:
    """LIVE_FIELDS of a run in progress."""
    s = summarise(totals, tasks_open=0, mean_quality=0.0, cost_usd=spent_micro / MICRO,
                  security_incidents=totals.event_counts["security_incident"], run_id="",
                  company="", backend="", seed=0, ticks=totals.ticks, agents=0, headcount_end=0,
                  groups=0, wall_seconds=0.0, tick_seconds=0.0, agent_steps_per_second=0.0)
    dumped = s.model_dump()
    return {k: float(dumped[k]) for k in LIVE_FIELDS}


def llm_figures(actions: Path, reviews: bool) -> dict[str, int]:
    """The model's use in a run, from its actions: every deliberation, answered or failed,
    and with `reviews` (approvals mode llm) every approval it reviewed."""
    asked = pl.col("executor").is_in(["llm", "approvals"] if reviews else ["llm"])
    row = (pl.scan_parquet(actions).filter(asked)
           .select(llm_calls=pl.len(), tokens_in=pl.col("tokens_in").sum(),
                   tokens_out=pl.col("tokens_out").sum())
           .collect().row(0, named=True))
    return {k: int(v or 0) for k, v in row.items()}


def security_figures(events: Path) -> dict[str, object]:
    """The SecOps figures of a run, from its events table (the ground truth on each call)."""
    e = pl.scan_parquet(events)
    blocked = pl.col("kind").is_in(["tool_denied", "approval_rejected"]) & pl.col("form").is_not_null()
    row = e.select(
        harmful_calls=(pl.col("kind") == "threat").sum(),
        harmful_blocked=(blocked & pl.col("harmful")).sum(),
        benign_blocked=(blocked & ~pl.col("harmful")).sum(),
        security_incidents=(pl.col("kind") == "security_incident").sum(),
        security_incident_cost_usd=pl.when(pl.col("kind") == "security_incident")
        .then(pl.col("amount_usd")).otherwise(0.0).sum(),
    ).collect().row(0, named=True)
    return {k: (round(v, 6) if isinstance(v, float) else int(v)) for k, v in row.items()}


def outcomes(tasks: pl.DataFrame, busy: int, present: int, salary_micro: int,
             tool_micro: int, llm_micro: int = 0) -> dict[str, object]:
    """The study figures of a run: lead times and failures by reason from its tasks table;
    utilisation (agent-ticks busy of agent-ticks at work) and the cost split from the
    timeseries totals, in micro-dollars so that the parts add up to cost_usd."""
    done = tasks.filter(pl.col("status") == "completed")["lead_time_ticks"]
    failed = tasks.filter(pl.col("status") == "failed")
    ended = len(done) + failed.height
    reasons = dict(failed.group_by("fail_reason").len().sort("fail_reason").iter_rows())

    def quantile(q: float) -> float:
        return float(done.quantile(q, "nearest")) if len(done) else 0.0  # type: ignore[arg-type]

    return {
        "failure_rate": round(failed.height / ended, 6) if ended else 0.0,
        "tasks_failed_by_reason": {str(k): int(v) for k, v in reasons.items()},
        "lead_time_mean": round(float(done.mean()), 4) if len(done) else 0.0,  # type: ignore[arg-type]
        "lead_time_p50": quantile(0.5),
        "lead_time_p90": quantile(0.9),
        "utilisation": round(busy / present, 6) if present else 0.0,
        "cost_salaries_usd": salary_micro / MICRO,
        "cost_tools_usd": tool_micro / MICRO,
        "cost_llm_usd": llm_micro / MICRO,
        "cost_per_completed_task_usd": (round((salary_micro + tool_micro + llm_micro) / MICRO
                                              / len(done), 6)
                                        if len(done) else 0.0),
    }
