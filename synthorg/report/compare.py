"""Runs side by side: their time series overlaid, their summaries in one table.

A fork shares its parent's ledger up to the fork tick, so when a fork is compared with its
parent (summary.json: forked_from, fork_tick) the figures start at the fork tick and the
running totals count from there: what differs is what the changed policies did.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from synthorg.report.data import QUALITY_BINS, RunData, lead_time_bin
from synthorg.report.page import Plot, Section, Table, styled
from synthorg.report.run import colours, summary_table, totals

# (column of run.totals, title, running total from the window's start?)
PANELS = (("completed", "tasks completed", True), ("failed", "tasks failed", True),
          ("cost_usd", "cost (USD)", True), ("escalations", "escalations", True),
          ("open", "open tasks", False), ("queued", "queued tasks", False),
          ("load", "load (busy ÷ at work)", False), ("headcount", "headcount (at work)", False))


def fork_tick(summaries: dict[Path, dict]) -> int:
    """The earliest tick at which a run of the set forked from another run of the set; 0 when
    none did (the runs are compared over their whole length)."""
    resolved = {p.resolve() for p in summaries}
    ticks = [int(s["fork_tick"]) for s in summaries.values()
             if s.get("forked_from") and s.get("fork_tick") is not None
             and Path(str(s["forked_from"])).resolve() in resolved]
    return min(ticks, default=0)


def compare_sections(runs: list[RunData], since: int) -> list[Section]:
    window = (f"From the fork tick {since} on (before it the fork and its parent are the same "
              "run); running totals count from there." if since else
              "Over each run's whole length.")
    return [
        Section("Runs over time", window, (overlaid(runs, since), distributions(runs, since))),
        Section("Summaries", "", (*((window_table(runs, since),) if since else ()),
                                  summary_table(runs))),
    ]


def overlaid(runs: list[RunData], since: int) -> Plot:
    fig = make_subplots(rows=2, cols=4, subplot_titles=[title for _, title, _ in PANELS],
                        horizontal_spacing=0.06, vertical_spacing=0.16)
    palette = colours([r.label for r in runs])
    for run in runs:
        t = totals(run).filter(pl.col("tick") >= since)
        for k, (column, _, running) in enumerate(PANELS):
            y = t[column].cum_sum() if running else t[column]
            fig.add_trace(go.Scatter(x=t["tick"].to_numpy(), y=y.to_numpy(), name=run.label,
                                     legendgroup=run.label, showlegend=k == 0, mode="lines",
                                     line={"color": palette[run.label], "width": 1.5}),
                          row=k // 4 + 1, col=k % 4 + 1)
    return Plot("Runs overlaid", styled(fig, "Runs overlaid" + (f" from tick {since}" if since
                                                                 else ""), height=600),
                "Top row: running totals; bottom row: levels per tick.", wide=True)


def _shares(frame: pl.DataFrame, column: str, bins: np.ndarray) -> np.ndarray:
    """Each bin's share of the completed tasks, every bin present (0 where none fell)."""
    counts = frame.group_by(column).agg(pl.col("n").sum())
    lookup = dict(zip(counts[column].to_list(), counts["n"].to_list(), strict=True))
    n = np.array([lookup.get(b, 0) for b in bins.tolist()], dtype=float)
    return n / max(1.0, n.sum())


def distributions(runs: list[RunData], since: int) -> Plot:
    """Lead time and quality of each run as shares of its completed tasks (the runs may have
    completed different numbers)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("lead time (ticks)", "quality"))
    palette = colours([r.label for r in runs])
    width = lead_time_bin(max(r.ticks for r in runs))
    top = max((int(r.lead_times.select(pl.col("lead_time").max()).item() or 0) for r in runs),
              default=0)
    bins = {"lead_time": np.arange(0, top + width, width),
            # the bins' lower ends, as data.py rounds them
            "quality": np.arange(QUALITY_BINS) / QUALITY_BINS}
    for run in runs:
        for col, (frame, column) in enumerate(((run.lead_times, "lead_time"),
                                               (run.quality, "quality")), start=1):
            fig.add_trace(go.Scatter(x=bins[column], y=_shares(frame, column, bins[column]),
                                     name=run.label, legendgroup=run.label, showlegend=col == 1,
                                     mode="lines", line={"color": palette[run.label],
                                                         "shape": "hv"}),
                          row=1, col=col)
    fig.update_yaxes(title_text="share of completed tasks", row=1, col=1)
    finished = f"finished from tick {since}" if since else "all completed tasks"
    return Plot("Distributions", styled(fig, "Lead time and quality"),
                f"Shares of each run's completed tasks ({finished}), per bin.")


def window_table(runs: list[RunData], since: int) -> Table:
    """What happened from the fork tick on, per run, from the time series and SecOps counts."""
    rows: list[tuple[object, ...]] = []
    figures: list[dict[str, float]] = []
    for run in runs:
        t = totals(run).filter(pl.col("tick") >= since)
        events = run.events.filter(pl.col("tick") >= since)
        incidents = run.incidents.filter(pl.col("tick") >= since)
        figures.append({
            "tasks arrived": float(t["arrivals"].sum()),
            "tasks completed": float(t["completed"].sum()),
            "tasks failed": float(t["failed"].sum()),
            "escalations": float(t["escalations"].sum()),
            "calls denied": float(events.filter(pl.col("kind") == "tool_denied")["n"].sum()),
            "approvals rejected": float(events.filter(pl.col("kind") == "approval_rejected")
                                        ["n"].sum()),
            "security incidents": float(incidents["n"].sum()),
            "cost (USD)": round(float(t["cost_usd"].sum()), 2),
        })
    for key in figures[0]:
        rows.append((key, *(f[key] for f in figures)))
    return Table(f"From tick {since} on", ("", *(r.label for r in runs)), tuple(rows),
                 "Sums over the ticks from the fork on, per run.")


def labels_of(paths: list[Path]) -> list[str]:
    """Each run's name on the page: its directory, or more of its path where two share one."""
    labels = [p.name or str(p) for p in paths]
    if len(set(labels)) < len(labels):
        labels = [str(p) for p in paths]
    return labels
