"""Seeded randomness that does not depend on how agents are grouped into actors.

Each draw is a pure function of (root seed, agent index, tick, stream): a counter-based
generator (splitmix64 finaliser over a keyed counter), vectorised with numpy. A per-agent
`numpy.random.Generator` per tick would cost ~30 µs an agent-step, more than the whole step;
this costs nanoseconds and gives the same numbers whatever actor hosts the agent.
The workload's draws (every group host makes the same ones) use `numpy.random.Generator` from `SeedSequence`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_AGENT_MUL = np.uint64(0xD6E8FEB86659FD93)
_TICK_MUL = np.uint64(0xA0761D6478BD642F)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TO_UNIT = 1.0 / float(1 << 53)
_MASK = (1 << 64) - 1
_TICK, _GOLDEN_INT = int(_TICK_MUL), int(_GOLDEN)


class Stream(IntEnum):
    """Independent random streams an agent draws from in a tick."""

    confidence = 1
    approval = 2
    helper = 3
    quality = 4
    delegate = 5
    action = 6  # an action's outcome, drawn by call id
    insider = 7  # by agent at tick 0: is it an insider; by agent and tick: does it attempt
    injection = 8  # does the agent follow a poisoned task's instruction
    mistake = 9
    form = 10  # which form the call takes
    poisoned = 11  # by task id: does its content carry an injected instruction
    catch = 12  # by call id: does the approver recognise a harmful call
    answer = 13  # by call id: does the approver answer before the request times out
    promotion = 14  # by agent and review tick: does the approver agree to a promotion
    hire = 15  # by slot and review tick: a hire's skill levels
    llm = 16  # by slot: is the agent among llm.agents' seeded fraction


def root_key(seed: int) -> np.uint64:
    """A 64-bit key for the run, from SeedSequence so nearby seeds are far apart."""
    return np.uint64(np.random.SeedSequence(seed).generate_state(1, dtype=np.uint64)[0])


def _mix(x: np.ndarray) -> np.ndarray:
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


def uniform(key: np.uint64, agents: np.ndarray, tick: int, stream: Stream) -> np.ndarray:
    """One uniform [0, 1) float per agent index, reproducible from the arguments alone."""
    return uniforms(key, agents, tick, (stream,))[0]


def uniforms(key: np.uint64, agents: np.ndarray, tick: int, streams: Sequence[Stream]
             ) -> np.ndarray:
    """`uniform` for several streams at once, one row per stream: the same numbers, for
    the numpy calls of one draw (each costs microseconds whatever its length)."""
    # the part of the counter that does not depend on the agent, in Python's exact ints
    salts = [((tick * _TICK + int(s) * _GOLDEN_INT) & _MASK) ^ int(key) for s in streams]
    with np.errstate(over="ignore"):
        counter = agents.astype(np.uint64) * _AGENT_MUL ^ np.array(salts, np.uint64)[:, None]
        bits = _mix(_mix(counter) + _GOLDEN)
    return (bits >> _S11).astype(np.float64) * _TO_UNIT


def workload_generator(seed: int, tick: int) -> np.random.Generator:
    """The generator for arrivals of one tick (resumable at any tick)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 0x574F524B, tick])))
