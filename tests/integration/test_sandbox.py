"""The tool sandbox against the real Docker engine: what a hardened container refuses, what it
contains, its time limit, MCP sessions with persistent workspaces, and that no container of a
run outlives it (also when the run's process is killed)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import aiodocker
import pytest
from typer.testing import CliRunner

from sandbox.backend import LABEL_RUN, Limits
from sandbox.cleanup import sweep_dead
from sandbox.containers import DockerSandbox
from synthorg.cli.app import app

pytestmark = pytest.mark.timeout(300)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def docker_ready():
    """make test builds the daemon and image first (Makefile: sandbox-image)."""
    done = subprocess.run(["sh", str(REPO / "sandbox" / "build_image.sh")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def _box() -> DockerSandbox:
    return DockerSandbox(f"test{uuid.uuid4().hex[:8]}")


async def _labelled(run_key: str) -> tuple[int, int]:
    async with aiodocker.Docker() as docker:
        label = {"label": [f"{LABEL_RUN}={run_key}"]}
        containers = await docker.containers.list(all=True, filters=label)
        volumes = (await docker.volumes.list(filters=label)).get("Volumes") or []
        return len(containers), len(volumes)


def test_a_program_runs_and_reports(docker_ready):
    async def go():
        box = _box()
        try:
            return await box.run_program("import sys; print(6*7); print('e', file=sys.stderr);"
                                         " sys.exit(3)", Limits())
        finally:
            await box.close()

    r = asyncio.run(go())
    assert (r.exit_code, r.stdout, r.stderr, r.timed_out) == (3, "42\n", "e\n", False)


@pytest.mark.parametrize("code", [
    "import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)",
    "import urllib.request; urllib.request.urlopen('http://example.com', timeout=3)",
])
def test_network_access_fails(docker_ready, code):
    async def go():
        box = _box()
        try:
            return await box.run_program(code, Limits())
        finally:
            await box.close()

    r = asyncio.run(go())
    assert r.exit_code != 0 and ("unreachable" in r.stderr or "resolution" in r.stderr
                                 or "Name or service" in r.stderr), r.stderr


def test_the_time_limit_kills(docker_ready):
    async def go():
        box = _box()
        try:
            return await box.run_program("while True: pass", Limits(timeout_s=1.0))
        finally:
            await box.close()

    r = asyncio.run(go())
    assert r.timed_out and r.exit_code is None and r.duration_s < 5


def test_a_session_keeps_its_workspace_and_refuses_the_rest(docker_ready, tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host only")

    async def go():
        box = _box()
        try:
            s = await box.open_session("task-1", Limits())
            out = {"write": await s.call("write_file", {"path": "notes/a.txt",
                                                        "content": "kept"}, 30)}
            again = await box.open_session("task-1", Limits())  # the same session
            out["read"] = await again.call("run_python",
                                           {"code": "print(open('notes/a.txt').read())"}, 30)
            out["escape"] = await s.call("write_file", {"path": "../etc/x", "content": "x"}, 30)
            out["root"] = await s.call("run_shell", {"command": "echo x > /etc/passwd; "
                                                    "touch /opt/server/x; touch /usr/x"}, 30)
            out["host"] = await s.call("run_python", {"code": f"open({str(secret)!r}).read()"},
                                       30)
            out["listed"] = await s.call("list_files", {"path": "notes"}, 30)
            return out, await _labelled(box.run_key)
        finally:
            await box.close()

    out, (containers, volumes) = asyncio.run(go())
    assert out["read"].metadata["stdout"] == "kept\n"
    assert out["escape"].is_error and "outside the workspace" in out["escape"].text
    assert out["root"].metadata["exit_code"] != 0
    assert out["root"].metadata["stderr"].count("Read-only file system") == 3
    assert out["host"].metadata["exit_code"] != 0 and "No such file" in out["host"].metadata[
        "stderr"]
    assert [e["name"] for e in out["listed"].metadata["entries"]] == ["a.txt"]
    assert containers == 1 and volumes == 1  # while open: the session and its workspace


def test_bombs_are_contained_and_others_carry_on(docker_ready):
    fork_bomb = "bomb() { bomb | bomb & }; bomb"
    memory_bomb = "x = []\nwhile True: x.append(bytearray(50 << 20))"

    async def go():
        box = _box()
        try:
            a = await box.open_session("task-a", Limits(pids=64, memory_mb=256))
            b = await box.open_session("task-b", Limits())
            forked, other = await asyncio.gather(
                a.call("run_shell", {"command": f"{fork_bomb}; sleep 2; "
                                     "ls /proc | grep -c '^[0-9][0-9]*$'",
                                     "timeout_s": 10}, 60),
                b.call("run_python", {"code": "print('fine')"}, 60))
            memory = await a.call("run_python", {"code": memory_bomb, "timeout_s": 20}, 60)
            after = await a.call("run_python", {"code": "print('alive')"}, 60)
            return forked, other, memory, after
        finally:
            await box.close()

    forked, other, memory, after = asyncio.run(go())
    assert other.metadata["stdout"] == "fine\n"
    assert "fork" in forked.metadata["stderr"]  # held at the pids limit: forks refused
    assert memory.metadata["exit_code"] in (-9, 137) and not memory.metadata["timed_out"]
    assert after.metadata["stdout"] == "alive\n"  # the server survived both
    with open("/proc/loadavg") as f:
        assert int(f.read().split()[3].split("/")[1]) < 10_000  # the host's processes


def test_nothing_of_a_run_outlives_it_even_after_sigkill(docker_ready, tmp_path):
    key = f"test{uuid.uuid4().hex[:8]}"
    holder = tmp_path / "holder.py"
    holder.write_text(
        "import asyncio, sys\n"
        "from sandbox.containers import DockerSandbox\n"
        "from sandbox.backend import Limits\n"
        "async def main():\n"
        f"    box = DockerSandbox({key!r}, run_dir=__import__('pathlib').Path({str(tmp_path)!r}))\n"
        "    await box.open_session('task-1', Limits())\n"
        "    await box.open_session('task-2', Limits())\n"
        "    print('ready', flush=True)\n"
        "    await asyncio.sleep(3600)\n"
        "asyncio.run(main())\n")
    proc = subprocess.Popen([sys.executable, str(holder)], stdout=subprocess.PIPE, text=True,
                            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    assert asyncio.run(_labelled(key)) == (2, 2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    while asyncio.run(_labelled(key))[0] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert asyncio.run(_labelled(key))[0] == 0  # the servers saw their stdin close
    (tmp_path / "summary.json").write_text("{}")  # the run is over: its workspaces may go

    async def sweep():
        async with aiodocker.Docker() as docker:
            return await sweep_dead(docker)

    assert asyncio.run(sweep()) >= 2
    assert asyncio.run(_labelled(key)) == (0, 0)


def test_sandbox_run_cli(docker_ready, tmp_path):
    runner = CliRunner()
    program = tmp_path / "p.py"
    program.write_text("print(sum(range(10)))\n")
    r = runner.invoke(app, ["sandbox", "run", str(program)])
    assert r.exit_code == 0, r.output
    line = json.loads(r.stdout.strip())
    assert line["stdout"] == "45\n" and line["exit_code"] == 0 and not line["timed_out"]
    assert set(line) == {"exit_code", "stdout", "stderr", "timed_out", "duration_s"}
    (tmp_path / "bad.py").write_bytes(b"\xff\xfe")
    for args in (["--timeout", "0", str(program)], [str(tmp_path / "missing.py")],
                 [str(tmp_path / "bad.py")]):
        r = runner.invoke(app, ["sandbox", "run", *args])
        assert r.exit_code == 2 and "error:" in r.output, r.output


def test_bench_reports_the_sandbox_figures(docker_ready):
    r = CliRunner().invoke(app, ["bench", "--sandbox"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout.strip().splitlines()[-1])
    assert row["bench"] == "sandbox" and row["warm_calls"] > 0
    assert 0 < row["warm_p50_ms"] <= row["warm_p95_ms"] and row["calls_per_second"] > 0
    assert 0 < row["cold_start_s"] < 30


async def _containers(run_key: str) -> set[str]:
    async with aiodocker.Docker() as docker:
        label = {"label": [f"{LABEL_RUN}={run_key}"]}
        return {c.id for c in await docker.containers.list(filters=label)}


def test_calls_started_together_share_one_docker_client(docker_ready):
    """Spares started at once each asked for the client before any had it: each made its
    own, and all but the last were never closed (an open connection left at exit)."""
    async def go():
        box = _box()
        try:
            clients = await asyncio.gather(*(box.docker() for _ in range(4)))
            assert all(c is clients[0] for c in clients)
        finally:
            await box.close()
        assert clients[0].session.closed

    asyncio.run(go())


def test_a_scopes_first_call_takes_a_spare_from_the_warm_pool(docker_ready, tmp_path):
    async def go():
        box = DockerSandbox(f"test{uuid.uuid4().hex[:8]}", run_dir=tmp_path)
        try:
            box.warm(Limits(), 1)
            for _ in range(300):  # until the spare runs (a container start or so)
                spare = await _containers(box.run_key)
                if spare:
                    break
                await asyncio.sleep(0.05)
            for _ in range(300):  # and its server answers: the spare is in the pool
                if box.spares:
                    break
                await asyncio.sleep(0.05)
            s = await box.open_session("task-1", Limits())
            taken = await _containers(box.run_key)
            wrote = await s.call("write_file", {"path": "a.txt", "content": "one"}, 30)
            for _ in range(300):  # the pool fills again
                refilled = await _containers(box.run_key)
                if len(refilled) == 2:
                    break
                await asyncio.sleep(0.05)
            return spare, taken, wrote, refilled
        finally:
            await box.close()

    spare, taken, wrote, refilled = asyncio.run(go())
    assert len(spare) == 1 and spare == taken  # the task's session is the spare's container
    assert not wrote.is_error
    assert len(refilled) == 2 and spare < refilled  # and a new spare took its place


def test_a_scopes_workspace_is_carried_to_a_later_process(docker_ready, tmp_path):
    """What an interrupted run's task wrote is there when the run resumes (another process,
    another DockerSandbox, the same run directory)."""
    key = f"test{uuid.uuid4().hex[:8]}"

    async def first():
        box = DockerSandbox(key, run_dir=tmp_path)
        s = await box.open_session("task-7", Limits())
        await s.call("write_file", {"path": "draft.txt", "content": "half done"}, 30)
        await box.close(keep_workspaces=True)

    async def later():
        box = DockerSandbox(key, run_dir=tmp_path)
        try:
            s = await box.open_session("task-7", Limits())
            kept = await s.call("read_file", {"path": "draft.txt"}, 30)
            other = await (await box.open_session("task-8", Limits())).call(
                "list_files", {"path": "."}, 30)
            await box.release("task-7")
            return kept, other, await _labelled(key)
        finally:
            await box.close()

    asyncio.run(first())
    kept, other, (_, volumes) = asyncio.run(later())
    assert "half done" in kept.text
    assert other.metadata["entries"] == []  # another task's workspace is its own
    assert volumes == 1  # task-7's went with its release; task-8's is left
    assert asyncio.run(_labelled(key)) == (0, 0)


def test_a_crafted_workspace_record_cannot_mount_another_volume(tmp_path):
    from sandbox.containers import WORKSPACES, read_workspaces

    key = "abc123"
    (tmp_path / WORKSPACES).write_bytes(
        b'{"scope": "task-1", "volume": "synthorg-ws-abc123-0123456789ab"}\n'
        b'{"scope": "task-2", "volume": "my-database-volume"}\n'
        b'{"scope": "task-3", "volume": "synthorg-ws-other-0123456789ab"}\n'
        b'not json\n{"scope": 4, "volume": "synthorg-ws-abc123-0123456789ab"}\n'
        b'{"scope": "task-5", "volume": "synthorg-ws-abc123-ffffffffffff"}\n'
        b'{"scope": "task-5", "volume": null}\n\xff\xfe\n')
    assert read_workspaces(tmp_path / WORKSPACES, key) == {
        "task-1": "synthorg-ws-abc123-0123456789ab"}
