"""The sharded ledger and the exchange between group hosts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import synthorg
from synthorg.domain.records import EVENT_DTYPE, MESSAGE_DTYPE, RESULT_DTYPE, TASK_DTYPE
from synthorg.ledger.fingerprint import Fingerprinter
from synthorg.org.directory import OrgDirectory
from synthorg.secops.office import SecOpsOffice
from synthorg.sim.backend import expected_work, group_bounds
from synthorg.sim.group_host import merge_inbox, split_by_group
from synthorg.sim.placement import home_groups
from tests.conftest import ENTERPRISE, STARTUP


def fingerprint(streams: dict[int, list[np.ndarray]]) -> np.ndarray:
    return Fingerprinter()(streams)  # a fresh one each time


def _events(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = np.zeros(n, EVENT_DTYPE)
    rows["tick"] = rng.integers(0, 5, n)
    rows["actor"] = rng.integers(-3, 50, n)
    rows["seq"] = np.arange(n)
    rows["value"] = rng.random(n)
    return rows


@given(st.integers(0, 200), st.lists(st.integers(0, 200), max_size=4), st.integers(0, 2**16))
def test_fingerprint_adds_up_over_any_partition(n, cuts, seed):
    rows = _events(n, seed)
    parts = np.split(rows, sorted(min(c, n) for c in cuts))
    total = np.zeros(2, np.uint64)
    with np.errstate(over="ignore"):
        for p in parts:
            total += fingerprint({0: [p]})
    assert (total == fingerprint({0: [rows]})).all()
    assert (total == fingerprint({0: parts})).all()  # chunks of a stream, hashed together


def test_fingerprint_sees_every_byte_and_the_stream():
    rows = _events(100, 1)
    base = fingerprint({0: [rows]})
    changed = rows.copy()
    changed["value"][37] = np.nextafter(changed["value"][37], 2.0)
    assert (fingerprint({0: [changed]}) != base).all()
    assert (fingerprint({0: [rows[:-1]]}) != base).all()
    assert (fingerprint({1: [rows]}) != base).all()



@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 2**16))
def test_fingerprint_of_streams_together_is_the_sum_of_each_alone(ne, nr, nt, seed):
    """Records of different lengths (events 6 words, results and tasks 7) share one pass."""
    rng = np.random.default_rng(seed)
    streams = {0: _events(ne, seed), 1: _random_rows(rng, nr, RESULT_DTYPE),
               2: _random_rows(rng, nt, TASK_DTYPE)}
    alone = np.zeros(2, np.uint64)
    with np.errstate(over="ignore"):
        for s, rows in streams.items():
            alone += fingerprint({s: [rows]})
    assert (fingerprint({s: [rows] for s, rows in streams.items()}) == alone).all()


def test_a_fingerprinter_reused_on_other_rows_gives_what_a_fresh_one_does():
    """Its working arrays outlive a call: leftovers of a bigger call must not leak into the
    padding of a smaller one."""
    rng = np.random.default_rng(5)
    reused = Fingerprinter()
    for n in (300, 7, 120, 0, 301):
        streams = {0: [_events(n, n)], 1: [_random_rows(rng, n // 2, RESULT_DTYPE)],
                   2: [_random_rows(rng, n // 3, TASK_DTYPE)]}
        assert (reused(streams) == fingerprint(streams)).all()


def _random_rows(rng: np.random.Generator, n: int, dtype: np.dtype) -> np.ndarray:
    return np.frombuffer(rng.bytes(n * dtype.itemsize), dtype=np.dtype((np.void, dtype.itemsize))
                         ).view(dtype).copy()


@given(st.lists(st.integers(0, 29), max_size=60), st.lists(st.integers(1, 29), max_size=4))
def test_split_then_merge_orders_by_destination_then_sender(dsts, cut_points):
    starts = np.array(sorted(set(cut_points)), dtype=np.int64)
    msgs = np.zeros(len(dsts), MESSAGE_DTYPE)
    msgs["src"] = np.sort(np.random.default_rng(len(dsts)).integers(-3, 30, len(dsts)))
    msgs["seq"] = np.arange(len(dsts))
    msgs["dst"] = dsts
    parts = split_by_group(msgs, starts)
    assert len(parts) == len(starts) + 1
    edges = np.r_[0, starts, 30]
    for g, part in enumerate(parts):
        assert ((part["dst"] >= edges[g]) & (part["dst"] < edges[g + 1])).all()
        assert (np.diff(part["seq"]) > 0).all()  # in the order they were sent
        merged = merge_inbox([part[len(part) // 2:], part[:len(part) // 2]])  # out of order
        assert [tuple(r) for r in merged[["dst", "src", "seq"]].tolist()] == sorted(
            tuple(r) for r in part[["dst", "src", "seq"]].tolist())


def test_auto_groups_balance_expected_work():
    cfg = synthorg.load_config(ENTERPRISE)
    d = OrgDirectory.from_config(cfg)
    work = expected_work(cfg, d)
    bounds = group_bounds(d.size, "auto", 2, work, min_agents=1)
    assert bounds[0][0] == 0 and bounds[-1][1] == d.size and len(bounds) == 2
    shares = [work[lo:hi].sum() / work.sum() for lo, hi in bounds]
    assert max(shares) < 0.52
    assert group_bounds(d.size, 300, 2, work) == tuple((lo, min(lo + 300, d.size))
                                                       for lo in range(0, d.size, 300))


def test_auto_gives_small_companies_one_group():
    assert group_bounds(900, "auto", 8) == ((0, 900),)
    assert len(group_bounds(1000, "auto", 8)) == 2
    assert len(group_bounds(3000, "auto", 8)) == 6
    assert len(group_bounds(100_000, "auto", 8)) == 8


def test_every_department_is_hosted_once_by_its_heads_group():
    d = OrgDirectory.from_config(synthorg.load_config(STARTUP))
    bounds = group_bounds(d.size, 5, 1)
    home = home_groups(d, bounds)
    assert len(home) == len(d.dept_ids) and ((home >= 0) & (home < len(bounds))).all()
    for k, g in enumerate(home.tolist()):
        lo, hi = bounds[g]
        assert lo <= d.dept_head[k] < hi


def test_a_background_flush_writes_the_same_parts(tmp_path):
    from synthorg.domain.records import RESULT_DTYPE
    from synthorg.ledger.ledger import DirectorySink, LedgerShard

    written = {}
    for background in (False, True):
        out = tmp_path / str(background)
        shard = LedgerShard("g00000", DirectorySink(out), flush_rows=50, background=background)
        for tick in range(6):
            shard.append(_events(40, tick), np.zeros(0, RESULT_DTYPE))
        totals = shard.totals()
        written[background] = ({f.name: f.read_bytes() for f in out.rglob("*.npy")},
                               totals.fingerprint.tolist(), totals.rows.tolist())
    assert len(written[True][0]) == 3 and written[True] == written[False]



def _host(tmp_path, name: str):
    from synthorg.config.loader import load_config
    from synthorg.domain.rng import root_key
    from synthorg.ledger.ledger import DirectorySink
    from synthorg.sim.group_host import GroupHost

    cfg = load_config(ENTERPRISE)
    d = OrgDirectory.from_config(cfg)
    office = SecOpsOffice(cfg, root_key(7), d.agent_ids, tmp_path / name)
    return GroupHost(cfg, d, root_key(7), 7, ((0, d.size),), 0, DirectorySink(tmp_path / name),
                     office.decide)


def _step(host, ticks: range, x=None):
    """Step a one-group host through `ticks`, each output fed back as the next input;
    returns the last output and the exchange after it."""
    from synthorg.sim.channels import Exchange

    x = x or Exchange.initial(((0, host.group.hi),), len(host.group.routers))
    route = np.zeros(len(host.group.routers), dtype=np.int64)
    out = []
    for tick in ticks:
        out = host.step(tick, route, x.inputs[0])
        x = Exchange.gather([out])
    return out, x


def test_a_host_steps_the_arrivals_another_host_drew(tmp_path):
    """On the shm pipeline one group draws each tick's arrivals for all: a host handed them
    steps exactly as if it had drawn them itself, and steps what it is handed."""
    drawer, handed, alone, empty = (_host(tmp_path, n) for n in ("d", "h", "a", "e"))
    state = {h: _step(h, range(3))[1] for h in (drawer, handed, alone, empty)}
    arrivals = drawer.draw_ahead(3)
    assert len(arrivals) > 0
    handed.expect_arrivals(3, arrivals)
    empty.expect_arrivals(3, arrivals[:0])  # as if the drawer had drawn none
    out = {h: _step(h, range(3, 4), state[h])[0] for h in (handed, alone, empty)}
    assert all(np.array_equal(a, b) for a, b in zip(out[handed], out[alone], strict=True))
    assert handed.totals().fingerprint.tolist() == alone.totals().fingerprint.tolist()
    assert alone.next_task == empty.next_task + len(arrivals)  # no task arrived at `empty`


def test_a_step_that_draws_the_next_arrivals_steps_as_before(tmp_path):
    """On the shm pipeline the drawing host draws the next tick's arrivals inside its step,
    before it routes: its own output does not change, and the arrivals are the ones
    `draw_ahead` gives."""
    drawing, plain = (_host(tmp_path, n) for n in ("d", "p"))
    x = {h: _step(h, range(2))[1] for h in (drawing, plain)}
    route = np.zeros(len(plain.group.routers), dtype=np.int64)
    out = {h: h.step(2, route, x[h].inputs[0], draw_next=h is drawing)
           for h in (drawing, plain)}
    assert all(np.array_equal(a, b) for a, b in zip(out[drawing], out[plain], strict=True))
    arrivals = drawing.drawn_ahead(3)
    assert len(arrivals) > 0 and np.array_equal(arrivals, plain.draw_ahead(3))
    with pytest.raises(RuntimeError, match="tick 4"):
        drawing.drawn_ahead(4)


def test_agents_per_actor_is_capped_so_a_big_company_never_starts_a_process_per_agent():
    from synthorg.sim.backend import MAX_GROUPS

    bounds = group_bounds(10_000, 1, workers=2)
    assert len(bounds) == MAX_GROUPS == 64
    assert bounds[0][0] == 0 and bounds[-1][1] == 10_000
    assert all(lo < hi for lo, hi in bounds)
    assert len(group_bounds(12, 1, workers=2)) == 12  # below the cap, as asked
