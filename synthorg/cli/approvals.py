"""`synthorg approvals list|approve|deny RUN_DIR [CALL...]`: a person decides the approvals a
human-mode run has parked (synthorg/secops/parking.py) while the run waits for them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from synthorg.cli.common import EXIT_MISUSE, fail, out_console
from synthorg.errors import MisuseError
from synthorg.secops.parking import FILE, ApprovalStore, ParkedCall

approvals_app = typer.Typer(no_args_is_help=True, help=(
    "Decide the approvals a run waits for (policies.approvals.mode: human)."))
RunDir = Annotated[Path, typer.Argument(help="the run's directory (--out of `synthorg run`)")]
Calls = Annotated[list[int], typer.Argument(help="call ids, as `approvals list` shows them")]
Note = Annotated[str, typer.Option(help="why: kept with the decision")]


def _store(run_dir: Path) -> ApprovalStore:
    if not run_dir.is_dir():
        raise fail(f"{run_dir}: not a directory", EXIT_MISUSE)
    try:
        return ApprovalStore(run_dir / FILE, create=False)
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None


@approvals_app.command("list")
def list_(run_dir: RunDir,
          all_: Annotated[bool, typer.Option("--all", help="decided ones too")] = False,
          as_json: Annotated[bool, typer.Option("--json", help="one JSON object per line")
                             ] = False) -> None:
    """The calls waiting for a decision (with --all, every call asked about)."""
    store = _store(run_dir)
    try:
        rows = store.listed(None if all_ else "parked")
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    finally:
        store.close()
    if as_json:
        for row in rows:
            print(row.model_dump_json())
        return
    table = Table(title=f"approvals of {escape(str(run_dir))}"
                  f"{'' if all_ else ' (waiting)'}: {len(rows)}")
    for name in ("call", "tick", "due", "agent", "task", "call asked for", "why", "status"):
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(str(row.call), str(row.tick), str(row.due), escape(row.agent),
                      str(row.task), escape(_call_text(row)), escape(row.reason or row.rule),
                      row.status + (f" ({row.decided_by})" if row.decided_by else ""))
    out_console.print(table)


@approvals_app.command()
def approve(run_dir: RunDir, calls: Calls, note: Note = "") -> None:
    """Grant parked calls: each agent makes its call as approved (a promotion takes effect)."""
    _decide(run_dir, calls, True, note)


@approvals_app.command()
def deny(run_dir: RunDir, calls: Calls, note: Note = "") -> None:
    """Reject parked calls: each agent's task fails, or goes to its head (on_reject); a
    promotion is refused."""
    _decide(run_dir, calls, False, note)


def _decide(run_dir: Path, calls: list[int], granted: bool, note: str) -> None:
    store = _store(run_dir)
    try:
        problems = []
        for call in calls:
            if store.decide(call, granted, "person", note):
                out_console.print(f"call {call}: {'granted' if granted else 'rejected'}")
                continue
            row = store.get(call)
            problems.append(f"call {call}: not in {run_dir / FILE}" if row is None else
                            f"call {call}: already {row.status} ({row.decided_by})")
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    finally:
        store.close()
    if problems:
        raise fail("; ".join(problems), EXIT_MISUSE)


def _call_text(row: ParkedCall) -> str:
    if not row.tool:
        return "(its next step: low confidence)"
    return f"{row.tool} {json.dumps(row.arguments, sort_keys=True)}"
