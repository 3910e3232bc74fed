"""`MemoryBackend` over Mem0 with embedded Qdrant and Mem0's SQLite history, under one
directory, offline.

Each owner (an agent, or the organisation) is a namespace of its own: a Qdrant collection
(`agent_<i>`, `org`), so a search never filters one agent's memories out of everyone's
(embedded Qdrant evaluates filters in Python, point by point: ~250 ms over 10,000 memories,
against ~0.3 ms for an agent's own collection). Points carry Mem0's payload (`data`, `hash`,
`user_id`, `created_at`, ...) and Mem0's history table records every write, so
`Memory.get_all` / `Memory.search` read a run's store as any Mem0 store; writes go in batches
through Mem0's own vector store and history (`Memory.add` embeds and commits one message at a
time). Mem0's embedder is the run's (embedders.py), its LLM a loopback address never called
(writes go in with `infer=False` semantics; in LLM mode the facts are extracted before, by the
project's own client: memory/facts.py).

Determinism: point ids are UUIDs made of the project's keys, never Mem0's random ones; created_at is simulated
time; ranking recomputes each candidate's score in float64 from its stored vector and breaks
ties by key, and Qdrant is asked for more candidates until no tie crosses the cut.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import time
import uuid
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from synthorg.memory.backend import MemoryBatch, hits_of, rank
from synthorg.memory.embedders import DIMS, Embedder
from synthorg.memory.records import HIT_DTYPE, ORG, WRITE_DTYPE, Category

LOOPBACK = "http://127.0.0.1:9/v1"  # discard port: Mem0's clients are built, never called
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)  # tick 0 in `created_at` (simulated time)
ARCHIVED_FILE = "archived.json"
_ROW_FIELDS = WRITE_DTYPE.names or ()
_MARGIN = 1e-5  # float32 (Qdrant) and float64 (ranking) scores differ by less


def point_id(key: int) -> str:
    """A memory's id in Qdrant and Mem0: a UUID made of the project's key (Mem0 wants
    UUID strings; its own would be random)."""
    return str(uuid.UUID(int=int(key)))


def _quiet_offline_env() -> None:
    os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    for name in ("mem0", "qdrant_client", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _open_client(client_class: Any, path: Path, wait_s: float = 15.0) -> Any:
    """Embedded Qdrant locks its folder for one process. The process of a killed run (a
    memory actor outliving its driver by a moment) may still hold it when a resume opens
    the store: wait for it, then say which folder is busy."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return client_class(path=str(path))
        except RuntimeError as exc:
            if "already accessed" not in str(exc):
                raise
            if time.monotonic() > deadline:
                raise MemoryStoreBusy(f"{path}: the memory store is open in another process "
                                      "(embedded Qdrant serves one process at a time)") from None
            time.sleep(0.2)


class MemoryStoreBusy(RuntimeError):
    pass


def _namespace_class() -> Any:
    """Mem0's Qdrant store for one namespace, without the payload indexes Mem0 makes when
    handed a client: embedded Qdrant ignores them, and each rewrites its metadata file with
    every collection's config (quadratic in agents)."""
    from mem0.vector_stores.qdrant import Qdrant

    class Namespace(Qdrant):
        def _create_filter_indexes(self) -> None:
            return None

    return Namespace


