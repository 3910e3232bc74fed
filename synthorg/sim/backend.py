"""The seam between the driver and where agents run (in-process, or Ray actors)."""

from __future__ import annotations

import hashlib
import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import polars as pl

from synthorg.actions.executors import ExecutorContext
from synthorg.config.models import CompanyConfig
from synthorg.ledger.ledger import ShardTotals
from synthorg.llm.cassette import CassetteSpec
from synthorg.org.directory import OrgDirectory
from synthorg.sim.channels import Exchange


@dataclass(frozen=True, eq=False)
class RunPlan:
    """Everything a backend needs to host one run."""

    config: CompanyConfig
    directory: OrgDirectory
    key: np.uint64
    seed: int
    run_dir: Path
    run_id: str
    group_bounds: tuple[tuple[int, int], ...]
    workers: int = 1  # CPUs the run's groups may use between them
    approvals_record: Path | None = None  # replay: the decisions a human-mode run was given
    cassette: CassetteSpec | None = None  # LLM mode: the model's replies, recorded or replayed

    @property
    def executors(self) -> ExecutorContext:
        """What the run's executors need: a key of the run directory (stable across resume:
        it names the run's sandbox containers and workspaces)."""
        return ExecutorContext(self.config, run_key_of(self.run_dir), self.run_dir, self.cassette)


def run_key_of(run_dir: Path) -> str:
    """A short key of a run directory: names its sandboxes and tags its live metrics (the
    same across resume)."""
    return hashlib.blake2b(str(run_dir.resolve()).encode(), digest_size=6).hexdigest()


class Backend(Protocol):
    def tick(self, tick: int) -> None:
        """Step every group host; each routes the arrivals of the departments placed on it.
        Hosts may still be running when this returns (Ray): `settle` waits."""

    def settle(self) -> Exchange:
        """Wait for every tick started so far; what is in flight to the next tick."""

    def snapshot(self) -> list[dict[str, object]]:
        """Every group host's state; call after `settle`."""

    def restore(self, groups: list[dict[str, object]], exchange: Exchange,
                secops: dict[str, int], memory: list[dict[str, object]],
                hr: dict[str, object]) -> None: ...

    def hr_state(self) -> dict[str, object]:
        """The HR office's and the departments' state (empty without hr); after `snapshot`."""

    def org_decisions(self) -> list[list[float]]:
        """Every org change decided during the run so far, as rows (org/decisions.py)."""

    def hr_scores(self) -> pl.DataFrame | None:
        """The last review's scores per agent as columns (None: no review yet)."""

    def secops_state(self) -> dict[str, int]:
        """The SecOps office's record (call after `snapshot`: the groups' actions have
        settled)."""

    def memory_state(self) -> list[dict[str, object]]:
        """Each memory shard's content as plain data (none without memory); after
        `snapshot`."""

    def memory_facts(self) -> list[np.ndarray]:
        """Each memory shard's fact extraction counts (memory/facts.py STATS)."""
        ...

    def dept_spent(self) -> np.ndarray:
        """Micro-USD spent per department so far (after `settle`)."""

    def shard_totals(self) -> list[ShardTotals]: ...

    def agent_rows(self) -> list[dict[str, np.ndarray]]: ...

    def open_tasks(self) -> list[tuple[int, int]]: ...

    def close(self) -> None: ...


# Cost of one agent's step relative to one task's handling (routing, queueing, closing),
# measured on megacorp: the vectorised per-agent work is small next to per-task Python.
AGENT_WEIGHT = 1 / 8


def expected_work(config: CompanyConfig, directory: OrgDirectory) -> np.ndarray:
    """Per agent: the share of arriving tasks it may be routed, plus a little for being there."""
    work = np.full(directory.size, AGENT_WEIGHT)
    for (_, t), pool in directory.handlers.items():
        if len(pool):
            work[pool] += (config.workload.task_types[t].rate * config.workload.scale
                           / len(pool))
    return work


# `auto` gives a group at least this many agents: with fewer, a step is so short that the
# exchange at the end of each tick costs more than another core brings (megacorp scaled, 2
# cores, shm pipeline: two groups were faster from about 700 agents on before steps got
# cheaper; now they tie with one at 1,000 and are about 25 % faster at 1,500 and 2,500.
# Over the compiled graph, whose hand-over takes about 1 ms rather than 0.25 ms, two groups
# paid only from 2,000-4,000).
MIN_AGENTS_PER_GROUP = 500
MAX_GROUPS = 64


def group_bounds(n_agents: int, agents_per_actor: int | str, workers: int,
                 work: np.ndarray | None = None,
                 min_agents: int = MIN_AGENTS_PER_GROUP) -> tuple[tuple[int, int], ...]:
    """Contiguous agent ranges, one per group. `auto` makes up to `workers` groups (of at
    least `min_agents` agents) of about equal expected work (equal headcount without `work`):
    the slowest group sets the tick's pace."""
    if agents_per_actor != "auto":
        # each group is a process of ~50 MB: never more than MAX_GROUPS of them
        per = max(int(agents_per_actor), -(-n_agents // MAX_GROUPS))
        return tuple((lo, min(lo + per, n_agents)) for lo in range(0, n_agents, per))
    groups = max(1, min(workers, n_agents // max(1, min_agents)))
    weights = np.ones(n_agents) if work is None else np.asarray(work, dtype=np.float64)
    cum = np.cumsum(weights)
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, groups) / groups, side="right")
    edges = np.unique(np.r_[0, cuts, n_agents])  # sorted, no empty groups
    return tuple((int(lo), int(hi)) for lo, hi in itertools.pairwise(edges.tolist()))


def local_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
