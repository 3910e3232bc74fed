"""The sandbox executor: tool calls that run for real, each tool served over MCP in a
hardened container (sandbox/), with a workspace per task, per agent or per call.

A call's outcome depends only on what it runs: a checked tool's program (ToolSpec.checked)
is judged by comparing its output with the correct program's on the same task, so a run in
which nothing times out replays to the same ledger whatever the machine's speed. Outcomes:
- the program crashed (non-zero exit) or the tool reported an error: failed;
- it ran past the executor's time limit: timed out;
- otherwise succeeded, with the turn's quality factor as its value: 1, or `wrong_quality`
  when a checked program gave the wrong answer.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import numpy as np

from synthorg.actions.executors import ExecutorContext, Outcome, each_call
from synthorg.config.models import ExecutorSpec
from synthorg.domain.enums import ActionStatus
from synthorg.errors import ExecutorFault

if TYPE_CHECKING:
    from sandbox.bridge import McpSession

FAILED, TIMED_OUT, OK = (int(ActionStatus.failed), int(ActionStatus.timed_out),
                         int(ActionStatus.succeeded))


class SandboxExecutor:
    def __init__(self, spec: ExecutorSpec, key: np.uint64, context: ExecutorContext) -> None:
        from sandbox.backend import Limits
        from sandbox.containers import DockerSandbox

        self._spec = spec
        self._tools = context.config.tools
        self._limits = Limits(memory_mb=spec.memory_mb, cpus=spec.cpus, pids=spec.pids,
                              timeout_s=spec.timeout_s, network=spec.network)
        self._box = DockerSandbox(context.run_key, context.run_dir,
                                  workspaces=spec.lifetime != "call")
        self._limit: asyncio.Semaphore | None = None
        self._opening: dict[str, asyncio.Lock] = {}
        self._expected: dict[tuple[int, int], str] = {}  # (tool, task) -> correct output

    async def prepare(self) -> None:
        """At the run's start, in the runner's loop: the pool begins to fill."""
        if self._spec.pool:
            self._box.warm(self._limits, self._spec.pool)

    async def run(self, actions: np.ndarray, arguments: list[str]) -> list[Outcome]:
        if self._limit is None:  # made in the runner's event loop
            self._limit = asyncio.Semaphore(self._spec.max_in_flight)
        texts = dict(zip(actions["call"].tolist(), arguments, strict=True))

        async def one(row: np.void) -> Outcome:
            return await self._call(row, json.loads(texts[int(row["call"])]))

        return await each_call(actions, one, self._limit, None)  # _call keeps the time

    async def _call(self, row: np.void, arguments: dict[str, object]) -> Outcome:
        """One call, again in a fresh session while the sandbox itself fails (`retries`)."""
        tool = self._tools[int(row["tool"])]
        scope = self._scope(row)
        for _ in range(self._spec.retries + 1):
            session = None
            try:
                session = await self._session(scope)
                return await self._attempt(row, session, arguments)
            except Exception as exc:  # Docker, the container or its MCP server failed
                problem = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
                if session is not None:
                    await self._box.discard(scope, session)
            finally:
                if self._spec.lifetime == "call":
                    await self._box.release(scope)
        raise ExecutorFault(f"sandbox call {int(row['call'])} ({tool.name}) failed "
                            f"{self._spec.retries + 1} times: {problem}")

    async def _attempt(self, row: np.void, session: McpSession, arguments: dict[str, object]
                       ) -> Outcome:
        tool = self._tools[int(row["tool"])]
        name = tool.mcp_tool or tool.name
        ran = await session.call(name, {**arguments, **self._time_limit(name)},
                                 self._spec.timeout_s + 10.0)
        result = ran.metadata
        if result.get("timed_out"):
            return TIMED_OUT, 0.0
        if ran.is_error or result.get("exit_code", 0) not in (0, None):
            return FAILED, 0.0
        if not tool.checked:
            return OK, 1.0
        expected = await self._expected_output(int(row["tool"]), int(row["task"]), session)
        return OK, 1.0 if result.get("stdout") == expected else self._spec.wrong_quality

    def _time_limit(self, mcp_tool: str) -> dict[str, object]:
        return {"timeout_s": self._spec.timeout_s} if mcp_tool.startswith("run_") else {}

    async def _expected_output(self, tool: int, task: int, session: McpSession) -> str:
        """The correct program's output on the task (its first form), worked out once."""
        key = (tool, task)
        if key not in self._expected:
            spec = self._tools[tool]
            correct = {k: v.format(task=task) for k, v in spec.forms[0].items()}
            ran = await session.call(spec.mcp_tool or spec.name,
                                     {**correct, **self._time_limit(spec.mcp_tool or spec.name)},
                                     self._spec.timeout_s + 10.0)
            self._expected[key] = str(ran.metadata.get("stdout"))
        return self._expected[key]

    def _scope(self, row: np.void) -> str:
        return {"task": f"task-{int(row['task'])}", "agent": f"agent-{int(row['agent'])}",
                "call": f"call-{int(row['call'])}"}[self._spec.lifetime]

    async def _session(self, scope: str) -> McpSession:
        lock = self._opening.setdefault(scope, asyncio.Lock())
        async with lock:  # one session per scope, however many calls ask at once
            return await self._box.open_session(scope, self._limits)

    async def release_tasks(self, tasks: list[int]) -> None:
        """The tasks ended: their sessions and workspaces go (lifetime task)."""
        if self._spec.lifetime != "task":
            return
        for task in tasks:
            self._opening.pop(f"task-{task}", None)
            for tool in {t for t, k in self._expected if k == task}:
                del self._expected[(tool, task)]
            await self._box.release(f"task-{task}")

    async def aclose(self) -> None:
        await self._box.close(keep_workspaces=True)  # the run's end removes them, not resume


