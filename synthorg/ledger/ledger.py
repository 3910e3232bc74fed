"""The ledger, sharded: every agent group (with the routing it did and the creation of the
tasks it routed) keeps a shard of what happened, where it happened.

A shard fingerprints its rows (see fingerprint.py), counts them, and streams them in part
files named after it; nothing crosses a process boundary per tick. Parts are plain .npy
arrays, read once when the run's parquet tables are written: encoding them as parquet took
about 2 ms of CPU a tick at 10,000 agents, in bursts that stalled one group at the tick's
barrier (writing .npy: well under 0.1 ms, and its copy into the page cache drops the GIL).
The shards' totals add up to the run's ledger and its `ledger_sha256`, the same for any
number or layout of shards. The final tables order rows by (tick, actor, seq).
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import polars as pl

from synthorg.domain.enums import ActionStatus, EventKind, MessageKind, TaskStatus
from synthorg.domain.records import (
    ACTION_DTYPE,
    ARGUMENT_DTYPE,
    EVENT_DTYPE,
    RESULT_DTYPE,
    TASK_DTYPE,
    TIMESERIES_DTYPE,
)
from synthorg.ledger.fingerprint import LANES, Fingerprinter

PARTS_DIR = "ledger-parts"
PART_SUFFIX = ".npy"
# hashed: what happened, the same rows however agents are grouped
STREAMS = {"events": EVENT_DTYPE, "results": RESULT_DTYPE, "created": TASK_DTYPE,
           "actions": ACTION_DTYPE, "arguments": ARGUMENT_DTYPE}
# kept beside them, not hashed: rows per group (summed over groups when tables are written)
AUX_STREAMS = {"timeseries": TIMESERIES_DTYPE,
               "argument_text": np.dtype(np.uint8)}  # the arguments' JSON, row after row
PART_STREAMS = {**STREAMS, **AUX_STREAMS}
_MESSAGE_KINDS = len(MessageKind)
# ticks fingerprinted together: the fingerprint's numpy calls cost ~0.5M instructions whatever
# the rows, a fixed cost of every group's tick when made each tick
HASH_EVERY = 4


def frame_of(rows: np.ndarray) -> pl.DataFrame:
    return pl.DataFrame({name: rows[name] for name in rows.dtype.names or ()})


def part_name(stream: str, shard: str, part: int) -> str:
    return f"{stream}-{shard}-{part:06d}{PART_SUFFIX}"


def part_files(parts: Path, stream: str, shard: str = "*") -> list[Path]:
    """A stream's part files in the directory `parts`, of one shard or of all, in order."""
    return sorted(parts.glob(f"{stream}-{shard}-*{PART_SUFFIX}"))


def _npy_header(chunks: Sequence[np.ndarray]) -> bytes:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {
        "descr": np.lib.format.dtype_to_descr(chunks[0].dtype), "fortran_order": False,
        "shape": (sum(len(c) for c in chunks),)})
    return header.getvalue()


def part_digest(chunks: Sequence[np.ndarray]) -> str:
    """The sha256 of the part file `write_part` makes of `chunks` (without writing it)."""
    h = hashlib.sha256(_npy_header(chunks))
    for c in chunks:
        h.update(np.ascontiguousarray(c).data)
    return h.hexdigest()


def write_part(path: Path, chunks: Sequence[np.ndarray]) -> str:
    """One .npy file of the rows of `chunks` (one dtype), written chunk by chunk: joining them
    first would copy the part in memory while holding the GIL, stalling the group's step.
    Returns the file's sha256, which checkpoints keep to check the part before use."""
    header = _npy_header(chunks)
    h = hashlib.sha256(header)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as f:
        f.write(header)
        for c in chunks:
            data = np.ascontiguousarray(c).data
            h.update(data)
            f.write(data)
    tmp.replace(path)
    return h.hexdigest()


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(2**20):
            h.update(block)
    return h.hexdigest()


def read_part(path: Path) -> np.ndarray:
    return np.load(path, mmap_mode="r", allow_pickle=False)  # read column by column


class PartSink(Protocol):
    """Where a shard's part files go: the run directory, or a writer on the driver's node."""

    def write(self, name: str, chunks: Sequence[np.ndarray]) -> str:
        """A part file of the rows of `chunks`, in order; returns its sha256."""

    def discard(self, shard: str, from_part: int) -> None:
        """Delete the shard's parts numbered `from_part` and later (a restore rewinds)."""


