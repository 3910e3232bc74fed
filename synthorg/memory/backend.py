"""What a memory store is to synthorg: `MemoryBackend`, with two implementations, Mem0 over
embedded Qdrant (synthorg/memory/mem0_store.py) and an in-process one (inprocess.py).

A store holds batches of memories, each with the project's own key, its row (WRITE_DTYPE),
text, tags and vector; it answers searches in an agent's namespace together with the
organisation's (ORG), ranked by score then key, so what is retrieved never depends on a
store's own ids or on insertion order. `export` gives its content as plain arrays (a
checkpoint holds that, never the store's files) and `load` rebuilds a store from them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from synthorg.memory.embedders import DIMS
from synthorg.memory.records import HIT_DTYPE, WRITE_DTYPE

SCORE_DIGITS = 9  # scores are rounded before ranking: last-bit noise never reorders


@dataclass(frozen=True, eq=False)
class MemoryBatch:
    keys: np.ndarray  # int64, the project's own
    rows: np.ndarray  # WRITE_DTYPE
    texts: tuple[str, ...]
    tags: tuple[tuple[str, ...], ...]
    vectors: np.ndarray  # float32 [n, DIMS]

    def __len__(self) -> int:
        return len(self.keys)

    @staticmethod
    def empty() -> MemoryBatch:
        return MemoryBatch(np.zeros(0, np.int64), np.zeros(0, WRITE_DTYPE), (), (),
                           np.zeros((0, DIMS), np.float32))

    def take(self, index: np.ndarray) -> MemoryBatch:
        idx = np.asarray(index, dtype=np.intp)
        return MemoryBatch(self.keys[idx], self.rows[idx], tuple(self.texts[i] for i in idx),
                           tuple(self.tags[i] for i in idx), self.vectors[idx])

    @staticmethod
    def join(parts: Iterable[MemoryBatch]) -> MemoryBatch:
        parts = [p for p in parts if len(p)]
        if not parts:
            return MemoryBatch.empty()
        return MemoryBatch(np.concatenate([p.keys for p in parts]),
                           np.concatenate([p.rows for p in parts]),
                           tuple(t for p in parts for t in p.texts),
                           tuple(t for p in parts for t in p.tags),
                           np.concatenate([p.vectors for p in parts]))

    def to_arrays(self) -> dict[str, object]:
        """Plain data for a checkpoint (texts and tags as JSON)."""
        return {"keys": self.keys, "rows": self.rows, "vectors": self.vectors,
                "texts": json.dumps(list(self.texts)),
                "tags": json.dumps([list(t) for t in self.tags])}

    @staticmethod
    def from_arrays(data: dict[str, object]) -> MemoryBatch:
        """Back from `to_arrays`; a crafted checkpoint gets a ValueError, nothing runs."""
        keys = np.asarray(data["keys"], dtype=np.int64)
        rows = np.asarray(data["rows"])
        vectors = np.asarray(data["vectors"], dtype=np.float32)
        texts = json.loads(str(data["texts"]))
        tags = json.loads(str(data["tags"]))
        n = len(keys)
        if (rows.dtype != WRITE_DTYPE or len(rows) != n or vectors.shape != (n, DIMS)
                or not isinstance(texts, list) or not isinstance(tags, list)
                or len(texts) != n or len(tags) != n
                or not all(isinstance(t, str) for t in texts)
                or not all(isinstance(t, list) and all(isinstance(x, str) for x in t)
                           for t in tags)):
            raise ValueError("memory data: arrays of mismatched shapes or types")
        return MemoryBatch(keys, rows, tuple(texts), tuple(tuple(t) for t in tags), vectors)


def rank(scores: np.ndarray, keys: np.ndarray, top_k: int) -> np.ndarray:
    """Indices of the best `top_k` by score (rounded), ties by key, ascending."""
    rounded = np.round(scores.astype(np.float64), SCORE_DIGITS)
    order = np.lexsort((keys, -rounded))
    return order[:top_k]


def hits_of(query: int, order: np.ndarray, scores: np.ndarray, rows: np.ndarray,
            keys: np.ndarray) -> np.ndarray:
    out = np.zeros(len(order), dtype=HIT_DTYPE)
    out["query"] = query
    out["rank"] = np.arange(len(order))
    out["score"] = np.round(scores[order].astype(np.float64), SCORE_DIGITS)
    out["key"] = keys[order]
    chosen = rows[order]
    for name in ("owner", "category", "outcome", "type", "skill", "quality", "helper"):
        out[name] = chosen[name]
    return out


class MemoryBackend(Protocol):

    def add(self, batch: MemoryBatch) -> None:
        ...

    def search(self, vectors: np.ndarray, owners: np.ndarray, top_k: int,
               categories: frozenset[int] | None = None,
               tags: frozenset[str] | None = None) -> np.ndarray:
        """For each query vector, the `top_k` best memories of its owner (an agent) and of
        the organisation, not archived, optionally only of `categories` or carrying one of
        `tags`: HIT_DTYPE rows, by query then rank."""
        ...

    def list(self, owner: int, archived: bool = False) -> MemoryBatch:
        """An owner's memories (live, or its archive), by key."""
        ...

    def delete(self, keys: np.ndarray) -> int:
        ...

    def archive(self, owner: int) -> int:
        """The owner left: its memories become a read-only snapshot, never retrieved;
        returns how many."""
        ...

    def restore(self, owner: int) -> int:
        """The owner is back: its archive is live again; returns how many."""
        ...

    def export(self) -> tuple[MemoryBatch, np.ndarray]:
        """Everything, by key, and which of it is archived (bool per memory)."""
        ...

    def load(self, batch: MemoryBatch, archived: np.ndarray) -> None:
        """Replace the content by `export`'s."""
        ...

    def close(self) -> None:
        ...
