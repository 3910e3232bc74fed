"""Departments handed out at run time: each place in line goes to exactly one taker."""

from __future__ import annotations

import multiprocessing as mp

import numpy as np

from synthorg.sim.claims import RoutingClaims, claim_order, claims_file


def _take_all(path: str, ticks: int, per_tick: int, queue: mp.Queue, barrier) -> None:
    claims = RoutingClaims(path)
    taken = []
    for tick in range(ticks):
        while (place := claims.take(tick)) < per_tick:
            taken.append((tick, place))
        if tick % 3 == 0:  # groups are never more than a tick apart (the exchange waits)
            barrier.wait()
    claims.close()
    queue.put(taken)


def test_two_holders_share_one_line_per_tick(scratch):
    path = claims_file(scratch.path("claims"))
    a, b = RoutingClaims(path), RoutingClaims(path)
    assert [a.take(0), b.take(0), a.take(0)] == [0, 1, 2]
    assert [b.take(1), a.take(1)] == [0, 1]  # a new tick starts its own line
    assert a.take(5) == 0  # ticks that share a slot do not share a count
    a.close()
    b.close()


def test_concurrent_processes_never_take_the_same_place(scratch):
    path = claims_file(scratch.path("claims"))
    ticks, per_tick = 200, 6
    spawn = mp.get_context("spawn")
    queue: mp.Queue = spawn.Queue()
    barrier = spawn.Barrier(3)
    procs = [spawn.Process(target=_take_all, args=(str(path), ticks, per_tick, queue, barrier))
             for _ in range(3)]
    for p in procs:
        p.start()
    taken = [t for _ in procs for t in queue.get(timeout=60)]
    for p in procs:
        p.join(timeout=60)
    assert sorted(taken) == [(t, k) for t in range(ticks) for k in range(per_tick)]


def test_claim_order_is_largest_first_and_skips_departments_without_arrivals():
    assert claim_order(np.array([3, 0, 9, 3, 1])) == [2, 0, 3, 4]
    assert claim_order(np.zeros(4, dtype=np.int64)) == []
