"""The memory service a run's config asks for."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from synthorg.config.models import CompanyConfig
from synthorg.llm.cassette import CassetteSpec
from synthorg.memory.backend import MemoryBackend
from synthorg.memory.embedders import make_embedder
from synthorg.memory.service import MemoryService
from synthorg.memory.texts import Renderer
from synthorg.org.directory import OrgDirectory

MEMORY_DIR = "memory"  # in the run directory: one store per shard


def build_memory(config: CompanyConfig, directory: OrgDirectory, run_dir: Path | None,
                 shard: int = 0, key: np.uint64 | None = None,
                 cassette: CassetteSpec | None = None) -> MemoryService:
    """`key` (the run's) picks the agents that reason with the model, whose memories' facts
    the model states in LLM mode (`llm.memory_facts`)."""
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
    facts = None
    if config.llm.enabled and config.llm.memory_facts and key is not None:
        from synthorg.llm.selection import llm_agents
        from synthorg.memory.facts import FactExtractor

        facts = FactExtractor(config.llm, cassette, llm_agents(config, directory, key),
                              directory.agent_ids, config.company.name)
    return MemoryService(store, embedder, renderer, spec.top_k, facts, counts_org=shard == 0)
