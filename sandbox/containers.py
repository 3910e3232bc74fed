"""The Docker sandbox backend, driven by aiodocker.

Every container is hardened the same way: no network unless the limits grant it, a
read-only root with a writable workspace and a small /tmp only, user 65534, all
capabilities dropped, no-new-privileges, memory (without swap), CPU and pids limits, and a
capped log. The wall-clock limit is ours: aiodocker's wait timeout does not fire, so a
program's wait is cut by `asyncio.wait_for` and the container killed.

Containers and workspace volumes carry labels (sandbox/backend.py) naming the run, the
owning process and host, so `sandbox/cleanup.py` can remove what a dead run left.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import re
import socket
import sysconfig
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiodocker

from sandbox.backend import (
    IMAGE,
    LABEL_HOST,
    LABEL_PID,
    LABEL_RUN,
    LABEL_RUN_DIR,
    LABEL_SCOPE,
    SPARE,
    Limits,
    ProgramResult,
    SandboxUnavailable,
)
from sandbox.bridge import McpSession
from sandbox.cleanup import delete_volume, remove_run

SERVER = Path(__file__).parent  # mcp_server.py and its zygote, read-only at /opt/server
SDK = Path(sysconfig.get_paths()["purelib"])  # the MCP SDK the server imports, read-only
WORKSPACE = "/workspace"
LOG = "sandbox.log"  # in the run directory: what the containers' servers print on stderr
WORKSPACES = "sandbox-workspaces.jsonl"  # in the run directory: scope -> workspace volume
MAX_WORKSPACES_BYTES = 64 << 20


@dataclass(frozen=True)
class _Box:
    """A started container's MCP session and its workspace volume (None: a tmpfs)."""

    session: McpSession
    volume: str | None


