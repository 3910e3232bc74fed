"""`synthorg report`: one self-contained HTML page of a run, a sweep or study, or runs
compared. Reads only what the directories hold; writes only the page."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from synthorg.report.data import ReportError, kind_of, load_run, read_json

if TYPE_CHECKING:
    from synthorg.report.page import Section

__all__ = ["Report", "ReportError", "write_report"]

PAGE = "report.html"


@dataclass(frozen=True)
class Report:
    path: Path
    kind: str  # run, sweep, study or compare
    figures: tuple[str, ...]  # the plots' titles, in page order
    bytes: int
    seconds: float


def write_report(directory: Path, compare: list[Path] | None = None,
                 out: Path | None = None) -> Report:
    """Writes the report of `directory` (with `compare`: of it and those runs side by side) to
    `out` (default DIR/report.html). ReportError: input a report cannot be made of."""
    from synthorg.report.page import plots_of, render

    started = time.perf_counter()
    kind: str = kind_of(directory)
    if compare:
        if kind != "run":
            raise ReportError(f"{directory}: --compare takes runs, and this is a {kind} "
                              "directory")
        for other in compare:
            if kind_of(other) != "run":
                raise ReportError(f"{other}: --compare takes runs, and this is a "
                                  f"{kind_of(other)} directory")
        title, subtitle, sections = _compared([directory, *compare])
        kind = "compare"
    elif kind == "run":
        title, subtitle, sections = _run(directory)
    else:
        title, subtitle, sections = _points(directory, kind)
    page = render(title, subtitle, sections)
    target = out or directory / PAGE
    _write(target, page)
    return Report(target, kind, tuple(p.title for p in plots_of(sections)),
                  len(page.encode()), round(time.perf_counter() - started, 3))


def _write(target: Path, page: str) -> None:
    """Atomically, so a reader never opens half a page."""
    if target.is_dir():
        raise ReportError(f"{target}: is a directory (give a file name for --out)")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ReportError(f"{target}: cannot write ({exc.strerror or exc})") from None


def _run(directory: Path) -> tuple[str, list[str], list[Section]]:
    from synthorg.report.run import run_sections

    run = load_run(directory)
    s = run.summary
    subtitle = [f"{directory}", f"{s.get('company', '?')}: {s.get('agents', '?')} agents, "
                f"{run.ticks} ticks, seed {s.get('seed', '?')}, {s.get('mode', '?')} mode, "
                f"{s.get('backend', '?')} backend; run {s.get('run_id', '?')}"]
    if s.get("forked_from"):
        subtitle.append(f"forked from {s['forked_from']} at tick {s.get('fork_tick')}")
    return f"Run report: {s.get('company', directory.name)}", subtitle, run_sections(run)


def _compared(paths: list[Path]) -> tuple[str, list[str], list[Section]]:
    from synthorg.report.compare import compare_sections, fork_tick, labels_of

    summaries = {p: read_json(p / "summary.json") for p in paths}
    since = fork_tick(summaries)
    labels = labels_of(paths)
    runs = [load_run(p, label, since) for p, label in zip(paths, labels, strict=True)]
    subtitle = [f"{label}: {p} ({summaries[p].get('company', '?')}, {summaries[p].get('ticks')} "
                f"ticks, seed {summaries[p].get('seed')}"
                + (f", forked from {summaries[p]['forked_from']} at tick "
                   f"{summaries[p].get('fork_tick')}" if summaries[p].get("forked_from") else "")
                + ")" for p, label in zip(paths, labels, strict=True)]
    return f"Runs compared: {', '.join(labels)}", subtitle, compare_sections(runs, since)


def _points(directory: Path, kind: str) -> tuple[str, list[str], list[Section]]:
    from synthorg.report.outcomes import load_study, load_sweep
    from synthorg.report.sweep import sweep_sections

    data = load_sweep(directory) if kind == "sweep" else load_study(directory)
    if not data.points.height:
        raise ReportError(f"{directory}: no finished run to report on")
    return (f"{kind.capitalize()} report: {data.name}", [str(directory), *data.notes],
            sweep_sections(data))
