"""What organisational memory buys: the same company and seeds run with memory off and on,
compared seed by seed (paired differences, their mean and 95 % t-interval)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

METRICS = ("tasks_completed", "mean_quality", "help_requests", "tasks_failed")
# two-sided 95 % quantiles of Student's t, by degrees of freedom (1..30); 1.96 beyond
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def paired_interval(diffs: Sequence[float]) -> dict[str, object]:
    """Mean of the paired differences and its 95 % t-interval."""
    d = np.asarray(diffs, dtype=np.float64)
    n = len(d)
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        return {"mean_diff": mean, "ci95": [math.nan, math.nan], "n": n}
    half = (_T975[n - 2] if n - 1 <= len(_T975) else 1.96) * float(d.std(ddof=1)) / math.sqrt(n)
    return {"mean_diff": mean, "ci95": [mean - half, mean + half], "n": n}


def memory_ab(config: Path, seeds: Iterable[int], ticks: int, out: Path,
              overrides: Sequence[str] = (), backend: str = "local") -> dict[str, dict]:
    """Per metric of METRICS: memory on minus memory off, over `seeds`."""
    import synthorg

    diffs: dict[str, list[float]] = {m: [] for m in METRICS}
    for seed in seeds:
        got = {}
        for on in (False, True):
            cfg = synthorg.load_config(config, [f"runtime.backend={backend}", *overrides,
                                                f"memory.enabled={str(on).lower()}"])
            run = synthorg.Simulation(cfg, seed=seed, out=out / f"seed{seed}-memory-{on}")
            got[on] = run.run(ticks=ticks).summary
        for m in METRICS:
            diffs[m].append(float(getattr(got[True], m)) - float(getattr(got[False], m)))
    return {m: paired_interval(d) for m, d in diffs.items()}
