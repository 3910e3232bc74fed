"""A changing org: scenario shocks applied at tick boundaries, visible in every output,
conserving tasks and reproducible across layouts, resume, replay and forks."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

import synthorg
from synthorg.cli.app import app
from synthorg.errors import ConfigError
from tests.conftest import ENTERPRISE, STARTUP, interrupted_at

runner = CliRunner()

# the same shocks for startup and enterprise (patterns match both companies' ids)
SHOCKS = ["scenario=["
          "{tick: 20, kind: fire, agents: ['eng*-lead*']},"
          "{tick: 25, kind: absence, agents: ['p*-lead*'], ticks: 10},"
          "{tick: 30, kind: hire, id: newhire, role: engineer, department: engineering, count: 3},"
          "{tick: 35, kind: move, agents: ['[so][rp]*-0002'], to: engineering, role: engineer},"
          "{tick: 40, kind: demand, factor: 3.0, ticks: 15, department: engineering},"
          "{tick: 45, kind: outage, tools: [deploy], ticks: 10},"
          "{tick: 50, kind: promote, agents: ['eng*-0001'], to: senior},"
          "{tick: 50, kind: autonomy, agents: ['eng*-0003'], to: autonomous}]"]
LOCAL = ["runtime.backend=local"]


def _run(tmp, config=STARTUP, overrides=(), seed=5, ticks=80) -> synthorg.RunResult:
    cfg = synthorg.load_config(config, [*LOCAL, *SHOCKS, *overrides])
    return synthorg.Simulation(cfg, seed=seed, out=tmp).run(ticks=ticks)


@pytest.fixture(scope="module")
def startup(tmp_path_factory) -> synthorg.RunResult:
    return _run(tmp_path_factory.mktemp("scenario") / "startup")


@pytest.fixture(scope="module")
def enterprise(tmp_path_factory) -> synthorg.RunResult:
    return _run(tmp_path_factory.mktemp("scenario") / "enterprise", ENTERPRISE, ticks=70)


@pytest.mark.parametrize("which", ["startup", "enterprise"])
def test_tasks_are_conserved_through_every_shock(which, request):
    result = request.getfixturevalue(which)
    s = result.summary
    assert s.conservation_ok
    tasks = result.tasks
    assert tasks["task"].n_unique() == tasks.height == s.tasks_created
    assert s.hires == 3 and s.fires >= 1 and s.reassignments >= 1 and s.promotions >= 1
    assert s.tool_outages > 0


def test_departures_and_moves_show_in_events_agents_and_timeseries(startup):
    events = startup.events
    left = events.filter(pl.col("kind") == "agent_left")
    assert left["actor"].to_list() == ["eng-lead"] and left["tick"].to_list() == [20]
    moved = events.filter(pl.col("kind") == "agent_moved")
    assert moved["actor"].to_list() == ["sre-0002"] and moved["tick"].to_list() == [35]
    assert events.filter(pl.col("kind") == "agent_away")["tick"].to_list() == [25]
    assert events.filter(pl.col("kind") == "agent_back")["tick"].to_list() == [35]
    assert events.filter(pl.col("kind") == "shock")["actor"].unique().to_list() == ["scenario"]
    agents = startup.agents.sort("agent")
    lead = agents.filter(pl.col("agent") == "eng-lead")
    assert lead["exit_tick"].to_list() == [20]
    hires = agents.filter(pl.col("agent").str.starts_with("newhire"))
    assert hires["joined_tick"].to_list() == [30, 30, 30]
    assert hires["completed"].sum() > 0  # the new hires got work
    sre = agents.filter(pl.col("agent") == "sre-0002")
    assert sre["department"].to_list() == ["engineering"] and sre["role"].to_list() == ["engineer"]
    ts = pl.read_parquet(startup.run_dir / "timeseries.parquet")
    eng = ts.filter(pl.col("department") == "engineering").sort("tick")
    headcount = dict(zip(eng["tick"], eng["headcount"], strict=True))
    assert headcount[19] == 6 and headcount[20] == 5  # the lead left
    assert headcount[30] == 8 and headcount[35] == 9  # three hires, then a move in
    ops = ts.filter(pl.col("department") == "operations").sort("tick")
    assert dict(zip(ops["tick"], ops["headcount"], strict=True))[35] == 2


def test_a_leavers_open_tasks_go_back_to_routing(startup):
    events = startup.events
    returned = events.filter((pl.col("kind") == "task_returned") & (pl.col("tick") == 20))
    assert returned.height > 0
    assert set(returned["actor"]) == {"eng-lead"}
    tasks = startup.tasks.filter(pl.col("task").is_in(returned["task"].to_list()))
    assert "eng-lead" not in tasks["agent"].drop_nulls().to_list()


def test_a_demand_spike_raises_arrivals(startup):
    ts = pl.read_parquet(startup.run_dir / "timeseries.parquet")
    eng = ts.filter(pl.col("department") == "engineering")
    during = eng.filter(pl.col("tick").is_between(40, 54))["arrivals"].mean()
    before = eng.filter(pl.col("tick").is_between(0, 39))["arrivals"].mean()
    assert during > 2 * before


def test_the_timeseries_columns(startup):
    ts = pl.read_parquet(startup.run_dir / "timeseries.parquet")
    assert ts.columns == ["tick", "department", "headcount", "arrivals", "completed", "failed",
                          "queued", "busy", "load", "escalations", "cost_salary_usd",
                          "cost_tools_usd", "cost_llm_usd"]
    assert ts.height == 80 * 3
    s = startup.summary
    assert ts["arrivals"].sum() == s.tasks_created
    assert ts["completed"].sum() == s.tasks_completed
    assert ts["failed"].sum() == s.tasks_failed
    assert ts["escalations"].sum() == s.escalations
    assert abs(ts["cost_salary_usd"].sum() + ts["cost_tools_usd"].sum() - s.cost_usd) < 1e-6
    assert (ts["load"].is_between(0, 1)).all()


@pytest.mark.parametrize("layout", ["runtime.agents_per_actor=1", "runtime.agents_per_actor=4"])
def test_the_ledger_does_not_depend_on_the_layout(startup, tmp_path, layout):
    assert _run(tmp_path / "x", overrides=[layout]).summary.ledger_sha256 \
        == startup.summary.ledger_sha256


def test_replay_and_resume(startup, tmp_path):
    cfg = synthorg.load_config(STARTUP, [*LOCAL, *SHOCKS, "runtime.checkpoint_every=9",
                                         "simulation.ticks=80"])
    sim = synthorg.Simulation(cfg, seed=5, out=tmp_path / "resumed")
    interrupted_at(sim, 80, at=41)
    assert sim.resume().summary.ledger_sha256 == startup.summary.ledger_sha256
    r = runner.invoke(app, ["replay", str(startup.run_dir)])
    assert r.exit_code == 0, r.output


def test_a_fork_may_change_the_scenario_after_its_tick_only(tmp_path):
    parent = tmp_path / "parent"
    cfg = synthorg.load_config(STARTUP, [*LOCAL, *SHOCKS, "runtime.checkpoint_every=10"])
    synthorg.Simulation(cfg, seed=5, out=parent).run(ticks=80)
    child = tmp_path / "child"
    r = runner.invoke(app, ["run", "--from", str(parent), "--at-tick", "40",
                            "--out", str(child), "--set", "scenario.6.agents=[eng-0002]"])
    assert r.exit_code == 0, r.output
    p_events = pl.read_parquet(parent / "events.parquet")
    c_events = pl.read_parquet(child / "events.parquet")
    assert p_events.filter(pl.col("tick") < 40).equals(c_events.filter(pl.col("tick") < 40))
    promoted = c_events.filter(pl.col("kind") == "agent_promoted")["actor"].to_list()
    assert promoted == ["eng-0002"]
    r = runner.invoke(app, ["run", "--from", str(parent), "--at-tick", "40",
                            "--out", str(tmp_path / "bad"), "--set", "scenario.0.tick=21"])
    assert r.exit_code == 2
    assert "scenario" in r.output


@pytest.mark.parametrize(("override", "named"), [
    ("scenario=[{tick: 1, kind: fire, agents: [nobody]}]", "scenario[0].agents"),
    ("scenario=[{tick: 1, kind: move, agents: [eng-lead], to: nowhere}]", "scenario[0].to"),
    ("scenario=[{tick: 1, kind: hire, id: eng-0001, role: engineer, department: engineering}]",
     "scenario[0].id"),
    ("scenario=[{tick: 1, kind: outage, tools: [teleporter], ticks: 2}]", "scenario[0].tools"),
    ("scenario=[{tick: 1, kind: strike}]", "scenario[0]"),
])
def test_bad_scenarios_are_named(override, named):
    with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
        synthorg.load_config(STARTUP, [override])


def test_a_new_org_version_routes_on_the_skills_agents_have_learned(tmp_path):
    """At an org change every group hands on its agents' current skill levels, so routing and
    helpers of the new version read what agents have learned, not their levels on joining."""
    from synthorg.org.directory import OrgDirectory

    cfg = synthorg.load_config(STARTUP, [*LOCAL, *SHOCKS, "runtime.agents_per_actor=5"])
    joining = OrgDirectory.from_config(cfg).skills
    sim = synthorg.Simulation(cfg, seed=5, out=tmp_path / "run")
    seen: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}

    def peek(done: int, total: int) -> None:
        hosts = sim.backend.groups  # type: ignore[union-attr]
        if done == 31:  # the hiring wave of tick 30 made a new version
            d = hosts[0].timeline.directory
            now = np.concatenate([h.group.a.skills for h in hosts])
            seen[done] = (d.skills.copy(), now, d.version)

    sim.run(ticks=40, on_tick=peek)
    version_skills, current, version = seen[31]
    assert version >= 3
    assert (version_skills > joining + 1e-9).any()  # learned levels, not the config's
    assert (version_skills <= current + 1e-12).all()  # and no more than they have since
