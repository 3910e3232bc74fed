"""The Ray backend: agent-group and SecOps actors (and a ledger writer when groups run on
other nodes), named by role so the dashboard shows the organisation."""

from __future__ import annotations

import atexit
import contextlib
import logging
import math
import os
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import psutil
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from actors import ray_sessions
from actors.doorbell import Doorbell
from actors.group_actor import AgentGroupActor
from actors.hr_actor import DepartmentActor, HrActor
from actors.ledger_writer import LedgerWriter
from actors.memory_actor import MemoryActor
from actors.pipelines import GraphPipeline, ShmPipeline, TaskPipeline, wait
from actors.secops_actor import SecOpsActor
from actors.shm import ShmLinks
from synthorg.errors import MisuseError, RunFailure
from synthorg.interrupts import raise_if_noted
from synthorg.ledger.ledger import ShardTotals
from synthorg.sim.backend import RunPlan
from synthorg.sim.channels import Exchange
from synthorg.sim.claims import claims_file
from synthorg.sim.placement import BalancedPlacement, ClaimedPlacement, HomePlacement
from synthorg.sim.scratch import Scratch, sweep_abandoned

_dashboard: dict[str, str | None] = {"url": None}
_started: dict[str, bool] = {"here": False}  # this process started the Ray it is connected to
# A tick's batches are a few hundred KB: passing them inline over gRPC is cheaper here than a
# round trip through the shared-memory object store. Ray starts workers at nice 15, behind
# the driver and its daemons; a simulation's few group workers are the work, so they run at
# normal priority (only when this process starts Ray: a cluster keeps its own settings).
# live metrics (actors/metrics.py) reach Prometheus every 2 s rather than Ray's default 10
SYSTEM_CONFIG = {"max_direct_call_object_size": 8 * 2**20, "worker_niceness": 0,
                 "metrics_report_interval_ms": 2000}
# `pipeline: auto` uses a compiled graph up to this many groups: every group decodes every
# group's output, and compile time grows with their number (about 6 s for 8 groups here)
GRAPH_MAX_GROUPS = 8
# a compiled graph's readers spin while they wait: group actors at the driver's priority (the
# SYSTEM_CONFIG above) took its cores, and a small company's 60 ticks on a graph took 60 s
# instead of 14 here (2 cores). On a graph the groups yield, as Ray's default would have them.
GRAPH_NICENESS = 15
PLACEMENT_SECONDS = 300


def ensure_ray(address: str | None = None, dashboard: bool = False, cpus: int | None = None
               ) -> int:
    """Connect to (or start, with `cpus` CPUs: all by default) Ray; returns the cluster's
    CPU count."""
    if not ray.is_initialized():
        if address is not None:
            check_reachable(address)
        # Ray's core would print a stack and abort on a SIGTERM while Ray starts
        os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
        if address is None:
            _bind_to_loopback()
        try:
            with _callers_sigterm_kept():
                context = ray.init(address=address, include_dashboard=dashboard,
                                   num_cpus=cpus, logging_level=logging.ERROR,
                                   log_to_driver=False,
                                   _system_config=SYSTEM_CONFIG if address is None else None)
            raise_if_noted()  # a signal whose interrupt an at-fork hook swallowed meanwhile
        except BaseException:  # a signal or an error while Ray started: undo what it began
            if address is None:
                _undo_start()
            raise
        _dashboard["url"] = context.dashboard_url or None
        raylets = [p.pid for p in psutil.Process().children(recursive=True)
                   if p.name() == "raylet"]
        if raylets:  # started here: ours to clean up after, and to mark for the next run
            _started["here"] = True
            node = getattr(ray._private.worker, "_global_node", None)
            session = Path(node.get_session_dir_path()) if node is not None else None
            if session is not None:
                ray_sessions.mark(session, raylets)
                ray_sessions.sweep_dead(session.parent, keep=session)
            atexit.register(_shutdown_and_clean, raylets, session)
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


# Ray binds its gRPC, dashboard-agent and metrics ports to all interfaces unless it believes it
# runs on a desktop OS; this switch (Ray's own) makes it take 127.0.0.1 instead. A user who wants
# another host to reach a local run (a Prometheus scraper) sets it to 1; clusters use --address.
LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _bind_to_loopback() -> None:
    """Make the Ray this process starts listen on loopback only: in the processes it starts
    (they read the environment) and in this one (Ray read it at import)."""
    from ray._private import ray_constants

    os.environ.setdefault(LOOPBACK_SWITCH, "0")
    ray_constants.ENABLE_RAY_CLUSTER = os.environ[LOOPBACK_SWITCH].lower() in ("1", "true")


