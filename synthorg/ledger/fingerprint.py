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


def _words(rows: np.ndarray) -> np.ndarray:
    """Each row's bytes as little-endian uint64 words, zero-padded: shape (n, words)."""
    size = rows.dtype.itemsize
    padded = -(-size // 8) * 8
    buf = np.zeros((len(rows), padded), dtype=np.uint8)
    buf[:, :size] = np.ascontiguousarray(rows).view(np.uint8).reshape(len(rows), size)
    return buf.view("<u8")


def fingerprint(rows: np.ndarray, stream: int) -> np.ndarray:
    """Sum of the rows' hashes, one uint64 per lane; `stream` keeps event, result and task
    rows of equal bytes apart."""
    if not len(rows):
        return np.zeros(LANES, dtype=np.uint64)
    words = _words(rows)
    with np.errstate(over="ignore"):
        h = np.empty((len(rows), LANES), dtype=np.uint64)
        h[:] = _SEEDS ^ (np.uint64(stream + 1) * _STREAM_SALT)
        for j in range(words.shape[1]):
            h ^= words[:, j:j + 1]
            _mix(h)
        return h.sum(axis=0, dtype=np.uint64)
