"""A sweep's or a study's outcomes per point: mean and 95 % interval across seeds.

A sweep's aggregate.parquet already holds them (`<metric>.mean`, `.ci95_low`, `.ci95_high`,
`n`); without it they are computed from runs.parquet by the sweep's own `aggregate`. A study
keeps one row per trial with the objective's terms per seed in `result`, and each seed's
summary.json under trials/<trial_id>/seed-<seed>/: the same `aggregate` then gives per-trial
intervals, so both kinds of directory reach the figures in one shape.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from synthorg.experiments.rows import META, aggregate
from synthorg.report.data import AGGREGATE, RUNS, SUMMARY, TRIALS, ReportError, collect, read_json
from synthorg.sim.summary import Summary

# what most studies ask about; only those a directory holds are shown
KEY_OUTCOMES = ("tasks_completed", "tasks_failed", "mean_quality", "cost_usd",
                "security_incidents", "escalations", "lead_time_mean")
OBJECTIVE = "objective"  # a study's weighted objective (synthorg/experiments/tune.py)
_PER_SEED = re.compile(r"^(?P<field>.+)\.seed(?P<seed>\d+)$")


@dataclass(frozen=True)
class PointOutcomes:
    """Per point (a sweep's grid point or sample, a study's trial): the swept parameters'
    values and, per outcome, `<outcome>.mean`, `.ci95_low`, `.ci95_high`, with `n` seeds."""

    path: Path
    kind: str  # sweep or study
    name: str
    params: tuple[str, ...]
    outcomes: tuple[str, ...]
    points: pl.DataFrame
    notes: tuple[str, ...]  # what the counts above the figures say


def load_sweep(path: Path) -> PointOutcomes:
    runs = collect(path / RUNS, lambda: pl.read_parquet(path / RUNS))
    if "status" not in runs.columns:
        raise ReportError(f"{path / RUNS}: no status column: not a sweep's runs table")
    params = tuple(c for c in runs.columns if c not in META and c not in Summary.model_fields
                   and not c.startswith("teleology."))
    points = (collect(path / AGGREGATE, lambda: pl.read_parquet(path / AGGREGATE))
              if (path / AGGREGATE).is_file() else pl.DataFrame())
    if not points.height or any(f"{o}.mean" not in points.columns for o in _present(runs)):
        points = aggregate(runs, list(params))
    ok = runs.filter(pl.col("status") == "ok").height
    plan = path / "experiment.json"
    name = str(read_json(plan).get("experiment", path.name)) if plan.is_file() else path.name
    return PointOutcomes(path, "sweep", name, params, _present(runs), points,
                         (f"{runs.height} runs, {ok} ok, {runs.height - ok} failed",
                          f"{points.height} points over {', '.join(params) or 'no parameter'}"))


def _present(frame: pl.DataFrame) -> tuple[str, ...]:
    return tuple(o for o in (OBJECTIVE, *KEY_OUTCOMES)
                 if o in frame.columns and frame.schema[o].is_numeric())


def load_study(path: Path) -> PointOutcomes:
    trials = collect(path / TRIALS, lambda: pl.read_parquet(path / TRIALS))
    columns = trials.columns
    if "trial_id" not in columns or OBJECTIVE not in columns or "result" not in columns:
        raise ReportError(f"{path / TRIALS}: not a study's trials table (trial_id, "
                          "objective and result expected)")
    # tune.py writes trial_id, the space's parameters, then objective
    params = tuple(columns[columns.index("trial_id") + 1:columns.index(OBJECTIVE)])
    rows: list[dict[str, Any]] = []
    for point, trial in enumerate(trials.iter_rows(named=True)):
        if trial.get("status") != "ok":
            continue
        for seed, figures in _seeds(path, trial).items():
            rows.append({"point": point, "seed": seed, "status": "ok",
                         **{p: trial[p] for p in params}, **figures})
    per_seed = pl.DataFrame(rows, infer_schema_length=None, strict=False)
    points = aggregate(per_seed, list(params)) if per_seed.height else pl.DataFrame()
    if points.height:
        stopped = trials.with_row_index("point").select(
            pl.col("point").cast(pl.Int64),
            pl.col("stopped_early").fill_null(False) if "stopped_early" in columns
            else pl.lit(False).alias("stopped_early"))
        points = points.join(stopped, on="point", how="left")
    ok = trials.filter(pl.col("status") == "ok").height if "status" in columns else trials.height
    early = (trials.filter(pl.col("stopped_early").fill_null(False)).height
             if "stopped_early" in columns else 0)
    return PointOutcomes(path, "study", path.name, params, _present(per_seed), points,
                         (f"{trials.height} trials, {ok} ok ({early} stopped early by ASHA: "
                          "their finished seeds count), "
                          f"{trials.height - ok} failed",))


def _seeds(path: Path, trial: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """A trial's finished seeds: the objective and its terms from `result`, the key outcomes
    from each seed's summary.json where the trial's directory still holds it."""
    try:
        result = json.loads(trial.get("result") or "{}")
    except ValueError:
        result = {}
    seeds: dict[int, dict[str, Any]] = {}
    for key, value in result.items() if isinstance(result, dict) else ():
        match = _PER_SEED.match(key)
        if match and isinstance(value, int | float):
            seeds.setdefault(int(match["seed"]), {})[match["field"]] = value
    for seed, figures in seeds.items():
        summary = path / "trials" / str(trial["trial_id"]) / f"seed-{seed}" / SUMMARY
        if summary.is_file():
            held = read_json(summary)
            figures.update({o: held[o] for o in KEY_OUTCOMES
                            if isinstance(held.get(o), int | float) and o not in figures})
    return seeds
