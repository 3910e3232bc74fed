"""HR's memory of the ledger: the finished tasks and scored events of the longest window, and
the open tasks' deadlines, as polars frames (checkpointed as plain arrays)."""

from __future__ import annotations

import numpy as np
import polars as pl

from synthorg.hr.feed import Feed

RESULT_COLUMNS = ("task", "agent", "status", "reason", "finished", "started", "quality",
                  "cost_micro")
CREATED_COLUMNS = ("task", "priority", "difficulty", "created", "deadline")
EVENT_COLUMNS = ("tick", "actor", "seq", "kind", "task", "target", "value")
_SCHEMAS = {
    "results": {"task": pl.Int64, "agent": pl.Int32, "status": pl.Int8, "reason": pl.Int8,
                "finished": pl.Int32, "started": pl.Int32, "quality": pl.Float64,
                "cost_micro": pl.Int64, "deadline": pl.Int32, "difficulty": pl.Float64},
    "open": {"task": pl.Int64, "priority": pl.Int8, "difficulty": pl.Float64,
             "created": pl.Int32, "deadline": pl.Int32},
    "events": {"tick": pl.Int32, "actor": pl.Int32, "seq": pl.Int32, "kind": pl.Int8, "task": pl.Int64,
               "target": pl.Int32, "value": pl.Float64},
}


def _frame(rows: np.ndarray, columns: tuple[str, ...]) -> pl.DataFrame:
    return pl.DataFrame({c: rows[c] for c in columns})


def empty(name: str) -> pl.DataFrame:
    return pl.DataFrame(schema=_SCHEMAS[name])


class History:
    def __init__(self, keep_ticks: int) -> None:
        self.keep = keep_ticks
        self.results = empty("results")
        self.open = empty("open")
        self.events = empty("events")

    def ingest(self, feed: Feed, tick: int) -> None:
        """Add a review's feed (rows up to tick - 1) and forget what is older than the longest
        window. A task's deadline joins its result here: its creation may have come earlier.
        Rows are put in ledger order, whatever the groups that recorded them: sums over them
        are then the same to the last bit on any layout."""
        self.open = pl.concat([self.open, _frame(feed.created, CREATED_COLUMNS)
                               .cast(_SCHEMAS["open"])])  # type: ignore[arg-type]
        done = (_frame(feed.results, RESULT_COLUMNS).sort("task", "agent", "finished")
                .join(self.open.select("task", "deadline", "difficulty"), on="task", how="left",
                      maintain_order="left")
                .cast(_SCHEMAS["results"]))  # type: ignore[arg-type]
        self.open = self.open.join(done.select("task"), on="task", how="anti")
        since = tick - self.keep
        self.results = pl.concat([self.results, done]).filter(pl.col("finished") >= since)
        self.events = pl.concat([self.events, _frame(feed.events, EVENT_COLUMNS)
                                 .sort("tick", "actor", "seq")
                                 .cast(_SCHEMAS["events"])]  # type: ignore[arg-type]
                                ).filter(pl.col("tick") >= since)

    def state(self) -> dict[str, object]:
        return {name: {c: getattr(self, name)[c].to_numpy() for c in _SCHEMAS[name]}
                for name in ("results", "open", "events")}

    def load(self, state: dict[str, object]) -> None:
        for name in ("results", "open", "events"):
            columns = state[name]
            if not isinstance(columns, dict) or set(columns) != set(_SCHEMAS[name]):
                raise ValueError(f"hr history: {name} columns are not {sorted(_SCHEMAS[name])}")
            setattr(self, name, pl.DataFrame({c: np.asarray(columns[c]) for c in _SCHEMAS[name]})
                    .cast(_SCHEMAS[name]))  # type: ignore[arg-type]
