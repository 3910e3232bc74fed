"""Stylised facts: directional relations from organisational research and queueing theory
that the simulated organisation must reproduce.

Each fact names two conditions of a company (overrides, as `--set` takes them), a measure
and the direction the measure must move from the first condition to the second. A check
runs both conditions on the same seeds (common random numbers: the paired differences
isolate the condition's effect), and the fact holds when the 95 % confidence interval of
the mean paired difference lies wholly on the expected side of zero. `make test` checks
the startup facts on 5 seeds; `synthorg bench --facts` all of them, on more seeds.
"""

from __future__ import annotations

import math
import statistics
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "companies"
Measures = dict[str, float]

# two-sided 95 % quantiles of Student's t by degrees of freedom (n seeds - 1)
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
        19: 2.093, 24: 2.064, 29: 2.045}


def t95(df: int) -> float:
    known = [d for d in _T95 if d <= df]
    return _T95[max(known)] if known else _T95[1]  # the next lower df: a wider interval


def _window(tasks: pl.DataFrame, lo: int, hi: int) -> float:
    return float(tasks.filter((pl.col("status") == "completed") & (pl.col("finished") >= lo)
                              & (pl.col("finished") < hi)).height)


def measure(run_dir: Path, summary: dict[str, object]) -> Measures:
    """The measures facts use: summary fields, plus a few read from the tables."""
    tasks = pl.read_parquet(run_dir / "tasks.parquet")
    hard = tasks.filter(pl.col("difficulty") > 0.6)
    hard_done = hard.filter(pl.col("status") == "completed")
    out = {k: float(v) for k, v in summary.items()
           if isinstance(v, (int, float)) and not isinstance(v, bool)}
    out["hard_quality"] = float(hard_done["quality"].mean() or 0.0)  # type: ignore[arg-type]
    out["hard_completion"] = hard_done.height / max(1, hard.height)
    out["completed_80_100"] = _window(tasks, 80, 100)
    out["completed_150_200"] = _window(tasks, 150, 200)
    return out


def difference(name: str) -> Callable[[Measures, Measures], float]:
    return lambda low, high: high[name] - low[name]


def recovery(low: Measures, high: Measures) -> float:
    """How much smaller the relative loss of completions is late (ticks 150-200) than
    right after the shock (80-100): > 0 when the organisation recovers."""
    early = (high["completed_80_100"] - low["completed_80_100"]) / max(1.0,
                                                                        low["completed_80_100"])
    late = (high["completed_150_200"] - low["completed_150_200"]) / max(
        1.0, low["completed_150_200"])
    return late - early


@dataclass(frozen=True)
class Fact:
    name: str
    why: str  # the research finding or the reasoning behind it
    company: str  # a template in templates/companies
    low: tuple[str, ...]
    high: tuple[str, ...]
    measure: str  # what moves (for the report)
    direction: int  # +1: rises from low to high; -1: falls
    contrast: Callable[[Measures, Measures], float] | None = None
    ticks: int = 200

    def effect(self, low: Measures, high: Measures) -> float:
        return (self.contrast or difference(self.measure))(low, high)


@dataclass(frozen=True)
class Verdict:
    fact: Fact
    seeds: int
    mean: float  # of the paired differences (high - low)
    half_width: float  # of the 95 % confidence interval
    baseline: float  # the measure's mean in the low condition
    holds: bool
    effects: tuple[float, ...] = field(default=())

    def row(self) -> dict[str, object]:
        f = self.fact
        return {"fact": f.name, "company": f.company, "measure": f.measure,
                "expected": "up" if f.direction > 0 else "down", "seeds": self.seeds,
                "effect": round(self.mean, 4), "ci95": round(self.half_width, 4),
                "baseline": round(self.baseline, 4), "holds": self.holds, "why": f.why}


SCALE = "workload.scale"
NO_HELP = "policies.collaboration.max_help_requests_per_task=0"
SKILLED = ("roles.engineer.skills.python=0.9", "roles.engineer.skills.testing=0.85",
           "roles.product_manager.skills.writing=0.9", "roles.product_manager.skills.analysis=0.85",
           "roles.sre.skills.operations=0.9", "roles.sre.skills.python=0.7")
KEY_PEOPLE_LEAVE = ('scenario=[{tick: 80, kind: fire, agents: [eng-lead, eng-0003]}, '
                    '{tick: 100, kind: hire, id: eng-new, role: engineer, '
                    'department: engineering, count: 2, seniority: senior}]')

