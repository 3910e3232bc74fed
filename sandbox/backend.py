"""What a tool sandbox is to the rest of synthorg: a place that runs code and serves tools,
isolated from the host, with limits it enforces itself.

`SandboxBackend` is the protocol; `sandbox/containers.py` is the Docker implementation
(aiodocker). A backend runs a program once (`run_program`: the `synthorg sandbox run` CLI)
and opens MCP sessions (`open_session`) whose tools run in a container of their own with a
workspace that persists for the session's scope (a task, an agent) while it lives.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

IMAGE = "synthorg-sandbox:latest"
LABEL_RUN = "org.synthorg.run"  # the run (its directory's key) a container or volume is for
LABEL_PID = "org.synthorg.pid"  # the process that owns it (a dead owner's leftovers go)
LABEL_HOST = "org.synthorg.host"
LABEL_RUN_DIR = "org.synthorg.run_dir"
LABEL_SCOPE = "org.synthorg.scope"  # what a container or volume was made for (task-17, agent-3)
SPARE = "spare"  # the scope of what the warm pool starts ahead, before any scope takes it


class Limits(BaseModel):
    """What one container may use. The wall-clock limit is enforced by the caller (Docker
    has none, and aiodocker's wait timeout does not fire)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    memory_mb: int = Field(default=256, ge=16, le=65_536)
    cpus: float = Field(default=1.0, gt=0.0, le=64.0)
    pids: int = Field(default=64, ge=8, le=65_536)
    timeout_s: float = Field(default=30.0, gt=0.0, le=86_400.0)
    output_bytes: int = Field(default=65_536, ge=1024, le=16 << 20)
    network: bool = False  # only a tool whose policy grants it


class ProgramResult(BaseModel):
    """A program's run, as `synthorg sandbox run` prints it."""

    model_config = ConfigDict(frozen=True)
    exit_code: int | None  # None: killed at the time limit
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float


class ToolResult(BaseModel):
    """An MCP tool's result as an agent gets it: its text, the structured content in
    `metadata`, and whether the tool reported an error."""

    model_config = ConfigDict(frozen=True)
    text: str
    metadata: dict[str, object] = Field(default_factory=dict)
    is_error: bool = False


class SandboxUnavailable(RuntimeError):
    """No sandbox can run here (no Docker daemon, no image): never fall back to the host."""


class Session(Protocol):
    async def call(self, tool: str, arguments: dict[str, object],
                   timeout_s: float) -> ToolResult: ...

    async def close(self) -> None: ...


class SandboxBackend(Protocol):
    async def run_program(self, code: str, limits: Limits) -> ProgramResult: ...

    async def open_session(self, scope: str, limits: Limits) -> Session: ...

    async def release(self, scope: str) -> None:
        """Close the scope's session and remove its workspace."""

    async def close(self) -> None:
        """Remove every container and workspace of the run."""
