"""Crash safety: kill -9 and resume, a dying group actor, Ctrl-C, forks, bad checkpoints."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import synthorg
from synthorg.cli.app import app
from synthorg.sim.checkpoint import FORMAT
from tests.conftest import (
    ENTERPRISE,
    STARTUP,
    interrupted_at,
    kill_9_and_resume,
    killing_a_group,
    run_until_checkpoints,
)

runner = CliRunner()
SYNTHORG = str(Path(sys.executable).with_name("synthorg"))
LONG_LOCAL = ["--set", "runtime.backend=local", "--set", "runtime.checkpoint_every=5",
              "--seed", "11", "--ticks", "150"]


@functools.cache
def _reference_hash() -> str:
    """The enterprise company's ledger hash for LONG_LOCAL's seed and ticks, undisturbed."""
    cfg = synthorg.load_config(ENTERPRISE, ["runtime.backend=local"])
    with tempfile.TemporaryDirectory() as out:
        return synthorg.Simulation(cfg, seed=11, out=Path(out) / "ref").run(
            ticks=150).summary.ledger_sha256


@functools.cache
def _undisturbed(seed: int, ticks: int) -> str:
    """The startup company's ledger hash, run through undisturbed (on the local backend: the
    ledger does not depend on the backend, the grouping or the pipeline)."""
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local"])
    with tempfile.TemporaryDirectory() as out:
        return synthorg.Simulation(cfg, seed=seed, out=Path(out) / "ref").run(
            ticks=ticks).summary.ledger_sha256


def _start_and_wait(out: Path, min_checkpoints: int) -> subprocess.Popen:
    return run_until_checkpoints([str(ENTERPRISE), "--out", str(out), *LONG_LOCAL], out,
                                 min_checkpoints)


def test_kill_9_then_resume_gives_the_uninterrupted_ledger(tmp_path):
    out = tmp_path / "killed"
    summary = kill_9_and_resume(_start_and_wait(out, min_checkpoints=4), out)
    assert summary.ledger_sha256 == _reference_hash()
    assert summary.conservation_ok


def test_sigint_checkpoints_and_says_how_to_resume(tmp_path):
    out = tmp_path / "interrupted"
    proc = _start_and_wait(out, min_checkpoints=2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "synthorg resume" in err and "Traceback" not in err
    result = runner.invoke(app, ["resume", str(out)])
    assert result.exit_code == 0, result.output
    summary = synthorg.Summary.model_validate_json((out / "summary.json").read_text())
    assert summary.ledger_sha256 == _reference_hash()


def test_fork_shares_the_parent_ledger_up_to_the_fork_tick(tmp_path):
    parent = tmp_path / "parent"
    base = ["runtime.backend=local", "runtime.checkpoint_every=20"]
    cfg = synthorg.load_config(STARTUP, base)
    synthorg.Simulation(cfg, seed=5, out=parent).run(ticks=120)
    child = tmp_path / "child"
    r = runner.invoke(app, ["run", "--from", str(parent), "--at-tick", "60",
                            "--out", str(child), "--set",
                            "policies.approvals.approve_probability=0.1"])
    assert r.exit_code == 0, r.output
    before = pl.col("tick") < 60
    p_events = pl.read_parquet(parent / "events.parquet").filter(before)
    c_events = pl.read_parquet(child / "events.parquet").filter(before)
    assert p_events.height > 0 and p_events.equals(c_events)
    p_all = pl.read_parquet(parent / "events.parquet")
    c_all = pl.read_parquet(child / "events.parquet")
    assert not p_all.equals(c_all)  # the policy change made a difference after the fork
    summary = synthorg.Summary.model_validate_json((child / "summary.json").read_text())
    assert (summary.forked_from, summary.fork_tick) == (str(parent.resolve()), 60)
    # replay rebuilds the parent's ledger up to the fork, then the fork's
    r = runner.invoke(app, ["replay", str(child)])
    assert r.exit_code == 0 and "identical" in r.output, r.output
    # ... and a changed record of the fork is refused, not replayed
    record = child / "fork.json"
    record.write_text(record.read_text().replace('"at_tick": 60', '"at_tick": 40'))
    r = runner.invoke(app, ["replay", str(child)])
    assert r.exit_code == 2 and "fork.json" in " ".join(r.output.split())


def test_corrupted_checkpoint_is_reported(tmp_path):
    out = tmp_path / "run"
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local", "runtime.checkpoint_every=10"])
    synthorg.Simulation(cfg, seed=1, out=out).run(ticks=30)
    latest = sorted((out / "checkpoints").glob("*.ckpt"))[-1]
    blob = bytearray(latest.read_bytes())
    blob[-10] ^= 0xFF
    latest.write_bytes(bytes(blob))
    r = runner.invoke(app, ["resume", str(out)])
    assert r.exit_code == 2
    assert "changed or truncated since its run wrote it" in " ".join(r.output.split())
    # without the manifest (lost, or rewritten), the checkpoint's own header still checks
    (out / "checkpoints" / "manifest.json").unlink()
    r = runner.invoke(app, ["resume", str(out)])
    assert r.exit_code == 2
    assert "corrupted" in r.output
    latest.write_bytes(b"garbage")
    r = runner.invoke(app, ["resume", str(out)])
    assert r.exit_code == 2 and "not a synthorg checkpoint" in r.output
    # a checkpoint of an older synthorg
    older = blob.replace(f'"format": {FORMAT}'.encode(), f'"format": {FORMAT - 1}'.encode(), 1)
    assert older != blob
    latest.write_bytes(bytes(older))
    r = runner.invoke(app, ["resume", str(out)])
    assert r.exit_code == 2
    assert f"checkpoint format {FORMAT - 1} is not supported" in " ".join(r.output.split())


@pytest.mark.ray
@pytest.mark.parametrize("pipeline", ["shm", "graph", "tasks"])
def test_a_killed_group_actor_is_recovered(ray_session, tmp_path, pipeline):
    overrides = ["runtime.agents_per_actor=8", "runtime.checkpoint_every=10",
                 f"runtime.pipeline={pipeline}"]
    cfg = synthorg.load_config(STARTUP, overrides)
    sim = synthorg.Simulation(cfg, seed=3, out=tmp_path / "crash")
    kill = killing_a_group(sim, at=25)
    result = sim.run(ticks=60, on_tick=kill)
    s = result.summary
    assert kill.killed and s.incidents >= 1  # type: ignore[attr-defined]
    assert s.conservation_ok
    assert result.events.filter(pl.col("kind") == "incident").height >= 1
    tasks = result.tasks
    assert tasks["task"].n_unique() == tasks.height == s.tasks_created  # none lost or doubled
    assert s.ledger_sha256 == _undisturbed(seed=3, ticks=60)


@pytest.mark.ray
def test_a_group_failing_in_its_run_of_ticks_is_reported_not_waited_for(ray_session, tmp_path):
    """On the shm pipeline the other groups wait for a failed group forever; the driver must
    notice (its doorbell stays silent) and raise the group's error."""
    import numpy as np
    import ray

    from actors.doorbell import Doorbell
    from actors.pipelines import ShmPipeline
    from actors.shm import ShmLinks
    from synthorg.sim.channels import Exchange

    @ray.remote(num_cpus=0)
    class Failing:
        def keep(self, *arrays: np.ndarray) -> None:
            pass

        def run(self, first: int, route: np.ndarray, ring_every: int) -> int:
            raise ValueError(f"a bug at tick {first}")

    bounds = [(0, 4), (4, 8)]
    links = ShmLinks(tmp_path / "links", len(bounds))
    bell = Doorbell(tmp_path / "bell", 1)

    class Route:
        def assign(self) -> np.ndarray:
            return np.zeros(3, dtype=np.int64)

    pipeline = ShmPipeline([Failing.remote() for _ in bounds], Exchange.initial(bounds, 3),
                           Route(), links, bell)  # type: ignore[arg-type]
    t0 = time.monotonic()
    try:
        with pytest.raises(ray.exceptions.RayTaskError, match="a bug at tick 0"):
            for tick in range(3 * ShmPipeline.BATCH):  # the driver listens every BATCH ticks
                pipeline.submit(tick)
    finally:
        pipeline.close()
        bell.close()
    assert time.monotonic() - t0 < 30


