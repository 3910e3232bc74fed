"""A backend's shared files on this machine: one set per backend, removed with it, and
removed by a later backend when the process that made them was killed."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
from pathlib import Path

from synthorg.sim.scratch import Scratch, sweep_abandoned


def _make_and_hang(base: str, made: mp.Queue) -> None:
    scratch = Scratch("killed", base=Path(base))
    scratch.path("claims").write_bytes(b"x")
    os.mkfifo(scratch.path("bell"))
    made.put(scratch.id)
    signal.pause()  # until killed: no chance to clean up


def test_a_killed_backends_files_are_swept_and_a_live_ones_kept(tmp_path):
    live = Scratch("live", base=tmp_path)
    live.path("claims").write_bytes(b"y")
    ctx = mp.get_context("spawn")
    made = ctx.Queue()
    proc = ctx.Process(target=_make_and_hang, args=(str(tmp_path), made))
    proc.start()
    dead_id = made.get(timeout=60)
    dead = sorted(p.name for p in tmp_path.glob(f"synthorg-{dead_id}.*"))
    assert dead == [f"synthorg-{dead_id}.{w}" for w in ("bell", "claims", "lock")]
    assert sweep_abandoned(tmp_path) == 0  # its owner still holds the lock
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(timeout=30)
    assert sweep_abandoned(tmp_path) == 1
    assert not list(tmp_path.glob(f"synthorg-{dead_id}.*"))
    assert live.path("claims").exists() and live.path("lock").exists()
    live.remove()
    assert not list(tmp_path.iterdir())
