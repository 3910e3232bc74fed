"""A sweep's directory: one row file per finished run, runs.parquet and aggregate.parquet
made from them.

`rows/<run_key>.json` is written (atomically) when a run finishes, ok or failed: its presence
is what marks the run finished, so a sweep interrupted at any moment, or killed, loses at most
the runs in flight. runs.parquet is rebuilt from the row files after each one, so it is
always whole. One sweep writes a directory at a time (a lock), and a directory belongs to one
experiment: the plan's digest is kept beside the rows.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from synthorg.errors import MisuseError
from synthorg.memory.ab import _T975

ROWS, RUNS, AGGREGATE, PLAN = "rows", "runs.parquet", "aggregate.parquet", "experiment.json"
MAX_ROW_BYTES = 1 << 20
# the fields of a row that are not a parameter or a summary field
META = ("run_key", "point", "seed", "status", "error", "wall_s", "node", "host", "run_dir")


@contextlib.contextmanager
def owned(out: Path, name: str, keys: list[str]) -> Iterator[None]:
    """Hold DIR for this sweep: one writer at a time, and only the experiment it began with."""
    out.mkdir(parents=True, exist_ok=True)
    (out / ROWS).mkdir(exist_ok=True)
    lock = open(out / ".lock", "w")  # noqa: SIM115 - held for the whole sweep
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise MisuseError(f"{out}: another sweep is writing this directory") from None
        digest = hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()
        plan = out / PLAN
        if plan.is_file():
            try:
                held = json.loads(plan.read_text()[:MAX_ROW_BYTES]).get("digest")
            except (ValueError, OSError, AttributeError):
                held = None
            if held != digest:
                raise MisuseError(f"{out}: holds the runs of another experiment (or its files "
                                  "changed since): give another --out")
        else:
            write_atomic(plan, json.dumps({"experiment": name, "runs": len(keys),
                                           "digest": digest}, indent=2))
        yield
    finally:
        lock.close()


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def finished(out: Path, keys: set[str], retry_failed: bool) -> tuple[dict[str, dict], list[str]]:
    """The rows already written for runs of this plan, and notes on files that are not."""
    rows: dict[str, dict] = {}
    notes: list[str] = []
    for path in sorted((out / ROWS).glob("*.json")):
        key = path.stem
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_ROW_BYTES + 1)
            row: Any = json.loads(data) if len(data) <= MAX_ROW_BYTES else None
            ok = isinstance(row, dict) and row.get("run_key") == key and row.get("status") in (
                "ok", "failed")
        except (ValueError, OSError):
            ok = False
        if not ok or key not in keys:
            notes.append(f"{path}: not a finished run of this experiment: run again")
            continue
        if retry_failed and row["status"] == "failed":
            continue
        rows[key] = row
    return rows, notes


def save_row(out: Path, row: dict[str, Any]) -> None:
    write_atomic(out / ROWS / f"{row['run_key']}.json", json.dumps(row, default=str))


def table(rows: list[dict[str, Any]], params: list[str]) -> pl.DataFrame:
    """runs.parquet: meta, parameters (dotted paths as column names), then summary fields."""
    flat = [_flatten(r) for r in rows]
    columns = list(dict.fromkeys([*META, *params, *(k for r in flat for k in r)]))
    frame = pl.DataFrame([{c: r.get(c) for c in columns} for r in flat],
                         infer_schema_length=None, strict=False)
    return frame.sort(["point", "seed"]) if frame.height else frame


def _flatten(row: dict[str, Any]) -> dict[str, Any]:
    flat = {k: v for k, v in row.items() if k != "summary"}
    flat.update(row.get("params", {}))
    flat.pop("params", None)
    for k, v in (row.get("summary") or {}).items():
        if isinstance(v, dict) and k == "teleology":
            flat.update({f"teleology.{m}": x for m, x in v.items()})
        elif isinstance(v, dict):
            flat[k] = json.dumps(v, sort_keys=True)
        else:
            flat[k] = v
    return flat


def aggregate(runs: pl.DataFrame, params: list[str]) -> pl.DataFrame:
    """Per point: each numeric outcome's mean, sd and 95 % t-interval over its finished seeds."""
    ok = runs.filter(pl.col("status") == "ok") if runs.height else runs
    skip = {*META, *params, "ticks", "agents", "groups"}
    metrics = [c for c, t in ok.schema.items() if c not in skip and t.is_numeric()]
    if not ok.height:
        return pl.DataFrame()
    by = ["point", *params]
    frame = ok.group_by(by, maintain_order=True).agg(
        pl.len().alias("n"),
        *[pl.col(m).cast(pl.Float64).mean().alias(f"{m}.mean") for m in metrics],
        *[pl.col(m).cast(pl.Float64).std().alias(f"{m}.sd") for m in metrics],
    )
    n = frame["n"].to_numpy()
    t = np.array([_T975[k - 2] if 2 <= k <= len(_T975) + 1 else (1.96 if k > 1 else math.nan)
                  for k in n])
    half = {m: t * frame[f"{m}.sd"].fill_null(math.nan).to_numpy() / np.sqrt(n) for m in metrics}
    return frame.with_columns(
        *[(pl.col(f"{m}.mean") - pl.Series(half[m])).alias(f"{m}.ci95_low") for m in metrics],
        *[(pl.col(f"{m}.mean") + pl.Series(half[m])).alias(f"{m}.ci95_high") for m in metrics],
    ).sort("point")


def write_tables(out: Path, rows: list[dict[str, Any]], params: list[str]) -> pl.DataFrame:
    runs = table(rows, params)
    for name, frame in ((RUNS, runs), (AGGREGATE, aggregate(runs, params))):
        tmp = out / f".{name}.tmp"
        frame.write_parquet(tmp)
        os.replace(tmp, out / name)
    return runs
