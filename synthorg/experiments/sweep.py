"""`synthorg sweep`: an experiment's runs as Ray tasks, rows streamed to DIR as they finish.

Each run is a task sized by what it needs (`resources`, memory from the headcount), on the
local Ray or a cluster; at most a few tasks per CPU are submitted at a time, so a sweep of
100,000 runs does not put 100,000 configs in the object store. A run that raises is a row
with its error, not a failed sweep.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthorg import interrupts
from synthorg.config.models import CompanyConfig
from synthorg.errors import RunDirBusy
from synthorg.experiments import rows as store
from synthorg.experiments.points import Run
from synthorg.experiments.spec import ExperimentSpec, Resources

# what a run reserves beyond its CPUs: a process with its imports, plus state per agent
BASE_MEMORY_MB, MEMORY_MB_PER_AGENT = 600, 0.15
# tasks submitted at a time: enough to keep every CPU busy, and for an autoscaling cluster
# to see the demand, without a config per run of a huge sweep in the object store
IN_FLIGHT_PER_CPU, MIN_IN_FLIGHT = 2, 32
# a run directory still held by a worker of an interrupted sweep is waited for this many s
BUSY_TRIES = 60
CANCEL_WAIT_S = 30.0
# runs.parquet is rebuilt from the row files at most this often (and when the sweep ends):
# the row files are the record, the tables a view that must not cost O(runs) per run
TABLES_EVERY_S = 2.0
WAIT_S = 0.2  # how often the wait loop looks for an interrupt


@dataclass
class SweepReport:
    planned: int
    skipped: int  # finished before this command
    done: int = 0
    failed: int = 0
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False

    @property
    def left(self) -> int:
        return self.planned - self.skipped - self.done - self.failed


def task_options(resources: Resources, config: CompanyConfig) -> dict[str, Any]:
    memory_mb = resources.memory_mb or int(BASE_MEMORY_MB
                                           + MEMORY_MB_PER_AGENT * config.agent_count())
    # a lost worker or node (OOM kill, preemption) gets one more try; an error in the run
    # does not (Ray retries exceptions only when asked)
    return {"num_cpus": resources.cpus, "memory": memory_mb * 1024 * 1024, "max_retries": 1}


def run_one(config: CompanyConfig, seed: int, run_dir: str) -> dict[str, Any]:
    """One run where Ray placed it; its summary, where it ran and how long it took. A node
    that cannot write the sweep's directory (a cluster worker without the head's volume)
    keeps the run's files in its own temp directory; the row names node and path."""
    import ray

    from synthorg.sim.simulation import Simulation

    started = time.perf_counter()
    out = Path(run_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except PermissionError:  # a node without the driver's volume: the run's files stay here
        out = Path(tempfile.gettempdir()) / "synthorg-sweeps" / out.name
    for attempt in range(BUSY_TRIES):
        try:
            result = Simulation(config, seed=seed, out=out, overwrite=True).run()
            break
        except RunDirBusy:
            # the same run of an interrupted or killed sweep, in a worker still going down
            if attempt == BUSY_TRIES - 1:
                raise
            time.sleep(1.0)
    return {"summary": result.summary.model_dump(), "wall_s": round(time.perf_counter() - started, 3),
            "node": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(),
            "run_dir": str(out)}


def _row(run: Run, run_dir: Path, outcome: dict[str, Any] | None, error: str | None
         ) -> dict[str, Any]:
    row: dict[str, Any] = {"run_key": run.key, "point": run.point, "seed": run.seed,
                           "status": "ok" if error is None else "failed", "error": error,
                           "run_dir": str(run_dir), "params": run.params}
    if outcome is not None:
        row.update(outcome)
    return row


def _error_of(exc: BaseException) -> str:
    """The cause's last line (a task error wraps the run's own exception and traceback)."""
    cause = getattr(exc, "cause", None) or exc
    text = "".join(traceback.format_exception_only(type(cause), cause)).strip()
    return text.splitlines()[-1][:2000] if text else type(cause).__name__


def _stop_runs(pending: dict[Any, tuple[Run, Path]], owns_ray: bool) -> None:
    """Return once the runs have stopped, so none still writes its directory when the same
    command starts it again (a second Ctrl-C stops waiting). Ray may be going down with the
    same Ctrl-C: a cancel that fails is no matter, the rows already written are the record."""
    import ray

    if owns_ray:  # the runs end with the Ray this command started: no cancel, whose race with
        # a run finishing at that moment aborts Ray's core worker (a RAY_CHECK in its task
        # manager: "Tried to complete task that was not pending")
        with contextlib.suppress(KeyboardInterrupt, Exception):
            ray.shutdown()
        return
    with contextlib.suppress(KeyboardInterrupt, Exception):
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
    with contextlib.suppress(KeyboardInterrupt, Exception):
        ray.wait(list(pending), num_returns=len(pending), timeout=CANCEL_WAIT_S)


def sweep(spec: ExperimentSpec, runs: list[Run], out: Path, retry_failed: bool = False,
          on_change: Callable[[SweepReport], None] | None = None, owns_ray: bool = False
          ) -> SweepReport:
    """Run what is not finished in `out`; Ray must be initialised. Returns the counts.
    `owns_ray`: this process started Ray, so an interrupt stops it (and the runs with it)."""
    import ray

    params = list(dict.fromkeys(p for r in runs for p in r.params))
    with store.owned(out, spec.name, [r.key for r in runs]):
        kept, notes = store.finished(out, {r.key for r in runs}, retry_failed)
        todo = [r for r in runs if r.key not in kept]
        report = SweepReport(planned=len(runs), skipped=len(kept), notes=notes)
        all_rows = dict(kept)
        store.write_tables(out, list(all_rows.values()), params)
        written = time.monotonic()
        remote = ray.remote(run_one)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        limit = max(MIN_IN_FLIGHT, IN_FLIGHT_PER_CPU * cpus)
        pending: dict[Any, tuple[Run, Path]] = {}
        queue = list(reversed(todo))
        if on_change is not None:
            on_change(report)
        with interrupts.as_flag() as stop:
            try:
                while (queue or pending) and not stop.is_set():
                    while queue and len(pending) < limit:
                        run = queue.pop()
                        run_dir = (out / "runs" / run.key).resolve()
                        ref = remote.options(**task_options(spec.resources, run.config)).remote(
                            run.config, run.seed, str(run_dir))
                        pending[ref] = (run, run_dir)
                    # (a timeout, so an interrupt is seen between waits)
                    ready, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_S)
                    for ref in ready:
                        run, run_dir = pending.pop(ref)
                        try:
                            row = _row(run, run_dir, ray.get(ref), None)
                            report.done += 1
                        except Exception as exc:  # the run's failure is its row, not the sweep's
                            row = _row(run, run_dir, None, _error_of(exc))
                            report.failed += 1
                        store.save_row(out, row)
                        all_rows[run.key] = row
                        if time.monotonic() - written >= TABLES_EVERY_S:
                            store.write_tables(out, list(all_rows.values()), params)
                            written = time.monotonic()
                        if on_change is not None:
                            on_change(report)
            except KeyboardInterrupt:  # a second Ctrl-C, or one before the flag took over
                stop.set()
            if stop.is_set() and (queue or pending):
                report.interrupted = True
                _stop_runs(pending, owns_ray)
        with contextlib.suppress(KeyboardInterrupt):  # (the next command rebuilds them from rows)
            store.write_tables(out, list(all_rows.values()), params)
        return report
