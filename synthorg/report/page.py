"""One self-contained HTML page: plotly.js inlined once in the head, every figure a div that
draws with it, tables as plain HTML. Opened from disk it needs no network."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

FIGURE_HEIGHT = 420
# one look for every figure (set on each by `styled`)
LAYOUT: dict[str, Any] = {
    "template": "plotly_white",
    "height": FIGURE_HEIGHT,
    "margin": {"l": 60, "r": 20, "t": 60, "b": 110},
    # below the axis title: above the plot it would cover subplot titles
    "legend": {"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0},
    "hovermode": "closest",
    "font": {"size": 12},
}
# no logo link, no editing: the page is a record
PLOT_CONFIG = {"displaylogo": False, "responsive": True}


@dataclass(frozen=True)
class Plot:
    title: str
    figure: go.Figure
    caption: str = ""
    wide: bool = False  # the page's whole width (many panels)


@dataclass(frozen=True)
class Table:
    """A plain HTML table: header row, then rows of cells (rendered as text)."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    caption: str = ""


@dataclass(frozen=True)
class Section:
    title: str
    intro: str = ""
    items: tuple[Plot | Table, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = ()  # what has no figure (e.g. no HR events in the run)


def styled(figure: go.Figure, title: str, **layout: Any) -> go.Figure:
    figure.update_layout(**LAYOUT)
    figure.update_layout(title={"text": html.escape(title), "x": 0.01, "font": {"size": 15}},
                         **layout)
    return figure


def cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(t: Table) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in t.header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in row) + "</tr>"
                   for row in t.rows)
    caption = f'<p class="caption">{html.escape(t.caption)}</p>' if t.caption else ""
    return (f'<div class="table"><h3>{html.escape(t.title)}</h3>{caption}'
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def _plot(p: Plot, index: int) -> str:
    div = p.figure.to_html(full_html=False, include_plotlyjs=False, config=PLOT_CONFIG,
                           div_id=f"figure-{index}", default_height=f"{FIGURE_HEIGHT}px")
    caption = f'<p class="caption">{html.escape(p.caption)}</p>' if p.caption else ""
    return f'<div class="figure{" wide" if p.wide else ""}">{div}{caption}</div>'


def plots_of(sections: Sequence[Section]) -> list[Plot]:
    return [item for s in sections for item in s.items if isinstance(item, Plot)]


def render(title: str, subtitle: Sequence[str], sections: Sequence[Section]) -> str:
    """The page. Figure divs are numbered in order (`figure-0`...) so that the same input
    gives the same file."""
    parts: list[str] = []
    index = 0
    for k, s in enumerate(sections):
        items = []
        for item in s.items:
            if isinstance(item, Plot):
                items.append(_plot(item, index))
                index += 1
            else:
                items.append(_table(item))
        notes = "".join(f'<p class="note">{html.escape(n)}</p>' for n in s.notes)
        intro = f"<p>{html.escape(s.intro)}</p>" if s.intro else ""
        parts.append(f'<section id="s{k}"><h2>{html.escape(s.title)}</h2>{intro}{notes}'
                     f'<div class="grid">{"".join(items)}</div></section>')
    toc = "".join(f'<li><a href="#s{k}">{html.escape(s.title)}</a></li>'
                  for k, s in enumerate(sections))
    lines = "".join(f"<p>{html.escape(line)}</p>" for line in subtitle)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title>"
        f'<meta name="synthorg-figures" content="{index}">'
        f"<style>{_CSS}</style>"
        # plotly.js itself, once: every figure below draws with it, nothing is fetched
        f'<script type="text/javascript">{get_plotlyjs()}</script>'
        f"</head><body><header><h1>{html.escape(title)}</h1>{lines}"
        f'<nav><ul>{toc}</ul></nav></header>{"".join(parts)}</body></html>\n'
    )


_CSS = """
body { font-family: system-ui, sans-serif; margin: 0 2rem 3rem; color: #222; }
header p { margin: 0.2rem 0; color: #555; }
nav ul { display: flex; flex-wrap: wrap; gap: 0.4rem 1.2rem; padding: 0; list-style: none; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.3rem; margin-top: 2.2rem; }
/* auto-fill, not auto-fit: a figure draws while the page is parsed, when the grid holds only
   the items parsed so far; the columns must already have their final width */
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 1rem; }
.figure, .table { min-width: 0; }
.table { overflow-x: auto; }
.wide { grid-column: 1 / -1; }
.caption { color: #666; font-size: 0.85rem; margin: 0.2rem 0 0.6rem; }
.note { color: #666; font-style: italic; }
table { border-collapse: collapse; font-size: 0.85rem; }
th, td { border: 1px solid #ddd; padding: 0.2rem 0.5rem; text-align: right;
         overflow-wrap: break-word; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f4f4f4; position: sticky; top: 0; }
"""
