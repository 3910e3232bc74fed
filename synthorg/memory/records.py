"""What memory holds and what travels between the groups and the memory service, as numpy
rows: a group sends compact rows (who, which task, what happened) and the service renders
their texts, so a tick's writes and searches cost one call whatever their number.

Categories (seed 001, the Memory Layer): working (the task at hand), episodic (what happened),
semantic (what the organisation knows), procedural (how to do a kind of task), social (who
helps with what). Every memory has a key of the project's own (`memory_key`): retrieval
breaks ties by it, never by a store's random ids.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

ORG = -1  # the owner of organisation memory, which every agent reads


class Category(IntEnum):
    working = 0
    episodic = 1
    semantic = 2
    procedural = 3
    social = 4


class Outcome(IntEnum):
    none = 0
    completed = 1
    failed = 2


# A memory to write (before its text is rendered). `agent` wrote it; `owner` holds it (the
# agent, or ORG); `seq` orders one agent's writes within a tick.
WRITE_DTYPE = np.dtype([
    ("tick", "<i4"),
    ("agent", "<i4"),
    ("owner", "<i4"),
    ("seq", "<i4"),
    ("category", "<i1"),
    ("outcome", "<i1"),
    ("task", "<i8"),
    ("type", "<i4"),
    ("skill", "<i4"),
    ("dept", "<i4"),
    ("difficulty", "<f8"),
    ("quality", "<f8"),
    ("turns", "<i4"),
    ("helper", "<i4"),  # a colleague the memory is about (-1: none)
])

# A search: the agent perceives its new task; the task's fields make the query.
QUERY_DTYPE = np.dtype([
    ("tick", "<i4"),
    ("agent", "<i4"),
    ("task", "<i8"),
    ("type", "<i4"),
    ("skill", "<i4"),
    ("dept", "<i4"),
    ("difficulty", "<f8"),
])

# One retrieved memory: `query` is the index of its search in the call, `rank` its place.
HIT_DTYPE = np.dtype([
    ("query", "<i4"),
    ("rank", "<i2"),
    ("score", "<f8"),
    ("key", "<i8"),
    ("owner", "<i4"),
    ("category", "<i1"),
    ("outcome", "<i1"),
    ("type", "<i4"),
    ("skill", "<i4"),
    ("quality", "<f8"),
    ("helper", "<i4"),
])

# A hit kept for the agent (`local`: its index in its group) that recalled it.
RECALLED_DTYPE = np.dtype([("local", "<i4"), *HIT_DTYPE.descr])

# memory_key = tick << 32 | (agent + 1) << 8 | seq: unique per write, ordered by time
_AGENT_BITS, _SEQ_BITS = 24, 8


def memory_keys(rows: np.ndarray) -> np.ndarray:
    """The project's own key of each write row (WRITE_DTYPE)."""
    return ((rows["tick"].astype(np.int64) << (_AGENT_BITS + _SEQ_BITS))
            | ((rows["agent"].astype(np.int64) + 1) << _SEQ_BITS)
            | (rows["seq"].astype(np.int64) & ((1 << _SEQ_BITS) - 1)))


def difficulty_word(difficulty: float) -> str:
    return "easy" if difficulty < 0.35 else "hard" if difficulty >= 0.65 else "moderate"
