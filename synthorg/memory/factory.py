"""The memory service a run's config asks for."""

from __future__ import annotations

from pathlib import Path

from synthorg.config.models import CompanyConfig
from synthorg.memory.backend import MemoryBackend
from synthorg.memory.embedders import make_embedder
from synthorg.memory.service import MemoryService
from synthorg.memory.texts import Renderer
from synthorg.org.directory import OrgDirectory

MEMORY_DIR = "memory"  # in the run directory: one store per shard


def build_memory(config: CompanyConfig, directory: OrgDirectory, run_dir: Path | None,
                 shard: int = 0) -> MemoryService:
    spec = config.memory
    renderer = Renderer(directory.agent_ids, directory.type_ids, directory.skill_ids,
                        directory.dept_ids)
    embedder = make_embedder(spec.embedder)
    store: MemoryBackend
    if spec.backend == "mem0":
        from synthorg.memory.mem0_store import Mem0Store

        if run_dir is None:
            raise ValueError("the mem0 memory store needs a run directory")
        store = Mem0Store(run_dir / MEMORY_DIR / f"shard-{shard}", embedder,
                          tuple(directory.agent_ids), fresh=True)
    else:
        from synthorg.memory.inprocess import InProcessStore

        store = InProcessStore()
    return MemoryService(store, embedder, renderer, spec.top_k)
