"""The public API, in-process (runtime.backend=local): conservation, outputs, determinism and
organisational behaviour."""

from __future__ import annotations

import json

import polars as pl
import pytest

import synthorg
from synthorg.config import load_config
from tests.conftest import STARTUP

LOCAL = ["runtime.backend=local"]


def _run(out, overrides=(), seed=7, ticks=200) -> synthorg.RunResult:
    cfg = load_config(STARTUP, [*LOCAL, *overrides])
    return synthorg.Simulation(cfg, seed=seed, out=out).run(ticks=ticks)


@pytest.fixture(scope="module")
def seed7(tmp_path_factory) -> synthorg.RunResult:
    return _run(tmp_path_factory.mktemp("local") / "seed7")


def test_summary_basics(seed7):
    s = seed7.summary
    assert isinstance(s, synthorg.Summary)
    assert (s.backend, s.seed, s.ticks, s.agents) == ("local", 7, 200, 12)
    assert s.company == "Acme Startup"
    assert s.tasks_completed > 0
    assert s.messages > 0
    assert s.tool_calls > 0
    assert 0.0 < s.mean_quality <= 1.0
    assert s.cost_usd > 0
    assert s.incidents == 0
    assert len(s.ledger_sha256) == 64


def test_conservation(seed7):
    s = seed7.summary
    assert s.tasks_created == s.tasks_completed + s.tasks_failed + s.tasks_open
    assert s.conservation_ok


def test_outputs_written(seed7):
    out = seed7.run_dir
    for name in ("summary.json", "events.parquet", "tasks.parquet", "agents.parquet",
                 "config.resolved.yaml"):
        assert (out / name).is_file(), name
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == seed7.summary.model_dump()
    resolved = load_config(out / "config.resolved.yaml")
    assert (resolved.simulation.ticks, resolved.simulation.seed) == (200, 7)
    assert resolved.runtime.backend == "local"


def test_tasks_table(seed7):
    s, tasks = seed7.summary, seed7.tasks
    assert tasks.height == s.tasks_created
    assert tasks["task"].n_unique() == tasks.height
    assert set(tasks["status"].unique()) <= {"completed", "failed", "open"}
    finished = tasks.filter(pl.col("status").is_in(["completed", "failed"]))
    cols = ["cost_usd", "duration_ticks", "turns", "tokens"]
    assert finished.select(cols).null_count().sum_horizontal().item() == 0
    assert tasks.filter(pl.col("status") == "completed")["quality"].null_count() == 0
    assert tasks.filter(pl.col("status") == "completed").height == s.tasks_completed
    assert tasks.filter(pl.col("status") == "failed").height == s.tasks_failed
    assert tasks.filter(pl.col("status") == "open").height == s.tasks_open


def test_tasks_values_are_consistent(seed7):
    tasks = seed7.tasks
    done = tasks.filter(pl.col("status") == "completed")
    assert done["quality"].is_between(0.0, 1.0).all()
    assert abs(done["quality"].mean() - seed7.summary.mean_quality) < 1e-9
    assert (done["duration_ticks"] >= 0).all()
    assert (done["finished"] > done["created"]).all()
    assert done["agent"].null_count() == 0
    assert done["fail_reason"].null_count() == done.height  # like open tasks: not failed
    failed = tasks.filter(pl.col("status") == "failed")
    assert (failed["quality"] == 0.0).all()
    assert failed["fail_reason"].null_count() == 0
    assert (failed["fail_reason"] != "none").all()
    still_open = tasks.filter(pl.col("status") == "open")
    assert still_open["fail_reason"].null_count() == still_open.height
    assert still_open["finished"].null_count() == still_open.height


def test_agents_table(seed7):
    agents, s = seed7.agents, seed7.summary
    assert s.hires == 2 and s.fires == 1  # the template's scenario
    assert agents.height == 12 + 2  # everyone who was in the org: hires too
    assert agents["agent"].n_unique() == 14
    assert agents["completed"].sum() == s.tasks_completed
    assert agents["agent_index"].to_list() == list(range(14))
    assert agents.filter(pl.col("exit_tick").is_not_null())["agent"].to_list() == ["pm-0002"]


def test_event_counts_match_summary(seed7):
    ev = seed7.events
    counts = dict(ev.group_by("kind").len().iter_rows())
    s = seed7.summary
    assert counts["task_created"] == s.tasks_created
    assert counts.get("task_completed", 0) == s.tasks_completed
    assert counts.get("task_failed", 0) == s.tasks_failed
    assert counts.get("message_sent", 0) + counts.get("help_given", 0) == s.messages


def test_events_name_their_actors(seed7):
    """Agents by id, departments as dept:NAME, task arrivals by the system."""
    ev = seed7.events
    created = ev.filter(pl.col("kind") == "task_created")
    assert created.height and (created["actor"] == "system").all()
    routed = ev.filter(pl.col("kind") == "task_routed")
    assert routed.height and routed["actor"].str.starts_with("dept:").all()
    started = ev.filter(pl.col("kind") == "task_started")
    agent_ids = set(seed7.agents["agent"].to_list())
    assert started.height and set(started["actor"].to_list()) <= agent_ids


