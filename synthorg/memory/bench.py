"""Memory's speed and worth (`synthorg bench --memory`): the Mem0 store's add and search
latency and batched write throughput over 10,000 memories, the embedder's, a company run with
Mem0 on, and the memory on/off A/B of the default company."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from synthorg.memory.backend import MemoryBackend, MemoryBatch
from synthorg.memory.embedders import Embedder, make_embedder
from synthorg.memory.records import WRITE_DTYPE, Category, Outcome, memory_keys
from synthorg.memory.texts import Renderer, tags_of

TEMPLATES = Path(__file__).resolve().parents[1] / "_templates"
if not TEMPLATES.is_dir():  # a source checkout
    TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
DEFAULT_COMPANY = TEMPLATES / "companies" / "startup.yaml"
ENTERPRISE = TEMPLATES / "companies" / "enterprise.yaml"

_TYPES = ("bugfix", "feature", "review", "incident", "analysis", "spec", "migration", "audit")
_SKILLS = ("python", "testing", "infra", "data", "design", "security")
_DEPTS = ("engineering", "product", "operations", "data")


def _rows(n: int, agents: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = np.zeros(n, dtype=WRITE_DTYPE)
    rows["tick"] = np.arange(n) // agents
    rows["agent"] = rng.integers(0, agents, n)
    rows["owner"] = rows["agent"]
    rows["seq"] = np.arange(n) % agents
    rows["category"] = rng.choice([Category.episodic, Category.procedural, Category.social], n)
    rows["outcome"] = Outcome.completed
    rows["type"] = rng.integers(0, len(_TYPES), n)
    rows["skill"] = rng.integers(0, len(_SKILLS), n)
    rows["dept"] = rng.integers(0, len(_DEPTS), n)
    rows["difficulty"] = rng.random(n)
    rows["quality"] = np.round(rng.random(n), 2)
    rows["turns"] = rng.integers(1, 12, n)
    rows["helper"] = np.where(rows["category"] == Category.social, rng.integers(0, agents, n), -1)
    return rows


def _batch(rows: np.ndarray, renderer: Renderer, embedder: Embedder) -> MemoryBatch:
    texts = tuple(renderer.write(r) for r in rows)
    return MemoryBatch(memory_keys(rows), rows, texts, tuple(tags_of(r) for r in rows),
                       embedder.embed(texts))


def _ms(samples: list[float]) -> dict[str, float]:
    a = np.asarray(samples) * 1e3
    return {"p50_ms": round(float(np.percentile(a, 50)), 3),
            "p95_ms": round(float(np.percentile(a, 95)), 3)}


def store_speed(backend: str = "mem0", memories: int = 10_000, agents: int = 1_000,
                batch: int = 500, searches: int = 300) -> dict[str, Any]:
    """Write `memories` in batches of `batch` (spread over `agents` namespaces), then time
    searches of random agents (top 5, the agent's and the organisation's memories)."""
    embedder = make_embedder("minilm")
    renderer = Renderer([f"agent-{i}" for i in range(agents)], _TYPES, _SKILLS, _DEPTS)
    rows = _rows(memories, agents, seed=1)
    rows["tick"] += 1  # after every agent's first memory (tick 0): never the same keys
    began = time.perf_counter()
    batches = [_batch(rows[i:i + batch], renderer, embedder)
               for i in range(0, memories, batch)]
    embed_s = time.perf_counter() - began
    with tempfile.TemporaryDirectory(prefix="synthorg-membench-") as tmp:
        store: MemoryBackend
        if backend == "mem0":
            from synthorg.memory.mem0_store import Mem0Store

            store = Mem0Store(Path(tmp) / "store", embedder)
        else:
            from synthorg.memory.inprocess import InProcessStore

            store = InProcessStore()
        # every agent's namespace made first (its first memory), timed apart: embedded Qdrant
        # makes a collection in ~10-25 ms, rewriting a metadata file that lists them all
        first = _rows(agents, agents, seed=5)
        first["agent"] = first["owner"] = np.arange(agents)
        first["tick"] = 0
        began = time.perf_counter()
        store.add(_batch(first, renderer, embedder))
        namespaces_s = time.perf_counter() - began
        began = time.perf_counter()
        for b in batches:
            store.add(b)
        write_s = time.perf_counter() - began
        one = _batch(_rows(200, agents, seed=2), renderer, embedder)
        single = []
        for i in range(len(one)):
            began = time.perf_counter()
            store.add(one.take(np.array([i])))
            single.append(time.perf_counter() - began)
        rng = np.random.default_rng(3)
        queries = [renderer.query(r) for r in _rows(searches, agents, seed=4)]
        owners = rng.integers(0, agents, searches)
        search, with_embedding = [], []
        for text, owner in zip(queries, owners.tolist(), strict=True):
            began = time.perf_counter()
            vector = embedder.embed([text])
            mid = time.perf_counter()
            store.search(vector, np.array([owner]), 5)
            end = time.perf_counter()
            search.append(end - mid)
            with_embedding.append(end - began)
        store.close()
    return {"bench": "memory_store", "backend": backend,
            "memories": agents + memories + len(one), "agents": agents, "batch": batch,
            "new_namespace_ms": round(namespaces_s / agents * 1e3, 2),
            "batched_writes_per_s": round(memories / write_s, 1),
            "single_add": _ms(single), "search_top5": _ms(search),
            "search_with_query_embedding": _ms(with_embedding),
            "embed_texts_per_s": round(memories / embed_s, 1)}


def company_run(config: Path, ticks: int, backend: str = "ray") -> dict[str, Any]:
    """A company with Mem0 on (and, for comparison, off): wall time and memory counts."""
    from synthorg.config.loader import load_config
    from synthorg.sim.simulation import Simulation

    row: dict[str, Any] = {"bench": "memory_company", "config": config.stem, "ticks": ticks,
                           "backend": backend}
    for on in (True, False):
        cfg = load_config(config, [f"runtime.backend={backend}", f"memory.enabled={str(on).lower()}",
                                   "memory.backend=mem0", "memory.embedder=minilm"])
        with tempfile.TemporaryDirectory(prefix="synthorg-membench-") as tmp:
            s = Simulation(cfg, seed=1, out=tmp).run(ticks=ticks).summary
        key = "memory_on" if on else "memory_off"
        row[key] = {"wall_seconds": s.wall_seconds, "tick_seconds": s.tick_seconds,
                    "memory_writes": s.memory_writes, "memory_searches": s.memory_searches,
                    "tasks_completed": s.tasks_completed, "agents": s.agents}
    return row


def ab(seeds: int, ticks: int = 300) -> dict[str, Any]:
    from synthorg.memory.ab import memory_ab

    with tempfile.TemporaryDirectory(prefix="synthorg-memab-") as tmp:
        report = memory_ab(DEFAULT_COMPANY, range(seeds), ticks, Path(tmp))
    return {"bench": "memory_ab", "config": "startup", "seeds": seeds, "ticks": ticks,
            "on_minus_off": report}