class _EmbedderForMem0:
    """The run's embedder in Mem0's shape, so Mem0's own searches embed as the run does."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.config = type("Config", (), {"embedding_dims": DIMS})()

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return [float(x) for x in self._embedder.embed([text])[0]]

    def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
        return self._embedder.embed(texts).astype(float).tolist()


class Mem0Store:
    """`fresh`: start empty, removing what `path` holds. A simulation always does: embedded
    Qdrant stores points as pickles, so opening a run directory's store files could run
    whatever a crafted directory put there; a run's store is rebuilt from its checkpoint's
    data instead. Opening an existing store (fresh=False) is for stores the user trusts."""

    def __init__(self, path: Path, embedder: Embedder,
                 names: tuple[str, ...] = (), fresh: bool = False) -> None:
        _quiet_offline_env()
        if fresh and path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("MEM0_DIR", str(path))
        from mem0 import Memory
        from qdrant_client import QdrantClient

        self.path = path
        self.names = names
        # our client, handed to Mem0: collections are made here, with DOT distance over the
        # embedder's unit vectors, so Qdrant stores a vector as given (COSINE would
        # renormalise it, and a checkpoint's vectors would come back a few bits apart)
        self.client = _open_client(QdrantClient, path / "qdrant")
        self._ensure_collection("org")
        with warnings.catch_warnings():  # payload indexes: no effect in embedded Qdrant
            warnings.simplefilter("ignore")
            self.memory = Memory.from_config({
                "vector_store": {"provider": "qdrant", "config": {
                    "collection_name": "org", "embedding_model_dims": DIMS,
                    "client": self.client, "path": str(path / "qdrant")}},
                # a base URL makes Mem0 build a client instead of loading a second model copy
                "embedder": {"provider": "huggingface", "config": {
                    "huggingface_base_url": LOOPBACK, "embedding_dims": DIMS}},
                "llm": {"provider": "openai", "config": {
                    "api_key": "unused-offline", "openai_base_url": LOOPBACK}},
                "history_db_path": str(path / "history.db"),
            })
        self.memory.embedding_model = _EmbedderForMem0(embedder)
        self._stores: dict[int, Any] = {ORG: self.memory.vector_store}
        existing = {c.name for c in self.client.get_collections().collections}
        for name in existing:
            if name.startswith("agent_"):
                self._store(int(name.removeprefix("agent_")))
        self.memory.db.connection.execute("PRAGMA synchronous=OFF")  # as _unsynced
        self._archived = self._read_archived()

    # ---- namespaces ---------------------------------------------------------------------
    def _store(self, owner: int) -> Any:
        store = self._stores.get(owner)
        if store is None:
            self._ensure_collection(f"agent_{owner}")
            store = _namespace_class()(collection_name=f"agent_{owner}",
                                       embedding_model_dims=DIMS, client=self.client)
            self._stores[owner] = store
        return store

    def _ensure_collection(self, name: str) -> None:
        from qdrant_client import models

        if not self.client.collection_exists(name):
            self.client.create_collection(name, vectors_config=models.VectorParams(
                size=DIMS, distance=models.Distance.DOT, on_disk=True))
        self._unsynced(name)

    def _unsynced(self, name: str) -> None:
        """Embedded Qdrant commits every point to its SQLite file on its own, synced to disk:
        ~8 ms a write. A run's store is rebuilt from checkpoints, never trusted from disk after
        a crash, so the sync buys nothing: switched off (private attributes, hence guarded:
        without them only speed is lost)."""
        local = getattr(self.client, "_client", None)
        collection = getattr(local, "collections", {}).get(name)
        connection = getattr(getattr(collection, "storage", None), "storage", None)
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.execute("PRAGMA synchronous=OFF")
                connection.execute("PRAGMA journal_mode=MEMORY")

    def mem0_view(self, owner: int) -> Any:
        """Mem0's own `Memory` over an owner's namespace (`get_all`, `search`, `history`)."""
        import copy

        view = copy.copy(self.memory)
        view.vector_store = self._store(owner)
        return view

    def _user(self, owner: int) -> str:
        if owner == ORG:
            return "org"
        return self.names[owner] if 0 <= owner < len(self.names) else f"agent-{owner}"

    def _read_archived(self) -> set[int]:
        try:
            data = json.loads((self.path / ARCHIVED_FILE).read_text())
        except FileNotFoundError:
            return set()
        except (OSError, ValueError) as exc:
            raise ValueError(f"{self.path / ARCHIVED_FILE}: unreadable ({exc})") from exc
        if not isinstance(data, list) or not all(isinstance(x, int) for x in data):
            raise ValueError(f"{self.path / ARCHIVED_FILE}: not a list of agent indices")
        return set(data)

    def _write_archived(self) -> None:
        tmp = self.path / (ARCHIVED_FILE + ".tmp")
        tmp.write_text(json.dumps(sorted(self._archived)))
        tmp.replace(self.path / ARCHIVED_FILE)

    # ---- writes -------------------------------------------------------------------------
    def _payload(self, batch: MemoryBatch, i: int) -> dict[str, Any]:
        row = batch.rows[i]
        text = batch.texts[i]
        when = (EPOCH + timedelta(seconds=int(row["tick"]))).isoformat()
        return {"data": text, "hash": hashlib.md5(text.encode()).hexdigest(),
                "user_id": self._user(int(row["owner"])), "actor_id": self._user(int(row["agent"])),
                "created_at": when, "updated_at": when, "role": "user",
                "category": Category(int(row["category"])).name, "tags": list(batch.tags[i]),
                "key": int(batch.keys[i]),
                "row": {name: row[name].item() for name in _ROW_FIELDS}}

    def add(self, batch: MemoryBatch) -> None:
        if not len(batch):
            return
        self._insert(batch)
        self.memory.db.batch_add_history([
            {"memory_id": point_id(k), "new_memory": t, "event": "ADD",
             "created_at": (EPOCH + timedelta(seconds=int(r["tick"]))).isoformat(),
             "actor_id": self._user(int(r["agent"])), "role": "user"}
            for k, t, r in zip(batch.keys, batch.texts, batch.rows, strict=True)])

    def _insert(self, batch: MemoryBatch) -> None:
        owners = batch.rows["owner"]
        for owner in np.unique(owners).tolist():
            idx = np.flatnonzero(owners == owner)
            self._store(owner).insert(
                vectors=batch.vectors[idx].astype(float).tolist(),
                payloads=[self._payload(batch, int(i)) for i in idx],
                ids=[point_id(k) for k in batch.keys[idx]])

    # ---- searches -----------------------------------------------------------------------
    def _filter(self, categories: frozenset[int] | None, tags: frozenset[str] | None) -> Any:
        if categories is None and tags is None:
            return None
        from qdrant_client import models

        must = []
        if categories is not None:
            must.append(models.FieldCondition(key="category", match=models.MatchAny(
                any=sorted(Category(c).name for c in categories))))
        if tags is not None:
            must.append(models.FieldCondition(key="tags", match=models.MatchAny(any=sorted(tags))))
        return models.Filter(must=must)

    def _candidates(self, owner: int, vector: np.ndarray, top_k: int, flt: Any
                    ) -> list[Any]:
        """Enough of the owner's best points that no tie or float32 rounding crosses the
        top_k cut."""
        if owner not in self._stores or (owner != ORG and owner in self._archived):
            return []
        name = self._stores[owner].collection_name
        limit = max(4 * top_k, 20)
        query = vector.astype(float).tolist()
        while True:
            points = self.client.query_points(name, query=query, query_filter=flt, limit=limit,
                                              with_payload=True, with_vectors=True).points
            if len(points) < limit or points[-1].score < points[top_k - 1].score - _MARGIN:
                return points
            limit *= 4

    def search(self, vectors: np.ndarray, owners: np.ndarray, top_k: int,
               categories: frozenset[int] | None = None,
               tags: frozenset[str] | None = None) -> np.ndarray:
        flt = self._filter(categories, tags)
        out = []
        for q, (vector, owner) in enumerate(zip(vectors, owners.tolist(), strict=True)):
            points = self._candidates(ORG, vector, top_k, flt)
            if owner != ORG:
                points = self._candidates(owner, vector, top_k, flt) + points
            if not points:
                continue
            found = self._batch(points)
            scores = found.vectors.astype(np.float64) @ vector.astype(np.float64)
            order = rank(scores, found.keys, top_k)
            out.append(hits_of(q, order, scores, found.rows, found.keys))
        return np.concatenate(out) if out else np.zeros(0, dtype=HIT_DTYPE)

    @staticmethod
    def _batch(points: list[Any]) -> MemoryBatch:
        rows = np.zeros(len(points), dtype=WRITE_DTYPE)
        for i, p in enumerate(points):
            row = p.payload["row"]
            rows[i] = tuple(row[name] for name in _ROW_FIELDS)
        vectors = np.array([p.vector if not isinstance(p.vector, dict) else p.vector[""]
                            for p in points], dtype=np.float32).reshape(len(points), DIMS)
        return MemoryBatch(np.array([p.payload["key"] for p in points], dtype=np.int64), rows,
                           tuple(p.payload["data"] for p in points),
                           tuple(tuple(p.payload.get("tags", ())) for p in points), vectors)

    # ---- listing, deletion, archives ----------------------------------------------------
    def _all_of(self, owner: int) -> MemoryBatch:
        if owner not in self._stores:
            return MemoryBatch.empty()
        name = self._stores[owner].collection_name
        points: list[Any] = []
        offset = None
        while True:
            page, offset = self.client.scroll(name, limit=1024, offset=offset,
                                              with_payload=True, with_vectors=True)
            points.extend(page)
            if offset is None:
                break
        if not points:
            return MemoryBatch.empty()
        batch = self._batch(points)
        return batch.take(np.argsort(batch.keys, kind="stable"))

    def list(self, owner: int, archived: bool = False) -> MemoryBatch:
        is_archived = owner != ORG and owner in self._archived
        return self._all_of(owner) if is_archived == archived else MemoryBatch.empty()

    def delete(self, keys: np.ndarray) -> int:
        from qdrant_client import models

        wanted = {int(k) for k in np.asarray(keys).tolist()}
        gone = 0
        for store in self._stores.values():
            found = self.client.retrieve(store.collection_name,
                                         ids=[point_id(k) for k in sorted(wanted)])
            if found:
                self.client.delete(store.collection_name, points_selector=models.PointIdsList(
                    points=[p.id for p in found]))
                gone += len(found)
        return gone

    def archive(self, owner: int) -> int:
        if owner == ORG or owner in self._archived:
            return 0
        self._archived.add(owner)
        self._write_archived()
        return self._count(owner)

    def restore(self, owner: int) -> int:
        if owner not in self._archived:
            return 0
        self._archived.discard(owner)
        self._write_archived()
        return self._count(owner)

    def _count(self, owner: int) -> int:
        if owner not in self._stores:
            return 0
        return int(self.client.count(self._stores[owner].collection_name).count)

    # ---- checkpoints --------------------------------------------------------------------
    def export(self) -> tuple[MemoryBatch, np.ndarray]:
        parts = [self._all_of(owner) for owner in sorted(self._stores)]
        batch = MemoryBatch.join(parts)
        order = np.argsort(batch.keys, kind="stable")
        batch = batch.take(order)
        archived = np.isin(batch.rows["owner"], sorted(self._archived))
        return batch, archived

    def load(self, batch: MemoryBatch, archived: np.ndarray) -> None:
        for owner in sorted(self._stores):
            self.client.delete_collection(self._stores[owner].collection_name)
        self._stores = {}
        self._ensure_collection("org")
        self._stores[ORG] = self.memory.vector_store
        if len(batch):
            self._insert(batch)  # the history already has these writes
        owners = batch.rows["owner"][np.asarray(archived, dtype=bool)]
        self._archived = {int(o) for o in np.unique(owners).tolist() if o != ORG}
        self._write_archived()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
        with contextlib.suppress(Exception):
            self.memory.db.close()
