"""Many simulations from one Python process: what each run costs beyond its ticks.

A study scripted against the Python API runs simulation after simulation in one process.
Each `Simulation(...).run()` should cost its ticks, not a start-up: this measures, per run,
the time outside the ticks (`wall - tick_seconds`: building the org, starting actors,
writing the tables) for the first run and the runs after it, on each backend.

    .venv/bin/python benchmarks/api_runs.py [--runs 5] [--ticks 200] [--backends local,ray]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import synthorg

STARTUP = Path(__file__).resolve().parent.parent / "templates" / "companies" / "startup.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--backends", default="local,ray")
    args = parser.parse_args()
    for backend in args.backends.split(","):
        cfg = synthorg.load_config(STARTUP, [f"runtime.backend={backend}"])
        outside: list[float] = []
        with tempfile.TemporaryDirectory(prefix="synthorg-api-") as tmp:
            for seed in range(args.runs):
                began = time.perf_counter()
                result = synthorg.Simulation(cfg, seed=seed, out=Path(tmp) / str(seed)).run(
                    ticks=args.ticks)
                outside.append(time.perf_counter() - began - result.summary.tick_seconds)
        later = outside[1:] or outside
        print(json.dumps({"bench": "api_runs", "backend": backend, "runs": args.runs,
                          "ticks": args.ticks, "first_run_outside_ticks_s": round(outside[0], 3),
                          "later_runs_outside_ticks_s": round(statistics.median(later), 3)}),
              flush=True)


if __name__ == "__main__":
    main()
