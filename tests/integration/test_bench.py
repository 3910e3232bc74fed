"""`synthorg bench` prints one JSON object per line with the machine, the workload and the
figures the performance issue asks for (small sizes here: scale runs belong to the bench)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from synthorg.cli.app import app

runner = CliRunner()


def test_bench_reports_throughput_ratio_growth_and_memory(ray_session):
    result = runner.invoke(app, ["bench", "--agents", "100,1000,1500", "--ticks", "4", "--repeat", "1",
                                 "--memory-agents", "100", "--memory-ticks", "12"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    runs = [r for r in rows if r["bench"] == "throughput"]
    assert sorted((r["backend"], round(r["agents"], -2)) for r in runs) == sorted(
        (b, n) for b in ("ray", "local") for n in (100, 1000, 1500))
    for r in runs:
        assert r["cpu_count"] >= 1 and r["workload"] == "megacorp-scaled" and r["ticks"] == 4
        assert r["agent_steps_per_second"] > 0 and r["peak_rss_mb"] > 0
        assert r["secops_checks"] > 0 and r["secops_checks_per_second"] > 0
    pairs = {r["agents"]: r for r in rows if r["bench"] == "ray_vs_local"}
    assert set(pairs) == {100, 1000, 1500}
    rate = {(r["backend"], round(r["agents"], -2)): r["agent_steps_per_second"] for r in runs}
    for n, pair in pairs.items():
        # one round: its ratio is the ratio of the (only, so best) runs
        assert pair["ratio"] == round(rate[("ray", n)] / rate[("local", n)], 3)
        assert pair["ratio_per_round"] == [pair["ratio"]] == [pair["ratio_median_of_rounds"]]
    growth = {r["backend"]: r for r in rows if r["bench"] == "tick_time_growth"}
    assert set(growth) == {"ray", "local"}  # fitted from 1,000 agents up
    assert all(len(g["agents"]) == 2 and isinstance(g["exponent"], float) for g in growth.values())
    [memory] = [r for r in rows if r["bench"] == "memory_flat"]
    assert memory["backend"] == "ray" and memory["ticks"] == 12
    assert memory["rss_mb_end"] > 0 and "rss_growth_mb_per_100_ticks" in memory


def test_bench_rejects_unknown_backends_with_exit_2():
    result = runner.invoke(app, ["bench", "--backends", "ray,gpu", "--memory-agents", "0"])
    assert result.exit_code == 2
    assert "--backends" in result.output
