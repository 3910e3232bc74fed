"""`Simulation(config, seed=...).run(ticks=...)`: the public entry point of one run.

The run loop owns reliability: checkpoints every `runtime.checkpoint_every` ticks, rollback to
the last good state when an actor's process dies (recorded as an incident), and a checkpoint
on SIGINT/SIGTERM so `synthorg resume` continues the run.
"""

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

import numpy as np
import polars as pl
import yaml

from synthorg import interrupts
from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import EventKind
from synthorg.domain.records import EVENT_DTYPE, SYSTEM_ACTOR
from synthorg.domain.rng import root_key
from synthorg.errors import ActorCrashed, Interrupted, MisuseError, RunFailure
from synthorg.hr.teleology import teleological_metrics
from synthorg.ledger.ledger import PARTS_DIR, combine, part_files, record_incident
from synthorg.ledger.tables import (
    timeseries_totals,
    write_actions,
    write_agents,
    write_events,
    write_tasks,
    write_timeseries,
)
from synthorg.llm.cassette import CassetteSpec
from synthorg.llm.selection import llm_agents
from synthorg.memory.facts import figures as memory_facts_figures
from synthorg.org.decisions import OrgDecision, decisions_of
from synthorg.org.directory import MICRO, OrgDirectory
from synthorg.org.timeline import OrgTimeline
from synthorg.sim import checkpoint as ckpt
from synthorg.sim import manifest, provenance
from synthorg.sim.backend import Backend, RunPlan, expected_work, group_bounds, local_cpus
from synthorg.sim.driver import Driver
from synthorg.sim.local import LocalBackend
from synthorg.sim.rundir import owned
from synthorg.sim.summary import (
    Summary,
    live_figures,
    llm_figures,
    outcomes,
    security_figures,
    summarise,
)

