"""`synthorg bench --sweep`: what a sweep gains over the same runs as separate commands.

The same runs (the default company as `make run` runs it, one per seed) are made twice:
as one `synthorg sweep` and as `synthorg run` commands one after another, each a process
as a user's shell loop would start. Both are timed from the command's start to its end
(Ray's start, imports, the model's load: everything a user waits for), and the ledgers are
compared run by run. Beside the ratio stands the machine's own two-process speed-up
(benchmarks/machine_capacity.py, in a source checkout): a sweep on two cores cannot beat it
by running runs side by side, only by not paying each run's start again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from synthorg.config.loader import template_path

CAPACITY = Path(__file__).resolve().parents[2] / "benchmarks" / "machine_capacity.py"


def _exe() -> str:
    return str(Path(sys.executable).with_name("synthorg"))


def machine_speedup(rounds: int = 3) -> float | None:
    """The median of benchmarks/machine_capacity.py's rounds (5,000-agent runs), if present."""
    if not CAPACITY.is_file():
        return None
    done = subprocess.run([sys.executable, str(CAPACITY), "--rounds", str(rounds)],
                          capture_output=True, text=True, timeout=1800)
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    return lines[-1].get("speedup_median") if lines else None


def sweep_speed(runs: int, ticks: int | None) -> dict[str, Any]:
    base = template_path("startup")
    assert base is not None
    fixed: dict[str, Any] = {} if ticks is None else {"simulation.ticks": ticks}
    with tempfile.TemporaryDirectory(prefix="synthorg-sweep-bench-") as tmp:
        folder = Path(tmp)
        experiment = folder / "bench.yaml"
        experiment.write_text(yaml.safe_dump({"name": "bench", "base": str(base), "set": fixed,
                                              "seeds": list(range(runs))}))
        t0 = time.perf_counter()
        subprocess.run([_exe(), "sweep", str(experiment), "--out", str(folder / "sweep"),
                        "--quiet"], check=True, capture_output=True, timeout=7200)
        swept = time.perf_counter() - t0
        rows = pl.read_parquet(folder / "sweep" / "runs.parquet")
        one_by_one = 0.0
        same = True
        for seed in range(runs):
            sets = ["--set", "runtime.backend=local"]  # the run as the sweep makes it
            sets += [x for k, v in fixed.items() for x in ("--set", f"{k}={v}")]
            t0 = time.perf_counter()
            subprocess.run([_exe(), "run", str(base), "--seed", str(seed), "--out",
                            str(folder / f"run-{seed}"), "--quiet", *sets],
                           check=True, capture_output=True, timeout=7200)
            one_by_one += time.perf_counter() - t0
            summary = json.loads((folder / f"run-{seed}" / "summary.json").read_text())
            swept_hash = rows.filter(pl.col("seed") == seed)["ledger_sha256"].item()
            same &= summary["ledger_sha256"] == swept_hash
    speedup = machine_speedup()
    return {"bench": "sweep", "company": "startup", "runs": runs,
            "ticks": ticks or rows["ticks"][0], "sweep_seconds": round(swept, 2),
            "separate_runs_seconds": round(one_by_one, 2),
            "sweep_runs_per_minute": round(60 * runs / swept, 2),
            "separate_runs_per_minute": round(60 * runs / one_by_one, 2),
            "sweep_vs_separate": round(one_by_one / swept, 3),
            "machine_two_process_speedup": speedup, "same_ledgers": same}
