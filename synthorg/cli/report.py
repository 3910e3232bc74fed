"""`synthorg report`: one self-contained HTML page of a run, a sweep or study, or runs compared."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from synthorg.cli.common import EXIT_MISUSE, console, fail, out_console


def report(
    dir: Annotated[Path, typer.Argument(
        help="a run directory (summary.json), a sweep's (runs.parquet) or a study's "
             "(trials.parquet)")],
    compare: Annotated[list[Path] | None, typer.Option(
        "--compare", help="another run to set beside DIR (repeatable); a fork of DIR or its "
                          "parent is compared from the fork tick on")] = None,
    out: Annotated[Path | None, typer.Option(
        help="the HTML file to write (default DIR/report.html)")] = None,
) -> None:
    """Write one HTML page (plotly.js inlined: it opens from disk with no network) with the
    figures of a run, of a sweep's or study's outcomes against each swept parameter, or of
    runs side by side. Reads only what the directories hold; prints the page's path."""
    from synthorg.report import ReportError, write_report

    try:
        result = write_report(dir, compare or None, out)
    except ReportError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    console.print(f"{result.kind} report: {len(result.figures)} figures, "
                  f"{result.bytes / 2**20:.1f} MB in {result.seconds:.1f} s", highlight=False)
    out_console.print(escape(str(result.path)), highlight=False, soft_wrap=True)
