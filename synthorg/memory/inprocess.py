"""The in-process memory store: numpy arrays and exact cosine search, for very large runs and
for tests of other parts. Ranking is the same as the Mem0 store's (score, then key)."""

from __future__ import annotations

import numpy as np

from synthorg.memory.backend import MemoryBatch, hits_of, rank
from synthorg.memory.records import HIT_DTYPE, ORG


class InProcessStore:
    def __init__(self) -> None:
        self._parts: list[MemoryBatch] = []
        self._all = MemoryBatch.empty()
        self._archived = np.zeros(0, dtype=bool)
        self._by_owner: dict[int, np.ndarray] | None = None

    def _data(self) -> MemoryBatch:
        if self._parts:
            self._all = MemoryBatch.join([self._all, *self._parts])
            self._archived = np.concatenate(
                [self._archived, np.zeros(sum(len(p) for p in self._parts), dtype=bool)])
            self._parts = []
            self._by_owner = None
        return self._all

    def _owned(self) -> dict[int, np.ndarray]:
        data = self._data()
        if self._by_owner is None:
            owners = data.rows["owner"]
            order = np.argsort(owners, kind="stable")
            uniq, starts = np.unique(owners[order], return_index=True)
            ends = np.append(starts[1:], len(order))[:len(starts)].astype(np.intp)
            self._by_owner = {int(o): order[a:b] for o, a, b in
                              zip(uniq, starts, ends, strict=True)}
        return self._by_owner

    def add(self, batch: MemoryBatch) -> None:
        if len(batch):
            self._parts.append(batch)

    def search(self, vectors: np.ndarray, owners: np.ndarray, top_k: int,
               categories: frozenset[int] | None = None,
               tags: frozenset[str] | None = None) -> np.ndarray:
        data, owned = self._data(), self._owned()
        none = np.zeros(0, dtype=np.intp)
        org = owned.get(ORG, none)
        out = []
        for q, (vector, owner) in enumerate(zip(vectors, owners.tolist(), strict=True)):
            cands = np.concatenate([owned.get(owner, none), org]) if owner != ORG else org
            keep = ~self._archived[cands]
            if categories is not None:
                keep &= np.isin(data.rows["category"][cands], list(categories))
            if tags is not None:
                keep &= np.array([bool(tags.intersection(data.tags[i])) for i in cands],
                                 dtype=bool)
            cands = cands[keep]
            if not len(cands):
                continue
            scores = data.vectors[cands].astype(np.float64) @ vector.astype(np.float64)
            keys = data.keys[cands]
            order = rank(scores, keys, top_k)
            out.append(hits_of(q, order, scores, data.rows[cands], keys))
        return np.concatenate(out) if out else np.zeros(0, dtype=HIT_DTYPE)

    def list(self, owner: int, archived: bool = False) -> MemoryBatch:
        data = self._data()
        idx = self._owned().get(owner, np.zeros(0, dtype=np.intp))
        idx = idx[self._archived[idx] == archived]
        return data.take(idx[np.argsort(data.keys[idx], kind="stable")])

    def delete(self, keys: np.ndarray) -> int:
        data = self._data()
        gone = np.isin(data.keys, keys)
        if gone.any():
            self._all = data.take(np.flatnonzero(~gone))
            self._archived = self._archived[~gone]
            self._by_owner = None
        return int(gone.sum())

    def _mark(self, owner: int, archived: bool) -> int:
        idx = self._owned().get(owner, np.zeros(0, dtype=np.intp))
        idx = idx[self._archived[idx] != archived]
        self._archived[idx] = archived
        return len(idx)

    def archive(self, owner: int) -> int:
        return self._mark(owner, True)

    def restore(self, owner: int) -> int:
        return self._mark(owner, False)

    def export(self) -> tuple[MemoryBatch, np.ndarray]:
        data = self._data()
        order = np.argsort(data.keys, kind="stable")
        return data.take(order), self._archived[order].copy()

    def load(self, batch: MemoryBatch, archived: np.ndarray) -> None:
        self._parts, self._all, self._by_owner = [], batch, None
        self._archived = np.asarray(archived, dtype=bool).copy()

    def close(self) -> None:
        self._parts, self._all = [], MemoryBatch.empty()
