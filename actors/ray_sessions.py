"""The Ray sessions our runs start on this machine, and what is left of them after a driver
dies without cleaning up (kill -9, an out-of-memory kill).

A run that starts Ray marks the session directory with its own pid and start time. Ray's
gcs_server and raylet die with the driver, but its session directory (logs, sockets), the
dashboard and runtime-env agents (they outlive their raylet) and the semaphores of
compiled-graph channels stay. The next run that starts Ray removes them for every marked
session whose driver is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import psutil

MARK = "synthorg-driver.json"


def mark(session: Path, raylets: list[int]) -> None:
    """Record that this process started `session` (and which raylets serve it)."""
    me = psutil.Process()
    text = json.dumps({"pid": me.pid, "started": me.create_time(), "raylets": raylets})
    scratch = session / f".{MARK}.tmp"
    scratch.write_text(text)
    scratch.replace(session / MARK)


def sweep_dead(root: Path, keep: Path | None = None) -> list[Path]:
    """Remove what is left of the marked sessions under `root` whose driver is gone; returns
    the session directories removed. Sessions of other users, unmarked ones and `keep` are
    never touched; a marker that does not parse is left alone."""
    removed = []
    for session in sorted(root.glob("session_2*")):
        if session == keep or session.is_symlink() or not _ours(session):
            continue
        driver = _read_mark(session / MARK)
        if driver is None or _alive(driver["pid"], driver["started"]):
            continue
        _stop_holders(session)
        remove(session, driver["raylets"])
        removed.append(session)
    return removed


def remove(session: Path, raylets: list[int]) -> None:
    """Delete a finished session: its directory and Ray 2.60's never-unlinked compiled-graph
    semaphores (/dev/shm/sem.hdr<raylet pid>-*, sem.obj<raylet pid>-*)."""
    for pid in raylets:
        for kind in ("hdr", "obj"):
            for sem in Path("/dev/shm").glob(f"sem.{kind}{pid}-*"):
                sem.unlink(missing_ok=True)
    if session.name.startswith("session_"):
        shutil.rmtree(session, ignore_errors=True)
        latest = session.parent / "session_latest"
        if latest.is_symlink() and not latest.exists():
            latest.unlink(missing_ok=True)


def _ours(session: Path) -> bool:
    try:
        return session.stat().st_uid == os.getuid() and session.is_dir()
    except OSError:
        return False


def _read_mark(path: Path) -> dict | None:
    try:
        if path.stat().st_size > 4096:
            return None
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not (isinstance(data, dict) and type(data.get("pid")) is int
            and isinstance(data.get("started"), (int, float))
            and isinstance(data.get("raylets"), list)
            and all(type(p) is int for p in data["raylets"])):
        return None
    return data


def _alive(pid: int, started: float) -> bool:
    """Whether the process `pid` that started at `started` still runs (not a later process
    that was given the same pid)."""
    try:
        return abs(psutil.Process(pid).create_time() - started) < 1.0
    except (psutil.Error, ValueError, OverflowError):
        return False


def _stop_holders(session: Path) -> None:
    """Kill our processes that still hold files of `session` open (Ray's orphaned agents)."""
    inside = str(session) + os.sep
    me, uid = os.getpid(), os.getuid()
    for proc in psutil.process_iter(["pid", "uids"]):
        if proc.pid == me or proc.info["uids"] is None or proc.info["uids"].real != uid:
            continue
        with contextlib.suppress(psutil.Error):
            if any(f.path.startswith(inside) for f in proc.open_files()):
                proc.kill()
