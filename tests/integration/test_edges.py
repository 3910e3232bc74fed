"""Clear failure at the edges: unreachable clusters, out-of-range options, forks that cannot
be, all exit 2 quickly with a line that says what."""

from __future__ import annotations

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
    r = runner.invoke(app, ["run", str(STARTUP), "--from", str(tmp_path), "--at-tick", "40",
                            "--ticks", "30", "--out", str(tmp_path / "f")])
    assert r.exit_code == 2
    assert "--ticks (30) must be more than --at-tick (40)" in " ".join(r.output.split())