@contextlib.contextmanager
def _callers_sigterm_kept() -> Iterator[None]:
    """Keep the caller's SIGTERM handler while Ray starts: ray.init would put its own
    (sys.exit(15)) in place and leave it there."""
    utils = ray._private.utils
    if (threading.current_thread() is not threading.main_thread()
            or not hasattr(utils, "set_sigterm_handler")):
        yield
        return
    ours = signal.getsignal(signal.SIGTERM)
    installer = utils.set_sigterm_handler
    utils.set_sigterm_handler = lambda handler: None
    try:
        yield
    finally:
        utils.set_sigterm_handler = installer
        signal.signal(signal.SIGTERM, ours)


def _undo_start() -> None:
    """Stop a Ray this process was starting and remove the session directories it made (Ray
    names them after the driver's pid)."""
    main = threading.current_thread() is threading.main_thread()
    kept = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} if main else {}
    for sig in kept:  # shutting down is what a signal meanwhile would ask for
        signal.signal(sig, signal.SIG_IGN)
    try:
        with contextlib.suppress(Exception):
            ray.shutdown()
        # Ray's daemons may still be creating files in the session as they stop
        psutil.wait_procs(psutil.Process().children(recursive=True), timeout=3)
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)
    root = Path(ray._common.utils.get_default_ray_temp_dir())
    for session in root.glob(f"session_*_{os.getpid()}"):
        ray_sessions.remove(session, [])


REACH_SECONDS = 5.0


def check_reachable(address: str) -> None:
    """Refuse, within seconds, a cluster address that names no host or where nothing
    answers (Ray itself would wait for minutes). `auto` and `ray://` addresses are Ray's."""
    if address == "auto" or "://" in address:
        return
    host, sep, port_text = address.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise MisuseError(f"--address: '{address}' is not HOST:PORT (e.g. 10.0.0.5:6379)")
    try:
        with socket.create_connection((host.strip("[]"), int(port_text)), timeout=REACH_SECONDS):
            pass
    except socket.gaierror:
        raise MisuseError(f"--address: cannot resolve host '{host}'") from None
    except OSError as exc:
        raise MisuseError(f"--address: no Ray cluster answers at {address} "
                          f"({exc.strerror or type(exc).__name__})") from None


