"""Trends by Theil-Sen regression: the median of the slopes between every pair of points,
robust to the odd failed task; per agent at once, as one self-join."""

from __future__ import annotations

import polars as pl


def theil_sen(points: pl.DataFrame, by: str = "agent", x: str = "x", y: str = "y"
              ) -> pl.DataFrame:
    """Per `by`: `slope` (median of pairwise slopes over pairs with distinct x) and
    `intercept` (median(y) - slope * median(x)), as scipy.stats.theilslopes computes them."""
    p = points.select(by, x, y)
    pairs = (p.join(p, on=by, suffix="_r")
             .filter(pl.col(f"{x}_r") > pl.col(x))
             .group_by(by)
             .agg(((pl.col(f"{y}_r") - pl.col(y)) / (pl.col(f"{x}_r") - pl.col(x)))
                  .median().alias("slope")))
    return (p.join(pairs, on=by)
            .group_by(by)
            .agg(pl.col("slope").first(),
                 (pl.col(y).median() - pl.col("slope").first() * pl.col(x).median())
                 .alias("intercept"))
            .sort(by))


def classify(slope: pl.Expr, epsilon: float) -> pl.Expr:
    """improving / stable / declining, by the slope's sign beyond `epsilon`."""
    return (pl.when(slope > epsilon).then(pl.lit("improving"))
            .when(slope < -epsilon).then(pl.lit("declining"))
            .otherwise(pl.lit("stable")))
