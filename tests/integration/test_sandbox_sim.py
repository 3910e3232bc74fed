"""Sandboxed work inside a simulation: an analyst's program goes SecOps → MCP client →
container → result → ledger, is judged against the correct program, replays to the same hash
on either backend, and a run that needs sandboxes without Docker stops at start."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import aiodocker
import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

import synthorg
from sandbox.backend import LABEL_RUN
from synthorg.cli.app import app
from synthorg.secops.forms import CallPicker, secops_tables
from tests.conftest import STARTUP

pytestmark = pytest.mark.timeout(600)


def _leftovers(run_dir) -> int:
    import asyncio

    key = hashlib.blake2b(str(run_dir.resolve()).encode(), digest_size=6).hexdigest()

    async def count() -> int:
        async with aiodocker.Docker() as docker:
            label = {"label": [f"{LABEL_RUN}={key}"]}
            volumes = (await docker.volumes.list(filters=label)).get("Volumes") or []
            return len(await docker.containers.list(all=True, filters=label)) + len(volumes)

    return asyncio.run(count())


def test_analyses_run_in_the_sandbox_and_are_judged(tmp_path):
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local"])
    result = synthorg.Simulation(cfg, out=tmp_path).run(ticks=150)
    actions = pl.read_parquet(tmp_path / "actions.parquet").filter(
        pl.col("executor") == "sandbox")
    assert actions.height > 0 and set(actions["tool"]) == {"analyse"}
    outcomes = set(actions.select("status", "value").rows())
    # right answers, wrong answers (quality 0.3) and crashes, as the programs say
    assert {("succeeded", 1.0), ("succeeded", 0.3), ("failed", 0.0)} <= outcomes
    programs = [json.loads(a)["code"] for a in actions["arguments"]]
    assert all("print(sum(i * i for i in range(n" in p for p in programs)
    crashed = actions.filter(pl.col("status") == "failed")["arguments"]
    assert all("// (n - n)" in json.loads(a)["code"] for a in crashed)
    # every call went through SecOps first: an allowed analyse call per action
    calls = result.events.filter((pl.col("kind") == "tool_call")
                                 & (pl.col("tool") == "analyse"))
    assert calls.height >= actions.height and set(calls["verdict"]) == {"allow"}
    assert _leftovers(tmp_path) == 0


@pytest.mark.ray
def test_sandboxed_runs_replay_to_the_same_hash_on_either_backend(ray_session, tmp_path):
    hashes = []
    for name, backend in (("a", "local"), ("b", "local"), ("c", "ray")):
        cfg = synthorg.load_config(STARTUP, [f"runtime.backend={backend}"])
        hashes.append(synthorg.Simulation(cfg, out=tmp_path / name).run(ticks=80)
                      .summary.ledger_sha256)
    assert len(set(hashes)) == 1
    r = CliRunner().invoke(app, ["replay", str(tmp_path / "a")])
    assert r.exit_code == 0 and "identical" in r.stdout, r.output
    assert _leftovers(tmp_path / "c") == 0


def test_competence_decides_whether_the_program_is_right():
    cfg = synthorg.load_config(STARTUP)
    tables = secops_tables(cfg)
    d_ids = tuple(f"a{i}" for i in range(4000))
    picker = CallPicker(cfg, tables, d_ids, np.uint64(7))
    tool = [t.name for t in cfg.tools].index("analyse")
    agents = np.arange(4000)
    tools = np.full(4000, tool)
    correct = tables.forms.ordinary_lo[tool]
    shares = []
    for competence in (0.1, 0.5, 0.9):
        forms = picker.pick(3, agents, agents.astype(np.int64) + 10**6, tools,
                            np.ones(4000, np.int64), np.full(4000, competence))
        ordinary = forms[~tables.forms.harmful(forms)]
        shares.append(float(np.mean(ordinary == correct)))
    assert shares[0] < shares[1] < shares[2]
    assert abs(shares[1] - 0.5) < 0.05


def test_a_run_that_needs_sandboxes_stops_at_start_without_docker(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    r = CliRunner().invoke(app, ["run", str(STARTUP), "--out", str(tmp_path / "run"),
                                 "--set", "runtime.backend=local", "--ticks", "5"])
    assert r.exit_code == 2, r.output
    assert "no Docker daemon answers" in r.output and "make docker" in r.output
    assert "Traceback" not in r.output


def test_an_interrupted_run_keeps_its_workspaces_for_resume(tmp_path):
    from tests.conftest import interrupted_at

    sets = ["runtime.backend=local", "runtime.checkpoint_every=10"]
    whole = synthorg.Simulation(synthorg.load_config(STARTUP, sets), out=tmp_path / "whole"
                                ).run(ticks=60)
    sim = synthorg.Simulation(synthorg.load_config(STARTUP, sets), out=tmp_path / "cut")
    interrupted_at(sim, 60, at=45)
    assert _leftovers(tmp_path / "cut") > 0  # the analysts' workspaces, no containers
    resumed = sim.resume()
    assert resumed.summary.ledger_sha256 == whole.summary.ledger_sha256
    assert _leftovers(tmp_path / "cut") == 0


def test_an_external_mcp_servers_tool_is_called_like_any_other(tmp_path):
    import sys

    from tests.conftest import REPO

    server = REPO / "tests" / "data" / "mcp" / "records_server.py"
    log = tmp_path / "records.log"
    sets = ["runtime.backend=local", "tools.analyse.executor=null",
            f"mcp_servers={{records: {{command: [{sys.executable}, {server}], "
            f"env: {{RECORDS_LOG: {log}, PYTHONPATH: {REPO}}}}}}}",
            "executors.records={kind: mcp, server: records, latency_ticks: 1}",
            "tools.sql_query.executor=records"]
    cfg = synthorg.load_config(STARTUP, sets)
    result = synthorg.Simulation(cfg, out=tmp_path / "run").run(ticks=80)
    actions = pl.read_parquet(tmp_path / "run" / "actions.parquet").filter(
        pl.col("executor") == "records")
    assert actions.height > 0 and set(actions["tool"]) == {"sql_query"}
    # what the server received is what SecOps let through, call for call (and the calls
    # of the last tick, whose outcomes fall after the run)
    received = Counter(log.read_text().splitlines())
    sent = Counter(json.loads(a)["query"].replace("\n", " ") for a in actions["arguments"])
    assert sent <= received and received.total() - sent.total() <= cfg.agent_count()
    # the server's answers decide: a query on a table it lacks fails, one it has succeeds
    outcome = dict(zip((json.loads(a)["query"] for a in actions["arguments"]),
                       actions["status"], strict=True))
    assert {s for q, s in outcome.items() if q.startswith("UPDATE tickets")} == {"succeeded"}
    assert {s for q, s in outcome.items() if "_items" in q} == {"failed"}
    denied = result.events.filter((pl.col("kind") == "tool_denied")
                                  & (pl.col("call_tool") == "sql_query"))
    assert all(q not in received for q in (json.loads(a)["query"] for a in denied["arguments"]))


def _kill_containers_of(run_dir) -> int:
    import asyncio

    key = hashlib.blake2b(str(run_dir.resolve()).encode(), digest_size=6).hexdigest()

    async def kill() -> int:
        async with aiodocker.Docker() as docker:
            running = await docker.containers.list(filters={"label": [f"{LABEL_RUN}={key}"]})
            for container in running:
                await container.kill()
            return len(running)

    return asyncio.run(kill())


def test_containers_killed_mid_run_change_nothing_in_the_ledger(tmp_path):
    """A failing sandbox is not a call's outcome: the calls go again in fresh containers."""
    sets = ["runtime.backend=local"]
    calm = synthorg.Simulation(synthorg.load_config(STARTUP, sets), out=tmp_path / "calm"
                               ).run(ticks=80)
    killed = []

    def kill(done: int, total: int) -> None:
        if done in (30, 31, 50):
            killed.append(_kill_containers_of(tmp_path / "hit"))

    hit = synthorg.Simulation(synthorg.load_config(STARTUP, sets), out=tmp_path / "hit"
                              ).run(ticks=80, on_tick=kill)
    assert sum(killed) > 0
    assert hit.summary.ledger_sha256 == calm.summary.ledger_sha256
    assert _leftovers(tmp_path / "hit") == 0


def test_an_mcp_server_that_keeps_failing_stops_the_run_with_its_reason(tmp_path):
    import subprocess
    import sys

    synthorg_cli = str(Path(sys.executable).with_name("synthorg"))
    out = tmp_path / "run"
    sets = ["--set", "runtime.backend=local", "--set", "tools.analyse.executor=null",
            "--set", f"mcp_servers={{broken: {{command: [{sys.executable}, -c, "
                     f"'import sys; sys.exit(3)'], timeout_s: 5}}}}",
            "--set", "executors.records={kind: mcp, server: broken, retries: 1}",
            "--set", "tools.sql_query.executor=records"]
    r = subprocess.run([synthorg_cli, "run", str(STARTUP), "--out", str(out), "--ticks", "40",
                        *sets], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "giving up after" in r.stderr
    assert "MCP server 'broken'" in r.stderr and "failed 2 times" in r.stderr
    incidents = [json.loads(line) for line in (out / "incidents.jsonl").read_text().splitlines()]
    assert len(incidents) >= 5
    assert all("MCP server 'broken'" in i["reason"] for i in incidents)
