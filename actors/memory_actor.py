"""`memory:K` actors: each hosts one shard of the run's long-term memory (an embedded Qdrant
store can be opened by one process only). Groups call them once per tick with everything
they write and search (synthorg/memory/shards.py spreads agents over the shards)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import ray

from synthorg.config.models import CompanyConfig
from synthorg.errors import ActorCrashed
from synthorg.llm.cassette import CassetteSpec
from synthorg.memory.factory import build_memory
from synthorg.memory.shards import Exchange, sharded
from synthorg.org.directory import OrgDirectory


@ray.remote(num_cpus=0)
class MemoryActor:
    def __init__(self, config: CompanyConfig, directory: OrgDirectory, run_dir: str,
                 shard: int, key: int, cassette: CassetteSpec | None = None) -> None:
        self._service = build_memory(config, directory, Path(run_dir), shard, np.uint64(key),
                                     cassette)

    def exchange(self, tick: int, writes: np.ndarray, queries: np.ndarray,
                 changes: np.ndarray) -> np.ndarray:
        return self._service.exchange(tick, writes, queries, changes)

    def export(self) -> dict[str, object]:
        return self._service.export()

    def facts_stats(self) -> np.ndarray:
        return self._service.facts_stats.copy()

    def load(self, data: dict[str, object]) -> None:
        self._service.load(data)

    def close(self) -> None:
        self._service.close()

    def pid(self) -> int:
        return os.getpid()


def recall_of(shards: list[ray.actor.ActorHandle]) -> Exchange:
    """A group's way to the memory actors: its tick's calls go out together; an actor's
    process dying is an ActorCrashed (the run rolls back), never an empty memory."""

    def fanout(tick: int, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
               ) -> list[np.ndarray]:
        calls = [shard.exchange.remote(tick, w, q, c)
                 for shard, (w, q, c) in zip(shards, parts, strict=True)]
        try:
            return list(ray.get(calls))
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
            raise ActorCrashed(f"a memory actor is gone: {type(exc).__name__}") from exc

    return sharded(fanout, len(shards))
