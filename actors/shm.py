"""The tick exchange between group actors on one machine, through /dev/shm and FIFOs.

A Ray compiled graph hands a tick over in about 1 ms on a 2-core machine (several channel
writes and reads, each serialised, with readers that spin), and its driver spends about 1 ms
of CPU a tick executing and reading it. Groups on one machine need none of that: each runs
its ticks in one long call and
- publishes its output of tick t in a file of its own (`OutputBoard`, one of two slots by
  tick parity), then posts (group, t) to every other group's mailbox; one group's output
  also carries the arrivals of tick t+1, which every group steps and only it draws;
- blocks on its own mailbox (a FIFO: no spinning, its core is free meanwhile) until every
  group has posted t, then reads its share of each output;
- steps tick t+1 once the driver has released it (the driver posts GO records).

Two slots suffice: a group overwrites slot t % 2 at tick t+2, after every group has posted
t+1, and each reads its share of tick t before it steps (and posts) t+1.

Records are the doorbell's (actors/doorbell.py): 16 bytes, under PIPE_BUF, so writes from
several processes never interleave.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from actors.doorbell import RECORD, Records
from synthorg.domain.records import TASK_DTYPE
from synthorg.sim.channels import CHANNELS, width

GO = -1  # from the driver: the tick may be stepped
STOP = -2  # from the driver: return after the ticks released so far


class ShmLinks:
    """The files of one run's exchange: a mailbox per group, made by the driver before the
    groups start, and two output slots per group, made by the groups. They are part of the
    backend's scratch set (synthorg/sim/scratch.py), which removes them with the rest."""

    def __init__(self, prefix: Path, groups: int) -> None:
        self.prefix = prefix
        self.groups = groups
        for g in range(groups):
            os.mkfifo(mailbox_path(prefix, g), 0o600)


def mailbox_path(prefix: Path, group: int) -> Path:
    return prefix.with_name(f"{prefix.name}.box{group}")


def slot_path(prefix: Path, group: int, slot: int) -> Path:
    return prefix.with_name(f"{prefix.name}.out{group}.{slot}")


def post(fd: int, source: int, tick: int) -> None:
    os.write(fd, RECORD.pack(source, tick))


def open_mailbox(prefix: Path, group: int) -> int:
    """Read-write, so opening never blocks and a write never finds the FIFO without a reader
    (Linux). Writes block only when the FIFO is full: 4,096 records nobody reads."""
    return os.open(mailbox_path(prefix, group), os.O_RDWR)


class Mailbox:
    """A group's side of its FIFO: what the driver released and which ticks each group has
    published. Like the `OutputBoard`, it is made once per group actor and its descriptors
    live as long as the actor's process."""

    def __init__(self, prefix: Path, groups: int, me: int) -> None:
        self._fd = open_mailbox(prefix, me)
        self._me = me
        self._records = Records()
        self.reset()
        self.published = [-1] * groups

    def reset(self) -> None:
        """Before a run of ticks: nothing released yet."""
        self.released = -1
        self.stopped = False

    def wait_release(self, tick: int) -> bool:
        """Block until the driver released `tick` (True) or said stop (False)."""
        while self.released < tick and not self.stopped:
            self._read()
        return self.released >= tick

    def wait_published(self, tick: int) -> None:
        """Block until every group has published `tick`."""
        self.published[self._me] = tick
        while min(self.published) < tick:
            self._read()

    def _read(self) -> None:
        for source, tick in self._records.split(os.read(self._fd, 256 * RECORD.size)):
            if source == GO:
                self.released = max(self.released, tick)
            elif source == STOP:
                self.stopped = True
            else:
                self.published[source] = max(self.published[source], tick)


class OutputBoard:
    """Each group's tick output (its flat channel arrays, sim/channels.py, then the arrivals of
    the next tick or none) in its slot file, read by every group. A slot holds a header (tick,
    then every array's length in bytes) and the arrays' bytes in order."""

    def __init__(self, prefix: Path, groups: int, me: int) -> None:
        self._groups = groups
        self._me = me
        self._arrays = width(groups) + 1
        self._header = struct.Struct(f"<{self._arrays + 1}q")
        self._fds = [[os.open(slot_path(prefix, g, s), os.O_RDWR | os.O_CREAT, 0o600)
                      for s in (0, 1)] for g in range(groups)]
        self._boxes = [open_mailbox(prefix, g) for g in range(groups)]
        # per channel, the index of the array this group reads in a writer's output
        self._mine, at = [], 0
        for c in CHANNELS:
            self._mine.append((c, at + me if c.addressed else at))
            at += groups if c.addressed else 1

    def publish(self, tick: int, output: Sequence[np.ndarray], ahead: np.ndarray) -> None:
        arrays = [np.ascontiguousarray(a).data for a in [*output, ahead]]
        header = self._header.pack(tick, *(a.nbytes for a in arrays))
        size = len(header) + sum(a.nbytes for a in arrays)
        written = os.pwritev(self._fds[self._me][tick % 2], [header, *arrays], 0)
        if written != size:
            raise OSError(f"short write of the tick {tick} output: {written} of {size} bytes")
        for g, fd in enumerate(self._boxes):
            if g != self._me:
                post(fd, self._me, tick)

    def read(self, group: int, tick: int) -> dict[str, np.ndarray]:
        """This group's share of `group`'s output of `tick`, per channel."""
        fd, sizes, offsets = self._slot(group, tick)
        return {c.name: np.frombuffer(os.pread(fd, sizes[k], offsets[k]), dtype=c.dtype)
                for c, k in self._mine}

    def read_ahead(self, group: int, tick: int) -> np.ndarray:
        """The arrivals of tick + 1 that `group` drew and published with its output of `tick`."""
        fd, sizes, offsets = self._slot(group, tick)
        k = self._arrays - 1
        return np.frombuffer(os.pread(fd, sizes[k], offsets[k]), dtype=TASK_DTYPE)

    def _slot(self, group: int, tick: int) -> tuple[int, list[int], list[int]]:
        fd = self._fds[group][tick % 2]
        seen, *sizes = self._header.unpack(os.pread(fd, self._header.size, 0))
        if seen != tick:
            raise RuntimeError(f"group {group}'s output slot holds tick {seen}, not {tick}")
        offsets = np.cumsum([self._header.size, *sizes]).tolist()
        return fd, sizes, offsets
