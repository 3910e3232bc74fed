"""summary.json: the contract every run writes (DESIGN.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from synthorg.domain.enums import MessageKind
from synthorg.ledger.ledger import LedgerTotals


class Summary(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    company: str
    mode: str = "deterministic"
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
    tool_calls: int
    tool_calls_denied: int
    tool_calls_escalated: int
    approvals: int
    escalations: int
    messages: int
    delegations: int
    help_requests: int
    promotions: int = 0
    demotions: int = 0
    hires: int = 0
    fires: int = 0
    reassignments: int = 0
    actions: int = 0  # tool calls run by executors whose outcome was delivered
    actions_failed: int = 0  # of which failed or timed out
    tool_outages: int = 0  # calls that found their tool down
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float
    mean_quality: float
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
        tool_calls_denied=c["tool_denied"],
        tool_calls_escalated=c["tool_escalated"],
        approvals=c["approval_granted"],
        escalations=c["escalated"],
        messages=c["message_sent"] + c["help_given"],
        delegations=totals.message_kinds.get(int(MessageKind.delegate), 0),
        help_requests=totals.message_kinds.get(int(MessageKind.ask), 0),
        hires=c["agent_joined"],
        fires=c["agent_left"],
        reassignments=c["agent_moved"],
        promotions=c["agent_promoted"],
        actions=sum(totals.action_status.values()),
        actions_failed=(totals.action_status.get("failed", 0)
                        + totals.action_status.get("timed_out", 0)),
        tool_outages=c["tool_failed"],
        cost_usd=cost_usd,
        mean_quality=mean_quality,
        ledger_sha256=totals.sha256,
        **fields,
    )
