"""The engine foundation on real Ray actors: slow actions and a changing org give the ledger of
an in-process run, across layouts, pipelines, a killed worker and a killed driver."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

import synthorg
from synthorg.secops.parking import FILE, ApprovalStore
from tests.conftest import (
    ENTERPRISE,
    STARTUP,
    kill_9_and_resume,
    killing_a_group,
    run_until_checkpoints,
)
from tests.unit.test_actions import SLOW_TOOLS
from tests.unit.test_scenario import SHOCKS

runner = CliRunner()


def _hash(tmp: Path, name: str, overrides: list[str], config: Path = STARTUP, seed: int = 4,
          ticks: int = 80) -> str:
    cfg = synthorg.load_config(config, overrides)
    result = synthorg.Simulation(cfg, seed=seed, out=tmp / name).run(ticks=ticks)
    assert result.summary.conservation_ok
    return result.summary.ledger_sha256


@pytest.fixture(scope="module")
def local_hash(tmp_path_factory) -> str:
    return _hash(tmp_path_factory.mktemp("ref"), "local",
                 ["runtime.backend=local", *SLOW_TOOLS, *SHOCKS])


@pytest.mark.ray
@pytest.mark.parametrize("layout", [
    ["runtime.agents_per_actor=5", "runtime.pipeline=shm"],
    ["runtime.agents_per_actor=5", "runtime.pipeline=tasks"],
    ["runtime.agents_per_actor=4", "runtime.pipeline=graph"],
    ["runtime.workers=1"],
])
def test_slow_actions_and_a_scenario_on_ray_give_the_local_ledger(ray_session, tmp_path,
                                                                   local_hash, layout):
    assert _hash(tmp_path, "ray", [*SLOW_TOOLS, *SHOCKS, *layout]) == local_hash


@pytest.mark.ray
def test_a_killed_group_with_actions_in_flight_is_recovered(ray_session, tmp_path, local_hash):
    cfg = synthorg.load_config(STARTUP, [*SLOW_TOOLS, *SHOCKS, "runtime.agents_per_actor=5",
                                         "runtime.checkpoint_every=10"])
    sim = synthorg.Simulation(cfg, seed=4, out=tmp_path / "crash")
    kill = killing_a_group(sim, at=33)
    result = sim.run(ticks=80, on_tick=kill)
    assert kill.killed and result.summary.incidents >= 1  # type: ignore[attr-defined]
    assert result.summary.ledger_sha256 == local_hash


@pytest.mark.ray
def test_the_secops_actor_holds_the_approvals_and_its_death_is_recovered(ray_session, tmp_path,
                                                                        local_hash):
    """Approvals go through the secops actor; if it dies the run rolls back and goes on with
    the ledger of an undisturbed run (a lost office never reads as a rejection)."""
    import os

    cfg = synthorg.load_config(STARTUP, [*SLOW_TOOLS, *SHOCKS, "runtime.agents_per_actor=5",
                                         "runtime.checkpoint_every=10",
                                         "runtime.pipeline=tasks"])
    sim = synthorg.Simulation(cfg, seed=4, out=tmp_path / "secops")
    seen: dict[str, object] = {}

    def kill_secops(done: int, total: int) -> None:
        backend = sim.backend
        if done == 27 and "pid" not in seen:
            seen["state"] = backend.secops_state()  # type: ignore[union-attr]
            seen["parked"] = len(ApprovalStore(tmp_path / "secops" / FILE).listed())
            seen["pid"] = backend.secops_pid()  # type: ignore[union-attr]
            os.kill(seen["pid"], signal.SIGKILL)  # type: ignore[arg-type]

    result = sim.run(ticks=80, on_tick=kill_secops)
    state = seen["state"]
    assert state["tick"] > 0 and seen["parked"] > 0  # type: ignore[index,operator]
    assert result.summary.incidents >= 1
    assert result.summary.ledger_sha256 == local_hash


def test_kill_9_with_actions_pending_then_resume(tmp_path):
    """The driver dies while actions are in flight; resume re-issues what the checkpoint did
    not hold and ends with the uninterrupted ledger."""
    overrides = ["runtime.backend=local", *SLOW_TOOLS, *SHOCKS, "runtime.checkpoint_every=5",
                 "executors.slow.sleep_s=[0.0, 0.004]", "executors.slow.max_in_flight=512"]
    reference = _hash(tmp_path, "ref", overrides, config=ENTERPRISE, seed=2, ticks=60)
    out = tmp_path / "killed"
    args = [str(ENTERPRISE), "--out", str(out), "--seed", "2", "--ticks", "60"]
    for o in overrides:
        args += ["--set", o]
    summary = kill_9_and_resume(run_until_checkpoints(args, out, 3), out)
    assert summary.ledger_sha256 == reference
    assert summary.actions > 0 and summary.conservation_ok


@pytest.mark.ray
def test_enterprise_with_a_scenario_gives_the_same_ledger_on_both_backends(ray_session,
                                                                           tmp_path):
    local = _hash(tmp_path, "local", ["runtime.backend=local", *SHOCKS], config=ENTERPRISE,
                  ticks=70)
    assert _hash(tmp_path, "ray", [*SHOCKS], config=ENTERPRISE, ticks=70) == local
