"""The MCP server that runs inside a tool sandbox container (stdio transport).

It serves five tools to agents: ``run_python``, ``run_shell``, ``read_file``, ``write_file`` and
``list_files``. Everything happens under one workspace directory (``/workspace``, or
``SANDBOX_WORKSPACE``): paths are resolved, symbolic links included, and refused when they leave
it. Output is capped at ``SANDBOX_OUTPUT_CAP`` bytes per stream (64 KiB), and a result says when
it was cut. The container (network none, read-only root, dropped capabilities, memory and pids
limits, user 65534) is the security boundary; the checks here keep honest agents in their
workspace and give them clear errors. Run it with ``--init`` (a PID 1 that reaps orphans: else
killed processes stay zombies and use up the pids limit) and a size-limited ``/tmp`` tmpfs (its
pages count against the memory limit and cannot be reclaimed: the OOM killer would take this
server). Commands are made the OOM killer's first choice, and each runs in its own process
group, killed whole at its end or time limit: nothing keeps running between calls.

The container's Debian Python has no ``mcp``: a virtualenv's site-packages is mounted read-only
on ``/opt/sdk`` with ``PYTHONPATH=/opt/sdk``; this directory (with zygote.py) on ``/opt/server``.
Start it as ``python3 /opt/server/mcp_server.py``. Only the standard library and the ``mcp`` SDK
are imported.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from typing_extensions import TypedDict

WORKSPACE = Path(os.environ.get("SANDBOX_WORKSPACE", "/workspace")).resolve()
OUTPUT_CAP = int(os.environ.get("SANDBOX_OUTPUT_CAP", str(64 * 1024)))
DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 600.0
MAX_LIST_ENTRIES = 1000
SHELL = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
# run_python forks from a warm interpreter (zygote.py, beside this file) unless SANDBOX_ZYGOTE=0
USE_ZYGOTE = os.environ.get("SANDBOX_ZYGOTE", "1") != "0" and Path(__file__).with_name("zygote.py").exists()


class RunResult(TypedDict):
    """What ``run_python`` and ``run_shell`` return."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    truncated: bool


class FileContent(TypedDict):
    """What ``read_file`` returns."""

    path: str
    content: str
    size: int
    truncated: bool


class WriteResult(TypedDict):
    """What ``write_file`` returns."""

    path: str
    bytes_written: int


class Entry(TypedDict):
    """One directory entry of ``list_files``."""

    name: str
    type: str
    size: int


class Listing(TypedDict):
    """What ``list_files`` returns."""

    path: str
    entries: list[Entry]
    truncated: bool


@contextlib.asynccontextmanager
async def _lifespan(_: object) -> AsyncIterator[None]:
    """The zygote starts with the server, not at the first ``run_python``: a session taken
    from the warm pool answers its first call as fast as its later ones."""
    starting = asyncio.create_task(_zygote.warm()) if USE_ZYGOTE else None
    yield
    if starting is not None:
        starting.cancel()


server = MCPServer(
    "synthorg-sandbox",
    instructions=f"Run code and manage files in the sandbox workspace {WORKSPACE}.",
    log_level="WARNING",
    lifespan=_lifespan,
)


def _resolve(path: str) -> Path:
    """Resolve ``path`` (relative to the workspace, or absolute inside it); refuse others."""
    try:
        resolved = (WORKSPACE / path).resolve()
    except (ValueError, OSError, RuntimeError) as exc:  # NUL bytes, symbolic link loops
        raise ToolError(f"bad path {path!r}: {exc}") from exc
    if not resolved.is_relative_to(WORKSPACE):
        raise ToolError(f"path {path!r} is outside the workspace {WORKSPACE}")
    return resolved


@contextlib.contextmanager
def _os_errors(path: str) -> Iterator[None]:
    """Report a failed file operation to the agent (ToolError), not as a server crash."""
    try:
        yield
    except OSError as exc:
        raise ToolError(f"{exc.strerror or exc}: {path!r}") from exc


def _shown(path: Path) -> str:
    return str(path.relative_to(WORKSPACE)) or "."


def _cap(data: bytes) -> tuple[str, bool]:
    text = data[:OUTPUT_CAP].decode("utf-8", errors="replace")
    if len(data) > OUTPUT_CAP:
        return f"{text}\n[output truncated: more than {OUTPUT_CAP} bytes, first {OUTPUT_CAP} shown]", True
    return text, False


