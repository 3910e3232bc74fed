"""Parked approvals: the context of every call waiting for a decision, kept in SQLite in the
run directory (`approvals.sqlite`).

A person decides from another process (`synthorg approvals`), the SecOps office may restart
without losing what waits, and `replay` reads the decisions a run was given. One row per
call id; the first decision wins (UPDATE ... WHERE status = 'parked'), so a person and a
time-out racing for one call cannot both decide it, and a rolled-back run asking again finds
its call as it left it.

The file may be shared by two processes or crafted: WAL with a busy timeout, an untrusted
schema (no triggers or views run), and every row validated on the way out.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, Protocol

from pydantic import Field, ValidationError

from synthorg.config.base import Frozen
from synthorg.errors import MisuseError

FILE = "approvals.sqlite"
SCHEMA_VERSION = 1
MAX_ARGUMENTS = 65_536  # characters of a call's arguments kept (a crafted file can be larger)
POLL_SECONDS = 0.2  # how often a run waiting for a person looks for their decisions
HR_REQUEST = 1 << 62  # set in the id of a request of the HR office: never an action's id
Status = Literal["parked", "granted", "rejected"]
DecidedBy = Literal["", "approver", "person", "timeout", "model"]


class ParkedCall(Frozen):
    """An agent's call waiting for approval, and what became of it."""

    call: int = Field(ge=0)
    tick: int = Field(ge=0)  # asked at
    due: int = Field(ge=0)  # the tick its decision reaches the agent
    agent: str = Field(max_length=200)
    task: int = Field(ge=-1)  # -1: an agent asking for its autonomy back, or a promotion
    tool: str = Field(max_length=200)  # "" for an escalation on low confidence
    arguments: dict[str, str] = Field(default_factory=dict)
    rule: str = Field(default="", max_length=200)
    reason: str = Field(default="", max_length=2000)
    risk_tier: str = Field(default="", max_length=20)
    status: Status = "parked"
    decided_by: DecidedBy = ""
    note: str = Field(default="", max_length=2000)


class ParkedContextRepository(Protocol):
    def park(self, calls: Iterable[ParkedCall]) -> None: ...

    def decide(self, call: int, granted: bool, by: DecidedBy, note: str = "") -> bool: ...

    def decisions(self, calls: Iterable[int]) -> dict[int, ParkedCall]: ...

    def listed(self, status: Status | None = None) -> list[ParkedCall]: ...


