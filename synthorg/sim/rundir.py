"""A run directory is owned by one run at a time.

The owner holds an `flock` on `DIR/.synthorg.lock` (it dies with its process, so a killed run
leaves the directory free for `resume`); a second run into the same directory is refused
while the first lives. A new run (or fork) does not write into a directory that holds another
run's results unless asked to (`overwrite`), and then clears them first, so a directory never
mixes two runs' tables.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from synthorg.errors import MisuseError, RunDirBusy
from synthorg.ledger.ledger import INCIDENTS_LOG, PARTS_DIR
from synthorg.memory.factory import MEMORY_DIR
from synthorg.sim.checkpoint import DIR_NAME as CHECKPOINTS_DIR

LOCK = ".synthorg.lock"
RESULTS = ("summary.json", "events.parquet", "tasks.parquet", "agents.parquet",
           "actions.parquet", "timeseries.parquet", "config.resolved.yaml", "provenance.json",
           "manifest.json", "approvals.sqlite", "approvals.sqlite-wal", "approvals.sqlite-shm",
           INCIDENTS_LOG, PARTS_DIR, CHECKPOINTS_DIR, MEMORY_DIR,
           # sandbox/containers.py's: a stale record would hand a new run's scopes old workspaces
           "sandbox.log", "sandbox-workspaces.jsonl")
LOGS = "mcp-*.log"  # external MCP servers' stderr (synthorg/actions/sandboxed.py)


@contextlib.contextmanager
def owned(run_dir: Path, fresh: bool, overwrite: bool = False) -> Iterator[None]:
    """Hold `run_dir` for one run. fresh: a new run (or fork), which needs the directory
    empty of results, or `overwrite` to clear them; otherwise a resume of what is there."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(run_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise MisuseError(f"{run_dir}: cannot use it as a run directory ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise RunDirBusy(f"{run_dir}: in use by another run (pid {holder}); wait for it "
                             "to end or choose another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        if fresh:
            held = [name for name in RESULTS if (run_dir / name).exists()]
            held += sorted(p.name for p in run_dir.glob(LOGS))
            if held and not overwrite:
                raise MisuseError(f"{run_dir} holds another run's results ({', '.join(held[:3])}"
                                  f"{', ...' if len(held) > 3 else ''}): choose another --out, "
                                  "or pass --overwrite to replace them")
            for name in held:
                path = run_dir / name
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        yield
    finally:
        os.close(fd)  # releases the lock