class DockerSandbox:
    """The sandboxes of one run (`run_key`: a stable key of its run directory, so a resumed
    run finds its workspaces)."""

    def __init__(self, run_key: str, run_dir: Path | None = None, image: str = IMAGE,
                 workspaces: bool = True) -> None:
        """`workspaces`: each scope has a workspace volume (False: per call, a tmpfs)."""
        self.run_key = run_key
        self.run_dir = run_dir
        self.image = image
        self.workspaces = workspaces
        self._docker: aiodocker.Docker | None = None
        self._connecting: asyncio.Lock | None = None  # (made in the loop that uses it)
        self._sessions: dict[str, _Box] = {}
        self._spares: collections.deque[_Box] = collections.deque()
        self._filling: set[asyncio.Task[None]] = set()
        self._pool_limits: Limits | None = None
        self._pool_size = 0
        self._known: dict[str, str] | None = None

    async def docker(self) -> aiodocker.Docker:
        if self._docker is not None:
            return self._docker
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:  # spares started together share one client (each one
            return await self._connect()  # made apart left its connection open)

    async def _connect(self) -> aiodocker.Docker:
        if self._docker is None:
            docker = aiodocker.Docker()
            try:
                await docker.images.inspect(self.image)
            except aiodocker.DockerError as exc:
                await docker.close()
                if exc.status == 404:
                    raise SandboxUnavailable(f"the sandbox image {self.image} is missing: run "
                                             "`make sandbox-image`") from None
                raise SandboxUnavailable(
                    f"no Docker daemon answers ({exc.message}): run `make docker` (or start "
                    "dockerd); tools are never run on the host instead") from None
            except (OSError, ValueError) as exc:
                await docker.close()
                raise SandboxUnavailable(
                    f"no Docker daemon answers ({exc}): run `make docker` (or start "
                    "dockerd); tools are never run on the host instead") from None
            self._docker = docker
        return self._docker

    def labels(self, scope: str = "") -> dict[str, str]:
        labels = {LABEL_RUN: self.run_key, LABEL_PID: str(os.getpid()),
                  LABEL_HOST: socket.gethostname()}
        if self.run_dir is not None:
            labels[LABEL_RUN_DIR] = str(self.run_dir.resolve())
        if scope:
            labels[LABEL_SCOPE] = scope
        return labels

    def config(self, cmd: list[str], limits: Limits, workspace: str | None,
               scope: str = "", interactive: bool = False) -> dict[str, Any]:
        """A hardened container's create config; `workspace`: a volume name for /workspace
        (None: a small tmpfs, gone with the container)."""
        mounts: list[dict[str, Any]] = [
            {"Type": "bind", "Source": str(SDK), "Target": "/opt/sdk", "ReadOnly": True},
            {"Type": "bind", "Source": str(SERVER), "Target": "/opt/server", "ReadOnly": True}]
        # /tmp is charged to the memory limit: small, so filling it cannot OOM the server
        tmpfs = {"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"}
        if workspace is None:
            tmpfs[WORKSPACE] = "rw,nosuid,nodev,size=256m,uid=65534,gid=65534"
        else:
            mounts.append({"Type": "volume", "Source": workspace, "Target": WORKSPACE})
        return {
            "Image": self.image, "Cmd": cmd, "User": "65534:65534", "WorkingDir": WORKSPACE,
            "Env": ["PYTHONPATH=/opt/sdk", "PYTHONDONTWRITEBYTECODE=1", "HOME=/tmp",
                    f"SANDBOX_OUTPUT_CAP={limits.output_bytes}"],
            "Labels": self.labels(scope), "NetworkDisabled": not limits.network,
            "OpenStdin": interactive, "StdinOnce": interactive, "AttachStdin": interactive,
            "AttachStdout": interactive, "AttachStderr": interactive, "Tty": False,
            "HostConfig": {
                "NetworkMode": "bridge" if limits.network else "none",
                "ReadonlyRootfs": True, "Tmpfs": tmpfs, "Mounts": mounts,
                "Init": True,  # reaps orphans: zombies would eat the pids limit
                "CapDrop": ["ALL"], "SecurityOpt": ["no-new-privileges"],
                "Memory": limits.memory_mb << 20, "MemorySwap": limits.memory_mb << 20,
                "NanoCpus": int(limits.cpus * 1e9), "PidsLimit": limits.pids,
                "AutoRemove": interactive,
                "LogConfig": {"Type": "json-file", "Config": {
                    "max-size": str(max(limits.output_bytes * 2, 1 << 16)), "max-file": "1"}},
            },
        }

    async def run_program(self, code: str, limits: Limits) -> ProgramResult:
        """Run a Python program once in a fresh container (its own tmpfs workspace)."""
        docker = await self.docker()
        container = await docker.containers.create(
            self.config(["python3", "-c", code], limits, None), name=self._name("run"))
        began = time.monotonic()
        try:
            await container.start()
            try:
                state = await asyncio.wait_for(container.wait(), limits.timeout_s)
                exit_code: int | None = int(state.get("StatusCode", -1))
            except TimeoutError:
                exit_code = None
                await container.kill()
            duration = time.monotonic() - began
            stdout = await _log(container, limits.output_bytes, stdout=True)
            stderr = await _log(container, limits.output_bytes, stdout=False)
        finally:
            await container.delete(force=True)
        return ProgramResult(exit_code=exit_code, stdout=stdout, stderr=stderr,
                             timed_out=exit_code is None, duration_s=round(duration, 4))

    def warm(self, limits: Limits, size: int) -> None:
        """Keep `size` sessions started ahead, each with a fresh workspace: a scope's first
        call takes one instead of paying a container start (call from the event loop)."""
        self._pool_limits, self._pool_size = limits, size
        self._refill()

    @property
    def spares(self) -> int:
        """Sessions ready in the pool."""
        return len(self._spares)

    async def open_session(self, scope: str, limits: Limits) -> McpSession:
        """The scope's MCP session, in a container of its own with the scope's workspace: a
        spare from the pool, or one started now (a scope that had a workspace before: on it)."""
        if scope in self._sessions:
            return self._sessions[scope].session
        known = self._workspaces().get(scope)
        if known is None and self._spares and limits == self._pool_limits:
            box = self._spares.popleft()
            self._refill()
        else:
            box = await self._start(limits, scope, known)
        self._sessions[scope] = box
        if box.volume is not None and box.volume != known:
            self._note(scope, box.volume)
        return box.session

    async def _start(self, limits: Limits, scope: str, volume: str | None = None) -> _Box:
        """A container with its MCP session; its workspace is `volume` (made if new: a fresh
        one unless workspaces are per call, then a tmpfs gone with the container)."""
        docker = await self.docker()
        if volume is None and self.workspaces:
            volume = f"synthorg-ws-{self.run_key}-{uuid.uuid4().hex[:12]}"
        if volume is not None:
            await docker.volumes.create({"Name": volume, "Labels": self.labels(scope)})
        container = await docker.containers.create(
            self.config(["python3", "/opt/server/mcp_server.py"], limits, volume, scope,
                        interactive=True), name=self._name(scope))
        session = McpSession(["docker", "start", "--attach", "--interactive", container.id],
                             log=self.run_dir / LOG if self.run_dir is not None else None)
        try:
            await session.open(limits.timeout_s)
        except BaseException:
            if volume is not None and volume not in self._workspaces().values():
                await delete_volume(docker, volume, tries=20)
            raise
        return _Box(session, volume)

    def _refill(self) -> None:
        short = self._pool_size - len(self._spares) - len(self._filling)
        for _ in range(max(short, 0)):
            task = asyncio.get_running_loop().create_task(self._spare())
            self._filling.add(task)
            task.add_done_callback(self._filling.discard)

    async def _spare(self) -> None:
        assert self._pool_limits is not None
        try:
            box = await self._start(self._pool_limits, SPARE)
        except Exception:  # the pool only saves time: a call that finds none starts its own
            return
        self._spares.append(box)

    async def discard(self, scope: str, session: McpSession) -> None:
        """Close a session that failed (its workspace stays), unless another took its place."""
        box = self._sessions.get(scope)
        if box is not None and box.session is session:
            del self._sessions[scope]
        await session.close()

    async def release(self, scope: str) -> None:
        """The scope is done: its session and workspace go."""
        box = self._sessions.pop(scope, None)
        if box is not None:
            await box.session.close()
        volume = box.volume if box is not None else self._workspaces().get(scope)
        if volume is not None:
            await delete_volume(await self.docker(), volume, tries=20)
            self._note(scope, None)

    async def close(self, keep_workspaces: bool = False) -> None:
        """Close every session and remove the run's containers and, unless
        `keep_workspaces` (the driver decides: a run that may be resumed keeps them), its
        workspace volumes; spares' volumes go either way."""
        self._pool_size = 0
        for task in list(self._filling):
            task.cancel()
        await asyncio.gather(*self._filling, return_exceptions=True)
        spares, self._spares = list(self._spares), collections.deque()
        for box in [*self._sessions.values(), *spares]:
            await box.session.close()
        self._sessions.clear()
        if self._docker is not None:
            for box in spares:
                if box.volume is not None:
                    await delete_volume(self._docker, box.volume, tries=20)
            await remove_run(self._docker, self.run_key, keep_volumes=keep_workspaces)
            await self._docker.close()
            self._docker = None

    def _workspaces(self) -> dict[str, str]:
        """Scope -> workspace volume, as this run (and the run it resumes) recorded them."""
        if self._known is None:
            self._known = {}
            if self.run_dir is not None:
                self._known = read_workspaces(self.run_dir / WORKSPACES, self.run_key)
        return self._known

    def _note(self, scope: str, volume: str | None) -> None:
        known = self._workspaces()
        if volume is None:
            known.pop(scope, None)
        else:
            known[scope] = volume
        if self.run_dir is not None:  # one short line per write: appends do not interleave
            with open(self.run_dir / WORKSPACES, "a", encoding="utf-8") as f:
                f.write(json.dumps({"scope": scope, "volume": volume}) + "\n")

    def _name(self, what: str) -> str:
        return f"synthorg-{self.run_key}-{what}-{uuid.uuid4().hex[:8]}"


