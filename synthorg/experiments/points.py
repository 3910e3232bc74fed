"""An experiment's runs: grid points crossed with seeded samples, each crossed with the seeds.

A run is named by its key: a digest of its resolved config and seed, so the same command on
the same files names the same runs (how a re-run knows what is finished), whatever the
order they are listed or finish in.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synthorg.config.loader import load_config
from synthorg.config.models import CompanyConfig
from synthorg.errors import ConfigError
from synthorg.experiments.spec import (
    MAX_RUNS,
    Choice,
    Distribution,
    ExperimentSpec,
    IntRange,
    LogUniform,
    Resources,
    Uniform,
    base_path,
)


@dataclass(frozen=True)
class Run:
    key: str
    point: int
    params: dict[str, Any]
    seed: int
    config: CompanyConfig


def draw(dist: Distribution, rng: np.random.Generator) -> Any:
    if isinstance(dist, Uniform):
        return float(rng.uniform(*dist.uniform))
    if isinstance(dist, LogUniform):
        lo, hi = dist.loguniform
        return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
    if isinstance(dist, IntRange):
        return int(rng.integers(dist.randint[0], dist.randint[1], endpoint=True))
    assert isinstance(dist, Choice)
    return dist.choice[int(rng.integers(len(dist.choice)))]


def points_of(spec: ExperimentSpec) -> list[dict[str, Any]]:
    """Every grid combination (in the file's order), crossed with the seeded samples."""
    names = list(spec.grid)
    grid = [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(spec.grid[n] for n in names))]
    if spec.samples is None:
        return grid
    rng = np.random.Generator(np.random.PCG64(spec.samples.seed))
    drawn = [{p: draw(d, rng) for p, d in sorted(spec.samples.params.items())}
             for _ in range(spec.samples.n)]
    return [{**g, **s} for g in grid for s in drawn]


def overrides_of(fixed: dict[str, Any], params: dict[str, Any], resources: Resources) -> list[str]:
    """`--set` items for a run (values as JSON, which YAML reads back as the same value)."""
    items = [f"{p}={json.dumps(v)}" for p, v in {**fixed, **params}.items()]
    if resources.backend == "local":
        items.append("runtime.backend=local")
    return items


def run_key(config: CompanyConfig, seed: int) -> str:
    from synthorg.sim.simulation import config_digest_of

    return hashlib.sha256(f"{config_digest_of(config)}:{seed}".encode()).hexdigest()[:16]


def plan_runs(spec: ExperimentSpec, spec_file: Path) -> list[Run]:
    """Every (point, seed) with its validated config; a bad point is a ConfigError naming it."""
    base = base_path(spec_file, spec.base)
    points = points_of(spec)
    seeds = spec.seed_list()
    if not points:
        points = [{}]
    if len(points) * len(seeds) > MAX_RUNS:
        raise ConfigError(str(spec_file), [f"{len(points)} points x {len(seeds)} seeds is more "
                                           f"than {MAX_RUNS:,} runs"])
    runs: list[Run] = []
    for i, params in enumerate(points):
        try:
            cfg = load_config(base, overrides_of(spec.set, params, spec.resources))
        except ConfigError as exc:
            raise ConfigError(str(spec_file), [f"point {i} {json.dumps(params)}: {p}"
                                               for p in exc.problems]) from None
        runs.extend(Run(run_key(cfg, s), i, params, s, cfg) for s in seeds)
    if len({r.key for r in runs}) != len(runs):
        raise ConfigError(str(spec_file), ["two points give the same config (a value listed "
                                           "twice, or a parameter the company does not use)"])
    return runs
