"""Counter-based randomness: a pure function of (key, agent, tick, stream)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthorg.domain.rng import Stream, root_key, uniform, uniforms, workload_generator

KEY = root_key(42)


def test_root_key_is_a_uint64_and_depends_on_the_seed():
    keys = [root_key(s) for s in range(20)]
    assert all(isinstance(k, np.uint64) for k in keys)
    assert len(set(int(k) for k in keys)) == 20
    assert root_key(5) == root_key(5)


@pytest.mark.parametrize("stream", list(Stream))
def test_values_in_unit_interval(stream):
    x = uniform(KEY, np.arange(50_000), 17, stream)
    assert x.dtype == np.float64
    assert x.shape == (50_000,)
    assert (x >= 0.0).all()
    assert (x < 1.0).all()


def test_same_arguments_same_values():
    a = np.arange(1000)
    assert np.array_equal(uniform(KEY, a, 5, Stream.quality), uniform(KEY, a, 5, Stream.quality))
    assert np.array_equal(uniform(root_key(42), a, 5, Stream.quality),
                          uniform(KEY, a.astype(np.int32), 5, Stream.quality))


def test_value_does_not_depend_on_the_other_agents():
    full = uniform(KEY, np.arange(10), 3, Stream.helper)
    assert full[3] == uniform(KEY, np.array([3]), 3, Stream.helper)[0]
    # any subset, in any order, gives the same per-agent values
    subset = np.array([9, 2, 7])
    assert np.array_equal(uniform(KEY, subset, 3, Stream.helper), full[subset])


@settings(max_examples=100, deadline=None)
@given(agents=st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=30),
       tick=st.integers(0, 10**7), stream=st.sampled_from(list(Stream)))
def test_grouping_independence_property(agents, tick, stream):
    arr = np.array(agents, dtype=np.int64)
    together = uniform(KEY, arr, tick, stream)
    alone = np.array([uniform(KEY, np.array([a]), tick, stream)[0] for a in agents])
    assert np.array_equal(together, alone)


def _reference(key: int, agent: int, tick: int, stream: int) -> float:
    """The generator written out in Python's exact integers, one draw at a time."""
    mask = (1 << 64) - 1

    def mix(x: int) -> int:
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
        return x ^ (x >> 31)

    counter = ((agent * 0xD6E8FEB86659FD93) & mask) ^ (
        (tick * 0xA0761D6478BD642F + stream * 0x9E3779B97F4A7C15) & mask)
    bits = mix((mix(counter ^ key) + 0x9E3779B97F4A7C15) & mask)
    return (bits >> 11) / float(1 << 53)


@settings(max_examples=50, deadline=None)
@given(agents=st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=20),
       tick=st.integers(0, 10**7), streams=st.lists(st.sampled_from(list(Stream)), min_size=1,
                                                    max_size=4))
def test_draws_are_the_written_out_generator_for_one_stream_or_several(agents, tick, streams):
    arr = np.array(agents, dtype=np.int32)
    want = [[_reference(int(KEY), a, tick, int(s)) for a in agents] for s in streams]
    assert uniforms(KEY, arr, tick, streams).tolist() == want
    assert uniform(KEY, arr, tick, streams[0]).tolist() == want[0]


def test_different_seeds_ticks_streams_and_agents_differ():
    a = np.arange(1000)
    base = uniform(KEY, a, 10, Stream.confidence)
    others = [
        uniform(root_key(43), a, 10, Stream.confidence),
        uniform(KEY, a, 11, Stream.confidence),
        uniform(KEY, a, 10, Stream.approval),
        uniform(KEY, a + 1000, 10, Stream.confidence),
    ]
    for other in others:
        assert (base != other).all()
    # values of different agents in one draw are distinct too
    assert len(np.unique(base)) == len(base)


def test_roughly_uniform():
    x = uniform(KEY, np.arange(100_000), 0, Stream.confidence)
    assert abs(x.mean() - 0.5) < 0.01
    assert abs(x.var() - 1.0 / 12.0) < 0.005
    counts, _ = np.histogram(x, bins=10, range=(0.0, 1.0))
    assert (np.abs(counts - 10_000) < 500).all()


def test_roughly_uniform_over_ticks_for_one_agent():
    x = np.array([uniform(KEY, np.array([7]), t, Stream.quality)[0] for t in range(20_000)])
    assert abs(x.mean() - 0.5) < 0.02


def test_streams_are_uncorrelated():
    a = np.arange(100_000)
    x = uniform(KEY, a, 1, Stream.confidence)
    y = uniform(KEY, a, 1, Stream.quality)
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.02


def test_workload_generator_is_a_function_of_seed_and_tick():
    a = workload_generator(3, 10).random(5)
    assert np.array_equal(a, workload_generator(3, 10).random(5))
    assert not np.array_equal(a, workload_generator(3, 11).random(5))
    assert not np.array_equal(a, workload_generator(4, 10).random(5))
