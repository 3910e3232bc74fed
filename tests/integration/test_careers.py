"""Careers and departments in the default company: HR reviews change the org mid-run, every
change an event with its reason, the same ledger on any layout and after kill -9 + resume."""

from __future__ import annotations

import polars as pl
import pytest
from typer.testing import CliRunner

import synthorg
from synthorg.cli.app import app
from tests.conftest import CAREERS, kill_9_and_resume, run_until_checkpoints

HR_KINDS = ("agent_promoted", "agent_demoted", "agent_joined", "agent_left", "agent_moved")


@pytest.fixture(scope="module")
def company_500(tmp_path_factory) -> synthorg.RunResult:
    cfg = synthorg.load_config(CAREERS, ["runtime.backend=local"])
    return synthorg.Simulation(cfg, seed=0, out=tmp_path_factory.mktemp("hr") / "run").run(
        ticks=500)


def test_reviews_promote_hire_or_fire_and_reassign_each_with_a_reason(company_500):
    s, events = company_500.summary, company_500.events
    decided = events.filter(pl.col("kind").is_in(HR_KINDS)
                            & (pl.col("hr_reason") != "scenario"))
    by_kind = dict(decided.group_by("kind").len().iter_rows())
    assert by_kind.get("agent_promoted", 0) > 0
    assert by_kind.get("agent_joined", 0) + by_kind.get("agent_left", 0) >= 1
    assert by_kind.get("agent_moved", 0) > 0
    assert decided["hr_reason"].null_count() == 0
    every = dict(events.filter(pl.col("kind").is_in(HR_KINDS)).group_by("kind").len().iter_rows())
    assert (s.promotions, s.demotions, s.hires, s.fires, s.reassignments) == tuple(
        every.get(k, 0) for k in (*HR_KINDS[:2], "agent_joined", "agent_left", "agent_moved"))
    assert s.conservation_ok


def test_agents_table_keeps_leavers_and_the_last_reviews_scores(company_500):
    agents = company_500.agents
    assert agents["exit_tick"].drop_nulls().len() == company_500.summary.fires
    assert {"model_tier", "hr_overall", "hr_trend", "hr_met"} <= set(agents.columns)
    assert set(agents["hr_trend"].drop_nulls()) <= {"improving", "stable", "declining"}
    hired = company_500.events.filter((pl.col("kind") == "agent_joined")
                                      & (pl.col("hr_reason") == "queue_pressure"))
    assert set(hired["actor"]) <= set(agents["agent"])


def test_replay_gives_the_same_ledger(company_500):
    result = CliRunner().invoke(app, ["replay", str(company_500.run_dir)])
    assert result.exit_code == 0, result.output


@pytest.mark.ray
def test_the_same_careers_on_ray_in_groups(ray_session, tmp_path):
    def run(overrides: list[str]) -> str:
        cfg = synthorg.load_config(CAREERS, overrides)
        return synthorg.Simulation(cfg, seed=3, out=tmp_path / overrides[0][-5:]).run(
            ticks=160).summary.ledger_sha256

    assert run(["runtime.agents_per_actor=5"]) == run(["runtime.backend=local"])


@pytest.mark.ray
def test_kill_9_and_resume_keep_the_decided_org(ray_session, tmp_path):
    cfg = synthorg.load_config(CAREERS, ["runtime.backend=local"])
    reference = synthorg.Simulation(cfg, seed=2, out=tmp_path / "ref").run(ticks=160)
    assert reference.summary.promotions + reference.summary.reassignments > 0
    out = tmp_path / "killed"
    args = [str(CAREERS), "--out", str(out), "--seed", "2", "--ticks", "160",
            "--set", "runtime.checkpoint_every=20", "--set", "runtime.agents_per_actor=5"]
    summary = kill_9_and_resume(run_until_checkpoints(args, out, 4), out)
    assert summary.ledger_sha256 == reference.summary.ledger_sha256


def test_a_stricter_promotion_policy_promotes_fewer_and_changes_outcomes(tmp_path):
    def totals(min_criteria: int) -> tuple[int, float, int]:
        promoted, quality, completed = 0, 0.0, 0
        for seed in (0, 1):
            cfg = synthorg.load_config(CAREERS, ["runtime.backend=local",
                                                 f"hr.promotion.min_criteria={min_criteria}",
                                                 "hr.promotion.per_level={}",
                                                 "hr.promotion.tenure_reviews=2"])
            s = synthorg.Simulation(cfg, seed=seed, out=tmp_path / f"{min_criteria}-{seed}"
                                    ).run(ticks=200).summary
            promoted += s.promotions
            quality += s.mean_quality
            completed += s.tasks_completed
        return promoted, quality, completed

    lenient, strict = totals(3), totals(6)
    assert lenient[0] > strict[0]
    assert lenient[1:] != strict[1:]  # who is senior changes the work done
