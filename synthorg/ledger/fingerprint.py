"""A fingerprint of ledger rows that does not depend on where they were recorded.

Every row (event, result, created task) carries its own key — (tick, actor, seq) for events,
the task id for results and created tasks — so the multiset of rows pins down the ordered
ledger. Each row is hashed on its own (two independent 64-bit splitmix chains over its bytes,
vectorised) and the row hashes are summed modulo 2**64. Sums split across any partition, so
every agent group fingerprints its own rows in parallel and the totals add up to the same value
whatever the number of groups, agents per actor or backend.

This is a determinism check (same run, same bytes), not tamper evidence: an adversary could
forge an additive hash; an accident will not (two 64-bit lanes).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

LANES = 2
_SEEDS = np.array([0x9E3779B97F4A7C15, 0xD1B54A32D192ED03], dtype=np.uint64)
_STREAM_SALT = np.uint64(0x8CB92BA72F3D8DD7)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place on a uint64 array."""
    z ^= z >> np.uint64(30)
    z *= _M1
    z ^= z >> np.uint64(27)
    z *= _M2
    z ^= z >> np.uint64(31)
    return z


def _word_count(dtype: np.dtype) -> int:
    return -(-dtype.itemsize // 8)


def fingerprint(streams: Mapping[int, np.ndarray]) -> np.ndarray:
    """Sum of the hashes of the rows of every stream (stream number -> rows), one uint64
    per lane; the stream number keeps event, result and task rows of equal bytes apart.

    Rows of all streams go through one loop over their little-endian uint64 words
    (zero-padded): a row's hash depends on its own bytes and stream alone, so this is the
    sum of each stream's fingerprint on its own, in about a third of the numpy calls (each
    costs microseconds whatever its length, a fixed cost of every group's tick)."""
    # longest records first: the rows that still have a word j are a prefix
    order = sorted((s for s, rows in streams.items() if len(rows)),
                   key=lambda s: -_word_count(streams[s].dtype))
    if not order:
        return np.zeros(LANES, dtype=np.uint64)
    n = sum(len(streams[s]) for s in order)
    width = _word_count(streams[order[0]].dtype)
    buf = np.zeros((n, width * 8), dtype=np.uint8)
    h = np.empty((n, LANES), dtype=np.uint64)
    having = [0] * width  # per word j: how many rows (a prefix) have it
    at = 0
    with np.errstate(over="ignore"):
        for s in order:
            rows = streams[s]
            size = rows.dtype.itemsize
            buf[at:at + len(rows), :size] = (
                np.ascontiguousarray(rows).view(np.uint8).reshape(len(rows), size))
            h[at:at + len(rows)] = _SEEDS ^ (np.uint64(s + 1) * _STREAM_SALT)
            at += len(rows)
            having[:_word_count(rows.dtype)] = [at] * _word_count(rows.dtype)
        words = buf.view("<u8")
        for j, m in enumerate(having):
            part = h[:m]
            part ^= words[:m, j:j + 1]
            _mix(part)
        return h.sum(axis=0, dtype=np.uint64)
