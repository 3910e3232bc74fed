"""Receives per-tick batches from every source, orders them, hashes them, streams them.

A tick is final once every source (each agent group, and the driver for itself and the
departments) has delivered it. Final ticks are ordered by (actor, seq), hashed in tick order
and appended to part files, so memory stays bounded however long the run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from synthorg.domain.enums import EventKind, TaskStatus
from synthorg.domain.records import EVENT_DTYPE, RESULT_DTYPE, TASK_DTYPE

PARTS_DIR = "ledger-parts"
_STREAMS = {"events": EVENT_DTYPE, "results": RESULT_DTYPE, "created": TASK_DTYPE}


@dataclass
class LedgerTotals:
    sha256: str
    ticks: int
    event_counts: dict[str, int]
    completed: int
    failed: int
    message_kinds: dict[int, int] = field(default_factory=dict)


def _first_actor(events: np.ndarray) -> int:
    return int(events["actor"][0]) if len(events) else 0


def _ordered(batches: list[np.ndarray]) -> np.ndarray:
    """Events by (actor, seq). Each source sends its batch sorted and sources hold disjoint
    actor ranges, so concatenating batches by first actor is usually already in order."""
    events = np.concatenate(batches)
    actor, seq = events["actor"], events["seq"]
    if np.all((actor[1:] > actor[:-1]) | ((actor[1:] == actor[:-1]) & (seq[1:] > seq[:-1]))):
        return events
    return events[np.lexsort((seq, actor))]


def frame_of(rows: np.ndarray) -> pl.DataFrame:
    return pl.DataFrame({name: rows[name] for name in rows.dtype.names or ()})


class Ledger:
    def __init__(self, run_dir: Path, sources: int, flush_rows: int = 200_000) -> None:
        self.parts = run_dir / PARTS_DIR
        self.parts.mkdir(parents=True, exist_ok=True)
        self._sources = sources
        self._flush_rows = flush_rows
        self._pending: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self._next_tick: int | None = None
        self._digest = b""  # chained per tick, so a checkpoint can carry it
        self._counts = np.zeros(len(EventKind), dtype=np.int64)
        self._message_kinds = np.zeros(8, dtype=np.int64)
        self._completed = 0
        self._failed = 0
        self._ticks = 0
        self._buffers: dict[str, list[np.ndarray]] = {k: [] for k in _STREAMS}
        self._buffered = 0
        self._part_no = 0

    def append(self, tick: int, events: np.ndarray, results: np.ndarray,
               created: np.ndarray | None = None) -> None:
        if self._next_tick is None:
            self._next_tick = tick
        if tick < self._next_tick:
            raise ValueError(f"ledger: tick {tick} is already final")
        created = np.zeros(0, TASK_DTYPE) if created is None else created
        self._pending.setdefault(tick, []).append((events, results, created))
        while len(self._pending.get(self._next_tick, ())) == self._sources:
            self._finalise(self._next_tick)
            self._next_tick += 1

    def _finalise(self, tick: int) -> None:
        batches = self._pending.pop(tick)
        events = _ordered(sorted((b[0] for b in batches), key=_first_actor))
        results = np.concatenate([b[1] for b in batches])
        results = results[np.argsort(results["task"], kind="stable")]
        created = np.concatenate([b[2] for b in batches])
        created = created[np.argsort(created["task"], kind="stable")]
        h = hashlib.sha256(self._digest)
        h.update(np.int64(tick).tobytes())
        for rows in (events, results, created):
            h.update(np.int64(len(rows)).tobytes())
            h.update(rows.tobytes())
        self._digest = h.digest()
        self._counts += np.bincount(events["kind"].astype(np.intp), minlength=len(EventKind))
        sent = events[events["kind"] == EventKind.message_sent]
        self._message_kinds += np.bincount(sent["value"].astype(np.intp), minlength=8)[:8]
        self._completed += int((results["status"] == TaskStatus.completed).sum())
        self._failed += int((results["status"] == TaskStatus.failed).sum())
        self._ticks += 1
        for name, rows in (("events", events), ("results", results), ("created", created)):
            if len(rows):
                self._buffers[name].append(rows)
        self._buffered += len(events) + len(results) + len(created)
        if self._buffered >= self._flush_rows:
            self.flush()

    def flush(self) -> None:
        for name, chunks in self._buffers.items():
            if chunks:
                frame_of(np.concatenate(chunks)).write_parquet(
                    self.parts / f"{name}-{self._part_no:06d}.parquet")
                chunks.clear()
        self._part_no += 1
        self._buffered = 0

    @property
    def complete(self) -> bool:
        return not self._pending

    def record_incident(self, tick: int, rows: np.ndarray) -> None:
        """Infrastructure incidents (a crashed actor): kept in the events table, never hashed,
        so a recovered run keeps the hash of an undisturbed one."""
        name = f"incidents-{tick:08d}-{len(self._incident_files())}.parquet"
        frame_of(rows).write_parquet(self.parts / name)

    def _incident_files(self) -> list[Path]:
        return sorted(self.parts.glob("incidents-*.parquet"))

    def state(self) -> dict[str, object]:
        """Everything needed to continue from here; flushes so parts on disk are the offset."""
        if self._pending:
            raise RuntimeError("ledger: cannot checkpoint with incomplete ticks")
        self.flush()
        return {"digest": self._digest, "counts": self._counts.copy(),
                "message_kinds": self._message_kinds.copy(), "completed": self._completed,
                "failed": self._failed, "ticks": self._ticks, "part_no": self._part_no,
                "next_tick": self._next_tick}

    def restore(self, state: dict[str, object]) -> None:
        """Continue from `state`: part files written after it are discarded."""
        self._digest = state["digest"]  # type: ignore[assignment]
        self._counts = np.array(state["counts"], dtype=np.int64)
        self._message_kinds = np.array(state["message_kinds"], dtype=np.int64)
        self._completed = int(state["completed"])  # type: ignore[call-overload]
        self._failed = int(state["failed"])  # type: ignore[call-overload]
        self._ticks = int(state["ticks"])  # type: ignore[call-overload]
        self._part_no = int(state["part_no"])  # type: ignore[call-overload]
        self._next_tick = state["next_tick"]  # type: ignore[assignment]
        self._pending.clear()
        for chunks in self._buffers.values():
            chunks.clear()
        self._buffered = 0
        for f in self.parts.glob("*.parquet"):
            if f.name.startswith("incidents-"):
                continue
            if int(f.stem.rsplit("-", 1)[1]) >= self._part_no:
                f.unlink()

    def totals(self) -> LedgerTotals:
        if self._pending:
            raise RuntimeError(f"ledger: ticks {sorted(self._pending)} never completed")
        self.flush()
        return LedgerTotals(
            sha256=self._digest.hex(),
            ticks=self._ticks,
            event_counts={k.name: int(self._counts[k]) for k in EventKind},
            completed=self._completed,
            failed=self._failed,
            message_kinds={i: int(c) for i, c in enumerate(self._message_kinds) if c},
        )

    def part_files(self, stream: str) -> list[Path]:
        return sorted(self.parts.glob(f"{stream}-*.parquet"))