def _forge(path: Path, payload: bytes) -> None:
    """A checkpoint file whose header checksum matches its (crafted) payload."""
    import hashlib
    import json

    from synthorg.sim.checkpoint import MAGIC

    blob = path.read_bytes()
    header = json.loads(blob[len(MAGIC):blob.index(b"\n", len(MAGIC))])
    header.update(length=len(payload), sha256=hashlib.sha256(payload).hexdigest())
    path.write_bytes(MAGIC + json.dumps(header).encode() + b"\n" + payload)


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_crafted_checkpoint_cannot_run_code(tmp_path):
    """A pickle or an object array with a matching checksum is refused as content, and
    nothing in it runs."""
    import io
    import pickle

    import numpy as np

    out = tmp_path / "run"
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local", "runtime.checkpoint_every=10"])
    synthorg.Simulation(cfg, seed=1, out=out).run(ticks=30)
    latest = sorted((out / "checkpoints").glob("*.ckpt"))[-1]
    marker = tmp_path / "pwned"
    _forge(latest, pickle.dumps(_Payload(marker)))
    r = runner.invoke(app, ["resume", str(out)])
    assert r.exit_code == 2 and "changed or truncated" in " ".join(r.output.split())
    # an attacker who can write the checkpoint can write its manifest too: the format holds
    (out / "checkpoints" / "manifest.json").unlink()
    for args in (["resume", str(out)],
                 ["run", "--from", str(out), "--at-tick", "20", "--out",
                  str(tmp_path / "fork")]):
        if args[0] == "run":
            latest = out / "checkpoints" / "tick-00000020.ckpt"
            _forge(latest, pickle.dumps(_Payload(marker)))
        r = runner.invoke(app, args)
        assert r.exit_code == 2, r.output
        assert "unexpected checkpoint content" in " ".join(r.output.split())
        assert not marker.exists()
    buffer = io.BytesIO()
    np.savez(buffer, tree=np.frombuffer(b"{}", np.uint8),
             a0=np.array([_Payload(marker)], dtype=object))
    _forge(latest, buffer.getvalue())
    r = runner.invoke(app, ["resume", str(out)])
    assert r.exit_code == 2 and not marker.exists()