def _shutdown_and_clean(raylets: list[int], session: Path | None) -> None:
    """Stop the Ray we started and remove what it leaves (ray_sessions.remove). A second
    Ctrl-C meanwhile is ignored: shutting down is what it would ask for."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    ray.shutdown()  # before Ray's own exit hook: the raylet must be down first
    if any(psutil.pid_exists(pid) for pid in raylets):
        return  # not ours to clean while it runs
    if session is not None:
        ray_sessions.remove(session, raylets)


def pipeline_kind(asked: str, groups: int, cpus: float, one_machine: bool) -> str:
    """The pipeline a run uses: `auto` takes shared memory on one machine; across nodes the
    compiled graph (its waiting readers spin: no more groups than cores, at most 8) or, for
    more groups, actor calls."""
    if asked == "shm" and not one_machine:
        raise MisuseError("runtime.pipeline: shm needs every group on one machine; this Ray "
                          "cluster has several nodes (use auto, graph or tasks)")
    if asked != "auto":
        return asked
    if one_machine:
        return "shm"
    return "graph" if groups <= min(GRAPH_MAX_GROUPS, cpus) else "tasks"


def cluster_cpus() -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def one_node() -> bool:
    """Whether the cluster is this one machine (then every actor runs beside the driver)."""
    return sum(1 for n in ray.nodes() if n.get("Alive")) == 1


def started_here() -> bool:
    """Whether this process started the Ray it is connected to (its workers end with it)."""
    return _started["here"] and ray.is_initialized()


def dashboard_url() -> str | None:
    return _dashboard["url"]


class RayBackend:
    """Group actors (hosting agents, routing departments' tasks), SecOps and the ledger writer;
    ticks flow through the groups in a pipeline (actors/pipelines.py) without the driver
    touching the exchanged arrays."""

    def __init__(self, plan: RunPlan) -> None:
        d, bounds = plan.directory, list(plan.group_bounds)
        # executors holding things outside the run (sandbox containers, MCP servers)
        self._holds_outside = any(e.kind != "delay" for e in plan.config.executors.values())
        ns = f"synthorg-{plan.run_id}"
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        cfg_ref, dir_ref = ray.put(plan.config), ray.put(d)
        # on one machine, groups write their ledger parts themselves, hand departments'
        # routing out among themselves as they free up and ring the driver's doorbell
        alone = one_node()
        cpus = ray.cluster_resources().get("CPU", 1)
        kind = pipeline_kind(plan.config.runtime.pipeline, len(bounds), cpus, alone)
        # files shared on this machine; first remove those of runs whose driver was killed
        sweep_abandoned()
        self.scratch = Scratch(plan.run_id)
        self.claims = claims_file(self.scratch.path("claims")) if len(bounds) > 1 and alone else None
        # the bell only pays the graph when the groups keep every core busy: a FIFO write
        # wakes the driver on the ringing group's core (a "sync" wake-up) even when another
        # core is idle; the shm pipeline has no other way to hear of a finished tick
        ring = kind == "shm" or (alone and kind == "graph" and len(bounds) >= cpus)
        # on the shm pipeline one group rings for all (actors/group_actor.py: RINGER)
        ringers = 1 if kind == "shm" else len(bounds)
        self.bell = Doorbell(self.scratch.path("bell"), ringers) if ring else None
        self.shm = ShmLinks(self.scratch.path("shm"), len(bounds)) if kind == "shm" else None
        self.writer = None if alone else LedgerWriter.options(  # type: ignore[attr-defined]
            name="ledger", namespace=ns, scheduling_strategy=here).remote(str(plan.run_dir))
        # beside the driver: it keeps the parked approvals in the run directory
        self.secops = SecOpsActor.options(  # type: ignore[attr-defined]
            name="secops", namespace=ns, scheduling_strategy=here).remote(
                cfg_ref, dir_ref, int(plan.key), str(plan.run_dir),
                str(plan.approvals_record) if plan.approvals_record else None, plan.cassette)
        # long-term memory: shards beside the driver, whose run directory holds their stores
        memory = plan.config.memory
        self.memory = [
            MemoryActor.options(  # type: ignore[attr-defined]
                name=f"memory:{k}", namespace=ns, scheduling_strategy=here).remote(
                    cfg_ref, dir_ref, str(plan.run_dir), k, int(plan.key), plan.cassette)
            for k in range(memory.shards if memory.enabled else 0)]
        # careers: a department actor per department and the HR/metrics actor, which reviews
        # between ticks from the rows the groups hand it
        self.departments = [
            DepartmentActor.options(  # type: ignore[attr-defined]
                name=f"dept:{dept}", namespace=ns, scheduling_strategy=here).remote(cfg_ref, k)
            for k, dept in enumerate(d.dept_ids)] if plan.config.hr.enabled else []
        self.hr = HrActor.options(  # type: ignore[attr-defined]
            name="hr", namespace=ns, scheduling_strategy=here).remote(
                cfg_ref, dir_ref, int(plan.key), len(bounds), self.departments,
                str(plan.run_dir), str(plan.approvals_record) if plan.approvals_record else None
        ) if plan.config.hr.enabled else None
        # the run's groups share its `workers` CPUs (a group steps on one core at most; Ray
        # takes fractions below one): a cluster can then hold as many runs as it has CPUs for
        share = min(1.0, math.floor(plan.workers / len(bounds) * 1e4) / 1e4)
        self.groups = [
            AgentGroupActor.options(  # type: ignore[attr-defined]
                name=f"agent-group:{i}", namespace=ns, scheduling_strategy="SPREAD",
                num_cpus=share,
            ).remote(cfg_ref, dir_ref, int(plan.key), plan.seed, bounds, i, self.secops,
                     self.writer,
                     str(plan.run_dir) if alone else None,
                     str(self.claims) if self.claims else None,
                     str(self.bell.path) if self.bell else None,
                     str(self.shm.prefix) if self.shm else None,
                     plan.executors.run_key, str(plan.run_dir), self.memory, self.hr,
                     plan.executors.cassette)
            for i in range(len(bounds))
        ]
        # asked now: while the shm pipeline runs, a group answers no other call
        self._pids = self._placed([g.pid.remote() for g in self.groups], share)
        # the careers actors up before the first tick: processes still starting would take
        # cores from the groups' first ticks
        wait([a.pid.remote() for a in [*self.departments, *([self.hr] if self.hr else [])]], -1)
        initial = Exchange.initial(bounds, len(d.dept_ids))
        # across nodes, the graph reports each group's step times, so routing can follow the
        # faster cores
        placement = (ClaimedPlacement(d, bounds) if self.claims
                     else BalancedPlacement(d, bounds) if kind == "graph"
                     else HomePlacement(d, bounds))
        self.pipeline: ShmPipeline | GraphPipeline | TaskPipeline
        if self.shm and self.bell:
            self.pipeline = ShmPipeline(self.groups, initial, placement, self.shm, self.bell)
        elif kind == "graph":
            wait([g.yield_priority.remote(GRAPH_NICENESS) for g in self.groups], -1)
            self.pipeline = GraphPipeline(self.groups, initial, placement, self.bell)
        else:
            self.pipeline = TaskPipeline(self.groups, initial, placement)

    def _placed(self, pids: list[ray.ObjectRef], share: float) -> list[int]:
        """The groups' process ids, once Ray has placed them all; a run that cannot be placed
        (its CPUs are taken by other runs) fails instead of waiting for ever."""
        ready, _ = ray.wait(pids, num_returns=len(pids), timeout=PLACEMENT_SECONDS)
        if len(ready) < len(pids):
            self.close()
            raise RunFailure(f"{len(pids) - len(ready)} of {len(pids)} group actors (each "
                             f"{share} CPU) were not placed within {PLACEMENT_SECONDS} s: the "
                             f"cluster's free CPUs are {ray.available_resources().get('CPU', 0)}"
                             " (lower runtime.workers, or wait for other runs)")
        return wait(pids, -1)

    def tick(self, tick: int) -> None:
        self.pipeline.submit(tick)

    def settle(self) -> Exchange:
        return self.pipeline.settle()

    def snapshot(self) -> list[dict[str, object]]:
        return wait([g.state_dict.remote() for g in self.groups], -1)

    def restore(self, groups: list[dict[str, object]], exchange: Exchange,
                secops: dict[str, int], memory: list[dict[str, object]],
                hr: dict[str, object]) -> None:
        if len(memory) != len(self.memory):
            raise ValueError(f"{len(memory)} memory shards in the checkpoint, "
                             f"not {len(self.memory)}")
        careers = []
        if self.hr is not None:
            careers = [self.hr.load.remote(hr["office"])] + [
                d.load.remote(s) for d, s in zip(self.departments, hr["departments"],  # type: ignore[call-overload]
                                                 strict=True)]
        wait([g.load_state.remote(st) for g, st in zip(self.groups, groups, strict=True)]
             + [self.secops.restore.remote(secops)] + careers
             + [m.load.remote(data) for m, data in zip(self.memory, memory, strict=True)], -1)
        self.pipeline.restore(exchange)

    def hr_state(self) -> dict[str, object]:
        if self.hr is None:
            return {}
        office, *depts = wait([self.hr.state.remote()]
                              + [d.state.remote() for d in self.departments], -1)
        return {"office": office, "departments": depts}

    def org_decisions(self) -> list[list[float]]:
        return wait([self.hr.org_decisions.remote()], -1)[0] if self.hr is not None else []

    def hr_scores(self) -> pl.DataFrame | None:
        return wait([self.hr.scores.remote()], -1)[0] if self.hr is not None else None

    def secops_state(self) -> dict[str, int]:
        return wait([self.secops.state.remote()], -1)[0]

    def memory_state(self) -> list[dict[str, object]]:
        return wait([m.export.remote() for m in self.memory], -1)

    def memory_facts(self) -> list[np.ndarray]:
        return wait([m.facts_stats.remote() for m in self.memory], -1)

    def dept_spent(self) -> np.ndarray:
        running = wait([self.groups[0].dept_spent.remote()], -1)[0]
        return self.settle().dept_spent(running)

    def shard_totals(self) -> list[ShardTotals]:
        return wait([g.totals.remote() for g in self.groups], -1)

    def agent_rows(self) -> list[dict[str, np.ndarray]]:
        return wait([g.agent_rows.remote() for g in self.groups], -1)

    def open_tasks(self) -> list[tuple[int, int]]:
        return [tuple(t) for held in wait([g.open_tasks.remote() for g in self.groups], -1)
                for t in held]

    def group_pids(self) -> list[int]:
        return list(self._pids)

    def secops_pid(self) -> int:
        return int(wait([self.secops.pid.remote()], -1)[0])

    def close(self) -> None:
        pipeline = getattr(self, "pipeline", None)  # none yet if the groups were never placed
        if pipeline is not None:
            pipeline.close()
        if self._holds_outside:  # executors' containers: let go of them while groups answer
            with contextlib.suppress(ray.exceptions.RayError):  # (a lost group cannot: the
                ray.wait([g.close.remote() for g in self.groups],  # driver removes them)
                         num_returns=len(self.groups), timeout=5)
        if self.memory:  # their stores let go of their files
            with contextlib.suppress(ray.exceptions.RayError):
                ray.wait([m.close.remote() for m in self.memory],
                         num_returns=len(self.memory), timeout=10)
        for handle in [*self.groups, self.secops, self.writer, *self.memory,
                       getattr(self, "hr", None), *getattr(self, "departments", [])]:
            with contextlib.suppress(ray.exceptions.RayError):  # already gone
                if handle is not None:
                    ray.kill(handle)
        if self.bell:
            self.bell.close()
        self.scratch.remove()  # the claims, the bell and the shm links with it
