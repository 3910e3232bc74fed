"""What every command shares: the consoles, the exit codes, how an error is reported."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

console = Console(stderr=True, soft_wrap=True)
out_console = Console()

EXIT_OK, EXIT_FAILED, EXIT_MISUSE = 0, 1, 2


def fail(message: str, code: int) -> typer.Exit:
    """The Exit to raise after printing `message` (user text in it is never read as markup)."""
    console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    return typer.Exit(code)