def test_same_seed_same_hash(tmp_path, seed7):
    again = _run(tmp_path / "again")
    assert again.summary.ledger_sha256 == seed7.summary.ledger_sha256
    assert again.tasks.equals(seed7.tasks)
    assert again.events.equals(seed7.events)


@pytest.mark.parametrize("per_actor", ["1", "auto", "5"])
def test_grouping_does_not_change_the_ledger(tmp_path, seed7, per_actor):
    res = _run(tmp_path / per_actor, [f"runtime.agents_per_actor={per_actor}"])
    expected_groups = {"1": 14, "5": 3, "auto": 1}[per_actor]  # slots: 12 agents, 2 hires
    assert res.summary.groups == expected_groups
    assert res.summary.ledger_sha256 == seed7.summary.ledger_sha256
    assert res.agents.drop("cost_usd").equals(seed7.agents.drop("cost_usd"))


def test_different_seed_different_hash(tmp_path, seed7):
    other = _run(tmp_path / "s8", seed=8)
    assert other.summary.ledger_sha256 != seed7.summary.ledger_sha256


def test_checkpointing_does_not_change_the_ledger(tmp_path):
    plain = _run(tmp_path / "plain", seed=4, ticks=100)
    ckpt = _run(tmp_path / "ckpt", ["runtime.checkpoint_every=10"], seed=4, ticks=100)
    assert ckpt.summary.ledger_sha256 == plain.summary.ledger_sha256
    assert ckpt.events.equals(plain.events)
    assert ckpt.summary.tasks_completed == plain.summary.tasks_completed


def test_checkpointing_does_not_change_the_tasks_table(tmp_path):
    plain = _run(tmp_path / "plain", seed=4, ticks=100)
    ckpt = _run(tmp_path / "ckpt", ["runtime.checkpoint_every=10"], seed=4, ticks=100)
    assert ckpt.tasks.equals(plain.tasks)


def test_rerun_into_same_directory(tmp_path):
    """A run directory holding results is not written into unless asked; asked, the old
    results are replaced, never mixed with the new."""
    a = _run(tmp_path / "x", ticks=30)
    before = (tmp_path / "x" / "summary.json").read_text()
    with pytest.raises(synthorg.errors.MisuseError, match="pass --overwrite"):
        _run(tmp_path / "x", ticks=30)
    assert (tmp_path / "x" / "summary.json").read_text() == before
    # what an earlier run's sandboxes and incidents left goes too: a stale workspace record
    # would hand this run's scopes the old run's files
    stale = {"incidents.jsonl": "{}\n", "mcp-git.log": "old\n",
             "sandbox-workspaces.jsonl": '{"scope": "agent-6", "volume": "old"}\n'}
    for name, text in stale.items():
        (tmp_path / "x" / name).write_text(text)
    cfg = load_config(STARTUP, LOCAL)
    b = synthorg.Simulation(cfg, seed=7, out=tmp_path / "x", overwrite=True).run(ticks=30)
    assert a.summary.ledger_sha256 == b.summary.ledger_sha256
    assert b.tasks.height == b.summary.tasks_created
    assert not any((tmp_path / "x" / name).read_text() == text if (tmp_path / "x" / name)
                   .exists() else False for name, text in stale.items())


# ---- organisational behaviour ----------------------------------------------------------------

RATES = {t.name: t.rate for t in load_config(STARTUP).workload.task_types}


def _overloaded(factor: float) -> list[str]:
    return [f"workload.task_types.{name}.rate={rate * factor}" for name, rate in RATES.items()]


@pytest.mark.parametrize("seed", [1, 7])
def test_overload_fails_more_and_queues_grow(tmp_path, seed):
    normal = _run(tmp_path / "n", seed=seed, ticks=150)
    busy = _run(tmp_path / "b", _overloaded(5), seed=seed, ticks=150)
    n, b = normal.summary, busy.summary
    assert b.tasks_created > 3 * n.tasks_created
    assert b.conservation_ok and n.conservation_ok
    assert b.tasks_failed / b.tasks_created > n.tasks_failed / n.tasks_created
    assert busy.agents["queue_len"].mean() > normal.agents["queue_len"].mean()


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_seniors_do_better_work_than_juniors(tmp_path, seed):
    agents = _run(tmp_path / "q", seed=seed, ticks=300).agents
    senior = agents.filter(pl.col("seniority").is_in(["senior", "lead"]))
    junior = agents.filter(pl.col("seniority") == "junior")
    assert senior.height > 0 and junior.height > 0
    assert senior["mean_quality"].mean() > junior["mean_quality"].mean()
