"""The driver's doorbell: it wakes when every group has rung for a tick, and it is a hint only,
so a group that never rings (or a driver that stopped listening) costs time, never a fault."""

from __future__ import annotations

import multiprocessing as mp
import time

from actors.doorbell import Doorbell, Ringer


def _ring(path: str, group: int, ticks: list[int], delay: float) -> None:
    ringer = Ringer(path, group)
    for tick in ticks:
        time.sleep(delay)
        ringer.ring(tick)


def test_wakes_when_every_group_has_rung_the_tick(scratch):
    bell = Doorbell(scratch.path("bell"), groups=2)
    try:
        writers = [mp.get_context("spawn").Process(target=_ring, args=(str(bell.path), g, [0, 1, 2], 0.05))
                   for g in range(2)]
        for w in writers:
            w.start()
        assert bell.wait(2, patience=30)
        for w in writers:
            w.join()
    finally:
        bell.close()


def test_a_missing_group_or_an_older_tick_does_not_wake_it(scratch):
    bell = Doorbell(scratch.path("bell"), groups=2)
    try:
        Ringer(str(bell.path), 0).ring(5)
        Ringer(str(bell.path), 1).ring(3)
        t0 = time.monotonic()
        assert not bell.wait(4, patience=0.2)  # group 1 is at tick 3
        assert time.monotonic() - t0 >= 0.2
        assert bell.wait(3, patience=0.2)  # both have done tick 3 by now
        Ringer(str(bell.path), 1).ring(4)
        assert bell.wait(4, patience=5)
    finally:
        bell.close()


def test_ringing_never_fails_a_group(scratch):
    path = scratch.path("bell")
    Ringer(str(path), 0).ring(1)  # no FIFO at all
    bell = Doorbell(path, groups=1)
    ringer = Ringer(str(path), 0)
    for tick in range(10_000):  # far more than a pipe holds: the surplus is dropped
        ringer.ring(tick)
    assert bell.wait(9, patience=1)
    bell.close()
    assert not path.exists()
    ringer.ring(10_001)  # the driver is gone