class McpExecutor:
    """Calls to a user's external MCP server (`mcp_servers`): one stdio session for the run,
    opened at the first call. A tool error is a failed action, anything else succeeds."""

    def __init__(self, spec: ExecutorSpec, key: np.uint64, context: ExecutorContext) -> None:
        assert spec.server is not None  # the config's cross-checks
        self._spec = spec
        self._server = context.config.mcp_servers[spec.server]
        self._run_dir = context.run_dir
        self._tools = context.config.tools
        self._session: McpSession | None = None
        self._opening: asyncio.Lock | None = None
        self._limit: asyncio.Semaphore | None = None

    async def run(self, actions: np.ndarray, arguments: list[str]) -> list[Outcome]:
        if self._limit is None:  # made in the runner's event loop
            self._limit, self._opening = (asyncio.Semaphore(self._spec.max_in_flight),
                                          asyncio.Lock())
        texts = dict(zip(actions["call"].tolist(), arguments, strict=True))

        async def one(row: np.void) -> Outcome:
            return await self._call(row, json.loads(texts[int(row["call"])]))

        return await each_call(actions, one, self._limit, None)  # _call keeps the time

    async def _call(self, row: np.void, arguments: dict[str, object]) -> Outcome:
        """A slow answer is the call's outcome (timed out); a server that fails is not: the
        call goes again to a fresh one (`retries`), then the run rolls back."""
        tool = self._tools[int(row["tool"])]
        for _ in range(self._spec.retries + 1):
            session = None
            try:
                session = await self._open()
                ran = await session.call(tool.mcp_tool or tool.name, arguments,
                                         self._spec.timeout_s)
                return (FAILED, 0.0) if ran.is_error else (OK, 1.0)
            except TimeoutError:  # the server answered too slowly (it started: open raises
                return TIMED_OUT, 0.0  # RuntimeError)
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
                if session is not None and session is self._session:
                    self._session = None
                    await session.close()
        raise ExecutorFault(f"MCP server {self._spec.server!r}, call {int(row['call'])} "
                            f"({tool.name}) failed {self._spec.retries + 1} times: {problem}")

    async def _open(self) -> McpSession:
        from sandbox.bridge import McpSession

        assert self._opening is not None
        async with self._opening:
            if self._session is None:
                log = self._run_dir / f"mcp-{self._spec.server}.log" if self._run_dir else None
                session = McpSession(list(self._server.command), dict(self._server.env) or None,
                                     log=log)
                await session.open(self._server.timeout_s)
                self._session = session
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
