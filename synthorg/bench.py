"""Performance measurements printed as JSON lines (`synthorg bench`).

Throughput (agent-steps per second) per company size and backend, the ray/local ratio, the
growth exponent of time per tick against agents, peak resident memory of the whole run
(driver plus every Ray worker), and whether memory stays flat over a long run.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from synthorg.config.loader import load_config
from synthorg.config.models import CompanyConfig
from synthorg.sim.backend import local_cpus
from synthorg.sim.simulation import Simulation

MEGACORP = Path(__file__).resolve().parents[1] / "templates" / "companies" / "megacorp.yaml"


def scaled(base: CompanyConfig, agents: int, backend: str) -> CompanyConfig:
    """The base company with headcounts and arrival rates scaled to about `agents` agents."""
    factor = agents / base.agent_count()
    data = base.model_dump(mode="json")
    for spec in data["agents"]:
        if spec["count"] > 1:
            spec["count"] = max(1, round(spec["count"] * factor))
    for tt in data["workload"]["task_types"]:
        tt["rate"] = round(tt["rate"] * factor, 4)
    data["runtime"]["backend"] = backend
    return CompanyConfig.model_validate(data)


def process_tree() -> list[psutil.Process]:
    """This process and all its descendants (Ray's raylet, GCS and workers)."""
    me = psutil.Process()
    return [me, *me.children(recursive=True)]


def rss_bytes(processes: list[psutil.Process]) -> int:
    total = 0
    for p in processes:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            continue
    return total


def tree_rss_bytes() -> int:
    """RSS of this process and all its descendants."""
    return rss_bytes(process_tree())


class RssSampler:
    """Samples whole-tree RSS in the background; keeps the peak."""

    # Finding the tree scans all of /proc: about 2.5 ms of CPU, against 0.25 ms to read the
    # RSS of its ~20 processes. On a 2-core machine that CPU comes out of a busy Ray group
    # (the local backend leaves a core idle), so the tree is looked for again only every
    # few samples; processes that start in between are counted from the next look, and
    # `__exit__` looks once more.
    RESCAN = 5

    def __init__(self, interval: float = 0.2) -> None:
        self.peak = 0
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        processes: list[psutil.Process] = []
        samples = 0
        while not self._stop.is_set():
            if samples % self.RESCAN == 0:
                processes = process_tree()
            self.peak = max(self.peak, rss_bytes(processes))
            samples += 1
            self._stop.wait(self._interval)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss_bytes())


def _run(cfg: CompanyConfig, ticks: int, on_tick: Callable[[int, int], None] | None = None
         ) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="synthorg-bench-") as tmp, RssSampler() as rss:
        s = Simulation(cfg, seed=1, out=tmp).run(ticks=ticks, on_tick=on_tick).summary
    return {"agents": s.agents, "groups": s.groups, "ticks": ticks,
            "agent_steps_per_second": s.agent_steps_per_second,
            "tick_seconds": s.tick_seconds, "seconds_per_tick": s.tick_seconds / ticks,
            "wall_seconds": s.wall_seconds, "peak_rss_mb": round(rss.peak / 2**20, 1),
            # every tool call passes SecOps's fast path (in the groups) before it runs
            "secops_checks": s.tool_calls,
            "secops_checks_per_second": round(s.tool_calls / max(s.tick_seconds, 1e-9), 1),
            "harmful_calls": s.harmful_calls, "security_incidents": s.security_incidents}


def throughput(sizes: list[int], ticks: int, backends: list[str], repeat: int = 1
               ) -> Iterator[dict[str, Any]]:
    """Each size's backends run in turn, `repeat` rounds; the best run of each counts, as
    timeit does: noise from other work on the machine only ever slows a run down. The
    ray/local ratio is also given per round: a round's runs are seconds apart, so on a
    machine whose speed drifts over minutes their ratio is steadier than that of two bests
    from different rounds."""
    base = load_config(MEGACORP)
    machine = {"cpus": local_cpus(), "cpu_count": os.cpu_count()}
    per_tick: dict[str, list[tuple[int, float]]] = {b: [] for b in backends}
    for n in sizes:
        best: dict[str, dict[str, Any]] = {}
        per_round: list[float] = []  # ray / local within each round
        for _ in range(repeat):
            round_rates = {}
            for backend in backends:
                row = _run(scaled(base, n, backend), ticks)
                round_rates[backend] = row["agent_steps_per_second"]
                if row["agent_steps_per_second"] > best.get(backend, {}).get("agent_steps_per_second", -1):
                    best[backend] = row
            if "ray" in round_rates and "local" in round_rates:
                per_round.append(round(round_rates["ray"] / max(round_rates["local"], 1e-9), 3))
        rates: dict[str, float] = {}
        for backend, row in best.items():
            rates[backend] = row["agent_steps_per_second"]
            per_tick[backend].append((row["agents"], row["seconds_per_tick"]))
            yield {"bench": "throughput", "backend": backend, "workload": "megacorp-scaled",
                   "repeats": repeat, **machine, **row}
        if "ray" in rates and "local" in rates:
            yield {"bench": "ray_vs_local", "agents": n, **machine,
                   "ratio": round(rates["ray"] / max(rates["local"], 1e-9), 3),
                   "ratio_per_round": per_round,
                   "ratio_median_of_rounds": round(float(np.median(per_round)), 3)}
    for backend, points in per_tick.items():
        big = [(a, s) for a, s in points if a >= 1000]
        if len(big) >= 2:
            x = np.log([a for a, _ in big])
            y = np.log([s for _, s in big])
            slope = float(np.polyfit(x, y, 1)[0])
            yield {"bench": "tick_time_growth", "backend": backend, **machine,
                   "agents": [a for a, _ in big], "exponent": round(slope, 3)}


def memory_flat(agents: int, ticks: int, backend: str, warmup: int) -> dict[str, Any]:
    """RSS of the whole run after warm-up and at the end: a long run must not grow."""
    cfg = scaled(load_config(MEGACORP), agents, backend)
    samples: list[tuple[int, int]] = []
    tree: list[psutil.Process] = []  # found once, after warm-up: see RssSampler

    def sample(done: int, total: int) -> None:
        if done >= warmup and (done - warmup) % max(1, (ticks - warmup) // 10) == 0:
            if not tree:
                tree.extend(process_tree())
            samples.append((done, rss_bytes(tree)))

    row = _run(cfg, ticks, on_tick=sample)
    ticks_at = np.array([t for t, _ in samples], dtype=float)
    mb = np.array([r for _, r in samples], dtype=float) / 2**20
    slope = float(np.polyfit(ticks_at, mb, 1)[0]) if len(samples) >= 2 else math.nan
    return {"bench": "memory_flat", "backend": backend, "cpus": local_cpus(), **row,
            "warmup_ticks": warmup, "rss_mb_after_warmup": round(float(mb[0]), 1),
            "rss_mb_end": round(float(mb[-1]), 1),
            "rss_growth_mb_per_100_ticks": round(slope * 100, 2)}
