"""N-of-M criteria: which of the promotion criteria each agent meets at a review.

quality, completion and on_time are met when the score reaches its threshold in every window
with enough data (and there is at least one); collaboration, trend (the Theil-Sen slope of
quality) and pillars (the five-pillar overall score) on their own column."""

from __future__ import annotations

import polars as pl

from synthorg.config.hr import HrSpec

_COLUMN = {"collaboration": "collaboration", "trend": "slope", "pillars": "overall"}


def _in_every_window(frame: pl.DataFrame, name: str, threshold: float, spec: HrSpec) -> pl.Expr:
    # a window without enough tasks, or with no evidence on this score, does not count
    per_window = [pl.when(pl.col(f"valid_{w}").fill_null(False)
                          & pl.col(f"{name}_{w}").is_not_null())
                  .then(pl.col(f"{name}_{w}") >= threshold)
                  for w in spec.windows]
    kept = pl.concat_list(per_window).list.drop_nulls()
    return (kept.list.len() > 0) & kept.list.all()


def criteria_met(frame: pl.DataFrame, spec: HrSpec) -> pl.DataFrame:
    """The frame with `met_<criterion>` booleans and `met`, how many are met."""
    columns = []
    for name, threshold in spec.promotion.thresholds.items():
        if name in _COLUMN:
            expr = (pl.col(_COLUMN[name]) >= threshold).fill_null(False)
        else:
            expr = _in_every_window(frame, name, threshold, spec)
        columns.append(expr.alias(f"met_{name}"))
    frame = frame.with_columns(columns)
    met = [c for c in frame.columns if c.startswith("met_")]
    return frame.with_columns(pl.sum_horizontal(*met).cast(pl.Int32).alias("met") if met
                              else pl.lit(0, dtype=pl.Int32).alias("met"))
