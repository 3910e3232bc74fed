"""`synthorg bench --report`: how long the report of megacorp (10,000 agents) takes, and how
big it is (goals: under 30 s and 20 MB for 200 ticks)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import polars as pl

from synthorg.bench import MEGACORP
from synthorg.config.loader import load_config
from synthorg.report import write_report

GOAL_SECONDS, GOAL_MB = 30.0, 20.0


def report_speed(ticks: int = 200) -> dict[str, Any]:
    """Runs megacorp for `ticks` ticks on the local backend (HR off, no executors: the
    template as the throughput bench runs it), then times writing its report."""
    from synthorg.sim.simulation import Simulation

    cfg = load_config(MEGACORP, ["runtime.backend=local"])
    with tempfile.TemporaryDirectory(prefix="synthorg-bench-report-") as tmp:
        run_dir = Path(tmp) / "megacorp"
        Simulation(cfg, seed=0, out=run_dir).run(ticks=ticks)
        events = int(pl.scan_parquet(run_dir / "events.parquet").select(pl.len()).collect().item())
        report = write_report(run_dir)
    return {"bench": "report", "ticks": ticks, "events": events,
            "seconds": report.seconds, "html_mb": round(report.bytes / 2**20, 2),
            "figures": len(report.figures), "goal_seconds": GOAL_SECONDS, "goal_mb": GOAL_MB}
