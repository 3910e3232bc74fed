"""Departments' routing handed out while a tick runs, first come first served, among the group
hosts of one machine.

A tick waits for its slowest group, and on a shared machine which group is slowest changes
from tick to tick. So each group steps its agents first, then takes the tick's departments
one at a time, largest first, until none is left: the group that finished its agents early
routes more. Routing is stateless, so the outcome does not depend on who routes what.

The hand-out is a counter per tick in a small file (in /dev/shm where there is one) that
every group opens, taken under `flock`: a few microseconds per department, no process in
between, and a lock dies with its holder. It only works for hosts on one machine; groups
spread over nodes use the driver's placement (sim/placement.py).
"""

from __future__ import annotations

import fcntl
import os
import struct
from pathlib import Path

import numpy as np

CLAIMED = -1  # in a routing assignment: the department goes to whichever group claims it
_SLOTS = 4  # ticks whose counters live at once: groups are never more than one tick apart
_SLOT = struct.Struct("<qq")  # the tick, the next department's place in line


def claims_file(path: Path) -> Path:
    """A new, empty hand-out file for one backend's run, at `path` (a rebuilt backend makes a
    new one: a rolled-back tick must start its count again)."""
    path.write_bytes(_SLOT.pack(-1, 0) * _SLOTS)
    return path


def claim_order(counts: np.ndarray) -> list[int]:
    """The tick's departments with arrivals, most arrivals first (ties: lower index first).
    Every group computes it from the same arrivals, so a place in line names the same
    department everywhere."""
    present = np.flatnonzero(counts)
    return present[np.argsort(-counts[present], kind="stable")].tolist()


class RoutingClaims:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._fd = os.open(self.path, os.O_RDWR)

    def take(self, tick: int) -> int:
        """The next place in line for `tick` (0, 1, 2, ... across every holder of the file)."""
        at = (tick % _SLOTS) * _SLOT.size
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            seen, place = _SLOT.unpack(os.pread(self._fd, _SLOT.size, at))
            if seen != tick:
                place = 0
            os.pwrite(self._fd, _SLOT.pack(tick, place + 1), at)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        return place

    def close(self) -> None:
        os.close(self._fd)
