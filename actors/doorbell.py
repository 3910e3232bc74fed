"""How the driver learns, on one machine, that the groups have finished a tick without
spinning in Ray's channel read.

A compiled graph's reader polls shared memory with `sched_yield`, which on Linux hardly
yields to a busy process: while the driver waits in it, it takes a millisecond or more of
CPU a tick from the groups on a 2-core machine. So each group rings once its result for a
tick is in the graph's channel (when it starts the next tick): it writes (group, tick) to a
FIFO the driver blocks on, and the driver reads the graph's result only when every group
has rung for that tick. A record is 16 bytes, under PIPE_BUF, so writes never interleave.

The bell is a hint: the driver waits for it at most `patience` seconds and then reads the
graph anyway (which is also how a crashed group is found), and late or stale records only
make a later wait shorter. Groups on other nodes cannot reach the FIFO; the driver then
sleeps for its estimate of a tick (actors/pipelines.py).
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import time
from collections.abc import Iterator
from pathlib import Path

RECORD = struct.Struct("<qq")  # who (a group, or a driver's code), tick


class Records:
    """Records read off a FIFO: a read may end inside one, whose start is kept for the next."""

    def __init__(self) -> None:
        self._partial = b""

    def split(self, data: bytes) -> Iterator[tuple[int, int]]:
        data = self._partial + data
        whole = len(data) - len(data) % RECORD.size
        self._partial = data[whole:]
        return RECORD.iter_unpack(data[:whole])


class Doorbell:
    """The driver's side: owns the FIFO. Open it before any group rings."""

    def __init__(self, path: Path, groups: int) -> None:
        self.path = path
        os.mkfifo(path, 0o600)
        self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        # a writer of our own: without one, the FIFO reads as ended (always "ready") whenever
        # no group has it open, and select would spin
        self._keep_open = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        self._done = [-1] * groups  # the last tick each group rang for
        self._records = Records()

    def wait(self, tick: int, patience: float) -> bool:
        """Block until every group has rung for `tick` (True) or `patience` seconds passed."""
        deadline = time.monotonic() + patience
        while min(self._done) < tick:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                return False
            for group, rung in self._records.split(os.read(self._fd, 64 * RECORD.size)):
                if 0 <= group < len(self._done):
                    self._done[group] = max(self._done[group], rung)
        return True

    def close(self) -> None:
        for fd in (self._fd, self._keep_open):
            os.close(fd)
        self.path.unlink(missing_ok=True)


class Ringer:
    """A group's side. Ringing never blocks and never fails the group: a missing or full
    FIFO (the driver stopped reading) only costs the driver its early wake-up."""

    def __init__(self, path: str, group: int) -> None:
        self._group = group
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            self._fd = None

    def ring(self, tick: int) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):  # full, or no reader left
            os.write(self._fd, RECORD.pack(self._group, tick))
