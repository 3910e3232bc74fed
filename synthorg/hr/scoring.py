"""Scores of a review, per agent, from HR's history (polars, vectorised over agents).

Quality comes in layers: the task outcome (mean quality of completed work), the reviewer
signal (the share of the agent's approval requests granted), and a person's override over
both. Collaboration comes from behaviour: delegation success (delegated tasks that were
completed), responsiveness (help requests answered, not declined), handoff completeness
(delegated tasks the receiver kept, not handed on again) and loop prevention (delegated tasks
that did not come back to the delegator). Each window needs `min_points` finished tasks for
its scores to count."""

from __future__ import annotations

import numpy as np
import polars as pl

from synthorg.config.hr import HrSpec
from synthorg.domain.enums import EventKind, MessageKind, TaskStatus
from synthorg.hr.history import History
from synthorg.hr.trends import classify, theil_sen

WINDOW_SCORES = ("quality", "completion", "on_time")
COLLABORATION = ("delegation_success", "responsiveness", "handoff_completeness",
                 "loop_prevention")
_DONE = int(TaskStatus.completed)


def window_scores(results: pl.DataFrame, tick: int, window: int, min_points: int
                  ) -> pl.DataFrame:
    """Per agent with work finished in the `window` ticks before `tick`: n, quality (of the
    completed), completion, on_time (completed by the deadline), cost per task; `valid`
    when n reaches `min_points`."""
    done = pl.col("status") == _DONE
    return (results.filter(pl.col("finished") >= tick - window)
            .group_by("agent")
            .agg(pl.len().alias("n"),
                 pl.col("quality").filter(done).mean().alias("quality"),
                 done.mean().alias("completion"),
                 (pl.col("finished") <= pl.col("deadline")).filter(done).mean().alias("on_time"),
                 pl.col("cost_micro").mean().alias("cost_micro"))
            .with_columns((pl.col("n") >= min_points).alias("valid")))


def reviewer_signal(events: pl.DataFrame) -> pl.DataFrame:
    """Per agent asking approvals: the share granted (`peer`)."""
    granted, refused = int(EventKind.approval_granted), int(EventKind.approval_rejected)
    return (events.filter(pl.col("kind").is_in([granted, refused]))
            .group_by(pl.col("actor").alias("agent"))
            .agg((pl.col("kind") == granted).mean().alias("peer")))


def collaboration(events: pl.DataFrame, results: pl.DataFrame) -> pl.DataFrame:
    """Per agent: the four collaboration components (null where it had no occasion) and
    `collaboration`, their mean."""
    sent = events.filter(pl.col("kind") == int(EventKind.message_sent))
    delegated = (sent.filter(pl.col("value") == float(MessageKind.delegate))
                 .select("tick", pl.col("actor").alias("agent"), "task",
                         pl.col("target").alias("to")))
    outcome = results.select("task", (pl.col("status") == _DONE).alias("completed"))
    success = (delegated.join(outcome, on="task", how="inner")
               .group_by("agent").agg(pl.col("completed").mean().alias("delegation_success")))
    later = delegated.select("task", pl.col("tick").alias("t2"), pl.col("agent").alias("by"),
                             pl.col("to").alias("to2"))
    pairs = delegated.join(later, on="task", how="left").with_columns(
        (pl.col("t2") > pl.col("tick")).fill_null(False).alias("after"))
    onward = (pairs.group_by("agent", "task", "tick", "to")
              .agg((pl.col("after") & (pl.col("by") == pl.col("to"))).any().alias("again"),
                   (pl.col("after") & (pl.col("to2") == pl.col("agent"))).any().alias("back")))
    handoffs = onward.group_by("agent").agg(
        (1.0 - pl.col("again").mean()).alias("handoff_completeness"),
        (1.0 - pl.col("back").mean()).alias("loop_prevention"))
    given, declined = int(EventKind.help_given), int(EventKind.help_declined)
    answers = (events.filter(pl.col("kind").is_in([given, declined]))
               .group_by(pl.col("actor").alias("agent"))
               .agg((pl.col("kind") == given).mean().alias("responsiveness")))
    out = success
    for part in (handoffs, answers):
        out = out.join(part, on="agent", how="full", coalesce=True)
    return out.with_columns(pl.mean_horizontal(*COLLABORATION).alias("collaboration"))


def conduct(events: pl.DataFrame) -> pl.DataFrame:
    """Per agent: tool calls SecOps denied and security incidents of its own."""
    return (events.filter(pl.col("kind").is_in([int(EventKind.tool_denied),
                                                int(EventKind.security_incident)]))
            .group_by(pl.col("actor").alias("agent"))
            .agg((pl.col("kind") == int(EventKind.tool_denied)).sum().alias("denied"),
                 (pl.col("kind") == int(EventKind.security_incident)).sum().alias("incidents")))


def trend(results: pl.DataFrame, spec: HrSpec) -> pl.DataFrame:
    """Per agent with `min_points` completed tasks in the longest window: the Theil-Sen slope
    of quality over the finishing tick (its latest `trend_points` tasks) and its class."""
    points = (results.filter(pl.col("status") == _DONE)
              .sort("agent", "finished", "task")
              .group_by("agent", maintain_order=True).tail(spec.trend_points)
              .filter(pl.len().over("agent") >= spec.min_points)
              .select("agent", pl.col("finished").cast(pl.Float64).alias("x"),
                      pl.col("quality").alias("y")))
    if points.is_empty():
        return pl.DataFrame(schema={"agent": pl.Int32, "slope": pl.Float64, "trend": pl.String})
    return (theil_sen(points).select("agent", "slope")
            .with_columns(classify(pl.col("slope"), spec.trend_epsilon).alias("trend")))


def review_frame(history: History, tick: int, spec: HrSpec, agents: np.ndarray,
                 overrides: dict[int, float]) -> pl.DataFrame:
    """One row per agent in `agents` (slots, ascending): every score of the review."""
    frame = pl.DataFrame({"agent": agents.astype(np.int32)})
    results, events = history.results, history.events
    peer = reviewer_signal(events)
    for w in spec.windows:
        scores = (window_scores(results, tick, w, spec.min_points)
                  .join(peer, on="agent", how="left")
                  .with_columns(pl.when(pl.col("peer").is_null()).then(pl.col("quality"))
                                .otherwise((1 - spec.peer_weight) * pl.col("quality")
                                           + spec.peer_weight * pl.col("peer")).alias("quality"))
                  .drop("peer"))
        frame = frame.join(scores.rename({c: f"{c}_{w}" for c in scores.columns if c != "agent"}),
                           on="agent", how="left")
    long = spec.longest
    frame = (frame.join(peer, on="agent", how="left")
             .join(collaboration(events, results), on="agent", how="left")
             .join(conduct(events), on="agent", how="left")
             .join(trend(results, spec), on="agent", how="left")
             .with_columns(pl.col(f"n_{long}").fill_null(0), pl.col(f"valid_{long}").fill_null(False),
                           pl.col("denied").fill_null(0), pl.col("incidents").fill_null(0)))
    if overrides:  # a person's score stands over the ledger's, in every window
        pinned = pl.DataFrame({"agent": np.array(list(overrides), dtype=np.int32),
                               "override": np.array(list(overrides.values()))})
        frame = frame.join(pinned, on="agent", how="left").with_columns(
            pl.coalesce("override", f"quality_{w}").alias(f"quality_{w}") for w in spec.windows
        ).drop("override")
    return frame.sort("agent")
