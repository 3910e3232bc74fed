"""`synthorg tune`: Ray Tune over policy parameters, a weighted objective averaged over seeds.

A trial runs the study's seeds one after another and reports as ticks go: the objective so
far per run, (objective of the seeds done + of the current run so far) x ticks per run /
ticks done, in the units of the final value, which it equals exactly at the last tick (the
mean over seeds). ASHA compares trials at the same number of ticks, so it stops on the
simulation's own progress. Every trial's last report lands in trials.parquet; the best
trial's config is written as YAML that `synthorg run` accepts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from synthorg.config.loader import load_config
from synthorg.errors import ConfigError
from synthorg.experiments.points import overrides_of
from synthorg.experiments.spec import (
    Choice,
    Distribution,
    IntRange,
    LogUniform,
    Resources,
    StudySpec,
    Uniform,
    base_path,
)
from synthorg.sim.summary import LIVE_FIELDS, Summary

TRIALS, BEST = "trials.parquet", "best.yaml"
METRIC = "objective"


@dataclass(frozen=True)
class StudyResult:
    trials: pl.DataFrame
    best_params: dict[str, Any]
    best_objective: float
    best_config: Path


def objective(weights: dict[str, float], figures: dict[str, Any]) -> float:
    return float(sum(w * float(figures[f]) for f, w in weights.items()))


def check_objective(spec: StudySpec, source: str) -> None:
    numeric = {n for n, f in Summary.model_fields.items() if f.annotation in (int, float)}
    problems = [f"objective.maximize.{t}: not a numeric summary field"
                for t in spec.objective.maximize if t not in numeric]
    if spec.asha is not None:
        problems += [f"objective.maximize.{t}: not known while a run goes, so ASHA cannot stop "
                     f"on it (drop asha, or use {', '.join(LIVE_FIELDS)})"
                     for t in spec.objective.maximize if t in numeric and t not in LIVE_FIELDS]
    if problems:
        raise ConfigError(source, problems)


def _space(dist: Distribution, grid: bool) -> Any:
    from ray import tune

    if isinstance(dist, Uniform):
        return tune.uniform(*dist.uniform)
    if isinstance(dist, LogUniform):
        return tune.loguniform(*dist.loguniform)
    if isinstance(dist, IntRange):
        return tune.randint(dist.randint[0], dist.randint[1] + 1)  # Tune's upper end is open
    assert isinstance(dist, Choice)
    return tune.grid_search(dist.choice) if grid else tune.choice(dist.choice)


def trial(params: dict[str, Any], *, base: str, fixed: dict[str, Any], seeds: list[int],
          report_every: int, weights: dict[str, float], resources: Resources, out: str) -> None:
    """One trial: the study's seeds in turn, reporting the objective so far per run."""
    from ray import tune

    from synthorg.sim.simulation import Simulation

    cfg = load_config(base, overrides_of(fixed, params, resources))
    ticks = cfg.simulation.ticks
    done = 0.0  # the objectives of the finished seeds, summed
    per_seed: dict[str, float] = {}  # each finished seed's objective and its terms
    folder = Path(out) / "trials" / tune.get_context().get_trial_id()
    for i, seed in enumerate(seeds):
        sim = Simulation(cfg, seed=seed, out=folder / f"seed-{seed}", overwrite=True)

        def report(t: int, _total: int, i: int = i, sim: Simulation = sim,
                   done: float = done) -> None:
            if t % report_every == 0 and t < ticks:
                so_far = done + objective(weights, sim.live_figures())
                tune.report({METRIC: so_far * ticks / (i * ticks + t), "ticks": i * ticks + t,
                             "seeds_done": i})

        summary = sim.run(on_tick=report).summary.model_dump()
        done += objective(weights, summary)
        per_seed.update({f"{f}.seed{seed}": summary[f] for f in weights})
        per_seed[f"{METRIC}.seed{seed}"] = objective(weights, summary)
        tune.report({METRIC: done / (i + 1), "ticks": (i + 1) * ticks, "seeds_done": i + 1,
                     **per_seed})


