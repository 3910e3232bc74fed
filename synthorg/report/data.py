"""What a report reads from a run directory, aggregated before anything is plotted.

A megacorp run of 200 ticks holds millions of events and hundreds of thousands of tasks, so
every table is scanned lazily, reduced to counts per (tick, kind) or per histogram bin by
polars, and only those small frames reach the figures. Nothing in the directory is written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl
import yaml

from synthorg.domain.enums import Seniority
from synthorg.errors import MisuseError

SUMMARY, TIMESERIES, TASKS, EVENTS, AGENTS = ("summary.json", "timeseries.parquet",
                                               "tasks.parquet", "events.parquet",
                                               "agents.parquet")
CONFIG = "config.resolved.yaml"
RUNS, AGGREGATE, TRIALS = "runs.parquet", "aggregate.parquet", "trials.parquet"
# beyond this many ticks, time series are summed over buckets of ticks: a figure never needs
# more points than a screen has pixels, and the page stays small for long runs
MAX_POINTS = 1000
LEAD_TIME_BINS, QUALITY_BINS = 100, 50

# the SecOps side of a run: verdicts on calls, the office's answers, threats and incidents
SECOPS_KINDS = ("tool_call", "tool_denied", "tool_escalated", "approval_granted",
                "approval_rejected", "approval_timed_out", "threat", "security_incident")
# org changes, by HR or the scenario (absences are the scenario's too)
HR_KINDS = ("agent_promoted", "agent_demoted", "agent_joined", "agent_left", "agent_moved",
            "agent_away")


class ReportError(MisuseError):
    """Input a report cannot be made of; the message names the file."""


DirKind = Literal["run", "sweep", "study"]


def kind_of(path: Path) -> DirKind:
    """What DIR holds: a run (summary.json), a sweep (runs.parquet) or a study (trials.parquet)."""
    if not path.exists():
        raise ReportError(f"{path}: no such directory")
    if not path.is_dir():
        raise ReportError(f"{path}: not a directory")
    if (path / SUMMARY).is_file():
        return "run"
    if (path / RUNS).is_file():
        return "sweep"
    if (path / TRIALS).is_file():
        return "study"
    raise ReportError(f"{path}: not a run, sweep or study directory (no {SUMMARY}, {RUNS} or "
                      f"{TRIALS})")


def collect(path: Path, build: Callable[[], pl.LazyFrame | pl.DataFrame]) -> pl.DataFrame:
    """`build()` collected, with any failure to read `path` said in one line naming it."""
    if not path.is_file():
        raise ReportError(f"{path}: missing")
    try:
        frame = build()
        return frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    # a damaged file can also make the reader panic (a BaseException, not an Exception)
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError,
            ValueError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ReportError(f"{path}: unreadable ({reason})") from None


def read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ReportError(f"{path}: missing")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not a JSON object")
    return data


def read_yaml(path: Path) -> dict[str, Any]:
    """A resolved config; an empty dict when the file is missing (the org table then lacks
    the configured heads, nothing else)."""
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        first = (str(exc).strip().splitlines() or ["?"])[0]
        raise ReportError(f"{path}: unreadable ({first})") from None
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class RunData:
    """One run, reduced to what its figures show."""

    path: Path
    label: str  # how the page names the run (its directory's name)
    summary: dict[str, Any]
    departments: tuple[str, ...]  # in the config's order (events name departments by index)
    bucket: int  # ticks summed into one point of a time series
    since: int  # distributions count tasks finished from this tick (a fork's tick, or 0)
    # per (tick bucket, department): arrivals, completed, failed, escalations and costs
    # summed; queued, headcount and busy averaged; load = busy / headcount over the bucket
    per_tick: pl.DataFrame
    events: pl.DataFrame  # per (tick bucket, kind) of SECOPS_KINDS: n
    incidents: pl.DataFrame  # per (tick bucket, threat_kind): n, cost_usd
    hr: pl.DataFrame  # per (tick bucket, kind) of HR_KINDS: n, who (a few agents), reasons
    lead_times: pl.DataFrame  # completed tasks per (department, lead_time bin): n (lead_time_bin)
    quality: pl.DataFrame  # completed tasks per (department, quality bin): n
    org: pl.DataFrame  # per department: heads and headcounts at start and end, joins, leaves
    roles: pl.DataFrame  # per (department, role) in the org at the end: n

    @property
    def ticks(self) -> int:
        return int(self.summary.get("ticks") or 0)


def load_run(path: Path, label: str | None = None, since: int = 0) -> RunData:
    summary = read_json(path / SUMMARY)
    config = read_yaml(path / CONFIG)
    departments = tuple(str(d.get("id")) for d in config.get("departments") or []
                        if isinstance(d, dict))
    heads = {str(d.get("id")): d.get("head") for d in config.get("departments") or []
             if isinstance(d, dict)}
    ticks = int(summary.get("ticks") or 0)
    bucket = max(1, math.ceil(ticks / MAX_POINTS))
    per_tick = _per_tick(path / TIMESERIES, bucket)
    if not departments:  # no config beside the tables: the departments they name
        departments = tuple(sorted(per_tick["department"].unique().to_list()))
    return RunData(
        path=path, label=label or path.name, summary=summary, departments=departments,
        bucket=bucket, since=since, per_tick=per_tick,
        events=_event_counts(path / EVENTS, bucket),
        incidents=_incidents(path / EVENTS, bucket),
        hr=_hr_events(path / EVENTS, bucket, departments),
        lead_times=_lead_times(path / TASKS, since, lead_time_bin(ticks)),
        quality=_quality(path / TASKS, since),
        org=_org(path, heads, departments, per_tick),
        roles=collect(path / AGENTS, lambda: pl.scan_parquet(path / AGENTS)
                      .filter(pl.col("exit_tick").is_null())
                      .group_by("department", "role").agg(n=pl.len())
                      .sort("department", "role")),
    )


def _bucketed(bucket: int) -> pl.Expr:
    return (pl.col("tick") // bucket * bucket).cast(pl.Int64).alias("tick")


def _per_tick(path: Path, bucket: int) -> pl.DataFrame:
    sums = ("arrivals", "completed", "failed", "escalations", "cost_salary_usd",
            "cost_tools_usd", "cost_llm_usd")
    return collect(path, lambda: (
        pl.scan_parquet(path)
        .group_by(_bucketed(bucket), "department")
        .agg(*(pl.col(c).sum() for c in sums),
             # levels, not flows: their mean over the bucket
             pl.col("queued", "headcount", "busy").mean(),
             (pl.col("busy").sum() / pl.col("headcount").sum().clip(lower_bound=1)).alias("load"))
        .with_columns((pl.col("cost_salary_usd") + pl.col("cost_tools_usd")
                       + pl.col("cost_llm_usd")).alias("cost_usd"))
        .sort("tick", "department")))


def _event_counts(path: Path, bucket: int) -> pl.DataFrame:
    """Per (tick bucket, kind); the pseudo-kind `harmful_blocked` counts harmful calls that
    SecOps denied or whose approval was refused (as the summary's harmful_blocked)."""
    def build() -> pl.LazyFrame:
        events = pl.scan_parquet(path).select("tick", "kind", "harmful")
        by_kind = (events.filter(pl.col("kind").is_in(SECOPS_KINDS))
                   .group_by(_bucketed(bucket), "kind").agg(n=pl.len()))
        blocked = (events.filter(pl.col("kind").is_in(["tool_denied", "approval_rejected"])
                                 & pl.col("harmful").fill_null(False))
                   .group_by(_bucketed(bucket)).agg(pl.lit("harmful_blocked").alias("kind"),
                                                    n=pl.len()))
        return pl.concat([by_kind, blocked]).sort("tick", "kind")

    return collect(path, build)


def _incidents(path: Path, bucket: int) -> pl.DataFrame:
    return collect(path, lambda: (
        pl.scan_parquet(path).select("tick", "kind", "threat_kind", "amount_usd")
        .filter(pl.col("kind") == "security_incident")
        .group_by(_bucketed(bucket), pl.col("threat_kind").fill_null("unknown"))
        .agg(n=pl.len(), cost_usd=pl.col("amount_usd").sum())
        .sort("tick", "threat_kind")))


def _hr_events(path: Path, bucket: int, departments: tuple[str, ...]) -> pl.DataFrame:
    """Org changes per (tick bucket, kind), with a few of the agents each concerns: a review
    of 10,000 agents may move hundreds at once, and one marker with a count says it."""
    seniority = {int(s): s.name for s in Seniority}
    dept = dict(enumerate(departments))
    to = (pl.when(pl.col("kind").is_in(["agent_promoted", "agent_demoted"]))
          .then(pl.col("target").replace_strict(seniority, default=None, return_dtype=pl.String))
          .when(pl.col("kind").is_in(["agent_moved", "agent_joined"]))
          .then(pl.col("target").replace_strict(dept, default=None, return_dtype=pl.String))
          .when(pl.col("kind") == "agent_away")
          .then(pl.format("{} ticks", pl.col("value").cast(pl.Int64)))
          .otherwise(None))
    who = (pl.when(to.is_null()).then(pl.col("actor"))
           .otherwise(pl.format("{} → {}", pl.col("actor"), to)))
    return collect(path, lambda: (
        pl.scan_parquet(path).select("tick", "kind", "actor", "target", "value", "hr_reason")
        .filter(pl.col("kind").is_in(HR_KINDS))
        .group_by(_bucketed(bucket), "kind")
        .agg(n=pl.len(), who=who.head(6).str.join(", "),
             reasons=pl.col("hr_reason").drop_nulls().unique().sort().str.join(", "))
        .sort("tick", "kind")))


def _finished_since(path: Path, since: int) -> pl.LazyFrame:
    return (pl.scan_parquet(path)
            .filter((pl.col("status") == "completed") & (pl.col("finished") >= since)))


def lead_time_bin(ticks: int) -> int:
    """Ticks per bin of the lead-time histogram: one tick, or wider for long runs (a lead
    time is at most the run's length)."""
    return max(1, math.ceil((ticks + 1) / LEAD_TIME_BINS))


def _lead_times(path: Path, since: int, width: int) -> pl.DataFrame:
    return collect(path, lambda: (
        _finished_since(path, since).select("department", "lead_time_ticks")
        .group_by("department", (pl.col("lead_time_ticks") // width * width).alias("lead_time"))
        .agg(n=pl.len()).sort("department", "lead_time")))


def _quality(path: Path, since: int) -> pl.DataFrame:
    return collect(path, lambda: (
        _finished_since(path, since).select("department", "quality")
        .group_by("department", ((pl.col("quality") * QUALITY_BINS).floor().clip(0, QUALITY_BINS - 1)
                                 / QUALITY_BINS).alias("quality"))
        .agg(n=pl.len()).sort("department", "quality")))


def _org(path: Path, heads: dict[str, Any], departments: tuple[str, ...],
         per_tick: pl.DataFrame) -> pl.DataFrame:
    """Per department: the configured head (head at the start), the head at the end by the
    rule the engine uses (org/directory.py `_derived`: the configured head while still a member,
    else the most senior member, first in slot order), headcount at the first tick (at work)
    and at the end (in the org), agents that joined during the run and that left."""
    agents = collect(path / AGENTS, lambda: pl.scan_parquet(path / AGENTS).select(
        "agent", "department", "seniority", "agent_index", "joined_tick", "exit_tick"))
    rank = {s.name: int(s) for s in Seniority}
    present = agents.filter(pl.col("exit_tick").is_null()).with_columns(
        pl.col("seniority").replace_strict(rank, default=-1, return_dtype=pl.Int64).alias("rank"))
    first_tick = per_tick.filter(pl.col("tick") == per_tick["tick"].min()) if per_tick.height \
        else per_tick
    start = dict(zip(first_tick["department"].to_list(),
                     first_tick["headcount"].to_list(), strict=True))
    rows = []
    for dept in departments:
        members = present.filter(pl.col("department") == dept)
        configured = heads.get(dept)
        if configured is not None and configured in set(members["agent"].to_list()):
            end_head: str | None = configured
        elif members.height:
            end_head = str(members.sort(["rank", "agent_index"], descending=[True, False])
                           ["agent"][0])
        else:
            end_head = None
        in_dept = agents.filter(pl.col("department") == dept)
        rows.append({"department": dept, "head_start": configured, "head_end": end_head,
                     "headcount_start": round(float(start.get(dept, 0))),
                     "headcount_end": members.height,
                     "joined": in_dept.filter(pl.col("joined_tick") > 0).height,
                     "left": in_dept.filter(pl.col("exit_tick").is_not_null()).height})
    return pl.DataFrame(rows, schema={"department": pl.String, "head_start": pl.String,
                                      "head_end": pl.String, "headcount_start": pl.Int64,
                                      "headcount_end": pl.Int64, "joined": pl.Int64,
                                      "left": pl.Int64})


def flat_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """summary.json with its nested maps (failures by reason, teleology) as dotted rows."""
    flat: dict[str, Any] = {}
    for key, value in summary.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat
