"""The shared-memory tick exchange: groups in separate processes hand each other their
outputs through slot files and FIFO mailboxes, released tick by tick by a driver."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import numpy as np
import pytest

from actors.shm import GO, STOP, Mailbox, OutputBoard, ShmLinks, open_mailbox, post
from synthorg.domain.records import MESSAGE_DTYPE, TASK_DTYPE

GROUPS = 3


def _output(group: int, tick: int) -> list[np.ndarray]:
    """A recognisable output (the flat channels, then the arrivals drawn ahead): group g's part
    for group d has d + tick + 1 messages from g."""
    parts = []
    for dest in range(GROUPS):
        part = np.zeros(dest + tick + 1, dtype=MESSAGE_DTYPE)
        part["src"], part["dst"], part["seq"] = group, dest, np.arange(len(part))
        part["value"] = tick + 0.5
        parts.append(part)
    loads = np.full(group + 2, 10 * tick + group, dtype=np.int32)  # odd byte counts too
    spend = np.array([tick, group, 7], dtype=np.int64)
    skills = np.full(group, tick + 0.25)  # empty from group 0
    ahead = np.zeros(group, dtype=TASK_DTYPE)  # group 0 hands over no arrivals
    ahead["task"], ahead["created"] = np.arange(group) + 100 * tick, tick + 1
    return [*parts, loads, spend, skills, ahead]


def _group(prefix: str, me: int, result: mp.Queue) -> None:
    box = Mailbox(Path(prefix), GROUPS, me)
    board = OutputBoard(Path(prefix), GROUPS, me)
    tick, seen = 0, []
    while box.wait_release(tick):
        *flat, ahead = _output(me, tick)
        board.publish(tick, flat, ahead)
        box.wait_published(tick)
        for g in range(GROUPS):
            if g != me:
                share = board.read(g, tick)
                want = _output(g, tick)
                ok = (np.array_equal(share["messages"], want[me])
                      and np.array_equal(share["loads"], want[-4])
                      and np.array_equal(share["spend"], want[-3])
                      and np.array_equal(share["skills"], want[-2])
                      and np.array_equal(board.read_ahead(g, tick), want[-1]))
                seen.append((g, tick, ok))
        tick += 1
    result.put((me, tick, seen))


@pytest.fixture
def links(scratch):
    return ShmLinks(scratch.path("shm"), GROUPS)


def test_groups_exchange_every_released_tick_then_stop(links):
    ctx = mp.get_context("spawn")
    result = ctx.Queue()
    procs = [ctx.Process(target=_group, args=(str(links.prefix), g, result))
             for g in range(GROUPS)]
    for p in procs:
        p.start()
    boxes = [open_mailbox(links.prefix, g) for g in range(GROUPS)]
    for tick in range(6):
        for fd in boxes:
            post(fd, GO, tick)
    for fd in boxes:
        post(fd, STOP, -1)
    got = sorted(result.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=30)
    for me, next_tick, seen in got:
        assert next_tick == 6  # every released tick stepped, none more
        assert len(seen) == 6 * (GROUPS - 1) and all(ok for _, _, ok in seen)
        assert {g for g, _, _ in seen} == set(range(GROUPS)) - {me}


def test_a_slot_of_another_tick_is_refused(links):
    board = OutputBoard(links.prefix, GROUPS, 0)
    reader = OutputBoard(links.prefix, GROUPS, 1)
    *flat, ahead = _output(0, 2)
    board.publish(2, flat, ahead)
    share = reader.read(0, 2)
    assert len(share["messages"]) == 1 + 2 + 1 and share["loads"].tolist() == [20, 20]
    assert share["spend"].tolist() == [2, 0, 7]
    assert len(reader.read_ahead(0, 2)) == 0
    with pytest.raises(RuntimeError, match="holds tick 2, not 4"):
        reader.read(0, 4)  # same slot (tick parity), older content


def test_stop_ends_waiting_for_a_tick_never_released(links):
    box = Mailbox(links.prefix, GROUPS, 0)
    fd = open_mailbox(links.prefix, 0)
    post(fd, GO, 0)
    post(fd, STOP, -1)
    assert box.wait_release(0)
    assert not box.wait_release(1)
    box.reset()  # the next run of ticks starts with nothing released
    post(fd, GO, 1)
    assert box.wait_release(1) and not box.stopped


def test_the_links_go_with_the_run(scratch, links):
    *flat, ahead = _output(0, 0)
    OutputBoard(links.prefix, GROUPS, 0).publish(0, flat, ahead)
    made = list(links.prefix.parent.glob(f"{links.prefix.name}.*"))
    assert len(made) == GROUPS + 2 * GROUPS  # a mailbox per group, two slots per group
    scratch.remove()
    assert not any(p.exists() for p in made)
