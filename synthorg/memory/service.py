"""The memory service of a run: one store, fed and asked by every group, one call per group
per tick (`exchange`).

Consistency whatever the layout: a write made at tick t becomes searchable from tick t + 2.
Each call brings the writes its group made since its last call; every group's calls of tick
t - 1 have returned before any call of tick t is made (groups step tick by tick), so by
then every write of tick t - 2 or earlier has arrived, however groups are placed. Staged
writes are applied in key order, and an archive or restore (an agent leaves or comes back)
at its tick among them. The service holds no RNG: what it returns depends only on what it
was sent.

An owner keeps one copy of a memory: a write whose text the owner already holds (the same
lesson learnt again, the same org fact) is not stored twice. Deterministic mode repeats
itself, and copies would only crowd a search's top k with ties.
"""

from __future__ import annotations

import numpy as np

from synthorg.memory.backend import MemoryBackend, MemoryBatch
from synthorg.memory.embedders import Embedder
from synthorg.memory.records import HIT_DTYPE, QUERY_DTYPE, WRITE_DTYPE, memory_keys
from synthorg.memory.texts import Renderer, tags_of

CONSOLIDATION_TICKS = 2
# a change of an owner's memories, staged like writes: op 1 archive, 0 restore
CHANGE_DTYPE = np.dtype([("tick", "<i4"), ("owner", "<i4"), ("op", "<i1")])
ARCHIVE, RESTORE = 1, 0


class MemoryService:
    def __init__(self, store: MemoryBackend, embedder: Embedder, renderer: Renderer,
                 top_k: int) -> None:
        self.store, self.embedder, self.renderer, self.top_k = store, embedder, renderer, top_k
        self._writes = np.zeros(0, dtype=WRITE_DTYPE)
        self._changes = np.zeros(0, dtype=CHANGE_DTYPE)
        self._held: set[tuple[int, str]] = set()  # (owner, text) of every stored memory

    def exchange(self, tick: int, writes: np.ndarray, queries: np.ndarray,
                 changes: np.ndarray | None = None) -> np.ndarray:
        """Stage `writes` (and `changes`), apply what is due at `tick`, answer `queries`
        (QUERY_DTYPE): HIT_DTYPE rows, by query then rank."""
        if len(writes):
            self._writes = np.concatenate([self._writes, writes.astype(WRITE_DTYPE)])
        if changes is not None and len(changes):
            self._changes = np.concatenate([self._changes, changes.astype(CHANGE_DTYPE)])
        self._apply(tick - CONSOLIDATION_TICKS)
        return self.search(queries)

    def search(self, queries: np.ndarray) -> np.ndarray:
        if not len(queries):
            return np.zeros(0, dtype=HIT_DTYPE)
        queries = queries.astype(QUERY_DTYPE)
        vectors = self.embedder.embed([self.renderer.query(q) for q in queries])
        return self.store.search(vectors, queries["agent"], self.top_k)

    def _apply(self, through: int) -> None:
        for tick in sorted({int(t) for t in self._writes["tick"][self._writes["tick"] <= through]}
                           | {int(t) for t in self._changes["tick"][self._changes["tick"]
                                                                   <= through]}):
            self._apply_tick(tick)

    def _apply_tick(self, tick: int) -> None:
        due = self._writes["tick"] == tick
        rows, self._writes = self._writes[due], self._writes[~due]
        if len(rows):
            keys = memory_keys(rows)
            order = np.argsort(keys, kind="stable")
            rows, keys = rows[order], keys[order]
            keep, texts, tags = [], [], []
            for i, row in enumerate(rows):
                tag = tags_of(row)
                if not tag:  # says nothing its task does not already say
                    continue
                text = self.renderer.write(row)
                held = (int(row["owner"]), text)
                if held in self._held:  # the owner already holds it
                    continue
                self._held.add(held)
                keep.append(i)
                texts.append(text)
                tags.append(tag)
            if keep:
                idx = np.array(keep, dtype=np.intp)
                self.store.add(MemoryBatch(keys[idx], rows[idx], tuple(texts), tuple(tags),
                                           self.embedder.embed(texts)))
        due = self._changes["tick"] == tick
        changes, self._changes = self._changes[due], self._changes[~due]
        for change in np.sort(changes, order=("owner", "op")):
            if change["op"] == ARCHIVE:
                self.store.archive(int(change["owner"]))
            else:
                self.store.restore(int(change["owner"]))

    # ---- checkpoints ----------------------------------------------------------------------
    def export(self) -> dict[str, object]:
        """The store's content and what is staged, as plain data."""
        batch, archived = self.store.export()
        return {**batch.to_arrays(), "archived": archived, "staged": self._writes.copy(),
                "changes": self._changes.copy()}

    def load(self, data: dict[str, object]) -> None:
        """Rebuild from `export`'s data (a crafted checkpoint gets a ValueError)."""
        batch = MemoryBatch.from_arrays(data)
        archived = np.asarray(data["archived"])
        staged, changes = np.asarray(data["staged"]), np.asarray(data["changes"])
        if (archived.dtype != bool or archived.shape != (len(batch),)
                or staged.dtype != WRITE_DTYPE or changes.dtype != CHANGE_DTYPE):
            raise ValueError("memory data: staged writes or flags of the wrong type")
        self.store.load(batch, archived)
        self._writes, self._changes = staged.copy(), changes.copy()
        self._held = {(int(o), t) for o, t in zip(batch.rows["owner"].tolist(), batch.texts,
                                                   strict=True)}

    def close(self) -> None:
        self.store.close()
