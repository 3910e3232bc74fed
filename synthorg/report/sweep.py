"""A sweep's or a study's figures: each outcome against each swept parameter, with the 95 %
interval across seeds as error bars."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
import polars as pl

from synthorg.report.outcomes import OBJECTIVE, PointOutcomes
from synthorg.report.page import Plot, Section, Table, styled
from synthorg.report.run import colours

# a sweep's grid of several parameters gets one line per combination of the others, up to this
# many; beyond (or for samples, where no two points share the others' values) one cloud
MAX_LINES = 10


def sweep_sections(data: PointOutcomes) -> list[Section]:
    sections = [Section(outcome_title(o), "", tuple(outcome_vs_param(data, o, p)
                                                     for p in data.params))
                for o in data.outcomes]
    sections.append(Section("Points", "", (points_table(data),)))
    return sections


def outcome_title(outcome: str) -> str:
    return "objective (the study's weighted sum)" if outcome == OBJECTIVE else outcome


def _category(value: Any) -> str:
    """A parameter's value as the config writes it (true, [a, b], supervised)."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _values(series: pl.Series) -> list[Any]:
    """A parameter's values as the x axis takes them: numbers stay numbers, anything else
    (autonomy levels, booleans, lists) is a category named by its text."""
    if series.dtype.is_numeric():
        return series.to_list()
    return [_category(v) for v in series.to_list()]


def outcome_vs_param(data: PointOutcomes, outcome: str, param: str) -> Plot:
    points = data.points.filter(pl.col(f"{outcome}.mean").is_not_null())
    others = [p for p in data.params if p != param]
    groups: list[tuple[str, pl.DataFrame]] = [("all points", points)]
    # a study's trials are a search's picks, not a design: no lines between them
    if others and data.kind == "sweep":
        keys = [", ".join(f"{p}={_category(v)}" for p, v in zip(others, row, strict=True))
                for row in points.select(others).iter_rows()]
        keyed = points.with_columns(pl.Series("_others", keys, dtype=pl.String))
        names = list(dict.fromkeys(keys))
        if 1 < len(names) <= MAX_LINES and len(names) < keyed.height:
            groups = [(n, keyed.filter(pl.col("_others") == n)) for n in names]
    numeric = points[param].dtype.is_numeric()
    palette = colours([name for name, _ in groups])
    fig = go.Figure()
    for name, rows in groups:
        rows = rows.sort(param) if numeric else rows
        mean = rows[f"{outcome}.mean"].to_numpy()
        low = rows[f"{outcome}.ci95_low"].fill_nan(None).to_numpy()
        high = rows[f"{outcome}.ci95_high"].fill_nan(None).to_numpy()
        n = rows["n"].to_list()
        stopped = (rows["stopped_early"].to_list() if "stopped_early" in rows.columns
                   else [False] * rows.height)
        fig.add_trace(go.Scatter(
            x=_values(rows[param]), y=mean, name=name, showlegend=len(groups) > 1,
            mode="lines+markers" if len(groups) > 1 else "markers",
            error_y={"type": "data", "symmetric": False,
                     "array": np.nan_to_num(high.astype(float) - mean, nan=0.0),
                     "arrayminus": np.nan_to_num(mean - low.astype(float), nan=0.0),
                     "thickness": 1.2, "width": 4},
            marker={"size": 8, "color": palette[name],
                    "symbol": ["circle-open" if s else "circle" for s in stopped]},
            line={"color": palette[name]},
            customdata=[[k, _interval(lo, hi)] for k, lo, hi in zip(n, low, high, strict=True)],
            hovertemplate=(f"{param}=%{{x}}<br>{outcome} mean %{{y:.4g}}<br>95 %: "
                           "%{customdata[1]}<br>seeds: %{customdata[0]}<extra></extra>")))
    if not numeric:
        order = list(dict.fromkeys(_values(data.points[param])))
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=order)
    caption = "Mean over seeds, error bars: 95 % t-interval across seeds (none for one seed)."
    if data.kind == "study":
        caption += " Open markers: trials ASHA stopped early (their finished seeds only)."
    return Plot(f"{outcome} against {param}",
                styled(fig, f"{outcome_title(outcome)} against {param}", xaxis_title=param,
                       yaxis_title=outcome),
                caption)


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return "none (one seed)"
    return f"[{low:.4g}, {high:.4g}]"


def points_table(data: PointOutcomes) -> Table:
    columns = [*data.params, "n", *(f"{o}.mean" for o in data.outcomes)]
    present = [c for c in columns if c in data.points.columns]
    return Table("Points" if data.kind == "sweep" else "Trials", tuple(present),
                 tuple(tuple(r) for r in data.points.select(present).iter_rows()),
                 "Each point's parameters, its number of seeds and its outcomes' means.")