async def _drain(fd: int, sink: bytearray) -> None:
    """Read a pipe to its end, keeping one byte more than the cap (to know it was cut)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    try:
        while chunk := await reader.read(65536):
            if len(sink) <= OUTPUT_CAP:
                sink += chunk[: OUTPUT_CAP + 1 - len(sink)]
    finally:
        transport.close()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _prefer_for_oom_kill(pid: int) -> None:
    """Make the command (and what it starts) the OOM killer's first choice, not this server.

    Raising a score needs no privilege; the command inherits nothing lower from us.
    """
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/oom_score_adj").write_text("1000")


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "SANDBOX_"))}
    env.update(HOME=str(WORKSPACE), PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    return env


Exited = Awaitable[int | None]
"""Resolves to a started command's exit code (-N: killed by signal N; None: unknown)."""
Spawner = Callable[[int, int], Awaitable[tuple[int, Exited]]]
"""Starts a command with the given stdout and stderr descriptors: its pid and its end."""


async def _spawn_exec(argv: list[str], stdin: bytes | None, out_w: int, err_w: int) -> tuple[int, Exited]:
    """Start ``argv`` as a new process in its own session (and process group)."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=out_w,
        stderr=err_w,
        cwd=WORKSPACE,
        env=_child_env(),
        start_new_session=True,
    )
    _prefer_for_oom_kill(proc.pid)

    async def exited() -> int | None:
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.write(stdin)
                await proc.stdin.drain()
            proc.stdin.close()
        return await proc.wait()

    return proc.pid, exited()


class _Zygote:
    """Client of zygote.py, a warm Python forking one child per ``run_python`` call (~4 ms, not ~11).

    The zygote answers starts in the order it was asked, so starts wait in a queue; a caller
    that went away (its call was cancelled) leaves its place, and the child, once reported,
    is killed and forgotten.
    """

    PROGRAM = Path(__file__).with_name("zygote.py")
    MESSAGE = struct.Struct("=cii")

    def __init__(self) -> None:
        self._sock: socket.socket | None = None
        self._starting: asyncio.Lock = asyncio.Lock()
        self._starts: collections.deque[asyncio.Future[int]] = collections.deque()
        self._exits: dict[int, asyncio.Future[int | None]] = {}
        self._early: dict[int, int | None] = {}  # exits reported before their starts
        self._abandoned: set[int] = set()

    async def warm(self) -> None:
        with contextlib.suppress(OSError):
            async with self._starting:
                if self._sock is None:
                    await self._start()

    async def spawn(self, code: bytes, out_w: int, err_w: int) -> tuple[int, Exited]:
        code_fd = os.memfd_create("code")
        try:
            os.write(code_fd, code)
            os.lseek(code_fd, 0, os.SEEK_SET)
            async with self._starting:  # one zygote, started once
                sock = self._sock or await self._start()
            started = asyncio.get_running_loop().create_future()
            self._starts.append(started)  # no await between: queue order is send order
            socket.send_fds(sock, [b"R"], [code_fd, out_w, err_w])
        finally:
            os.close(code_fd)
        pid = await started
        return pid, self._exit_future(pid)

    async def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            await asyncio.create_subprocess_exec(
                sys.executable, "-I", str(self.PROGRAM), str(theirs.fileno()),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,  # never onto the MCP channel
                pass_fds=(theirs.fileno(),),
                cwd=WORKSPACE,
                env=_child_env(),
            )  # fmt: skip
        ours.setblocking(False)
        asyncio.get_running_loop().add_reader(ours.fileno(), self._on_readable)
        self._sock = ours
        return ours

    def _exit_future(self, pid: int) -> asyncio.Future[int | None]:
        fut: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        if pid in self._early:  # the child ended before its start was reported
            fut.set_result(self._early.pop(pid))
        else:
            self._exits[pid] = fut
        return fut

    def _on_readable(self) -> None:
        assert self._sock is not None
        while True:
            try:
                data = self._sock.recv(16)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:  # the zygote died: forget it and its children, start another next time
                asyncio.get_running_loop().remove_reader(self._sock.fileno())
                self._sock.close()
                self._sock = None
                self._fail(ToolError("the Python zygote died"))
                return
            kind, value, code = self.MESSAGE.unpack(data)
            if kind == b"X":
                self._ended(value, code)
            elif self._starts:
                started = self._starts.popleft()
                if started.done():  # its caller went away: so does the child
                    if kind == b"P" and self._early.pop(value, "running") == "running":
                        self._abandoned.add(value)
                        _kill_group(value)
                elif kind == b"P":
                    started.set_result(value)
                else:
                    started.set_exception(ToolError(f"cannot start python: {os.strerror(value)}"))

    def _ended(self, pid: int, code: int | None) -> None:
        if pid in self._abandoned:
            self._abandoned.discard(pid)
            return
        fut = self._exits.pop(pid, None)
        if fut is None:
            self._early[pid] = code
        elif not fut.done():  # done: cancelled with its call
            fut.set_result(code)

    def _fail(self, exc: Exception) -> None:
        while self._starts:
            started = self._starts.popleft()
            if not started.done():
                started.set_exception(exc)
        for fut in self._exits.values():
            if not fut.done():
                fut.set_result(None)
        self._exits.clear()
        self._early.clear()
        self._abandoned.clear()


_zygote = _Zygote()


async def _run(spawn: Spawner, timeout_s: float | None) -> RunResult:
    """Run a command in its own process group, killed whole on time-out and when it ends.

    ``spawn(stdout_fd, stderr_fd)`` starts it. The output pipes are ours, not asyncio's: a
    process left running in the background would otherwise hold them open and keep a wait
    for the command from returning.
    """
    limit = min(max(timeout_s or DEFAULT_TIMEOUT_S, 0.1), MAX_TIMEOUT_S)
    started = time.perf_counter()
    (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
    try:
        pid, exited = await spawn(out_w, err_w)
    except BaseException as exc:
        for fd in (out_r, err_r):
            os.close(fd)
        if isinstance(exc, OSError):  # EAGAIN at the pids limit, most often
            raise ToolError(f"cannot start the command: {exc.strerror or exc}") from exc
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    out, err = bytearray(), bytearray()
    readers = asyncio.gather(_drain(out_r, out), _drain(err_r, err))
    waiter = asyncio.ensure_future(exited)
    timed_out = False
    try:
        exit_code = await asyncio.wait_for(asyncio.shield(waiter), limit)
    except TimeoutError:
        timed_out, exit_code = True, None
    finally:
        _kill_group(pid)  # also stops what the command left running in the background
    await waiter
    # A grandchild that left the group may hold a pipe: after a second, wait_for cancels the
    # readers, which close the pipes.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(readers, 1.0)
    stdout, cut_out = _cap(bytes(out))
    stderr, cut_err = _cap(bytes(err))
    if timed_out:
        stderr += f"\n[killed: time limit of {limit:g} s exceeded]"
    return RunResult(
        exit_code=exit_code,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        duration_s=round(time.perf_counter() - started, 4),
        truncated=cut_out or cut_err,
    )


@server.tool()
async def run_python(code: str, timeout_s: float | None = None) -> RunResult:
    """Run a Python 3.11 program (standard library only) in the workspace and return its output."""
    if USE_ZYGOTE:
        return await _run(partial(_zygote.spawn, code.encode()), timeout_s)
    return await _run(partial(_spawn_exec, [sys.executable, "-I", "-"], code.encode()), timeout_s)


@server.tool()
async def run_shell(command: str, timeout_s: float | None = None) -> RunResult:
    """Run a bash command line in the workspace and return its output."""
    return await _run(partial(_spawn_exec, [SHELL, "-c", command], None), timeout_s)


@server.tool()
def read_file(path: str) -> FileContent:
    """Read a text file of the workspace (the first 64 KiB when it is larger)."""
    target = _resolve(path)
    with _os_errors(path), target.open("rb") as f:
        data = f.read(OUTPUT_CAP + 1)
        size = os.fstat(f.fileno()).st_size
    truncated = len(data) > OUTPUT_CAP
    content = data[:OUTPUT_CAP].decode("utf-8", errors="replace")
    if truncated:
        content += f"\n[file truncated: {size} bytes, first {OUTPUT_CAP} shown]"
    return FileContent(path=_shown(target), content=content, size=size, truncated=truncated)


@server.tool()
def write_file(path: str, content: str) -> WriteResult:
    """Write a text file in the workspace, creating missing directories; replaces an existing file."""
    target = _resolve(path)
    if target == WORKSPACE:
        raise ToolError("cannot write the workspace directory itself")
    data = content.encode()
    with _os_errors(path):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return WriteResult(path=_shown(target), bytes_written=len(data))


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "link"
    if entry.is_dir():
        return "dir"
    return "file" if entry.is_file() else "other"


@server.tool()
def list_files(path: str = ".") -> Listing:
    """List a workspace directory: name, type (file, dir, link, other) and size of each entry."""
    target = _resolve(path)
    entries: list[Entry] = []
    with _os_errors(path), os.scandir(target) as it:
        for entry in sorted(it, key=lambda e: e.name):
            if len(entries) == MAX_LIST_ENTRIES:
                return Listing(path=_shown(target), entries=entries, truncated=True)
            kind = _kind(entry)
            size = entry.stat(follow_symlinks=False).st_size if kind == "file" else 0
            entries.append(Entry(name=entry.name, type=kind, size=size))
    return Listing(path=_shown(target), entries=entries, truncated=False)


if __name__ == "__main__":
    server.run("stdio")
