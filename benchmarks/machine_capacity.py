"""How much more several busy processes get done on this machine than one, on the
simulation itself: the ceiling of any ray/local ratio here, whatever the code.

Each round times a `local` run of `--agents` agents alone, then `--processes` such runs at
once (separate processes, set up first and released together), then one alone again:

    speed-up = processes * (mean time alone) / (slowest time together)

It is about `processes` on as many idle real cores; less where virtual CPUs share a
physical core or the host is busy. Read `synthorg bench`'s ray/local ratio against it: the
ray backend's groups are such processes, plus the hand-over and the fixed cost of a step
that benchmarks/instructions.py counts.

    .venv/bin/python benchmarks/machine_capacity.py [--agents 5000] [--rounds 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

TICKS = 50


def child(agents: int) -> None:
    """Set up and warm a local run, say so, wait for the go line, then time its ticks."""
    from synthorg.bench import MEGACORP, scaled
    from synthorg.config.loader import load_config
    from synthorg.sim.simulation import Simulation

    cfg = scaled(load_config(MEGACORP), agents, "local")
    with tempfile.TemporaryDirectory(prefix="synthorg-capacity-") as out:
        Simulation(cfg, seed=1, out=f"{out}/warm").run(ticks=2)  # imports, caches
        print("ready", flush=True)
        sys.stdin.readline()
        summary = Simulation(cfg, seed=1, out=f"{out}/run").run(ticks=TICKS).summary
    print(summary.tick_seconds, flush=True)


def tick_seconds(processes: int, agents: int) -> list[float]:
    """Each process's seconds in ticks, all released at once."""
    cmd = [sys.executable, __file__, "--child", "--agents", str(agents)]
    procs = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for _ in range(processes)]
    try:
        for p in procs:
            if p.stdout is None or p.stdout.readline().strip() != "ready":
                raise SystemExit("a simulation process failed to start")
        for p in procs:
            if p.stdin is not None:
                p.stdin.write("go\n")
                p.stdin.flush()
        return [float(p.communicate()[0]) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=5_000, help="agents per process")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.agents)
        return
    speedups = []
    for _ in range(args.rounds):
        before = tick_seconds(1, args.agents)[0]
        together = tick_seconds(args.processes, args.agents)
        after = tick_seconds(1, args.agents)[0]
        speedups.append(args.processes * (before + after) / 2 / max(together))
        print(json.dumps({"bench": "machine_capacity_round", "agents": args.agents,
                          "alone_seconds": [round(before, 3), round(after, 3)],
                          "together_seconds": [round(t, 3) for t in together],
                          "speedup": round(speedups[-1], 3)}), flush=True)
    print(json.dumps({"bench": "machine_capacity", "agents": args.agents,
                      "processes": args.processes, "rounds": args.rounds,
                      "speedup_median": round(statistics.median(speedups), 3),
                      "speedup_range": [round(min(speedups), 3), round(max(speedups), 3)]}),
          flush=True)


if __name__ == "__main__":
    main()
