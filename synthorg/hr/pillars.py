"""The five-pillar evaluation, pull-based: computed at a review from its scores.

Each pillar is a `PillarScorer`: named metrics (polars expressions over the review frame, each
in [0, 1], null where the agent gave no evidence) with weights. A metric turned off in
`hr.pillars.<pillar>.metrics` gives its weight to the others, as does a null one for that
agent. `overall` is the pillars' weighted mean (a pillar with no evidence gives its weight
to the rest).

  performance    completion (share of finished tasks completed), throughput (tasks
                 finished per tick, against the department's best)
  quality        quality (layered quality score), on_time (completed by the deadline)
  collaboration  collaboration (mean of the four behaviours), responsiveness (help answered)
  reliability    conduct (1 - denied calls per task finished), safety (1 - own incidents per
                 task finished, floored at 0)
  efficiency     cost (the department's median cost per task over the agent's, capped at 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import polars as pl

from synthorg.config.hr import PILLARS, HrSpec


@dataclass(frozen=True)
class PillarContext:
    """What a pillar may read: the review frame (one row per agent, with `dept`) and the
    longest window's length."""

    frame: pl.DataFrame
    window: int


class PillarScorer(Protocol):
    name: str

    def metrics(self, ctx: PillarContext) -> dict[str, tuple[pl.Expr, float]]:
        """Metric name -> (expression in [0, 1], weight)."""


def _clip(e: pl.Expr) -> pl.Expr:
    return e.clip(0.0, 1.0)


class Performance:
    name = "performance"

    def metrics(self, ctx: PillarContext) -> dict[str, tuple[pl.Expr, float]]:
        w = ctx.window
        rate = pl.col(f"n_{w}") / w
        return {"completion": (pl.col(f"completion_{w}"), 0.6),
                "throughput": (_clip(rate / rate.max().over("dept")), 0.4)}


class Quality:
    name = "quality"

    def metrics(self, ctx: PillarContext) -> dict[str, tuple[pl.Expr, float]]:
        w = ctx.window
        return {"quality": (pl.col(f"quality_{w}"), 0.7), "on_time": (pl.col(f"on_time_{w}"), 0.3)}


class Collaboration:
    name = "collaboration"

    def metrics(self, ctx: PillarContext) -> dict[str, tuple[pl.Expr, float]]:
        return {"collaboration": (pl.col("collaboration"), 0.6),
                "responsiveness": (pl.col("responsiveness"), 0.4)}


class Reliability:
    name = "reliability"

    def metrics(self, ctx: PillarContext) -> dict[str, tuple[pl.Expr, float]]:
        n = pl.col(f"n_{ctx.window}")
        seen = n > 0
        return {"conduct": (pl.when(seen).then(_clip(1 - pl.col("denied") / n)), 0.5),
                "safety": (pl.when(seen).then(_clip(1 - pl.col("incidents") / n)), 0.5)}


class Efficiency:
    name = "efficiency"

    def metrics(self, ctx: PillarContext) -> dict[str, tuple[pl.Expr, float]]:
        cost = pl.col(f"cost_micro_{ctx.window}")
        median = cost.median().over("dept")
        return {"cost": (pl.when(cost > 0).then(_clip(median / cost))
                         .when(cost == 0).then(1.0), 1.0)}


SCORERS: dict[str, PillarScorer] = {s.name: s for s in (
    Performance(), Quality(), Collaboration(), Reliability(), Efficiency())}


def _weighted(parts: list[tuple[pl.Expr, float]]) -> pl.Expr:
    """Weighted mean of the non-null parts (weights of null ones go to the others)."""
    if not parts:
        return pl.lit(None, dtype=pl.Float64)
    num = pl.sum_horizontal(*[(e * w).fill_null(0.0) for e, w in parts])
    den = pl.sum_horizontal(*[pl.when(e.is_null()).then(0.0).otherwise(w) for e, w in parts])
    return pl.when(den > 0).then(num / den).otherwise(None)


def pillar_scores(frame: pl.DataFrame, spec: HrSpec) -> pl.DataFrame:
    """The frame with a `pillar_<name>` column per pillar and `overall`."""
    ctx = PillarContext(frame, spec.longest)
    columns = []
    for name in PILLARS:
        conf = spec.pillars.get(name)  # type: ignore[call-overload]
        if conf is None or conf.weight == 0:
            continue
        on = {m: ew for m, ew in SCORERS[name].metrics(ctx).items() if conf.metrics.get(m, True)}
        columns.append(_weighted(list(on.values())).alias(f"pillar_{name}"))
    frame = frame.with_columns(columns)
    parts = [(pl.col(f"pillar_{n}"), spec.pillars[n].weight)  # type: ignore[index]
             for n in PILLARS if f"pillar_{n}" in frame.columns]
    return frame.with_columns(_weighted(parts).alias("overall"))
