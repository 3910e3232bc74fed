"""Rich output: the progress bar, the closing summary table, the dashboard hint."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from synthorg.sim.summary import Summary

TOKEN_FILE = Path.home() / ".ray" / "auth_token"


class RunProgress:
    def __init__(self, console: Console, total: int, quiet: bool = False) -> None:
        self._progress = Progress(
            TextColumn("[bold]ticks"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=console, transient=False, disable=quiet,
        )
        self._task = self._progress.add_task("ticks", total=total)

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._progress.stop()

    def update(self, done: int, total: int) -> None:
        self._progress.update(self._task, completed=done, total=total)


def dashboard_hint(url: str | None) -> str:
    if not url:
        return "Ray dashboard: not started here (connected to an existing cluster?)"
    return (
        f"Ray dashboard: [link]http://{url}[/link] (actors are named agent-group:N, "
        f"which also route departments' tasks; secops, which decides approvals; memory:K; "
        f"and with careers on, hr and dept:NAME).\n"
        f"  Token auth is on by default in Ray 2.60: paste the token from "
        f"{TOKEN_FILE} when the page asks, or start with RAY_AUTH_MODE=disabled.\n"
        "  The dashboard lives only as long as this run unless you use a cluster "
        "(ray start --head, then --address)."
    )


def summary_table(s: Summary, out: Path, report: Path | None = None) -> Table:
    table = Table(title=f"{s.company} — seed {s.seed}, {s.ticks} ticks, {s.agents} agents "
                        f"({s.backend}, {s.groups} group{'s' if s.groups != 1 else ''})",
                  show_header=False)
    table.add_column("metric", style="bold")
    table.add_column("value", justify="right", overflow="fold")
    rows = [
        ("tasks created / completed / failed / open",
         f"{s.tasks_created} / {s.tasks_completed} / {s.tasks_failed} / {s.tasks_open}"),
        ("mean quality of completed", f"{s.mean_quality:.3f}"),
        ("tool calls", f"{s.tool_calls}"),
        ("messages (help requests / delegations)",
         f"{s.messages} ({s.help_requests} / {s.delegations})"),
        ("escalations: approvals granted / rejected / timed out",
         f"{s.escalations}: {s.approvals} / {s.approvals_rejected} / {s.approvals_timed_out}"),
        ("SecOps: calls allowed / denied / escalated",
         f"{s.tool_calls_executed} / {s.tool_calls_denied} / {s.tool_calls_escalated}"),
        ("SecOps: harmful calls (blocked) / benign blocked",
         f"{s.harmful_calls} ({s.harmful_blocked}) / {s.benign_blocked}"),
        ("SecOps: security incidents (cost)",
         f"{s.security_incidents} (${s.security_incident_cost_usd:,.2f})"),
        ("SecOps: autonomy lowered / given back", f"{s.autonomy_lowered} / {s.autonomy_restored}"),
        ("actions run by executors (failed) / outages hit",
         f"{s.actions} ({s.actions_failed}) / {s.tool_outages}"),
        ("hires / fires / moves / promotions (refused); headcount at end",
         f"{s.hires} / {s.fires} / {s.reassignments} / {s.promotions} "
         f"({s.promotions_refused}); {s.headcount_end}"),
        ("cost", f"${s.cost_usd:,.2f}"),
        *([("model calls (tokens in / out), cost",
            f"{s.llm_calls} ({s.tokens_in:,} / {s.tokens_out:,}), ${s.cost_llm_usd:,.2f}")]
          if s.mode == "llm" else []),
        *([("memories written / searched", f"{s.memory_writes} / {s.memory_searches}")]
          if s.memory_writes or s.memory_searches else []),
        *([("memories' facts by the model: stated / none / failed (tokens, cost)",
            f"{s.memory_facts_extracted} / {s.memory_facts_empty} / {s.memory_facts_failed} "
            f"({s.memory_facts_tokens:,}, ${s.memory_facts_cost_usd:,.4f})")]
          if s.memory_facts_extracted or s.memory_facts_empty or s.memory_facts_failed else []),
        ("agent-steps per second", f"{s.agent_steps_per_second:,.0f}"),
        ("wall seconds (ticks only)", f"{s.wall_seconds:.2f} ({s.tick_seconds:.2f})"),
        ("ledger_sha256", s.ledger_sha256),
        ("outputs", str(out)),
        *([("report", str(report))] if report is not None else []),
    ]
    for k, v in rows:
        table.add_row(k, v)
    return table
