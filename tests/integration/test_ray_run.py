"""End to end on real Ray actors: outputs, replay, determinism across groupings and backends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import synthorg
from synthorg.cli.app import app
from tests.conftest import ENTERPRISE, STARTUP

pytestmark = pytest.mark.ray
runner = CliRunner()


def _run(tmp, name, *args):
    out = tmp / name
    result = runner.invoke(app, ["run", str(STARTUP), "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    return out, json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def seed7(ray_session, tmp_path_factory):
    return _run(tmp_path_factory.mktemp("runs"), "a", "--seed", "7", "--ticks", "200")


def test_run_writes_every_output(seed7):
    out, summary = seed7
    for name in ("summary.json", "events.parquet", "tasks.parquet", "agents.parquet",
                 "config.resolved.yaml"):
        assert (out / name).is_file(), name
    assert summary["backend"] == "ray"
    assert summary["tasks_completed"] > 0
    assert summary["messages"] > 0
    assert summary["tasks_created"] == (
        summary["tasks_completed"] + summary["tasks_failed"] + summary["tasks_open"])
    for field in ("run_id", "seed", "ticks", "agents", "tool_calls", "tool_calls_denied",
                  "tool_calls_escalated", "approvals", "escalations", "promotions", "demotions",
                  "hires", "fires", "reassignments", "llm_calls", "tokens_in", "tokens_out",
                  "cost_usd", "ledger_sha256", "wall_seconds", "agent_steps_per_second"):
        assert field in summary, field


def test_finished_tasks_have_no_nulls(seed7):
    out, summary = seed7
    tasks = pl.read_parquet(out / "tasks.parquet")
    finished = tasks.filter(pl.col("status").is_in(["completed", "failed"]))
    assert len(finished) == summary["tasks_completed"] + summary["tasks_failed"]
    cols = ["cost_usd", "duration_ticks", "turns", "tokens"]
    assert finished.select(cols).null_count().sum_horizontal().item() == 0
    # quality is a completed task's only: a failed one has none
    quality = finished.group_by("status").agg(pl.col("quality").null_count(), pl.len())
    assert {s: (n, all_) for s, n, all_ in quality.iter_rows()} == {
        s: (0 if s == "completed" else all_, all_) for s, _, all_ in quality.iter_rows()}
    assert tasks.filter(pl.col("status") == "open").height == summary["tasks_open"]
    assert tasks["task"].n_unique() == tasks.height == summary["tasks_created"]


def test_replay_reproduces_the_ledger(seed7):
    out, _ = seed7
    result = runner.invoke(app, ["replay", str(out)])
    assert result.exit_code == 0, result.output
    assert "identical" in result.output


def test_replay_detects_a_different_ledger(seed7, tmp_path):
    out, summary = seed7
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / "config.resolved.yaml").write_text((out / "config.resolved.yaml").read_text())
    summary = dict(summary, ledger_sha256="0" * 64)
    (forged / "summary.json").write_text(json.dumps(summary))
    assert runner.invoke(app, ["replay", str(forged)]).exit_code == 1


@pytest.mark.parametrize("override", [
    "runtime.agents_per_actor=1",
    "runtime.agents_per_actor=50",
    "runtime.agents_per_actor=8",  # several groups on shared memory, claiming departments
    "runtime.pipeline=graph",
    "runtime.pipeline=tasks",
    "runtime.backend=local",
])
def test_hash_does_not_depend_on_grouping_or_backend(seed7, tmp_path, override):
    _, summary = seed7
    _, other = _run(tmp_path, "b", "--seed", "7", "--ticks", "200", "--set", override)
    assert other["ledger_sha256"] == summary["ledger_sha256"]


@pytest.mark.parametrize("override", ["runtime.pipeline=graph", "runtime.pipeline=tasks"])
def test_hash_with_routing_placed_by_the_driver_as_across_nodes(seed7, tmp_path, monkeypatch,
                                                                override):
    """On a multi-node cluster groups cannot share a claims file: the driver places routing
    (balanced by step times on the graph, at the heads' groups with tasks)."""
    import actors.ray_backend

    monkeypatch.setattr(actors.ray_backend, "one_node", lambda: False)
    _, summary = seed7
    _, other = _run(tmp_path, "placed", "--seed", "7", "--ticks", "200", "--set",
                    "runtime.agents_per_actor=8", "--set", override)
    assert other["ledger_sha256"] == summary["ledger_sha256"]


def test_groups_claim_and_ring_through_files_that_live_as_long_as_the_run(ray_session, tmp_path):
    """Two groups on one machine: routing claims, the driver's doorbell and the shared-memory
    exchange (a mailbox FIFO and two output slots per group) are on, in one set of files
    with the backend's lock, and all go with the run."""
    sim = synthorg.Simulation(synthorg.load_config(STARTUP, ["runtime.agents_per_actor=8"]),
                              seed=3, out=tmp_path / "claims")
    seen: dict[Path, str] = {}

    def look(done: int, total: int) -> None:
        if done == 3:
            scratch = sim.backend.scratch  # type: ignore[union-attr]
            for path in scratch.base.glob(f"synthorg-{scratch.id}.*"):
                seen[path] = "fifo" if path.is_fifo() else "file" if path.is_file() else "?"

    result = sim.run(ticks=5, on_tick=look)
    assert result.summary.groups == 2
    kinds = sorted((p.name.split(".", 1)[1], kind) for p, kind in seen.items())
    assert kinds == [("bell", "fifo"), ("claims", "file"), ("lock", "file"),
                     ("shm.box0", "fifo"), ("shm.box1", "fifo"), ("shm.out0.0", "file"),
                     ("shm.out0.1", "file"), ("shm.out1.0", "file"), ("shm.out1.1", "file")]
    assert not any(p.exists() for p in seen)


def test_a_different_seed_gives_a_different_ledger(seed7, tmp_path):
    _, summary = seed7
    _, other = _run(tmp_path, "c", "--seed", "8", "--ticks", "200")
    assert other["ledger_sha256"] != summary["ledger_sha256"]


def test_actors_are_named_by_role(ray_session, tmp_path):
    from ray.util import list_named_actors

    seen: set[str] = set()

    def look(done: int, total: int) -> None:
        if done == 1:
            seen.update(a["name"] for a in list_named_actors(all_namespaces=True))

    cfg = synthorg.load_config(STARTUP, ["runtime.agents_per_actor=6"])
    synthorg.Simulation(cfg, seed=1, out=tmp_path / "named").run(ticks=3, on_tick=look)
    assert {"agent-group:0", "agent-group:1", "secops"} <= seen
    assert "ledger" not in seen  # on one machine, groups write their ledger parts themselves


def test_enterprise_runs_50_ticks_on_ray(ray_session, tmp_path):
    cfg = synthorg.load_config(ENTERPRISE)
    result = synthorg.Simulation(cfg, seed=0, out=tmp_path / "ent").run(ticks=50)
    s = result.summary
    assert s.agents == 1000 and s.backend == "ray" and s.groups >= 1
    assert s.tasks_completed > 0 and s.conservation_ok


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="POSIX semaphores live in /dev/shm")
def test_a_run_that_starts_ray_leaves_no_semaphores_behind(tmp_path):
    """Ray's object store leaves its compiled-graph channels' semaphores in /dev/shm; a run
    that started Ray itself removes them once Ray is down."""
    def semaphores() -> set[str]:  # Ray's (other processes' multiprocessing ones come and go)
        return {p.name for kind in ("hdr", "obj") for p in Path("/dev/shm").glob(f"sem.{kind}*")}

    before = semaphores()
    exe = Path(sys.executable).with_name("synthorg")
    # two groups on the compiled graph (on one machine `auto` takes shm, which makes none)
    proc = subprocess.run([str(exe), "run", str(STARTUP), "--ticks", "5", "--out", str(tmp_path / "r"),
                           "--set", "runtime.agents_per_actor=7", "--set", "runtime.pipeline=graph"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["backend"] == "ray" and summary["groups"] == 2
    assert semaphores() - before == set()
