"""`synthorg sandbox run [--timeout S] FILE.py`: run a Python file in the tool sandbox (a
hardened container: no network, read-only root, a throwaway workspace) and print one JSON
line: exit_code, stdout, stderr, timed_out, duration_s."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Annotated

import typer

from synthorg.cli.common import EXIT_FAILED, EXIT_MISUSE, fail

sandbox_app = typer.Typer(no_args_is_help=True, help="Run code in the tool sandbox.")
MAX_PROGRAM = 1 << 20  # bytes of a program given on the command line


@sandbox_app.command("run")
def run(file: Annotated[Path, typer.Argument(help="a Python file")],
        timeout: Annotated[float, typer.Option(help="wall-clock limit, seconds")] = 30.0
        ) -> None:
    """Run FILE in a fresh sandbox container; one JSON line on stdout."""
    from sandbox.backend import Limits, SandboxUnavailable
    from sandbox.containers import DockerSandbox

    if not timeout > 0 or timeout > 86_400:
        raise fail(f"--timeout: {timeout:g} is not a number of seconds in (0, 86400]",
                   EXIT_MISUSE)
    try:
        data = file.read_bytes()[:MAX_PROGRAM + 1]
    except OSError as exc:
        raise fail(f"{file}: {exc.strerror or exc}", EXIT_MISUSE) from None
    if len(data) > MAX_PROGRAM:
        raise fail(f"{file}: larger than {MAX_PROGRAM} bytes", EXIT_MISUSE)
    try:
        code = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"{file}: not UTF-8 text (byte {exc.start})", EXIT_MISUSE) from None
    if "\0" in code:
        raise fail(f"{file}: holds a NUL byte", EXIT_MISUSE)

    async def go() -> str:
        box = DockerSandbox(f"cli{uuid.uuid4().hex[:8]}")
        try:
            return (await box.run_program(code, Limits(timeout_s=timeout))).model_dump_json()
        finally:
            await box.close()

    try:
        print(asyncio.run(go()))
    except SandboxUnavailable as exc:
        raise fail(str(exc), EXIT_FAILED) from None
