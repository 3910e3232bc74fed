"""The agent side of MCP: a client session over a stdio command (a sandbox container's
server, or a user's external MCP server), mapping MCP results to tool results.

The MCP client is an async context (anyio task groups inside) that must be entered and left
by one task, while calls come from many: the session lives in a task of its own, which
enters the client, waits until told to close and leaves it; callers use the open client
concurrently meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from sandbox.backend import ToolResult


class McpSession:
    """`log`: where the server's stderr goes (appended; None: discarded), never the
    terminal, whose one clear line per failure it would bury."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None,
                 log: Path | None = None) -> None:
        self._params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        self._log = log
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    async def open(self, timeout_s: float = 30.0) -> None:
        self._task = asyncio.create_task(self._hold())
        try:
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        except TimeoutError:
            await self.close()
            raise RuntimeError(f"MCP server {self._params.command} did not start within "
                               f"{timeout_s:g} s{self._see_log}") from None
        if self._error is not None:
            raise RuntimeError(f"MCP server {self._params.command} failed to start: "
                               f"{self._error}{self._see_log}") from self._error

    @property
    def _see_log(self) -> str:
        return f" (its stderr: {self._log})" if self._log is not None else ""

    async def _hold(self) -> None:
        try:
            with open(self._log or os.devnull, "a") as errlog:
                async with Client(stdio_client(self._params, errlog=errlog)) as client:
                    self._client = client
                    self._ready.set()
                    await self._stop.wait()
        except BaseException as exc:  # reported to the opener, or to the next caller
            self._error = _innermost(exc)
        finally:
            self._client = None
            self._ready.set()

    async def tools(self) -> list[str]:
        client = self._open_client()
        return [tool.name for tool in (await client.list_tools()).tools]

    async def call(self, tool: str, arguments: dict[str, object], timeout_s: float
                   ) -> ToolResult:
        client = self._open_client()
        result = await asyncio.wait_for(client.call_tool(tool, arguments), timeout_s)
        text = "\n".join(getattr(part, "text", "") for part in result.content)
        return ToolResult(text=text, metadata=dict(result.structured_content or {}),
                          is_error=bool(result.is_error))

    def _open_client(self) -> Client:
        if self._client is None:
            raise RuntimeError(f"MCP session {self._params.command} is closed"
                               + (f": {self._error}" if self._error else ""))
        return self._client

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._task, 10)
            self._task = None


def _innermost(exc: BaseException) -> BaseException:
    """The first error inside task groups' wrappers, which say only how many there were."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
