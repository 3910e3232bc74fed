"""Shared fixtures. One Ray instance serves the whole test session."""

from __future__ import annotations

import os
from pathlib import Path
from typing import get_args

import pytest

from synthorg.config.base import HardRuleFamily

REPO = Path(__file__).resolve().parent.parent
DEFAULT_COMPANY = REPO / "templates" / "companies" / "startup.yaml"  # memory in Mem0
STARTUP = REPO / "tests" / "data" / "startup.yaml"  # the same, memory in process
CAREERS = REPO / "tests" / "data" / "careers.yaml"  # the same with HR reviews on
ENTERPRISE = REPO / "templates" / "companies" / "enterprise.yaml"
# SecOps with its detectors alone (the second look off): the overrides for load_config
SECOPS_RULES_ONLY = ("policies.security.second_look.enabled=false",)
# every detector family asking a person instead of refusing (policies.security.ask_instead_of_deny)
ASK_EVERY_FAMILY = ("policies.security.ask_instead_of_deny=[{}]".format(
    ", ".join(get_args(HardRuleFamily))),)

os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # tests never open the dashboard


@pytest.fixture(scope="session")
def ray_session():
    import ray

    from actors.ray_backend import ensure_ray

    # as a run starts it, so the session also removes what Ray leaves in /dev/shm
    ensure_ray(cpus=2)
    yield ray
    ray.shutdown()


@pytest.fixture
def scratch():
    """A set of machine-shared files (as a backend makes), removed after the test."""
    from synthorg.sim.scratch import Scratch

    made = Scratch("test")
    yield made
    made.remove()


@pytest.fixture(scope="session")
def startup_path() -> Path:
    return STARTUP


class Stop(Exception):
    """Raised from a tick callback to end a run as a crash would."""


def interrupted_at(sim, ticks: int, at: int) -> None:
    """Run `sim` for `ticks` but stop it after tick `at` as a crash would (no checkpoint of its
    own: what is on disk is what the run had written)."""

    def stop(done: int, total: int) -> None:
        if done == at:
            raise Stop

    try:
        sim.run(ticks=ticks, on_tick=stop)
    except Stop:
        return
    raise AssertionError(f"the run ended before tick {at}")


def killing_a_group(sim, at: int, group: int = 1):
    """A tick callback that kills one group actor's process (SIGKILL) once tick `at` is done;
    its `killed` list holds the pid."""
    import signal

    killed: list[int] = []

    def kill(done: int, total: int) -> None:
        if done == at and not killed:
            pid = sim.backend.group_pids()[group]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    kill.killed = killed  # type: ignore[attr-defined]
    return kill


def run_until_checkpoints(args: list[str], out: Path, checkpoints: int):
    """Start `synthorg run` (args after `run`) in a process of its own and return it once `out`
    holds `checkpoints` checkpoints (the test then kills or signals it)."""
    import subprocess
    import sys
    import time

    exe = str(Path(sys.executable).with_name("synthorg"))
    proc = subprocess.Popen([exe, "run", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if len(list((out / "checkpoints").glob("*.ckpt"))) >= checkpoints:
            return proc
        if proc.poll() is not None:
            pytest.fail(f"run ended before it could be interrupted: {proc.stderr.read()}")
        time.sleep(0.02)
    proc.kill()
    pytest.fail("no checkpoint appeared")


def kill_9_and_resume(proc, out: Path):
    """SIGKILL the run `proc` writes into `out` (no summary yet), then `synthorg resume` it;
    returns the resumed run's summary."""
    import signal

    from typer.testing import CliRunner

    import synthorg
    from synthorg.cli.app import app

    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "summary.json").exists()
    result = CliRunner().invoke(app, ["resume", str(out)])
    assert result.exit_code == 0, result.output
    return synthorg.Summary.model_validate_json((out / "summary.json").read_text())