class DirectorySink:
    def __init__(self, run_dir: Path) -> None:
        self.parts = run_dir / PARTS_DIR
        self.parts.mkdir(parents=True, exist_ok=True)

    def write(self, name: str, chunks: Sequence[np.ndarray]) -> str:
        return write_part(self.parts / name, chunks)

    def discard(self, shard: str, from_part: int) -> None:
        for stream in PART_STREAMS:
            for f in part_files(self.parts, stream, shard):
                if int(f.stem.rsplit("-", 1)[1]) >= from_part:
                    f.unlink()


@dataclass
class ShardTotals:
    """Additive: the run's totals are the sum over shards."""

    fingerprint: np.ndarray = field(default_factory=lambda: np.zeros(LANES, dtype=np.uint64))
    rows: np.ndarray = field(default_factory=lambda: np.zeros(len(STREAMS), dtype=np.int64))
    event_counts: np.ndarray = field(default_factory=lambda: np.zeros(len(EventKind), np.int64))
    message_kinds: np.ndarray = field(default_factory=lambda: np.zeros(_MESSAGE_KINDS, np.int64))
    completed: int = 0
    failed: int = 0
    action_status: np.ndarray = field(
        default_factory=lambda: np.zeros(len(ActionStatus), np.int64))

    def __add__(self, other: ShardTotals) -> ShardTotals:
        with np.errstate(over="ignore"):
            fp = self.fingerprint + other.fingerprint
        return ShardTotals(fp, self.rows + other.rows, self.event_counts + other.event_counts,
                           self.message_kinds + other.message_kinds,
                           self.completed + other.completed, self.failed + other.failed,
                           self.action_status + other.action_status)

    def copy(self) -> ShardTotals:
        return copy.deepcopy(self)


@dataclass
class LedgerTotals:
    sha256: str
    ticks: int
    event_counts: dict[str, int]
    completed: int
    failed: int
    message_kinds: dict[int, int] = field(default_factory=dict)
    action_status: dict[str, int] = field(default_factory=dict)


def combine(shards: list[ShardTotals], ticks: int) -> LedgerTotals:
    total = sum(shards, ShardTotals())
    h = hashlib.sha256(b"synthorg-ledger/2")
    h.update(np.int64(ticks).tobytes())
    h.update(total.rows.astype("<i8").tobytes())
    h.update(total.fingerprint.astype("<u8").tobytes())
    return LedgerTotals(
        sha256=h.hexdigest(),
        ticks=ticks,
        event_counts={k.name: int(total.event_counts[k]) for k in EventKind},
        completed=total.completed,
        failed=total.failed,
        message_kinds={i: int(c) for i, c in enumerate(total.message_kinds) if c},
        action_status={k.name: int(total.action_status[k]) for k in ActionStatus},
    )


