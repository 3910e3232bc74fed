"""Cassettes: every request and its final reply (or failure), so a run replays with no server.

An entry is keyed by the request's digest and its occurrence (the n-th time that same request
was made by this run's executor: identical prompts are distinct entries). The file is JSON
lines, appended under a lock, so the group hosts of one run (Ray actors in several processes)
record into one file. Read back, it is checked line by line: a crafted or truncated file is an
error naming the file and line, never a wrong reply."""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from synthorg.errors import MisuseError
from synthorg.llm.messages import ChatReply

HEADER = {"synthorg_cassette": 1}
MAX_LINE = 1 << 20  # a reply this large is not one we recorded
MAX_FILE = 1 << 31


class CassetteError(MisuseError):
    """The cassette cannot be read, or lacks a request the run makes."""


class Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(pattern=r"^[0-9a-f]{64}$")
    n: int = Field(ge=0)
    reply: ChatReply | None = None
    error: str | None = Field(default=None, max_length=4000)


@dataclass(frozen=True)
class CassetteSpec:
    path: Path
    mode: Literal["record", "replay"]


@dataclass
class Recorder:
    path: Path

    def __post_init__(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(self.path) as f:
            if f.tell() == 0:
                f.write(json.dumps(HEADER) + "\n")

    def add(self, entry: Entry) -> None:
        line = entry.model_dump_json(exclude_none=True) + "\n"
        with _locked(self.path) as f:
            f.write(line)


@dataclass
class Player:
    path: Path
    entries: dict[tuple[str, int], Entry] = field(init=False)

    def __post_init__(self) -> None:
        self.entries = load(self.path)

    def get(self, key: str, n: int) -> Entry:
        entry = self.entries.get((key, n))
        if entry is None:
            raise CassetteError(
                f"cassette {self.path}: the run made a request it does not hold (request "
                f"{key[:16]}…, occurrence {n}); record it again with --record-cassette")
        return entry


def load(path: Path) -> dict[tuple[str, int], Entry]:
    try:
        size = path.stat().st_size
    except OSError as e:
        raise CassetteError(f"cassette {path}: cannot read it ({e.strerror})") from None
    if size > MAX_FILE:
        raise CassetteError(f"cassette {path}: {size} bytes is more than a cassette may hold")
    entries: dict[tuple[str, int], Entry] = {}
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if len(raw) > MAX_LINE or not raw.endswith(b"\n"):
                raise CassetteError(f"cassette {path}, line {number}: truncated or too long")
            if number == 1:
                if _json(raw) != HEADER:
                    raise CassetteError(f"cassette {path}, line 1: not a synthorg cassette")
                continue
            try:
                entry = Entry.model_validate_json(raw)
            except ValidationError as e:
                where = ".".join(str(p) for p in e.errors()[0]["loc"]) or "entry"
                raise CassetteError(f"cassette {path}, line {number}: {where}: "
                                    f"{e.errors()[0]['msg']}") from None
            if (entry.reply is None) == (entry.error is None):
                raise CassetteError(f"cassette {path}, line {number}: an entry holds a reply "
                                    "or an error")
            entries.setdefault((entry.key, entry.n), entry)
    return entries


def _json(raw: bytes) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return None


class _locked:
    """The file opened for appending under an exclusive lock."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def __enter__(self):
        fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._f = os.fdopen(fd, "a", encoding="utf-8")
        fcntl.flock(self._f, fcntl.LOCK_EX)
        self._f.seek(0, os.SEEK_END)
        return self._f

    def __exit__(self, *exc: object) -> None:
        self._f.flush()
        fcntl.flock(self._f, fcntl.LOCK_UN)
        self._f.close()