_COLUMNS = ("call", "tick", "due", "agent", "task", "tool", "arguments", "rule", "reason",
            "risk_tier", "status", "decided_by", "note")
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS parked (
    call INTEGER PRIMARY KEY, tick INTEGER NOT NULL, due INTEGER NOT NULL,
    agent TEXT NOT NULL, task INTEGER NOT NULL, tool TEXT NOT NULL, arguments TEXT NOT NULL,
    rule TEXT NOT NULL, reason TEXT NOT NULL, risk_tier TEXT NOT NULL,
    status TEXT NOT NULL, decided_by TEXT NOT NULL, note TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS parked_status ON parked (status);
PRAGMA user_version = {SCHEMA_VERSION};
"""


class ApprovalStore:
    """The parked calls of one run directory (ParkedContextRepository over SQLite)."""

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = path
        self._lock = threading.Lock()  # one connection, used by every group host's thread
        if not create and not path.is_file():
            raise MisuseError(f"{path}: not found (has the run asked for any approval?)")
        try:
            self._db = sqlite3.connect(path, timeout=30.0, isolation_level=None,
                                       check_same_thread=False)
            self._db.execute("PRAGMA trusted_schema = OFF")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise MisuseError(f"{path}: approvals store version {version}, this synthorg "
                                  f"reads {SCHEMA_VERSION}")
            if create:
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")  # durable but for power loss
                self._db.executescript(_SCHEMA)
            names = [r[1] for r in self._db.execute("PRAGMA table_info(parked)")]
        except sqlite3.DatabaseError as exc:
            raise MisuseError(f"{path}: not an approvals store ({exc})") from None
        self._no_table = not names  # being made by the run that opened it: nothing parked yet
        if names and tuple(names) != _COLUMNS:
            raise MisuseError(f"{path}: not an approvals store (table `parked` has columns "
                              f"{', '.join(names) or 'none'})")

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def park(self, calls: Iterable[ParkedCall]) -> None:
        """Record calls as waiting; one already there (asked again after a rollback) keeps
        its row and any decision it has."""
        rows = [(c.call, c.tick, c.due, c.agent, c.task, c.tool,
                 json.dumps(c.arguments, sort_keys=True), c.rule, c.reason, c.risk_tier,
                 c.status, c.decided_by, c.note) for c in calls]
        with self._writing() as db:
            db.executemany(f"INSERT OR IGNORE INTO parked VALUES "
                           f"({', '.join('?' * len(_COLUMNS))})", rows)

    def decide(self, call: int, granted: bool, by: DecidedBy, note: str = "") -> bool:
        """Decide a parked call; False if it is not parked (unknown, or decided before)."""
        return self.decide_many([call], granted, by, note) == 1

    def decide_many(self, calls: Iterable[int], granted: bool, by: DecidedBy,
                    note: str = "") -> int:
        status = "granted" if granted else "rejected"
        if self._no_table:
            return 0
        with self._writing() as db:
            cur = db.executemany(
                "UPDATE parked SET status = ?, decided_by = ?, note = ? "
                "WHERE call = ? AND status = 'parked'",
                [(status, by, note[:2000], int(c)) for c in calls])
            return cur.rowcount

    def decisions(self, calls: Iterable[int]) -> dict[int, ParkedCall]:
        """The decided calls among `calls`."""
        wanted = [int(c) for c in calls]
        found: dict[int, ParkedCall] = {}
        for lo in range(0, len(wanted), 500):
            part = wanted[lo:lo + 500]
            found.update((c.call, c) for c in self._select(
                f"WHERE status != 'parked' AND call IN ({', '.join('?' * len(part))})", part))
        return found

    def get(self, call: int) -> ParkedCall | None:
        rows = self._select("WHERE call = ?", [call])
        return rows[0] if rows else None

    def listed(self, status: Status | None = None) -> list[ParkedCall]:
        if status is None:
            return self._select("", [])
        return self._select("WHERE status = ?", [status])

    def _select(self, where: str, params: Sequence[object]) -> list[ParkedCall]:
        if self._no_table:
            return []
        try:
            with self._lock:
                rows = self._db.execute(
                    f"SELECT {', '.join(_COLUMNS)} FROM parked {where} ORDER BY call",
                    params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise MisuseError(f"{self.path}: unreadable ({exc})") from None
        return [self._row(r) for r in rows]

    def _row(self, row: tuple[object, ...]) -> ParkedCall:
        values = dict(zip(_COLUMNS, row, strict=True))
        try:
            text = values["arguments"]
            if not isinstance(text, str) or len(text) > MAX_ARGUMENTS:
                raise ValueError("arguments: not JSON text of at most "
                                 f"{MAX_ARGUMENTS} characters")
            values["arguments"] = json.loads(text)
            return ParkedCall.model_validate(values, strict=False)
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise MisuseError(f"{self.path}: call {values.get('call')!r} is not a valid "
                              f"parked call ({first})") from None


def store_of(run_dir: Path, create: bool = True) -> ApprovalStore:
    return ApprovalStore(run_dir / FILE, create=create)


class PersonDesk:
    """Where a run waits for a person: its approvals store, opened at the first request (most
    runs park nothing), and, when the run is a replay, the store of the decisions it was
    given. Shared by the SecOps office (in its actor's event loop) and the HR office (in its
    review): each polls with `look` and sleeps its own way."""

    def __init__(self, run_dir: Path, record: Path | None, grant_on_timeout: bool,
                 timeout_seconds: float) -> None:
        self._run_dir, self._record_path = run_dir, record
        self._grant, self.timeout_seconds = grant_on_timeout, timeout_seconds
        self._store: ApprovalStore | None = None
        self._record: ApprovalStore | None = None

    @property
    def store(self) -> ApprovalStore:
        if self._store is None:
            self._store = store_of(self._run_dir)
        return self._store

    def recorded(self, calls: list[int]) -> dict[int, ParkedCall] | None:
        """Replaying: the decisions the run was given, copied into the replay's own store (a
        call without one is an error: the replay asked what the run never did). None
        otherwise: a person decides."""
        if self._record_path is None:
            return None
        if self._record is None:
            self._record = ApprovalStore(self._record_path, create=False)
        got = self._record.decisions(calls)
        missing = [c for c in calls if c not in got]
        if missing:
            raise LookupError(f"{self._record.path}: no decision recorded for call {missing[0]}")
        for c in calls:
            self.store.decide(c, got[c].status == "granted", got[c].decided_by, got[c].note)
        return got

    def deadline(self) -> float:
        return time.monotonic() + self.timeout_seconds

    def look(self, calls: list[int], deadline: float) -> dict[int, ParkedCall] | None:
        """One look for a person's decisions on `calls`: all of them, or None while some
        still wait before `deadline` (time.monotonic()). Past it, those still parked take the
        policy's default; a person deciding in the same instant wins (the first decision
        stays)."""
        got = self.store.decisions(calls)
        left = [c for c in calls if c not in got]
        if not left:
            return got
        if time.monotonic() < deadline:
            return None
        self.store.decide_many(left, self._grant, "timeout",
                               f"nobody decided within {self.timeout_seconds:g} s")
        return self.store.decisions(calls)

    def close(self) -> None:
        for store in (self._store, self._record):
            if store is not None:
                store.close()
        self._store = self._record = None