def test_a_second_run_into_a_live_run_directory_is_refused(tmp_path):
    """The directory belongs to the first run while it lives: the second exits 2 at once and
    the first's tables stay whole."""
    out = tmp_path / "shared"
    first = _start_and_wait(out, min_checkpoints=1)
    # held still while the second starts, so a fast machine cannot finish it first
    first.send_signal(signal.SIGSTOP)
    try:
        assert first.poll() is None, "the first run ended before it could be held"
        second = subprocess.run([SYNTHORG, "run", str(ENTERPRISE), "--out", str(out),
                                 *LONG_LOCAL, "--overwrite"], capture_output=True, text=True,
                                timeout=120)
    finally:
        first.send_signal(signal.SIGCONT)
    assert second.returncode == 2, second.stderr
    assert "in use by another run" in " ".join(second.stderr.split())
    _, err = first.communicate(timeout=240)
    assert first.returncode == 0, err
    s = synthorg.Summary.model_validate_json((out / "summary.json").read_text())
    tasks = pl.read_parquet(out / "tasks.parquet")
    assert tasks.height == tasks["task"].n_unique() == s.tasks_created
    assert s.ledger_sha256 == _reference_hash()


@pytest.mark.parametrize("damage", ["flip", "delete-part", "delete-dir"])
def test_ledger_parts_are_checked_before_resume_and_fork(tmp_path, damage):
    out = tmp_path / "run"
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local", "runtime.checkpoint_every=10",
                                         "simulation.ticks=60"])
    synthorg.Simulation(cfg, seed=2, out=out).run(ticks=60)
    (out / "summary.json").unlink()
    parts = sorted((out / "ledger-parts").glob("events-*.npy"))
    assert parts
    if damage == "flip":
        blob = bytearray(parts[0].read_bytes())
        blob[-4:] = bytes(b ^ 0xFF for b in blob[-4:])
        parts[0].write_bytes(bytes(blob))
    elif damage == "delete-part":
        parts[0].unlink()
    else:
        import shutil

        shutil.rmtree(out / "ledger-parts")
    before = sorted(p.name for p in out.rglob("*"))
    for args in (["resume", str(out)],
                 ["run", "--from", str(out), "--at-tick", "50", "--out",
                  str(tmp_path / "fork")]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, r.output
        said = " ".join(r.output.split())
        assert "ledger-parts" in said and ("missing" in said or "changed or truncated" in said)
    assert sorted(p.name for p in out.rglob("*")) == before  # nothing written
    assert not (tmp_path / "fork").exists()


def test_provenance_says_why_a_replay_differs(tmp_path):
    import json

    out = tmp_path / "run"
    r = runner.invoke(app, ["run", str(STARTUP), "--out", str(out), "--ticks", "20",
                            "--set", "runtime.backend=local"])
    assert r.exit_code == 0, r.output
    made = json.loads((out / "provenance.json").read_text())
    assert made["synthorg"] and made["python"] and made["dependencies"]["ray"]
    assert len(made["config_digest"]) == 16
    from synthorg.sim import manifest

    summary = json.loads((out / "summary.json").read_text())
    (out / "summary.json").write_text(json.dumps(dict(summary, ledger_sha256="0" * 64)))
    r = runner.invoke(app, ["replay", str(out)])
    assert r.exit_code == 2 and "summary.json: changed or truncated" in " ".join(r.output.split())
    manifest.record(out, [out / "summary.json"])  # as if that run had recorded this ledger
    r = runner.invoke(app, ["replay", str(out)])
    assert r.exit_code == 1
    assert "same code and config: a determinism bug" in " ".join(r.output.split())
    (out / "provenance.json").write_text(json.dumps(dict(made, commit="0123456789abcdef")))
    r = runner.invoke(app, ["replay", str(out)])
    assert r.exit_code == 1 and "different code" in " ".join(r.output.split())


@pytest.mark.ray
@pytest.mark.parametrize(("moment", "nth"), [("start", 1), ("capture", 2), ("gather", 1)])
@pytest.mark.parametrize("pipeline", ["shm", "tasks"])
def test_a_group_lost_outside_a_tick_is_recovered(ray_session, tmp_path, moment, nth, pipeline):
    """At start, while a checkpoint is captured, and while results are gathered after the last
    tick: a lost group is an incident, the run rolls back and ends with the undisturbed
    ledger."""
    cfg = synthorg.load_config(STARTUP, ["runtime.agents_per_actor=7", "runtime.checkpoint_every=10",
                                         f"runtime.pipeline={pipeline}"])
    sim = synthorg.Simulation(cfg, seed=3, out=tmp_path / "hit")
    seen: list[str] = []

    def hook(name: str) -> None:
        seen.append(name)
        if name == moment and seen.count(name) == nth:
            os.kill(sim.backend.group_pids()[1], signal.SIGKILL)  # type: ignore[union-attr]

    sim.fault_hook = hook
    result = sim.run(ticks=40)
    assert seen.count(moment) > nth  # it happened, and the run went through it again
    assert result.summary.incidents >= 1
    assert result.events.filter(pl.col("kind") == "incident").height >= 1
    assert result.summary.ledger_sha256 == _undisturbed(seed=3, ticks=40)


def test_a_checkpoint_its_manifest_does_not_list_is_passed_over(tmp_path):
    """A run that died between writing a checkpoint and listing it resumes from the one
    before, to the same ledger."""
    import json

    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local", "runtime.checkpoint_every=10",
                                         "simulation.ticks=45"])
    whole = synthorg.Simulation(cfg, seed=8, out=tmp_path / "whole").run(ticks=45)
    out = tmp_path / "cut"
    sim = synthorg.Simulation(cfg, seed=8, out=out)
    interrupted_at(sim, 45, at=35)
    listed = out / "checkpoints" / "manifest.json"
    names = json.loads(listed.read_text())
    assert "tick-00000030.ckpt" in names
    del names["tick-00000030.ckpt"]
    listed.write_text(json.dumps(names))
    resumed = synthorg.Simulation(cfg, seed=8, out=out).resume()
    assert resumed.summary.ledger_sha256 == whole.summary.ledger_sha256


def test_the_api_resumes_to_the_ticks_the_run_was_started_with(tmp_path):
    """`Simulation(cfg).resume()` goes on to the run's own length (its config.resolved.yaml),
    not the config's default length: the ledger is the uninterrupted run's."""
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local", "runtime.checkpoint_every=10"])
    assert cfg.simulation.ticks != 90
    whole = synthorg.Simulation(cfg, seed=3, out=tmp_path / "whole").run(ticks=90)
    interrupted_at(synthorg.Simulation(cfg, seed=3, out=tmp_path / "cut"), 90, 45)
    resumed = synthorg.Simulation(cfg, seed=3, out=tmp_path / "cut").resume()
    assert resumed.summary.ticks == 90
    assert resumed.summary.ledger_sha256 == whole.summary.ledger_sha256
