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

import functools
import itertools
from collections.abc import Mapping, Sequence

import numpy as np

LANES = 2
_SEEDS = np.array([0x9E3779B97F4A7C15, 0xD1B54A32D192ED03], dtype=np.uint64)
_STREAM_SALT = np.uint64(0x8CB92BA72F3D8DD7)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _mix(z: np.ndarray, tmp: np.ndarray) -> None:
    """splitmix64's finaliser, in place on a uint64 array (`tmp`: scratch of its shape)."""
    np.right_shift(z, _S30, out=tmp)
    z ^= tmp
    z *= _M1
    np.right_shift(z, _S27, out=tmp)
    z ^= tmp
    z *= _M2
    np.right_shift(z, _S31, out=tmp)
    z ^= tmp


def _word_count(dtype: np.dtype) -> int:
    return -(-dtype.itemsize // 8)


@functools.cache
def _padded(size: int, width: int) -> np.dtype:
    """A record of `size` opaque bytes at the start of `width` zeroed words."""
    return np.dtype({"names": ["r"], "formats": [np.dtype((np.void, size))], "offsets": [0],
                     "itemsize": width * 8})


class Fingerprinter:
    """Sums of row hashes (see `__call__`), keeping its working arrays from one call to the
    next: four ticks' rows at 10,000 agents need about 10 MB of them, and fresh ones cost a
    page fault every 4 KB (about 1 ms of kernel time a tick)."""

    def __init__(self) -> None:
        self._scratch = np.empty(0, dtype=np.uint64)

    def _words(self, count: int) -> np.ndarray:
        if len(self._scratch) < count:
            self._scratch = np.empty(count + count // 2, dtype=np.uint64)
        return self._scratch

    def __call__(self, streams: Mapping[int, Sequence[np.ndarray]]) -> np.ndarray:
        """Sum of the hashes of the rows of every stream (stream number -> chunks of rows),
        one uint64 per lane; the stream number keeps event, result and task rows of equal
        bytes apart.

        Rows of all streams and chunks go through one loop over their little-endian uint64
        words (zero-padded): a row's hash depends on its own bytes and stream alone, so this
        is the sum of each row's hash however rows are passed, with the loop's numpy calls
        (each costs microseconds whatever its length) made once. Each word is a contiguous
        row of a (words, rows) array, and each lane's state a contiguous row of (lanes, rows)."""
        # longest records first: the rows that still have a word j are a prefix
        chunks = sorted(((s, np.ascontiguousarray(rows)) for s, parts in streams.items()
                         for rows in parts if len(rows)),
                        key=lambda chunk: -_word_count(chunk[1].dtype))
        if not chunks:
            return np.zeros(LANES, dtype=np.uint64)
        n = sum(len(rows) for _, rows in chunks)
        width = _word_count(chunks[0][1].dtype)
        scratch = self._words(2 * n * width + 2 * LANES * n)
        buf, by_word, h, tmp = (scratch[a:b] for a, b in itertools.pairwise(
            np.cumsum([0, n * width, n * width, LANES * n, LANES * n]).tolist()))
        buf[:] = 0
        h, tmp = h.reshape(LANES, n), tmp.reshape(LANES, n)
        having = [0] * width  # per word j: how many rows (a prefix) have it
        at = 0
        with np.errstate(over="ignore"):
            for s, rows in chunks:
                size, words = rows.dtype.itemsize, _word_count(rows.dtype)
                buf.view(_padded(size, width))["r"][at:at + len(rows)] = rows.view(
                    np.dtype((np.void, size)))
                h[:, at:at + len(rows)] = (_SEEDS ^ (np.uint64(s + 1) * _STREAM_SALT))[:, None]
                at += len(rows)
                having[:words] = [at] * words
            by_word = by_word.reshape(width, n)
            np.copyto(by_word, buf.reshape(n, width).T)
            for j, m in enumerate(having):
                lanes = h[:, :m]
                lanes ^= by_word[j, :m]
                _mix(lanes, tmp[:, :m])
            return h.sum(axis=1, dtype=np.uint64)
