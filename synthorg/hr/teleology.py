"""Teleological metrics, per agent and per run, from the loop's own records (events.parquet
and tasks.parquet), as the teleology seed names them. Each is in agents.parquet
(`teleo_<name>`) and, over every agent's rows pooled, in summary.json (`teleology`).

  goal_persistence       tasks completed / tasks taken up (task_started): how often a goal
                         the agent adopted was carried to its end
  teleological_coherence tool calls run / (calls run + denied + escalated + steps waited):
                         the share of act phases that advanced the goal instead of stalling
  reflective_efficiency  sum of quality of completed tasks / turns spent on finished tasks:
                         outcome bought per loop iteration
  adaptivity             tasks whose goal was revised (goal_revised) that were then completed
                         by their deadline / tasks revised: whether revising paid
  normative_fidelity     1 - (calls denied + own security incidents) / calls attempted: how
                         closely action kept to the rules
  innovation_yield       completed tasks above the run's 90th percentile of quality for their
                         task type / tasks completed: outcomes beyond the organisation's usual
  lyapunov_exponent      mean of ln((|d[i+1]| + e) / (|d[i]| + e)) over successive completed
                         tasks, d = quality - the agent's mean (e = 0.01): below 0 deviations
                         shrink (a stable agent), above 0 they grow
  reasoning_quality      (tasks completed without asking a person + escalations granted) /
                         (tasks finished + escalations): decisions the outcome vindicated
A metric with nothing to measure (no occasion) is null.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

METRICS = ("goal_persistence", "teleological_coherence", "reflective_efficiency", "adaptivity",
           "normative_fidelity", "innovation_yield", "lyapunov_exponent", "reasoning_quality")
_EPS = 0.01
_KINDS = ("task_started", "tool_call", "tool_denied", "tool_escalated", "waited", "escalated",
          "approval_granted", "goal_revised", "security_incident")


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    return pl.when(den > 0).then(num / den).otherwise(None)


def _measures(events: pl.LazyFrame, tasks: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """The metrics' numerators and denominators per `by` (the agent, or nothing: the run)."""
    counts = events.group_by(by or pl.lit(0).alias("_all")).agg(
        *[(pl.col("kind") == k).sum().alias(k) for k in _KINDS])
    done = pl.col("status") == "completed"
    p90 = tasks.filter(done).group_by("type").agg(pl.col("quality").quantile(0.9).alias("p90"))
    escalated = events.filter(pl.col("kind") == "escalated").select("task").unique()
    revised = events.filter(pl.col("kind") == "goal_revised").select("task").unique()
    finished = (tasks.filter(pl.col("status").is_in(["completed", "failed"]))
                .join(p90, on="type", how="left")
                .join(escalated.with_columns(pl.lit(True).alias("asked")), on="task", how="left")
                .join(revised.with_columns(pl.lit(True).alias("revised")), on="task", how="left")
                .with_columns(pl.col("asked").fill_null(False), pl.col("revised").fill_null(False))
                .sort("finished", "task")
                .with_columns((pl.col("quality") - pl.col("quality").filter(done).mean()
                               .over(by or pl.lit(0))).abs().alias("dev")))
    stable = (finished.filter(done)
              .with_columns(((pl.col("dev").shift(-1).over(by or pl.lit(0)) + _EPS)
                             / (pl.col("dev") + _EPS)).log().alias("step"))
              .group_by(by or pl.lit(0).alias("_all"))
              .agg(pl.col("step").drop_nulls().mean().alias("lyapunov_exponent")))
    per = finished.group_by(by or pl.lit(0).alias("_all")).agg(
        done.sum().alias("completed"), pl.len().alias("finished_n"),
        pl.col("quality").filter(done).sum().alias("quality_sum"),
        pl.col("turns").sum().alias("turns"),
        (done & (pl.col("quality") > pl.col("p90"))).sum().alias("beyond"),
        (done & ~pl.col("asked")).sum().alias("alone"),
        pl.col("revised").sum().alias("revised_n"),
        (done & pl.col("revised") & (pl.col("finished") <= pl.col("deadline"))).sum()
        .alias("revised_ok"))
    key = by or ["_all"]
    return (counts.join(per, on=key, how="full", coalesce=True)
            .join(stable, on=key, how="left").fill_null(0)
            .with_columns(
                _ratio(pl.col("completed"), pl.col("task_started")).alias("goal_persistence"),
                _ratio(pl.col("tool_call"), pl.col("tool_call") + pl.col("tool_denied")
                       + pl.col("tool_escalated") + pl.col("waited"))
                .alias("teleological_coherence"),
                _ratio(pl.col("quality_sum"), pl.col("turns")).alias("reflective_efficiency"),
                _ratio(pl.col("revised_ok"), pl.col("revised_n")).alias("adaptivity"),
                (1 - _ratio(pl.col("tool_denied") + pl.col("security_incident"),
                            pl.col("tool_call") + pl.col("tool_denied")
                            + pl.col("tool_escalated"))).alias("normative_fidelity"),
                _ratio(pl.col("beyond"), pl.col("completed")).alias("innovation_yield"),
                _ratio(pl.col("alone") + pl.col("approval_granted"),
                       pl.col("finished_n") + pl.col("escalated")).alias("reasoning_quality")))


def teleological_metrics(run_dir: Path) -> tuple[pl.DataFrame, dict[str, float | None]]:
    """Per agent (column `agent`, its id) and for the run, from the run's tables."""
    events = (pl.scan_parquet(run_dir / "events.parquet")
              .filter(pl.col("kind").is_in(_KINDS) & (pl.col("actor_index") >= 0))
              .select(pl.col("actor").alias("agent"), "kind", "task"))
    tasks = pl.scan_parquet(run_dir / "tasks.parquet").filter(pl.col("agent").is_not_null()) \
        .select("task", "type", "agent", "status", "quality", "turns", "finished", "deadline")
    per_agent = _measures(events, tasks, ["agent"]).select("agent", *METRICS).collect()
    run = _measures(events.drop("agent"), tasks.drop("agent"), []).select(*METRICS).collect()
    pooled = {m: (None if run[m][0] is None else round(float(run[m][0]), 6)) for m in METRICS} \
        if run.height else dict.fromkeys(METRICS)
    return per_agent, pooled