class LedgerShard:
    """`background=True` encodes and writes parts on a thread of their own (polars releases
    the GIL), so a flush does not stall the tick it falls in: for a group actor that would
    stall every other group at the tick's barrier too."""

    def __init__(self, shard: str, sink: PartSink, flush_rows: int = 200_000,
                 background: bool = False) -> None:
        self.shard = shard
        self._sink = sink
        self._flush_rows = flush_rows
        self._writer = ThreadPoolExecutor(1, thread_name_prefix=f"ledger-{shard}") if background else None
        self._writing: list[Future[None]] = []
        self._totals = ShardTotals()
        self._buffers: dict[str, list[np.ndarray]] = {k: [] for k in PART_STREAMS}
        self._buffered = 0
        self._part_no = 0
        self._written: list[tuple[str, str]] = []  # (part file, its sha256), in order
        self._fingerprint = Fingerprinter()
        self._forget_unhashed()

    def append(self, events: np.ndarray, results: np.ndarray,
               created: np.ndarray | None = None, actions: np.ndarray | None = None,
               timeseries: np.ndarray | None = None, arguments: np.ndarray | None = None,
               argument_text: np.ndarray | None = None) -> None:
        """One tick's rows from this shard: events sorted by (actor, seq)."""
        created = np.zeros(0, TASK_DTYPE) if created is None else created
        actions = np.zeros(0, ACTION_DTYPE) if actions is None else actions
        arguments = np.zeros(0, ARGUMENT_DTYPE) if arguments is None else arguments
        t = self._totals
        streams = (events, results, created, actions, arguments)
        for stream, (name, rows) in enumerate(zip(STREAMS, streams, strict=True)):
            if len(rows):
                self._unhashed[stream].append(rows)
                self._buffers[name].append(rows)
        if timeseries is not None and len(timeseries):
            self._buffers["timeseries"].append(timeseries)
        if argument_text is not None and len(argument_text):
            self._buffers["argument_text"].append(argument_text)
        self._appends_unhashed += 1
        if self._appends_unhashed >= HASH_EVERY:
            self._hash()
        t.rows += [len(rows) for rows in streams]
        t.event_counts += np.bincount(events["kind"].astype(np.intp), minlength=len(EventKind))
        sent = events["value"][events["kind"] == EventKind.message_sent.value].astype(np.intp)
        t.message_kinds += np.bincount(sent, minlength=_MESSAGE_KINDS)[:_MESSAGE_KINDS]
        status = results["status"]
        t.completed += int((status == TaskStatus.completed.value).sum())
        t.failed += int((status == TaskStatus.failed.value).sum())
        if len(actions):
            t.action_status += np.bincount(actions["status"].astype(np.intp),
                                           minlength=len(ActionStatus))[:len(ActionStatus)]
        self._buffered += len(events) + len(results) + len(created) + len(actions)
        if self._buffered >= self._flush_rows:
            self.flush()

    def _hash(self) -> None:
        """Add the rows appended since the last time to the fingerprint."""
        with np.errstate(over="ignore"):
            self._totals.fingerprint += self._fingerprint(self._unhashed)
        self._forget_unhashed()

    def _forget_unhashed(self) -> None:
        """No rows waiting for the fingerprint (per stream number, as it takes them)."""
        self._unhashed: dict[int, list[np.ndarray]] = {s: [] for s in range(len(STREAMS))}
        self._appends_unhashed = 0

    def flush(self) -> None:
        parts = [(part_name(name, self.shard, self._part_no), chunks)
                 for name, chunks in self._buffers.items() if chunks]
        self._buffers = {k: [] for k in PART_STREAMS}  # the lists in `parts` go to the writer
        self._part_no += 1
        self._buffered = 0
        if self._writer is None:
            self._write(parts)
            return
        for done in [f for f in self._writing if f.done()]:
            done.result()  # a failed write surfaces at the next flush
            self._writing.remove(done)
        self._writing.append(self._writer.submit(self._write, parts))

    def _write(self, parts: list[tuple[str, list[np.ndarray]]]) -> None:
        for name, chunks in parts:
            self._written.append((name, self._sink.write(name, chunks)))

    def sync(self) -> None:
        """Bring the totals up to date, flush, and wait until every part is handed to the
        sink."""
        self._hash()
        self.flush()
        writing, self._writing = self._writing, []
        for f in writing:
            f.result()

    def totals(self) -> ShardTotals:
        self.sync()
        return self._totals

    def counts(self) -> ShardTotals:
        """The totals so far without waiting for writes in flight: counts are current, the
        fingerprint may lag (for live metrics, never for the ledger's hash)."""
        return self._totals

    def state(self) -> dict[str, object]:
        """Everything needed to continue from here; flushes so parts on disk are the offset."""
        self.sync()
        return {"shard": self.shard, "part_no": self._part_no, "totals": self._totals.copy(),
                "parts": list(self._written)}

    def restore(self, state: dict[str, object]) -> None:
        """Continue from `state`: this shard's part files written after it are discarded."""
        if state["shard"] != self.shard:
            raise ValueError(f"ledger state of shard {state['shard']} given to {self.shard}")
        self._part_no = int(state["part_no"])  # type: ignore[call-overload]
        self._written = [(str(n), str(d)) for n, d in state["parts"]]  # type: ignore[attr-defined]
        saved: ShardTotals = state["totals"]  # type: ignore[assignment]
        self._totals = saved.copy()  # writable: arrays from Ray's object store are read-only
        for f in self._writing:  # parts of the abandoned future: written, then discarded
            f.result()
        self._writing = []
        for chunks in self._buffers.values():
            chunks.clear()
        self._buffered = 0
        self._forget_unhashed()
        self._sink.discard(self.shard, self._part_no)


INCIDENTS_LOG = "incidents.jsonl"


def record_incident(run_dir: Path, tick: int, rows: np.ndarray, reason: str = "") -> None:
    """Infrastructure incidents (a crashed actor, a failing executor): kept in the events
    table, never hashed, so a recovered run keeps the hash of an undisturbed one; what went
    wrong, in words, in incidents.jsonl."""
    parts = run_dir / PARTS_DIR
    parts.mkdir(parents=True, exist_ok=True)
    with open(run_dir / INCIDENTS_LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps({"tick": tick, "back_to": int(rows["target"][0]),
                              "reason": reason[:2000]}) + "\n")
    n = len(part_files(parts, "incidents"))
    write_part(parts / part_name("incidents", f"{tick:08d}", n), [rows])
