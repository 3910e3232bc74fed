"""A sweep on a two-node Ray cluster made on this machine: a second node joins the head (as
`ray start --address` would), the runs land on both nodes, and every run's ledger equals the
single-node sweep's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from synthorg.cli.app import app
from tests.conftest import REPO

pytestmark = pytest.mark.ray
TINY = REPO / "tests" / "data" / "experiments" / "tiny.yaml"

# Ray's own multi-node harness: each node a raylet of its own with one CPU; the process
# prints the head's address, then holds the cluster until its stdin closes. The harness
# notes its address where a plain ray.init() would join it: forgotten at once, so no other
# process on this machine (a run that starts its own Ray) finds the cluster by chance.
CLUSTER = """
import sys
import ray._common.utils
from ray.cluster_utils import Cluster
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
ray._common.utils.reset_ray_address()
cluster.add_node(num_cpus=1)
cluster.wait_for_nodes()
print(cluster.address, flush=True)
sys.stdin.read()
cluster.shutdown()
"""


@pytest.fixture
def two_nodes():
    proc = subprocess.Popen([sys.executable, "-c", CLUSTER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        address = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert address, "the cluster did not start"
        yield address
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_a_sweeps_runs_land_on_both_nodes_with_the_single_node_ledgers(
        two_nodes, ray_session, tmp_path):
    exe = str(Path(sys.executable).with_name("synthorg"))
    multi = subprocess.run([exe, "sweep", str(TINY), "--out", str(tmp_path / "multi"),
                            "--address", two_nodes, "--quiet"],
                           capture_output=True, text=True, timeout=600)
    assert multi.returncode == 0, multi.stderr
    single = CliRunner().invoke(app, ["sweep", str(TINY), "--out", str(tmp_path / "single"),
                                      "--quiet"])
    assert single.exit_code == 0, single.output
    on_two = pl.read_parquet(tmp_path / "multi" / "runs.parquet")
    on_one = pl.read_parquet(tmp_path / "single" / "runs.parquet")
    assert on_two["status"].to_list() == ["ok"] * 4
    assert on_two["node"].n_unique() == 2, on_two.select("run_key", "node")
    assert on_one["node"].n_unique() == 1
    hashes = dict(zip(on_one["run_key"], on_one["ledger_sha256"], strict=True))
    assert dict(zip(on_two["run_key"], on_two["ledger_sha256"], strict=True)) == hashes
