"""SecOps's speed (`synthorg bench --secops`): the fast path's latency on calls it has not
seen, its rate on calls it has (the cache), the in-simulation table lookups, and what
threats cost a 10,000-agent company's throughput."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import Autonomy
from synthorg.secops.calls import ToolCall
from synthorg.secops.catalog import checker_for
from synthorg.secops.checker import CallChecker
from synthorg.secops.forms import secops_tables

CORPORA = Path(__file__).resolve().parents[2] / "tests" / "data" / "secops"
THREATS_ON = ["workload.threats.insider_share=0.01", "workload.threats.injection_rate=0.05",
              "workload.threats.mistake_probability=0.01"]


def bench_calls(cfg: CompanyConfig, checker: CallChecker) -> tuple[list[ToolCall], int]:
    """Every form of the company's tools, filled for a few tasks, then the labelled corpora
    of a checkout (tests/data/secops), when there; and how many of the calls are forms."""
    tables = secops_tables(cfg)
    calls = []
    for task in range(3):
        fields = {"task": 1000 + task, "type": "bugfix", "agent": f"agent-{task}",
                  "department": "engineering", "tick": 7 * task}
        for form in range(len(tables.forms)):
            tool = cfg.tools[int(tables.forms.tool[form])].name
            calls.append(checker.call(tool, tables.forms.arguments(form, fields),
                                      tables.forms.task_text[form]))
    forms = len(calls)
    for corpus in sorted(CORPORA.rglob("*.jsonl")):
        for line in corpus.read_text().splitlines():
            d = json.loads(line)
            calls.append(checker.call(d["tool"], d["arguments"], d.get("task", ""),
                                      d.get("workspace")))
    return calls, forms


def _uncached(checker: CallChecker, calls: list[ToolCall], rounds: int) -> np.ndarray:
    """Each call's median time over `rounds`: its own cost, not a stray pause's."""
    per_call = np.empty((rounds, len(calls)))
    for r in range(rounds):
        for i, call in enumerate(calls):
            checker._cache.clear()  # uncached: the call's arguments are read afresh
            fresh = ToolCall(call.tool, call.arguments, call.task, call.workspace,
                             call.action_type)  # and its views worked out afresh
            t = time.perf_counter()
            checker.check(fresh, Autonomy.assisted)
            per_call[r, i] = time.perf_counter() - t
    return np.median(per_call, axis=0)


def fast_path(cfg: CompanyConfig, rounds: int = 3, form_rounds: int = 9) -> dict[str, Any]:
    """The forms (the calls a simulation makes, a few hundred) are timed over more rounds
    than the corpora: their p99 is the third-slowest of them, which one pause would move."""
    checker = checker_for(cfg)
    calls, form_calls = bench_calls(cfg, checker)
    latency = np.concatenate([_uncached(checker, calls[:form_calls], form_rounds),
                              _uncached(checker, calls[form_calls:], rounds)])
    for call in calls:
        checker.check(call, Autonomy.assisted)
    t = time.perf_counter()
    for _ in range(5):
        for call in calls:
            checker.check(call, Autonomy.assisted)
    cached = 5 * len(calls) / (time.perf_counter() - t)
    tables = secops_tables(cfg)
    n = 10_000
    rng = np.random.default_rng(0)
    forms = rng.integers(0, len(tables.forms), n)
    autonomy = rng.integers(0, len(Autonomy), n)
    approved = np.zeros(n, dtype=bool)
    t = time.perf_counter()
    for _ in range(100):
        tables.verdicts.check(forms, autonomy, approved)
    table_rate = 100 * n / (time.perf_counter() - t)
    return {"bench": "secops_fast_path", "calls": len(calls),
            "uncached_p50_ms": round(float(np.percentile(latency, 50)) * 1e3, 3),
            "uncached_p99_ms": round(float(np.percentile(latency, 99)) * 1e3, 3),
            "uncached_max_ms": round(float(latency.max()) * 1e3, 3),
            # the calls a simulation makes (its catalog's forms) apart from the corpora's
            "form_calls": form_calls,
            "uncached_p99_forms_ms": round(float(np.percentile(latency[:form_calls], 99)) * 1e3, 3),
            "uncached_checks_per_second": round(len(calls) / float(latency.sum()), 1),
            "cached_checks_per_second": round(cached, 1),
            "in_simulation_checks_per_second": round(table_rate, 1)}


def threats_cost(base: CompanyConfig, agents: int, ticks: int, backend: str,
                 repeat: int) -> Iterator[dict[str, Any]]:
    """Megacorp's throughput with threats off and on, the best of `repeat` runs each."""
    from synthorg.bench import _run, scaled
    from synthorg.config.loader import apply_overrides

    rates: dict[str, float] = {}
    for label, sets in (("off", []), ("on", THREATS_ON)):
        cfg = CompanyConfig.model_validate(apply_overrides(
            scaled(base, agents, backend).model_dump(mode="json"), sets, source="bench"))
        best: dict[str, Any] = {}
        for _ in range(repeat):
            row = _run(cfg, ticks)
            if row["agent_steps_per_second"] > best.get("agent_steps_per_second", -1):
                best = row
        rates[label] = best["agent_steps_per_second"]
        yield {"bench": "secops_threats", "threats": label, "backend": backend, **best}
    yield {"bench": "secops_threats_ratio", "agents": agents, "backend": backend,
           "ratio_on_to_off": round(rates["on"] / max(rates["off"], 1e-9), 3)}
