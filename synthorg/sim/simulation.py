"""`Simulation(config, seed=...).run(ticks=...)`: the public entry point of one run."""

from __future__ import annotations

import importlib
import json
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import yaml

from synthorg.config.models import CompanyConfig
from synthorg.domain.rng import root_key
from synthorg.ledger.ledger import PARTS_DIR
from synthorg.ledger.tables import write_agents, write_events, write_tasks
from synthorg.org.directory import MICRO, OrgDirectory
from synthorg.sim.backend import Backend, RunPlan, group_bounds, local_cpus
from synthorg.sim.driver import Driver
from synthorg.sim.local import LocalBackend
from synthorg.sim.summary import Summary, summarise

# Backends outside the domain package are found by name so synthorg/ never imports actors/.
BACKENDS = {"ray": "actors.ray_backend:RayBackend"}

TickCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class RunResult:
    summary: Summary
    run_dir: Path

    @property
    def events(self) -> pl.DataFrame:
        return pl.read_parquet(self.run_dir / "events.parquet")

    @property
    def tasks(self) -> pl.DataFrame:
        return pl.read_parquet(self.run_dir / "tasks.parquet")

    @property
    def agents(self) -> pl.DataFrame:
        return pl.read_parquet(self.run_dir / "agents.parquet")


class Simulation:
    def __init__(self, config: CompanyConfig, seed: int | None = None,
                 out: str | Path | None = None, address: str | None = None) -> None:
        self.config = config
        self.seed = config.simulation.seed if seed is None else seed
        self.out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="synthorg-"))
        self.address = address

    def run(self, ticks: int | None = None, on_tick: TickCallback | None = None) -> RunResult:
        ticks = self.config.simulation.ticks if ticks is None else ticks
        started = time.perf_counter()
        cfg = self.config
        self.out.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.out / PARTS_DIR, ignore_errors=True)
        directory = OrgDirectory.from_config(cfg)
        workers = local_cpus()
        backend_cls: type[Backend]
        if cfg.runtime.backend == "ray":
            module, _, name = BACKENDS["ray"].partition(":")
            backend_mod = importlib.import_module(module)
            workers = backend_mod.ensure_ray(self.address)
            backend_cls = getattr(backend_mod, name)
        else:
            backend_cls = LocalBackend  # type: ignore[assignment]
            if cfg.runtime.agents_per_actor == "auto":
                workers = 1  # one process: one group is fastest
        plan = RunPlan(
            config=cfg, directory=directory, key=root_key(self.seed), run_dir=self.out,
            run_id=uuid.uuid4().hex[:12],
            group_bounds=group_bounds(directory.size, cfg.runtime.agents_per_actor, workers),
        )
        self._write_resolved(ticks)
        backend = backend_cls(plan)  # type: ignore[call-arg]
        try:
            driver = Driver(plan, backend, self.seed)
            tick_started = time.perf_counter()
            for t in range(ticks):
                driver.step()
                if on_tick is not None:
                    on_tick(t + 1, ticks)
            tick_seconds = time.perf_counter() - tick_started
            totals = backend.totals()
            open_ids = backend.open_task_ids() + driver.in_flight_task_ids()
            agent_rows = backend.agent_rows()
        finally:
            backend.close()
        parts = self.out / PARTS_DIR
        write_events(self.out, sorted(parts.glob("events-*.parquet")), directory)
        tasks = write_tasks(self.out, sorted(parts.glob("created-*.parquet")),
                            sorted(parts.glob("results-*.parquet")), directory)
        write_agents(self.out, agent_rows, directory)
        shutil.rmtree(parts, ignore_errors=True)
        done = tasks.filter(pl.col("status") == "completed")
        summary = summarise(
            totals,
            tasks_open=len(set(open_ids)),
            mean_quality=float(done["quality"].mean()) if len(done) else 0.0,  # type: ignore[arg-type]
            cost_usd=float(driver.dept_spent.sum()) / MICRO,
            run_id=plan.run_id, company=cfg.company.name, backend=cfg.runtime.backend,
            seed=self.seed, ticks=ticks, agents=directory.size, groups=len(plan.group_bounds),
            wall_seconds=round(time.perf_counter() - started, 3),
            tick_seconds=round(tick_seconds, 3),
            agent_steps_per_second=round(directory.size * ticks / max(tick_seconds, 1e-9), 1),
        )
        (self.out / "summary.json").write_text(json.dumps(summary.model_dump(), indent=2) + "\n")
        return RunResult(summary=summary, run_dir=self.out)

    def _write_resolved(self, ticks: int) -> None:
        data = self.config.model_dump(mode="json")
        data["simulation"] = {"ticks": ticks, "seed": self.seed}
        (self.out / "config.resolved.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