FACTS: tuple[Fact, ...] = (
    Fact("load raises lead time", "queueing: waiting time grows with utilisation (Kingman)",
         "startup", (f"{SCALE}=0.8",), (f"{SCALE}=1.4",), "lead_time_mean", +1),
    Fact("load raises utilisation", "queueing: utilisation = arrival rate / service rate",
         "startup", (f"{SCALE}=0.8",), (f"{SCALE}=1.4",), "utilisation", +1),
    Fact("load raises throughput below saturation",
         "queueing: below capacity, departures follow arrivals (Little's law)",
         "startup", (f"{SCALE}=0.8",), (f"{SCALE}=1.4",), "tasks_completed", +1),
    Fact("load raises the failure rate", "queueing: more tasks wait past their deadline",
         "startup", (f"{SCALE}=0.8",), (f"{SCALE}=1.4",), "failure_rate", +1),
    Fact("skill raises quality", "human capital: job knowledge predicts performance "
         "(Hunter & Schmidt 1998)", "startup", (), SKILLED, "mean_quality", +1),
    Fact("skill shortens lead time", "skilled agents work faster and hesitate less",
         "startup", (), SKILLED, "lead_time_mean", -1),
    Fact("help raises quality on hard tasks", "help-seeking improves complex work "
         "(Hargadon & Bechky 2006)", "startup", (NO_HELP,), (), "hard_quality", +1),
    Fact("approval delay lengthens lead time", "each sign-off adds its wait (bureaucracy "
         "as queueing)", "startup", ("policies.approvals.delay_ticks=1",),
         ("policies.approvals.delay_ticks=6",), "lead_time_mean", +1),
    Fact("stricter approvals fail more tasks", "a refused change does not ship",
         "startup", ("policies.approvals.approve_probability=0.95",),
         ("policies.approvals.approve_probability=0.4",), "failure_rate", +1),
    Fact("autonomy lowers escalations", "delegated authority needs fewer sign-offs "
         "(Aghion & Tirole 1997)", "startup", ("company.autonomy=supervised",),
         ("company.autonomy=autonomous",), "escalations", -1),
    Fact("autonomy raises throughput", "fewer waits for sign-off and fewer refused changes",
         "startup", ("company.autonomy=supervised",), ("company.autonomy=autonomous",),
         "tasks_completed", +1),
    Fact("a smaller budget lowers spend", "a binding budget caps spending",
         "startup", (), ("company.budget_usd=90000",), "cost_usd", -1),
    Fact("a smaller budget lowers output", "resources bound what gets done",
         "startup", (), ("company.budget_usd=90000",), "tasks_completed", -1),
    Fact("learning raises quality", "learning curves: experience improves performance "
         "(Argote & Epple 1990)", "startup", ("policies.work.learning_rate=0.0",),
         ("policies.work.learning_rate=0.05",), "mean_quality", +1),
    Fact("deadline slack lowers failures", "slack absorbs variability (Galbraith 1974)",
         "startup", ("policies.work.deadline_grace_ticks=0",),
         ("policies.work.deadline_grace_ticks=8",), "failure_rate", -1),
    Fact("thrashing lowers throughput", "overloaded people lose effectiveness, an "
         "explicit policy here (Perlow 1999)", "startup", (f"{SCALE}=1.3",),
         (f"{SCALE}=1.3", "policies.work.load_penalty=0.1"), "tasks_completed", -1),
    Fact("losing key people drops throughput", "departures disrupt routines and "
         "knowledge (Argote 1999)", "startup", ("scenario=[]",), (KEY_PEOPLE_LEAVE,),
         "completed_80_100", -1),
    Fact("the organisation recovers after departures", "replacements restore capacity "
         "as they learn", "startup", ("scenario=[]",), (KEY_PEOPLE_LEAVE,),
         "recovery", +1, contrast=recovery),
    Fact("load raises lead time (enterprise)", "queueing: waiting time grows with "
         "utilisation", "enterprise", (f"{SCALE}=0.8",), (f"{SCALE}=1.3",),
         "lead_time_mean", +1, ticks=80),
    Fact("autonomy lowers escalations (enterprise)", "delegated authority needs fewer "
         "sign-offs", "enterprise", ("company.autonomy=supervised",),
         ("company.autonomy=autonomous",), "escalations", -1, ticks=80),
    Fact("help raises quality on hard tasks (enterprise)", "help-seeking "
         "improves complex work", "enterprise", (NO_HELP,), (), "hard_quality", +1, ticks=80),
    Fact("a smaller budget lowers output (enterprise)", "resources bound what gets done",
         "enterprise", (), ("company.budget_usd=1500000",), "tasks_completed", -1, ticks=80),
)


class Runner:
    """Runs conditions once each per seed (facts share their conditions' runs)."""

    def __init__(self, base: dict[str, tuple[str, ...]] | None = None) -> None:
        """base: overrides every run of a company gets (e.g. tools simulated in-process)."""
        self._seen: dict[tuple[str, tuple[str, ...], int, int], Measures] = {}
        self._base = base or {}

    def measures(self, company: str, overrides: tuple[str, ...], seed: int,
                 ticks: int) -> Measures:
        key = (company, overrides, seed, ticks)
        if key not in self._seen:
            import synthorg

            cfg = synthorg.load_config(TEMPLATES / f"{company}.yaml",
                                       ["runtime.backend=local", *self._base.get(company, ()),
                                        *overrides])
            with tempfile.TemporaryDirectory(prefix="synthorg-fact-") as out:
                result = synthorg.Simulation(cfg, seed=seed, out=out).run(ticks=ticks)
                self._seen[key] = measure(result.run_dir, result.summary.model_dump())
        return self._seen[key]

    def check(self, fact: Fact, seeds: Iterable[int]) -> Verdict:
        seeds = list(seeds)
        lows = [self.measures(fact.company, fact.low, s, fact.ticks) for s in seeds]
        highs = [self.measures(fact.company, fact.high, s, fact.ticks) for s in seeds]
        effects = [fact.effect(lo, hi) for lo, hi in zip(lows, highs, strict=True)]
        mean = statistics.fmean(effects)
        sd = statistics.stdev(effects) if len(effects) > 1 else math.inf
        half = t95(len(effects) - 1) * sd / math.sqrt(len(effects))
        baseline = (statistics.fmean(lo[fact.measure] for lo in lows)
                    if fact.contrast is None else 0.0)
        holds = fact.direction * mean - half > 0
        return Verdict(fact, len(seeds), mean, half, baseline, holds, tuple(effects))
