"""The memory service of a run: one store, fed and asked by every group, one call per group
per tick (`exchange`).

Consistency whatever the layout: a write made at tick t becomes searchable from tick t + 2.
Each call brings the writes its group made since its last call; every group's calls of tick
t - 1 have returned before any call of tick t is made (groups step tick by tick), so by
then every write of tick t - 2 or earlier has arrived, however groups are placed. Staged
writes are applied in key order, and an archive or restore (an agent leaves or comes back)
at its tick among them. The service holds no RNG: what it returns depends only on what it
was sent.

An owner keeps one copy of a memory: a write whose record the owner already holds (the same
lesson learnt again, the same org fact) is not stored twice. Deterministic mode repeats
itself, and copies would only crowd a search's top k with ties.

In LLM mode the model states the facts a reasoning agent's memory keeps (memory/facts.py):
asked as its write arrives, taken when it is applied.
"""

from __future__ import annotations

import json

import numpy as np

from synthorg.memory.backend import MemoryBackend, MemoryBatch
from synthorg.memory.embedders import Embedder
from synthorg.memory.facts import FACTS_TAG, STATS, FactExtractor, tally
from synthorg.memory.records import HIT_DTYPE, ORG, QUERY_DTYPE, WRITE_DTYPE, memory_keys
from synthorg.memory.texts import Renderer, tags_of

CONSOLIDATION_TICKS = 2
# a change of an owner's memories, staged like writes: op 1 archive, 0 restore
CHANGE_DTYPE = np.dtype([("tick", "<i4"), ("owner", "<i4"), ("op", "<i1")])
ARCHIVE, RESTORE = 1, 0


class MemoryService:
    def __init__(self, store: MemoryBackend, embedder: Embedder, renderer: Renderer,
                 top_k: int, facts: FactExtractor | None = None, counts_org: bool = True
                 ) -> None:
        self.store, self.embedder, self.renderer, self.top_k = store, embedder, renderer, top_k
        self.facts = facts
        self._counts_org = counts_org  # org memory goes to every shard: one counts its facts
        self.facts_stats = np.zeros(len(STATS), dtype=np.int64)
        self._writes = np.zeros(0, dtype=WRITE_DTYPE)
        self._changes = np.zeros(0, dtype=CHANGE_DTYPE)
        self._held: set[tuple[int, str]] = set()  # (owner, record) of every write kept
        self._unstored: set[tuple[int, str]] = set()  # kept, but the model found no facts

    def exchange(self, tick: int, writes: np.ndarray, queries: np.ndarray,
                 changes: np.ndarray | None = None) -> np.ndarray:
        """Stage `writes` (and `changes`), apply what is due at `tick`, answer `queries`
        (QUERY_DTYPE): HIT_DTYPE rows, by query then rank."""
        if len(writes):
            writes = writes.astype(WRITE_DTYPE)
            self._writes = np.concatenate([self._writes, writes])
            self._ask_facts(writes)
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

    def _ask_facts(self, writes: np.ndarray) -> None:
        """The model starts on the facts of new records now; they are taken at apply time."""
        if self.facts is None:
            return
        for row in writes:
            if (self.facts.wanted(int(row["agent"])) and tags_of(row)
                    and (int(row["owner"]), record := self.renderer.write(row)) not in self._held):
                self.facts.ask(int(row["owner"]), int(row["agent"]), int(row["category"]),
                               record)

    def _stated(self, row: np.void, record: str) -> tuple[str | None, tuple[str, ...]]:
        """The text a kept write stores (None: nothing) and tags beyond its own."""
        if self.facts is None or not self.facts.wanted(int(row["agent"])):
            return record, ()
        stated = self.facts.take(int(row["owner"]), record)
        if self._counts_org or row["owner"] != ORG:
            tally(self.facts_stats, stated)
        return stated.text, (FACTS_TAG,) if stated.ok else ()

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
                record = self.renderer.write(row)
                held = (int(row["owner"]), record)
                if held in self._held:  # the owner already holds it
                    continue
                self._held.add(held)
                text, more = self._stated(row, record)
                if text is None:  # the model found nothing worth keeping
                    self._unstored.add(held)
                    continue
                keep.append(i)
                texts.append(text)
                tags.append(tag + more)
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
                "changes": self._changes.copy(), "facts_stats": self.facts_stats.copy(),
                "unstored": json.dumps(sorted(self._unstored))}

    def load(self, data: dict[str, object]) -> None:
        """Rebuild from `export`'s data (a crafted checkpoint gets a ValueError)."""
        batch = MemoryBatch.from_arrays(data)
        archived = np.asarray(data["archived"])
        staged, changes = np.asarray(data["staged"]), np.asarray(data["changes"])
        if (archived.dtype != bool or archived.shape != (len(batch),)
                or staged.dtype != WRITE_DTYPE or changes.dtype != CHANGE_DTYPE):
            raise ValueError("memory data: staged writes or flags of the wrong type")
        stats = np.asarray(data.get("facts_stats", np.zeros(len(STATS), np.int64)))
        if stats.shape != (len(STATS),) or stats.dtype.kind not in "iu" or (stats < 0).any():
            raise ValueError("memory data: fact extraction counts of the wrong shape")
        unstored = json.loads(str(data.get("unstored", "[]")))
        if not isinstance(unstored, list) or not all(
                isinstance(u, list) and len(u) == 2 and isinstance(u[0], int)
                and isinstance(u[1], str) for u in unstored):
            raise ValueError("memory data: records without facts of the wrong shape")
        self.store.load(batch, archived)
        self._writes, self._changes = staged.copy(), changes.copy()
        self.facts_stats = stats.astype(np.int64)
        # records, not stored texts: in LLM mode a memory's text is the model's facts
        self._unstored = {(o, r) for o, r in unstored}
        self._held = {(int(row["owner"]), self.renderer.write(row))
                      for row in batch.rows} | self._unstored
        self._ask_facts(self._writes)  # the staged writes' facts: asked again

    def close(self) -> None:
        if self.facts is not None:
            self.facts.close()
        self.store.close()
