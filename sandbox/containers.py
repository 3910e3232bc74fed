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
import os
import socket
import sysconfig
import time
import uuid
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
    Limits,
    ProgramResult,
    SandboxUnavailable,
)
from sandbox.bridge import McpSession

SERVER = Path(__file__).parent  # mcp_server.py and its zygote, read-only at /opt/server
SDK = Path(sysconfig.get_paths()["purelib"])  # the MCP SDK the server imports, read-only
WORKSPACE = "/workspace"
LOG = "sandbox.log"  # in the run directory: what the containers' servers print on stderr


class DockerSandbox:
    """The sandboxes of one run (`run_key`: a stable key of its run directory, so a resumed
    run finds its workspaces)."""

    def __init__(self, run_key: str, run_dir: Path | None = None, image: str = IMAGE) -> None:
        self.run_key = run_key
        self.run_dir = run_dir
        self.image = image
        self._docker: aiodocker.Docker | None = None
        self._sessions: dict[str, McpSession] = {}

    async def docker(self) -> aiodocker.Docker:
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

    async def open_session(self, scope: str, limits: Limits) -> McpSession:
        """An MCP session in a container of its own, with the scope's workspace volume."""
        if scope in self._sessions:
            return self._sessions[scope]
        docker = await self.docker()
        volume = self.volume_name(scope)
        await docker.volumes.create({"Name": volume, "Labels": self.labels(scope)})
        container = await docker.containers.create(
            self.config(["python3", "/opt/server/mcp_server.py"], limits, volume, scope,
                        interactive=True), name=self._name(scope))
        session = McpSession(["docker", "start", "--attach", "--interactive", container.id],
                             log=self.run_dir / LOG if self.run_dir is not None else None)
        await session.open(limits.timeout_s)
        self._sessions[scope] = session
        return session

    async def discard(self, scope: str, session: McpSession) -> None:
        """Close a session that failed (its workspace stays), unless another took its place."""
        if self._sessions.get(scope) is session:
            del self._sessions[scope]
        await session.close()

    async def release(self, scope: str) -> None:
        session = self._sessions.pop(scope, None)
        if session is not None:
            await session.close()
        from sandbox.cleanup import delete_volume

        await delete_volume(await self.docker(), self.volume_name(scope), tries=20)

    async def close(self, keep_workspaces: bool = False) -> None:
        """Close every session and remove the run's containers and, unless
        `keep_workspaces` (the driver decides: a run that may be resumed keeps them), its
        workspace volumes."""
        for scope in list(self._sessions):
            session = self._sessions.pop(scope)
            await session.close()
        if self._docker is not None:
            from sandbox.cleanup import remove_run

            await remove_run(self._docker, self.run_key, keep_volumes=keep_workspaces)
            await self._docker.close()
            self._docker = None

    def volume_name(self, scope: str) -> str:
        return f"synthorg-ws-{self.run_key}-{scope}"

    def _name(self, what: str) -> str:
        return f"synthorg-{self.run_key}-{what}-{uuid.uuid4().hex[:8]}"


async def _log(container: aiodocker.containers.DockerContainer, cap: int, stdout: bool) -> str:
    lines = await container.log(stdout=stdout, stderr=not stdout)
    text = "".join(lines)
    if len(text) > cap:
        return text[:cap] + f"\n[output truncated: more than {cap} bytes]"
    return text
