"""Clear failure at the edges: unreachable clusters, out-of-range options, forks that cannot
be, all exit 2 quickly with a line that says what."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synthorg.cli.app import app
from tests.conftest import STARTUP

runner = CliRunner()
SYNTHORG = str(Path(sys.executable).with_name("synthorg"))


@pytest.mark.parametrize(("address", "says"), [
    ("127.0.0.1:1", "no Ray cluster answers at 127.0.0.1:1"),
    ("not a host", "is not HOST:PORT"),
    ("nohost.invalid:6379", "cannot resolve host"),
])
def test_an_unreachable_address_exits_2_quickly(tmp_path, address, says):
    t0 = time.monotonic()
    proc = subprocess.run([SYNTHORG, "run", str(STARTUP), "--ticks", "2", "--out",
                           str(tmp_path / "r"), "--address", address],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert says in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize("args", [["--ticks", "20000000"], ["--seed", "1" + "0" * 22]])
def test_options_obey_the_schemas_limits(tmp_path, args):
    r = runner.invoke(app, ["run", str(STARTUP), "--out", str(tmp_path / "r"), *args])
    assert r.exit_code == 2
    assert not (tmp_path / "r").exists()


def test_a_fork_must_run_past_its_tick(tmp_path):
    r = runner.invoke(app, ["run", "--from", str(tmp_path), "--at-tick", "40",
                            "--ticks", "30", "--out", str(tmp_path / "f")])
    assert r.exit_code == 2
    assert "--ticks (30) must be more than --at-tick (40)" in " ".join(r.output.split())


def _wait_until_it_catches_sigterm(pid: int) -> None:
    """Until the entry point installs its handler the interpreter is still starting and SIGTERM
    kills it as the kernel's default (returncode -15): no program can answer before it runs. The
    clock of each case starts there, so a loaded machine does not shift the moment it tests."""
    import signal

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = int(next(line.split()[1] for line in status.splitlines()
                          if line.startswith("SigCgt:")), 16)
        if caught >> (signal.SIGTERM - 1) & 1:
            return
        time.sleep(0.005)
    raise AssertionError("the command never installed its SIGTERM handler")


# Moments from the imports (a signal that lands inside an import in a command is one typer
# turns into a silent exit 130; one inside a class body's __set_name__ comes back as a
# RuntimeError; one inside an at-fork hook is swallowed) through Ray starting to a run under
# way. A cold start compiles every module first (its own, empty bytecode cache).
@pytest.mark.parametrize(("after", "cold"), [(0.2, True), (0.5, True), (0.2, False),
                                             (0.4, False), (0.6, False), (0.8, False),
                                             (2.0, False)])
def test_sigterm_while_starting_exits_130_and_says_so(tmp_path, after, cold):
    import os
    import signal

    env = dict(os.environ)
    if cold:
        env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    proc = subprocess.Popen([SYNTHORG, "run", str(STARTUP), "--out", str(tmp_path / "r"),
                             "--ticks", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    _wait_until_it_catches_sigterm(proc.pid)
    time.sleep(after)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=180)
    if proc.returncode == 0:
        pytest.skip("the run ended before the signal")  # a fast machine
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err and "SIGTERM received" not in err
    assert "Exception ignored" not in err
    assert not list(Path("/tmp/ray").glob(f"session_*_{proc.pid}"))  # Ray's, named by pid


def test_a_run_that_started_ray_removes_its_session_directory(tmp_path):
    sessions = Path("/tmp/ray")
    before = set(sessions.glob("session_2*")) if sessions.is_dir() else set()
    proc = subprocess.run([SYNTHORG, "run", str(STARTUP), "--ticks", "3", "--out",
                           str(tmp_path / "r")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    after = set(sessions.glob("session_2*")) if sessions.is_dir() else set()
    assert not (after - before)


def test_a_ray_started_here_listens_on_loopback_only(ray_session):
    import ipaddress
    import os

    import psutil

    @ray_session.remote
    class Probe:
        def pid(self) -> int:
            return os.getpid()

    probe = Probe.remote()  # a worker too: each one serves gRPC
    worker = ray_session.get(probe.pid.remote())
    ours = {p.pid for p in psutil.Process().children(recursive=True)} | {os.getpid(), worker}
    listening = [c for c in psutil.net_connections("inet")
                 if c.status == psutil.CONN_LISTEN and c.pid in ours]
    servers = {psutil.Process(c.pid).name() for c in listening}
    assert {"gcs_server", "raylet"} <= servers and worker in {c.pid for c in listening}
    exposed = [(psutil.Process(c.pid).name(), c.laddr) for c in listening
               if not ipaddress.ip_address(c.laddr.ip.removeprefix("::ffff:")).is_loopback]
    assert not exposed
    ray_session.kill(probe)


def test_the_next_run_removes_what_a_killed_drivers_ray_left(tmp_path):
    import signal

    import psutil

    from tests.conftest import run_until_checkpoints

    sessions = Path("/tmp/ray")
    before = set(sessions.glob("session_2*")) if sessions.is_dir() else set()
    out = tmp_path / "killed"
    proc = run_until_checkpoints([str(STARTUP), "--out", str(out), "--ticks", "100000",
                                  "--set", "runtime.checkpoint_every=50"], out, 1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = set(sessions.glob("session_2*")) - before
    assert len(left) == 1  # what kill -9 leaves: the session directory (and Ray's agents)
    session = str(left.pop()) + "/"

    def holders() -> list[int]:
        found = []
        for p in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                if any(f.path.startswith(session) for f in p.open_files()):
                    found.append(p.pid)
        return found

    done = subprocess.run([SYNTHORG, "run", str(STARTUP), "--ticks", "3", "--out",
                           str(tmp_path / "next")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not Path(session).exists()
    assert not holders()
    assert not (set(sessions.glob("session_2*")) - before)


@pytest.fixture
def tiny_mounts(tmp_path):
    """A full (300 KB) and a read-only filesystem, or a skip where mounting is not allowed."""
    full, ro = tmp_path / "full", tmp_path / "ro"
    full.mkdir()
    ro.mkdir()
    made = []
    for where, options in ((full, "size=300k"), (ro, "ro,size=1m")):
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            for m in made:
                subprocess.run(["umount", str(m)], check=False)
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        made.append(where)
    yield full, ro
    for m in made:
        subprocess.run(["umount", str(m)], check=False)


def test_a_full_disk_and_a_read_only_directory_give_one_clear_line(tiny_mounts):
    full, ro = tiny_mounts
    local = ["--set", "runtime.backend=local"]
    proc = subprocess.run([SYNTHORG, "run", str(STARTUP), "--out", str(full / "r"), *local],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert "No space left on device" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([SYNTHORG, "run", str(STARTUP), "--out", str(ro / "r"), *local],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "Read-only file system" in proc.stderr and "Traceback" not in proc.stderr
