"""How much more several busy processes get done on this machine than one, on the
simulation itself: the ceiling of any ray/local ratio here, whatever the code.

Each round times a `local` run of `--agents` agents alone, then `--processes` such runs at
once (separate processes, set up first and released together), then one alone again, each
timed from the end of its first tick to the end of its last:

    speed-up = processes * (mean time alone) / (slowest time together)

It is about `processes` on as many idle real cores; less where virtual CPUs share a
physical core or the host is busy. Read `synthorg bench`'s ray/local ratio against it: the
ray backend's groups are such processes, plus the hand-over and the fixed cost of a step
that benchmarks/instructions.py counts.

With `--lockstep`, each round also times the runs together in lockstep: after every tick
each waits until all have finished that tick (a FIFO each, as the ray backend's groups
wait for each other's outputs, but exchanging nothing). Each tick then takes as long as the
slowest process's, so every moment the host takes a virtual CPU away stalls them all; the
gap between the two speed-ups is what that costs on this machine, before any code of ours
runs between ticks.

With `--backends`, each round then runs the ray and the local backend at
`--backend-agents` agents, one after the other, as `synthorg bench` does: each round's
ray/local ratio stands beside the speed-up the machine gave seconds before, and their
quotient is the share of the machine's two-process capacity the ray backend gets (its
median, over rounds, is steadier than either figure: both move with the host).

    .venv/bin/python benchmarks/machine_capacity.py [--agents 5000] [--rounds 10] [--lockstep]
        [--backends [--backend-agents 10000]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TICKS = 50


class Lockstep:
    """One process's side of the per-tick meeting: a FIFO each, in `meet`; after every
    tick a process posts a byte to every other FIFO, then reads one from each other
    process off its own."""

    def __init__(self, meet: Path, me: int, processes: int) -> None:
        self._own = os.open(meet / f"box{me}", os.O_RDWR)
        self._others = [os.open(meet / f"box{p}", os.O_RDWR)
                        for p in range(processes) if p != me]

    def meet(self) -> None:
        for fd in self._others:
            os.write(fd, b".")
        needed = len(self._others)
        while needed:
            needed -= len(os.read(self._own, needed))


def child(agents: int, meet: Path | None, me: int, processes: int) -> None:
    """Set up and warm a local run, say so, wait for the go line, then time its ticks from
    the end of the first to the end of the last (waits for the others included)."""
    from synthorg.bench import MEGACORP, scaled
    from synthorg.config.loader import load_config
    from synthorg.sim.simulation import Simulation

    cfg = scaled(load_config(MEGACORP), agents, "local")
    lockstep = Lockstep(meet, me, processes) if meet else None
    ended: list[float] = []

    def after_tick(done: int, total: int) -> None:
        if lockstep:
            lockstep.meet()
        ended.append(time.perf_counter())

    with tempfile.TemporaryDirectory(prefix="synthorg-capacity-") as out:
        Simulation(cfg, seed=1, out=f"{out}/warm").run(ticks=2)  # imports, caches
        print("ready", flush=True)
        sys.stdin.readline()
        Simulation(cfg, seed=1, out=f"{out}/run").run(ticks=TICKS, on_tick=after_tick)
    print(ended[-1] - ended[0], flush=True)


def tick_seconds(processes: int, agents: int, lockstep: bool = False) -> list[float]:
    """Each process's seconds over ticks 2..TICKS, all released at once (in lockstep:
    meeting after every tick)."""
    if not lockstep:
        return _released(processes, agents, None)
    with tempfile.TemporaryDirectory(prefix="synthorg-lockstep-") as meet:
        for p in range(processes):
            os.mkfifo(Path(meet) / f"box{p}", 0o600)
        return _released(processes, agents, meet)


def _released(processes: int, agents: int, meet: str | None) -> list[float]:
    cmd = [sys.executable, __file__, "--child", "--agents", str(agents),
           "--processes", str(processes), *(["--meet", meet] if meet else [])]
    procs = [subprocess.Popen([*cmd, "--me", str(p)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
             for p in range(processes)]
    try:
        for p in procs:
            if p.stdout is None or p.stdout.readline().strip() != "ready":
                raise SystemExit("a simulation process failed to start")
        for p in procs:
            if p.stdin is not None:
                p.stdin.write("go\n")
                p.stdin.flush()
        # a lockstepped process whose partner died would wait forever
        return [float(p.communicate(timeout=600)[0]) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def backend_ratio(agents: int) -> float:
    """One ray run then one local run of `agents` agents, TICKS ticks each: their ratio."""
    from synthorg.bench import throughput

    rows = list(throughput([agents], TICKS, ["ray", "local"]))
    return next(float(r["ratio"]) for r in rows if r["bench"] == "ray_vs_local")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=5_000, help="agents per process")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--lockstep", action="store_true",
                        help="also time the processes meeting after every tick")
    parser.add_argument("--backends", action="store_true",
                        help="also run the ray and the local backend each round")
    parser.add_argument("--backend-agents", type=int, default=10_000,
                        help="agents of the backends' runs")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--meet", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--me", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.agents, args.meet, args.me, args.processes)
        return
    speedups: dict[str, list[float]] = {"speedup": [], "lockstep_speedup": []}
    ratios: list[float] = []
    shares: list[float] = []  # per round, ratio / speed-up
    for _ in range(args.rounds):
        before = tick_seconds(1, args.agents)[0]
        together = {"speedup": tick_seconds(args.processes, args.agents)}
        if args.lockstep:
            together["lockstep_speedup"] = tick_seconds(args.processes, args.agents, True)
        after = tick_seconds(1, args.agents)[0]
        row: dict[str, object] = {"bench": "machine_capacity_round", "agents": args.agents,
                                  "alone_seconds": [round(before, 3), round(after, 3)]}
        for name, seconds in together.items():
            speedups[name].append(args.processes * (before + after) / 2 / max(seconds))
            row[name.replace("speedup", "together_seconds")] = [round(t, 3) for t in seconds]
            row[name] = round(speedups[name][-1], 3)
        if args.backends:
            ratios.append(backend_ratio(args.backend_agents))
            shares.append(ratios[-1] / speedups["speedup"][-1])
            row["ray_vs_local"] = round(ratios[-1], 3)
            row["ray_vs_local_over_speedup"] = round(shares[-1], 3)
        print(json.dumps(row), flush=True)
    summary: dict[str, object] = {"bench": "machine_capacity", "agents": args.agents,
                                  "processes": args.processes, "rounds": args.rounds}
    for name, values in speedups.items():
        if values:
            summary[f"{name}_median"] = round(statistics.median(values), 3)
            summary[f"{name}_range"] = [round(min(values), 3), round(max(values), 3)]
    if ratios:
        summary["backend_agents"] = args.backend_agents
        summary["ray_vs_local_median"] = round(statistics.median(ratios), 3)
        summary["ray_vs_local_over_speedup_median"] = round(statistics.median(shares), 3)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