def study(spec: StudySpec, study_file: Path, out: Path) -> StudyResult:
    """Run the study (Ray must be initialised); writes DIR/trials.parquet and DIR/best.yaml."""
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    check_objective(spec, str(study_file))
    base = base_path(study_file, spec.base)
    try:
        probe = load_config(base, overrides_of(spec.set, {}, spec.resources))
    except ConfigError as exc:
        raise ConfigError(str(study_file), [f"base with set: {p}" for p in exc.problems]) from None
    ticks, seeds = probe.simulation.ticks, spec.seed_list()
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    grid = spec.search == "grid"
    space = {p: _space(d, grid) for p, d in spec.space.items()}
    search_alg: Any = None
    if spec.search == "optuna":
        from ray.tune.search.optuna import OptunaSearch

        search_alg = OptunaSearch(metric=METRIC, mode="max", seed=spec.search_seed)
    elif spec.search == "random":
        from ray.tune.search.basic_variant import BasicVariantGenerator

        search_alg = BasicVariantGenerator(random_state=spec.search_seed)
    scheduler = None
    if spec.asha is not None:
        scheduler = ASHAScheduler(time_attr="ticks", max_t=ticks * len(seeds),
                                  grace_period=spec.asha.grace_ticks,
                                  reduction_factor=spec.asha.reduction_factor)
    runnable = tune.with_parameters(
        trial, base=str(base.resolve()), fixed=spec.set, seeds=seeds,
        report_every=spec.report_every, weights=spec.objective.maximize,
        resources=spec.resources, out=str(out))
    tuner = tune.Tuner(
        tune.with_resources(runnable, {"cpu": spec.resources.cpus}),
        param_space=space,
        tune_config=tune.TuneConfig(metric=METRIC, mode="max", search_alg=search_alg,
                                    scheduler=scheduler,
                                    num_samples=1 if grid else spec.trials,
                                    max_concurrent_trials=spec.max_concurrent),
        run_config=tune.RunConfig(name=spec.name, storage_path=str(out / "tune"), verbose=0),
    )
    results = tuner.fit()
    rows: list[dict[str, Any]] = []
    for r in (results[i] for i in range(len(results))):
        m = r.metrics or {}
        rows.append({"trial_id": m.get("trial_id") or (r.path and Path(r.path).name),
                     **{p: (r.config or {}).get(p) for p in spec.space},
                     METRIC: m.get(METRIC), "ticks": m.get("ticks"),
                     "seeds_done": m.get("seeds_done"),
                     "stopped_early": bool(r.error is None and (m.get("ticks") or 0)
                                           < ticks * len(seeds)),
                     "status": "failed" if r.error is not None else "ok",
                     "error": None if r.error is None else str(r.error).strip().splitlines()[-1],
                     "result": json.dumps({k: v for k, v in m.items()
                                           if "." in k and isinstance(v, int | float)})})
    trials = pl.DataFrame(rows, infer_schema_length=None, strict=False)
    trials.write_parquet(out / TRIALS)
    finished = [r for r in rows if r["status"] == "ok" and not r["stopped_early"]]
    if not finished:
        raise ConfigError(str(study_file), ["no trial finished: see "
                                            f"{out / TRIALS} for their errors"])
    best = max(finished, key=lambda r: r[METRIC])
    best_params = {p: best[p] for p in spec.space}
    chosen = load_config(base, overrides_of(spec.set, best_params, Resources(backend="config")))
    header = (f"# best of study {spec.name}: {METRIC} {best[METRIC]:.6g} (mean over seeds "
              f"{seeds}), trial {best['trial_id']}\n# params: {json.dumps(best_params)}\n")
    path = out / BEST
    path.write_text(header + yaml.safe_dump(chosen.model_dump(mode="json"), sort_keys=False))
    return StudyResult(trials, best_params, float(best[METRIC]), path)