# Backends outside the domain package are found by name so synthorg/ never imports actors/.
BACKENDS = {"ray": "actors.ray_backend:RayBackend"}
MAX_RECOVERIES = 5
# what a finished run leaves in its directory (and lists in its manifest)
FORK_FILE, PARENT_CONFIG = "fork.json", "parent.config.resolved.yaml"
OUTPUTS = ("summary.json", "config.resolved.yaml", "provenance.json", "events.parquet",
           "tasks.parquet", "agents.parquet", "actions.parquet", "timeseries.parquet")

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
                 out: str | Path | None = None, address: str | None = None,
                 overwrite: bool = False, approvals_record: Path | None = None,
                 cassette: CassetteSpec | None = None) -> None:
        """overwrite: replace the results of another run found in `out` (else refused).
        approvals_record: the approvals store of a human-mode run being replayed (its
        decisions are given instead of asking a person)."""
        self.config = config
        self.approvals_record = approvals_record
        self.cassette = cassette  # LLM mode: record the model's replies, or replay them
        self.overwrite = overwrite
        self.seed = config.simulation.seed if seed is None else seed
        self.out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="synthorg-"))
        self.address = address
        self.backend: Backend | None = None  # live during run(); tests use it to inject faults
        self._driver: Driver | None = None
        self.notes: list[str] = []  # what a user should know about how the run went
        # fault injection for tests: called with "start", "capture" and "gather", the moments
        # a run talks to every actor outside a tick
        self.fault_hook: Callable[[str], None] | None = None

    # ---- entry points --------------------------------------------------------------------
    def run(self, ticks: int | None = None, on_tick: TickCallback | None = None) -> RunResult:
        with owned(self.out, fresh=True, overwrite=self.overwrite):
            return self._run(ticks, on_tick, start=None)

    def resume(self, on_tick: TickCallback | None = None, ticks: int | None = None
               ) -> RunResult:
        """Continue this run directory from its latest checkpoint (its ledger parts checked
        against it first) to `ticks`: by default the ticks the run was started with."""
        with owned(self.out, fresh=False):
            start = ckpt.read(ckpt.latest(self.out))
            ckpt.verify_parts(self.out, start)
            return self._run(ticks or self._recorded_ticks(), on_tick, start=start)

    def live_figures(self) -> dict[str, float]:
        """While the run goes (from `on_tick`): summary fields known so far (LIVE_FIELDS);
        reading them changes nothing in the run."""
        if self.backend is None or self._driver is None:
            raise MisuseError("live_figures: no run in progress")
        totals = combine(self.backend.shard_totals(), self._driver.tick)
        return live_figures(totals, int(self.backend.dept_spent().sum()))

    def _recorded_ticks(self) -> int | None:
        """The ticks this run directory's run was started with (config.resolved.yaml)."""
        from synthorg.config.loader import load_config

        resolved = self.out / "config.resolved.yaml"
        return load_config(resolved).simulation.ticks if resolved.is_file() else None

    def fork(self, parent: Path, at_tick: int, ticks: int | None = None,
             on_tick: TickCallback | None = None) -> RunResult:
        """A new run from the parent's checkpoint at `at_tick`, with this run's config."""
        if ticks is not None and ticks <= at_tick:
            raise MisuseError(f"a fork at tick {at_tick} needs more than {at_tick} ticks")
        start = ckpt.read(ckpt.checkpoint_path(parent, at_tick))
        ckpt.verify_parts(parent, start)
        with owned(self.out, fresh=True, overwrite=self.overwrite):
            parts = self.out / PARTS_DIR
            parts.mkdir(parents=True)
            for name in ckpt.part_names(start):  # the parent's, up to the fork; no incidents
                shutil.copy2(parent / PARTS_DIR / name, parts / name)
            # what replay needs to rebuild the parent's ledger up to the fork
            shutil.copy2(parent / "config.resolved.yaml", self.out / PARENT_CONFIG)
            (self.out / FORK_FILE).write_text(json.dumps(
                {"parent": str(parent.resolve()), "at_tick": at_tick,
                 "parent_seed": start.seed}, indent=2) + "\n")
            return self._run(ticks, on_tick, start=start, forked=True)

    # ---- the loop --------------------------------------------------------------------------
    def _run(self, ticks: int | None, on_tick: TickCallback | None, start: ckpt.Checkpoint | None,
             forked: bool = False) -> RunResult:
        started = time.perf_counter()
        cfg = self.config
        ticks = ticks or cfg.simulation.ticks
        self.out.mkdir(parents=True, exist_ok=True)
        directory = OrgDirectory.from_config(cfg)
        backend_cls, workers = self._backend_class()
        bounds = group_bounds(directory.size, cfg.runtime.agents_per_actor, workers,
                              expected_work(cfg, directory))
        digest = config_digest_of(cfg)
        if start is not None:
            self._check_compatible(start, directory, digest, forked)
            bounds = start.bounds
        plan = RunPlan(config=cfg, directory=directory, key=root_key(self.seed), seed=self.seed,
                       run_dir=self.out, run_id=uuid.uuid4().hex[:12], group_bounds=bounds,
                       workers=workers, approvals_record=self.approvals_record,
                       cassette=self.cassette)
        self._write_resolved(ticks)
        made = provenance.current(digest)
        before = provenance.read(self.out) if start is not None and not forked else None
        if before is not None and before.differences(made):
            self.notes.append(f"resuming with {', '.join(before.differences(made))}: the ledger "
                              "may differ from that of an uninterrupted run")
        provenance.write(self.out, made)
        every = cfg.runtime.checkpoint_every
        self._incidents_at_start = 0
        sandboxed = any(e.kind == "sandbox" for e in cfg.executors.values())
        finished = False
        if sandboxed:
            _sandboxes_ready()
        backend, driver, good = self._begin(plan, backend_cls, start, digest, bounds)
        self._driver = driver
        incidents = self._incidents_at_start
        try:
            tick_seconds = 0.0
            with interrupts.as_flag() as stop:
                while True:  # until the run is gathered; a lost actor rolls it back to `good`
                    try:
                        while driver.tick < ticks:
                            t0 = time.perf_counter()
                            driver.next_tick()
                            tick_seconds += time.perf_counter() - t0
                            if every and driver.tick % every == 0 and driver.tick < ticks:
                                state = self._capture(driver, backend, digest, bounds)
                                good = ckpt.encode(state)
                                ckpt.write(self.out, state)
                            if on_tick is not None:
                                on_tick(driver.tick, ticks)
                            if stop.is_set() and driver.tick < ticks:
                                ckpt.write(self.out, self._capture(driver, backend, digest, bounds))
                                raise Interrupted(str(self.out), driver.tick)
                        t0 = time.perf_counter()
                        self._moment("gather")
                        exchange = backend.settle()  # the last ticks may still be running
                        tick_seconds += time.perf_counter() - t0
                        totals = combine(backend.shard_totals(), driver.tick)
                        open_tasks = backend.open_tasks() + exchange.tasks_in_flight()
                        agent_rows = backend.agent_rows()
                        spent = backend.dept_spent()
                        careers = (decisions_of(backend.org_decisions()), backend.hr_scores())
                        facts = backend.memory_facts()
                        finished = True
                        break
                    except ActorCrashed as first:
                        crash = first
                        while True:  # a recovery can lose an actor too
                            incidents += 1
                            if incidents > MAX_RECOVERIES:
                                raise RunFailure(f"giving up after {MAX_RECOVERIES} "
                                                 f"recoveries: {crash}") from crash
                            try:
                                backend, driver = self._recover(plan, backend, good,
                                                                driver.tick, str(crash))
                                self._driver = driver
                                break
                            except ActorCrashed as again:
                                crash = again
        finally:
            self.backend.close()  # type: ignore[union-attr]
            self.backend = None
            if sandboxed:  # whatever became of the processes that made them
                from sandbox.lifecycle import remove

                remove(plan.executors.run_key, keep_workspaces=not finished)  # for resume
        return self._finish(plan, totals, open_tasks, agent_rows, spent, ticks, started,
                            tick_seconds, incidents, careers, facts, keep_parts=bool(every))

    def _begin(self, plan: RunPlan, backend_cls: Callable[[RunPlan], Backend],
               start: ckpt.Checkpoint | None, digest: str, bounds: tuple[tuple[int, int], ...]
               ) -> tuple[Backend, Driver, bytes]:
        """A backend holding the start state, and that state encoded (the first rollback
        point); a worker lost meanwhile means starting the backend again."""
        for attempt in range(MAX_RECOVERIES + 1):
            backend = self.backend = backend_cls(plan)
            driver = Driver(backend)
            try:
                self._moment("start")
                if start is not None:
                    backend.restore(start.groups, start.exchange, start.secops, start.memory,
                                    start.hr)
                    driver.load_state(start.driver)
                return backend, driver, ckpt.encode(self._capture(driver, backend, digest, bounds))
            except ActorCrashed as crash:
                self._incidents_at_start += 1
                self._record_incident(start.tick if start is not None else 0,
                                      start.tick if start is not None else 0, str(crash))
                backend.close()
                self.backend = None
                if attempt == MAX_RECOVERIES:
                    raise RunFailure(f"could not start the run's actors: {crash}") from crash
        raise AssertionError("unreachable")

    def _recover(self, plan: RunPlan, backend: Backend, good: bytes, tick: int, reason: str
                 ) -> tuple[Backend, Driver]:
        """Rebuild every actor from the last good state and record the incident."""
        self._record_incident(tick, ckpt.decode(good, "in-memory checkpoint").tick, reason)
        backend.close()
        state = ckpt.decode(good, "in-memory checkpoint")
        backend_cls, _ = self._backend_class()
        backend = self.backend = backend_cls(plan)
        backend.restore(state.groups, state.exchange, state.secops, state.memory, state.hr)
        driver = Driver(backend)
        driver.load_state(state.driver)
        return backend, driver

    def _record_incident(self, tick: int, back_to: int, reason: str) -> None:
        """A lost actor or a failing executor at `tick`, the run rolled back to `back_to` (not
        hashed)."""
        row = np.zeros(1, dtype=EVENT_DTYPE)
        row[0] = (tick, SYSTEM_ACTOR, 0, EventKind.incident, -1, back_to, 0.0, 0)
        record_incident(self.out, tick, row, reason)

    def _moment(self, name: str) -> None:
        if self.fault_hook is not None:
            self.fault_hook(name)

    def _capture(self, driver: Driver, backend: Backend, digest: str,
                 bounds: tuple[tuple[int, int], ...]) -> ckpt.Checkpoint:
        self._moment("capture")
        exchange = backend.settle()
        groups = backend.snapshot()
        return ckpt.Checkpoint(tick=driver.tick, seed=self.seed, config_digest=digest,
                               bounds=bounds, driver=driver.state_dict(), groups=groups,
                               exchange=exchange, secops=backend.secops_state(),
                               memory=backend.memory_state(), hr=backend.hr_state())

    def _check_compatible(self, start: ckpt.Checkpoint, directory: OrgDirectory, digest: str,
                          forked: bool) -> None:
        if start.seed != self.seed:
            raise ckpt.CheckpointError(f"checkpoint is for seed {start.seed}, not {self.seed}")
        if not forked and start.config_digest != digest:
            raise ckpt.CheckpointError("checkpoint was written for a different config")
        if start.bounds[-1][1] != directory.size:
            raise MisuseError(f"checkpoint holds {start.bounds[-1][1]} agent slots, the config "
                              f"{directory.size}: a fork may change policies and the scenario "
                              "after its fork tick, not the org chart or the number of hires")

    def _backend_class(self) -> tuple[Callable[[RunPlan], Backend], int]:
        if self.config.runtime.backend == "ray":
            module, _, name = BACKENDS["ray"].partition(":")
            backend_mod = importlib.import_module(module)
            backend_mod.ensure_ray(self.address)
            factory: Callable[[RunPlan], Backend] = getattr(backend_mod, name)
            # this run's share of the cluster, not the whole cluster: many runs can share it
            asked = self.config.runtime.workers
            workers = local_cpus() if asked == "auto" else asked
            cluster = backend_mod.cluster_cpus()
            if asked != "auto" and workers > cluster:
                raise MisuseError(f"runtime.workers: {workers} CPUs asked, the Ray cluster has "
                                  f"{cluster}")
            return factory, min(workers, cluster)
        workers = 1 if self.config.runtime.agents_per_actor == "auto" else local_cpus()
        return LocalBackend, workers

    def _finish(self, plan: RunPlan, totals: object, open_tasks: list[tuple[int, int]],
                agent_rows: list[dict[str, np.ndarray]], spent: np.ndarray, ticks: int,
                started: float, tick_seconds: float, incidents: int,
                careers: tuple[list[OrgDecision], pl.DataFrame | None],
                facts: list[np.ndarray], keep_parts: bool) -> RunResult:
        directory = plan.directory
        parts = self.out / PARTS_DIR
        write_events(self.out, part_files(parts, "events") + part_files(parts, "incidents"),
                     directory, self.config, part_files(parts, "created"))
        tasks = write_tasks(self.out, part_files(parts, "created"), part_files(parts, "results"),
                            directory, dict(open_tasks))
        figures = outcomes(tasks, *timeseries_totals(part_files(parts, "timeseries")))
        figures.update(security_figures(self.out / "events.parquet"))
        figures.update(memory_facts_figures(facts))
        decisions, scores = careers
        final = OrgTimeline(self.config, directory, [d for d in decisions if d.tick < ticks])
        final.advance(ticks - 1)
        teleo_agents, teleology = teleological_metrics(self.out)
        write_agents(self.out, agent_rows, final.directory, scores, teleo_agents,
                     llm_agents(self.config, final.directory, plan.key))
        write_actions(self.out, part_files(parts, "actions"), directory)
        figures.update(llm_figures(self.out / "actions.parquet",
                                   self.config.policies.approvals.mode == "llm"))
        write_timeseries(self.out, part_files(parts, "timeseries"), self.out / "tasks.parquet",
                         directory)
        if not keep_parts:  # forks and resumes need them; plain runs do not
            shutil.rmtree(parts, ignore_errors=True)
        done = tasks.filter(pl.col("status") == "completed")
        summary = summarise(
            totals,  # type: ignore[arg-type]
            tasks_open=len(dict(open_tasks)),
            mean_quality=float(done["quality"].mean()) if len(done) else 0.0,  # type: ignore[arg-type]
            cost_usd=float(spent.sum()) / MICRO, **figures,
            run_id=plan.run_id, company=self.config.company.name, **self._fork_fields(),
            mode="llm" if self.config.llm.enabled else "deterministic",
            teleology=teleology,
            backend=self.config.runtime.backend, seed=self.seed, ticks=ticks,
            agents=self.config.agent_count(), headcount_end=final.directory.headcount(),
            groups=len(plan.group_bounds), incidents=incidents,
            wall_seconds=round(time.perf_counter() - started, 3),
            tick_seconds=round(tick_seconds, 3),
            agent_steps_per_second=round(self.config.agent_count() * ticks
                                         / max(tick_seconds, 1e-9), 1),
        )
        (self.out / "summary.json").write_text(json.dumps(summary.model_dump(), indent=2) + "\n")
        forked = [self.out / n for n in (FORK_FILE, PARENT_CONFIG) if (self.out / n).is_file()]
        manifest.record(self.out, [self.out / name for name in OUTPUTS] + forked)
        return RunResult(summary=summary, run_dir=self.out)

    def _fork_fields(self) -> dict[str, object]:
        try:
            fork = json.loads((self.out / FORK_FILE).read_text())
            return {"forked_from": str(fork["parent"]), "fork_tick": int(fork["at_tick"])}
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    def _write_resolved(self, ticks: int) -> None:
        data = self.config.model_dump(mode="json")
        data["simulation"] = {"ticks": ticks, "seed": self.seed}
        (self.out / "config.resolved.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def config_digest_of(config: CompanyConfig) -> str:
    """The config's digest, as checkpoints and provenance record it (seed and ticks apart)."""
    return ckpt.config_digest(json.dumps(config.model_dump(mode="json", exclude={"simulation"}),
                                         sort_keys=True))


def _sandboxes_ready() -> None:
    """A config that runs tools in sandboxes stops at start without Docker: never on the host."""
    from sandbox.backend import SandboxUnavailable
    from sandbox.lifecycle import ready

    try:
        ready()
    except SandboxUnavailable as exc:
        raise MisuseError(str(exc)) from None


