"""Files the processes of one machine share while a run goes on: the routing claims, the
driver's doorbell and the shm exchange. They live in memory (/dev/shm where there is one).

A backend names all of its files `synthorg-<id>.<what>` and holds an `flock` on
`synthorg-<id>.lock` for as long as it lives. A driver that is killed (kill -9, an
out-of-memory kill) cannot remove its files, but its lock dies with it: the next backend to
start on the machine finds the lock free and removes that backend's files.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import uuid
from pathlib import Path

PREFIX = "synthorg-"


def scratch_dir() -> Path:
    return Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())


class Scratch:
    """One backend's set of shared files."""

    def __init__(self, run_id: str, base: Path | None = None) -> None:
        self.base = base or scratch_dir()
        self.id = f"{run_id}-{uuid.uuid4().hex[:8]}"
        self._lock: int | None = os.open(self.path("lock"), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def path(self, what: str) -> Path:
        return self.base / f"{PREFIX}{self.id}.{what}"

    def remove(self) -> None:
        """Delete every file of the set (the lock last), and let go of the lock."""
        _remove(self.base, self.id)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def sweep_abandoned(base: Path | None = None) -> int:
    """Remove the file sets of backends whose process is gone; returns how many."""
    base = base or scratch_dir()
    swept = 0
    for lock in base.glob(f"{PREFIX}*.lock"):
        try:
            fd = os.open(lock, os.O_RDWR)
        except OSError:  # removed meanwhile
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: that backend is alive
            os.close(fd)
            continue
        _remove(base, lock.name[len(PREFIX):-len(".lock")])
        os.close(fd)
        swept += 1
    return swept


def _remove(base: Path, set_id: str) -> None:
    lock = base / f"{PREFIX}{set_id}.lock"
    for path in base.glob(f"{PREFIX}{set_id}.*"):
        if path != lock:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    lock.unlink(missing_ok=True)
