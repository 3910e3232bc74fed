"""Long-term memory inside simulations: the default company on Mem0 (embedded Qdrant, the local
model), reproducible whatever the layout, carried through kill -9 and resume, and changing
what agents do."""

from __future__ import annotations

import json

import polars as pl
import pytest
from typer.testing import CliRunner

import synthorg
from synthorg.cli.app import app
from tests.conftest import DEFAULT_COMPANY, STARTUP, kill_9_and_resume, run_until_checkpoints

runner = CliRunner()
LOCAL = ["runtime.backend=local"]


def _run(path, out, overrides=(), seed=5, ticks=60) -> synthorg.RunResult:
    cfg = synthorg.load_config(path, [*LOCAL, *overrides])
    return synthorg.Simulation(cfg, seed=seed, out=out).run(ticks=ticks)


@pytest.fixture(scope="module")
def mem0_run(tmp_path_factory) -> synthorg.RunResult:
    return _run(DEFAULT_COMPANY, tmp_path_factory.mktemp("mem0") / "run")


def test_the_default_company_remembers_in_mem0(mem0_run):
    s = mem0_run.summary
    assert s.memory_writes > 0 and s.memory_searches > 0
    kinds = mem0_run.events.group_by("kind").len()
    counts = dict(zip(kinds["kind"].to_list(), kinds["len"].to_list(), strict=True))
    assert counts["memory_written"] == s.memory_writes
    assert counts["memory_searched"] == s.memory_searches
    # one search per task taken up
    assert s.memory_searches == counts["task_started"]
    store = mem0_run.run_dir / "memory" / "shard-0"
    assert (store / "qdrant").is_dir() and (store / "history.db").is_file()


def test_what_is_retrieved_changes_the_work(mem0_run):
    searched = mem0_run.events.filter(pl.col("kind") == "memory_searched")
    assert searched["target"].max() > 0  # memories came back
    assert searched["value"].max() > 0  # and their experience counted


def test_a_mem0_run_replays_to_the_same_hash(mem0_run):
    r = runner.invoke(app, ["replay", str(mem0_run.run_dir)])
    assert r.exit_code == 0, r.output


def _hash(out, overrides, ticks=80) -> str:
    return _run(STARTUP, out, overrides, ticks=ticks).summary.ledger_sha256


def test_memory_layout_never_changes_the_ledger(ray_session, tmp_path):
    """Shards, groups and backend move where memories live and who asks for them; what is
    retrieved, and so the ledger, stays the same."""
    base = _hash(tmp_path / "a", [])
    ray = ["runtime.backend=ray"]
    assert _hash(tmp_path / "b", [*ray, "runtime.agents_per_actor=3", "memory.shards=3"]) == base
    assert _hash(tmp_path / "c", [*ray, "runtime.agents_per_actor=12"]) == base
    off = _hash(tmp_path / "d", ["memory.enabled=false"])
    assert off != base  # memory is part of what happens


def test_kill_9_and_resume_with_mem0_gives_the_uninterrupted_ledger(tmp_path):
    args = ["--set", "runtime.backend=local", "--set", "runtime.checkpoint_every=10",
            "--seed", "3", "--ticks", "120"]
    whole = runner.invoke(app, ["run", str(DEFAULT_COMPANY), "--out", str(tmp_path / "whole"),
                                "--quiet", *args])
    assert whole.exit_code == 0, whole.output
    expected = json.loads((tmp_path / "whole" / "summary.json").read_text())
    out = tmp_path / "cut"
    proc = run_until_checkpoints([str(DEFAULT_COMPANY), "--out", str(out), *args], out, 3)
    proc.kill()
    proc.wait()
    marker = _plant_a_pickle(out, tmp_path / "pwned")
    summary = kill_9_and_resume(proc, out)
    assert not marker.exists()  # the store's files were never read back
    assert summary.memory_writes == expected["memory_writes"]
    assert summary.ledger_sha256 == expected["ledger_sha256"]


class _Exploit:
    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _plant_a_pickle(run_dir, marker):
    """What a crafted run directory could hold: embedded Qdrant keeps points as pickles."""
    import pickle
    import sqlite3

    stores = list((run_dir / "memory").glob("shard-*/qdrant/collection/*/storage.sqlite"))
    assert stores, "the killed run left no store to craft"
    with sqlite3.connect(stores[0]) as db:
        db.execute("INSERT OR REPLACE INTO points VALUES (?, ?)",
                    ("crafted", sqlite3.Binary(pickle.dumps(_Exploit(marker)))))
    return marker


def test_memory_on_beats_memory_off_across_seeds(tmp_path):
    """The A/B of the issue, small: over 10 seeds, remembered experience gives higher quality
    with fewer help requests (paired 95 % intervals exclude zero) and completes more work.
    (`synthorg bench --memory-ab` runs it on the default company at full length.)"""
    from synthorg.memory.ab import memory_ab

    report = memory_ab(STARTUP, seeds=range(10), ticks=150, out=tmp_path,
                       overrides=["tools.analyse.executor=null"])
    assert report["mean_quality"]["ci95"][0] > 0, report["mean_quality"]
    assert report["help_requests"]["ci95"][1] < 0, report["help_requests"]
    assert report["tasks_completed"]["mean_diff"] > 0, report["tasks_completed"]
