"""Memory spread over several services (memory actors): an agent's memories live in shard
`agent % n`, the organisation's in every shard (its writes go to all), so one agent's search
asks one shard. Calls to the shards go out together; their hits come back in the order of
the queries."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from synthorg.memory.records import HIT_DTYPE, ORG

Exchange = Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
# (tick, per-shard (writes, queries, changes)) -> per-shard hits, calls made concurrently
Fanout = Callable[[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]], list[np.ndarray]]


def shard_of(agents: np.ndarray, n: int) -> np.ndarray:
    return np.asarray(agents, dtype=np.int64) % n


def split(writes: np.ndarray, queries: np.ndarray, changes: np.ndarray, n: int
          ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per shard: its writes, queries, changes, and the indices of its queries."""
    w_shard = shard_of(writes["owner"], n)
    q_shard = shard_of(queries["agent"], n)
    c_shard = shard_of(changes["owner"], n)
    org = writes["owner"] == ORG
    parts = []
    for k in range(n):
        mine = np.flatnonzero(q_shard == k)
        parts.append((writes[org | (w_shard == k)], queries[mine], changes[c_shard == k], mine))
    return parts


def merge(parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Hits of each shard (with its query indices) back in the caller's query order."""
    out = []
    for hits, index in parts:
        if len(hits):
            hits = hits.copy()
            hits["query"] = index[hits["query"]]
            out.append(hits)
    if not out:
        return np.zeros(0, dtype=HIT_DTYPE)
    hits = np.concatenate(out)
    return hits[np.lexsort((hits["rank"], hits["query"]))]


def sharded(fanout: Fanout, n: int) -> Exchange:
    def exchange(tick: int, writes: np.ndarray, queries: np.ndarray, changes: np.ndarray
                 ) -> np.ndarray:
        parts = split(writes, queries, changes, n)
        answers = fanout(tick, [(w, q, c) for w, q, c, _ in parts])
        return merge([(hits, index) for hits, (_, _, _, index) in
                      zip(answers, parts, strict=True)])

    return exchange
