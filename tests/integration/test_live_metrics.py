"""A run's live metrics, read from the Prometheus endpoint Ray exposes while the run goes."""

from __future__ import annotations

import re
import time
import urllib.request

import pytest

import synthorg
from synthorg.sim.backend import run_key_of
from synthorg.sim.simulation import Simulation
from tests.conftest import STARTUP

pytestmark = pytest.mark.ray
SAMPLE = re.compile(r'^(ray_synthorg_\w+)\{([^}]*)\} ([0-9.eE+-]+)$')


def _scrape(ray) -> list[tuple[str, dict[str, str], float]]:
    port = ray.nodes()[0]["MetricsExportPort"]
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    samples = []
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            tags = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            samples.append((m.group(1), tags, float(m.group(3))))
    return samples


def test_a_runs_metrics_are_on_rays_prometheus_endpoint_while_it_goes(ray_session, tmp_path):
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=ray", "tools.analyse.executor=null"])
    sim = Simulation(cfg, seed=3, out=tmp_path / "run")
    seen: dict[str, object] = {}

    def watch(tick: int, total: int) -> None:
        """Between ticks: scrape until this run's figures are there (slowing the run
        meanwhile, so it is still going when they are)."""
        if seen or tick % 5:
            return
        mine = [s for s in _scrape(ray_session) if s[1].get("run") == run_key_of(sim.out)]
        if any(name == "ray_synthorg_tasks_completed" and v > 0 for name, _, v in mine):
            seen.update(tick=tick, samples=mine)
        else:
            time.sleep(0.5)

    summary = sim.run(ticks=400, on_tick=watch).summary
    assert seen, "no metrics of the run appeared while it went"
    assert seen["tick"] < 400
    samples = seen["samples"]
    names = {name for name, _, _ in samples}  # type: ignore[union-attr]
    for expected in ("ray_synthorg_tasks_completed", "ray_synthorg_tasks_failed",
                     "ray_synthorg_queue_length", "ray_synthorg_tool_calls_denied",
                     "ray_synthorg_security_incidents", "ray_synthorg_cost_usd",
                     "ray_synthorg_llm_tokens", "ray_synthorg_ticks_per_second"):
        assert expected in names, sorted(names)
    completed = sum(v for name, _, v in samples  # type: ignore[union-attr]
                    if name == "ray_synthorg_tasks_completed")
    assert 0 < completed <= summary.tasks_completed  # a figure of the run so far
    departments = {tags["department"] for name, tags, _ in samples  # type: ignore[union-attr]
                   if name == "ray_synthorg_queue_length"}
    assert departments == {d.id for d in cfg.departments}
    groups = {tags["group"] for _, tags, _ in samples}  # type: ignore[union-attr]
    assert groups == {str(g) for g in range(summary.groups)}