async def _log(container: aiodocker.containers.DockerContainer, cap: int, stdout: bool) -> str:
    lines = await container.log(stdout=stdout, stderr=not stdout)
    text = "".join(lines)
    if len(text) > cap:
        return text[:cap] + f"\n[output truncated: more than {cap} bytes]"
    return text


def read_workspaces(path: Path, run_key: str) -> dict[str, str]:
    """Scope -> volume from a run's record (the last line of a scope wins; a released
    scope's is null). The file may be crafted: only this run's workspace volumes count,
    malformed lines are skipped, and reading stops at MAX_WORKSPACES_BYTES."""
    pattern = re.compile(rf"synthorg-ws-{re.escape(run_key)}-[0-9a-f]{{12}}")
    known: dict[str, str] = {}
    try:
        with open(path, "rb") as f:
            lines = f.read(MAX_WORKSPACES_BYTES).splitlines()
    except OSError:
        return known
    for line in lines:
        try:
            entry = json.loads(line)
            scope, volume = entry["scope"], entry["volume"]
        except (ValueError, TypeError, KeyError):
            continue
        if not isinstance(scope, str):
            continue
        if volume is None:
            known.pop(scope, None)
        elif isinstance(volume, str) and pattern.fullmatch(volume):
            known[scope] = volume
    return known
