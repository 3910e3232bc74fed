"""The figures of one run, from its aggregated frames (data.RunData)."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from synthorg.report.data import RunData, flat_summary
from synthorg.report.page import Plot, Section, Table, styled

PALETTE = qualitative.Plotly + qualitative.D3
VERDICT_COLOURS = {"tool_denied": "#d62728", "tool_escalated": "#ff7f0e",
                   "approval_granted": "#2ca02c", "approval_rejected": "#9467bd",
                   "approval_timed_out": "#8c564b"}
COST_KINDS = (("cost_salary_usd", "salaries"), ("cost_tools_usd", "tools"),
              ("cost_llm_usd", "LLM"))
HR_LABELS = {"agent_promoted": "promotion", "agent_demoted": "demotion", "agent_joined": "hire",
             "agent_left": "departure (fired)", "agent_moved": "move", "agent_away": "absence"}
# the summary fields a reader looks for first; the table lists the rest after them
HEADLINE = ("company", "ticks", "agents", "headcount_end", "tasks_created", "tasks_completed",
            "tasks_failed", "tasks_open", "failure_rate", "mean_quality", "lead_time_mean",
            "lead_time_p90", "utilisation", "cost_usd", "cost_per_completed_task_usd",
            "security_incidents", "escalations")


def colours(names: tuple[str, ...] | list[str]) -> dict[str, str]:
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def tick_axis(run: RunData) -> str:
    return "tick" if run.bucket == 1 else f"tick (sums over {run.bucket} ticks)"


def totals(run: RunData) -> pl.DataFrame:
    """Per tick over all departments; `open` counts tasks created and not yet ended."""
    return (run.per_tick.group_by("tick")
            .agg(pl.col("arrivals", "completed", "failed", "escalations", "busy", "queued",
                        "headcount", "cost_usd", "cost_salary_usd", "cost_tools_usd",
                        "cost_llm_usd").sum())
            .sort("tick")
            .with_columns((pl.col("arrivals") - pl.col("completed") - pl.col("failed"))
                          .cum_sum().alias("open"),
                          (pl.col("busy") / pl.col("headcount").clip(lower_bound=1)).alias("load")))


def run_sections(run: RunData) -> list[Section]:
    return [
        Section("Work", "Tasks arriving and ending, queues and load by department.",
                (tasks_over_time(run), queues_and_load(run), lead_time_distribution(run),
                 quality_distribution(run))),
        Section("Cost", "Spending per tick by department, and run to date by kind.",
                (cost_by_department(run), cost_by_kind(run))),
        _security(run),
        _org(run),
        Section("Closing summary", "", (summary_table([run]),)),
    ]


def tasks_over_time(run: RunData) -> Plot:
    t = totals(run)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for column, name, colour in (("arrivals", "arrived", "#1f77b4"),
                                 ("completed", "completed", "#2ca02c"),
                                 ("failed", "failed", "#d62728")):
        fig.add_trace(go.Scatter(x=t["tick"].to_numpy(), y=t[column].to_numpy(), name=name,
                                 mode="lines", line={"color": colour, "width": 1.5}))
    fig.add_trace(go.Scatter(x=t["tick"].to_numpy(), y=t["open"].to_numpy(), name="open (right)",
                             mode="lines", line={"color": "#7f7f7f", "dash": "dot"}),
                  secondary_y=True)
    fig.update_xaxes(title_text=tick_axis(run))
    fig.update_yaxes(title_text="tasks per tick", secondary_y=False)
    fig.update_yaxes(title_text="open tasks", secondary_y=True, showgrid=False)
    return Plot("Tasks over time", styled(fig, "Tasks arriving, completed and failed"),
                "Per tick, all departments; open = created and not yet ended (right axis).")


def queues_and_load(run: RunData) -> Plot:
    fig = make_subplots(rows=1, cols=2, subplot_titles=("queued tasks", "load (busy ÷ at work)"))
    palette = colours(run.departments)
    for dept in run.departments:
        rows = run.per_tick.filter(pl.col("department") == dept)
        for col, column in ((1, "queued"), (2, "load")):
            fig.add_trace(go.Scatter(x=rows["tick"].to_numpy(), y=rows[column].to_numpy(),
                                     name=dept, legendgroup=dept, showlegend=col == 1,
                                     mode="lines", line={"color": palette[dept], "width": 1.5}),
                          row=1, col=col)
    fig.update_xaxes(title_text=tick_axis(run))
    fig.update_yaxes(rangemode="tozero")
    return Plot("Queues and load", styled(fig, "Queue length and load per department"),
                "Queued: tasks waiting in the department's agents' queues at the tick's end.")


def _histogram(frame: pl.DataFrame, column: str, departments: tuple[str, ...], title: str,
               x_title: str, caption: str) -> Plot:
    fig = go.Figure()
    palette = colours(departments)
    for dept in departments:
        rows = frame.filter(pl.col("department") == dept)
        if rows.height:
            fig.add_trace(go.Bar(x=rows[column].to_numpy(), y=rows["n"].to_numpy(), name=dept,
                                 marker_color=palette[dept]))
    return Plot(title, styled(fig, title, barmode="stack", bargap=0.05,
                              xaxis_title=x_title, yaxis_title="completed tasks"), caption)


def lead_time_distribution(run: RunData) -> Plot:
    since = f" finished from tick {run.since}" if run.since else ""
    return _histogram(run.lead_times, "lead_time", run.departments, "Lead time distribution",
                      "lead time (ticks from creation to completion)",
                      f"Completed tasks{since}, stacked by department.")


def quality_distribution(run: RunData) -> Plot:
    since = f" finished from tick {run.since}" if run.since else ""
    return _histogram(run.quality, "quality", run.departments, "Quality distribution",
                      "quality (bins of 0.02)", f"Completed tasks{since}, stacked by department.")


def cost_by_department(run: RunData) -> Plot:
    fig = go.Figure()
    palette = colours(run.departments)
    for dept in run.departments:
        rows = run.per_tick.filter(pl.col("department") == dept)
        fig.add_trace(go.Scatter(x=rows["tick"].to_numpy(), y=rows["cost_usd"].to_numpy(),
                                 name=dept, stackgroup="cost", mode="lines",
                                 line={"color": palette[dept], "width": 0.5}))
    return Plot("Cost by department", styled(fig, "Cost per tick by department (USD)",
                                             xaxis_title=tick_axis(run), yaxis_title="USD"),
                "Salaries, tool and model spend per tick, stacked.")


def cost_by_kind(run: RunData) -> Plot:
    t = totals(run)
    fig = go.Figure()
    for (column, name), colour in zip(COST_KINDS, ("#1f77b4", "#ff7f0e", "#9467bd"),
                                      strict=True):
        fig.add_trace(go.Scatter(x=t["tick"].to_numpy(), y=t[column].cum_sum().to_numpy(),
                                 name=name, stackgroup="kind", mode="lines",
                                 line={"color": colour, "width": 0.5}))
    return Plot("Cost by kind", styled(fig, "Cost to date by kind (USD)",
                                       xaxis_title=tick_axis(run), yaxis_title="USD"),
                "Run to date; the top equals summary.json's cost_usd at the last tick.")


def _security(run: RunData) -> Section:
    intro = ("SecOps's verdicts on every tool call, the approvals it asked for, and the harmful "
             "calls that ran (incidents).")
    items: list[Plot | Table] = [secops_verdicts(run)]
    notes: tuple[str, ...] = ()
    if run.incidents.height or run.events.filter(pl.col("kind") == "threat").height:
        items.append(security_incidents(run))
    else:
        notes = ("No harmful call was attempted in this run.",)
    return Section("Security", intro, tuple(items), notes)


def _counts(run: RunData) -> pl.DataFrame:
    """SecOps counts per tick, one column per kind, every tick of the run present (0 where
    nothing happened): running totals then step through quiet ticks."""
    ticks = pl.DataFrame({"tick": range(0, max(run.ticks, 1), run.bucket)},
                         schema={"tick": pl.Int64})
    wide = (run.events.pivot("kind", index="tick", values="n") if run.events.height
            else pl.DataFrame(schema={"tick": pl.Int64}))
    return ticks.join(wide, on="tick", how="left").fill_null(0).sort("tick")


def secops_verdicts(run: RunData) -> Plot:
    counts = _counts(run)
    x = counts["tick"].to_numpy()
    width = 0.8 * run.bucket  # sparse bars keep their width (plotly would widen them)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        specs=[[{"secondary_y": True}], [{}]],
                        subplot_titles=("verdicts on tool calls", "the office's answers to "
                                        "escalations"))
    for kind, name, row in (("tool_denied", "denied", 1), ("tool_escalated", "escalated", 1),
                            ("approval_granted", "granted", 2),
                            ("approval_rejected", "rejected", 2),
                            ("approval_timed_out", "timed out", 2)):
        if kind in counts.columns and counts[kind].sum():
            fig.add_trace(go.Bar(x=x, y=counts[kind].to_numpy(), name=name, width=width,
                                 marker_color=VERDICT_COLOURS[kind]), row=row, col=1)
    if "tool_call" in counts.columns:
        fig.add_trace(go.Scatter(x=x, y=counts["tool_call"].to_numpy(), name="allowed (right)",
                                 mode="lines", line={"color": "#1f77b4", "width": 1}),
                      row=1, col=1, secondary_y=True)
    fig.update_xaxes(title_text=tick_axis(run), row=2, col=1)
    fig.update_yaxes(title_text="calls", row=1, col=1, secondary_y=False)
    fig.update_yaxes(title_text="allowed", row=1, col=1, secondary_y=True, showgrid=False,
                     rangemode="tozero")
    fig.update_yaxes(title_text="answers", row=2, col=1)
    return Plot("SecOps verdicts", styled(fig, "SecOps verdicts and approvals per tick",
                                          barmode="stack", height=480),
                "Top: calls SecOps denied or escalated (bars) and allowed (line, right axis); "
                "bottom: how the escalations were answered.")


def security_incidents(run: RunData) -> Plot:
    counts = _counts(run)
    x = counts["tick"].to_numpy()
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for kind, name, colour in (("threat", "harmful calls attempted", "#7f7f7f"),
                               ("harmful_blocked", "of which blocked", "#2ca02c")):
        if kind in counts.columns:
            fig.add_trace(go.Scatter(x=x, y=counts[kind].cum_sum().to_numpy(), name=name,
                                     mode="lines", line={"shape": "hv", "color": colour}))
    kinds = sorted(run.incidents["threat_kind"].unique().to_list())
    palette = colours(kinds)
    per_tick = pl.DataFrame({"tick": x})
    for kind in kinds:
        rows = per_tick.join(run.incidents.filter(pl.col("threat_kind") == kind),
                             on="tick", how="left").fill_null(0)
        fig.add_trace(go.Scatter(x=x, y=rows["n"].cum_sum().to_numpy(),
                                 name=f"incidents: {kind}", stackgroup="incidents",
                                 mode="lines", line={"shape": "hv", "color": palette[kind]}))
    cost = per_tick.join(run.incidents.group_by("tick").agg(pl.col("cost_usd").sum()),
                         on="tick", how="left").fill_null(0)
    fig.add_trace(go.Scatter(x=x, y=cost["cost_usd"].cum_sum().to_numpy(),
                             name="incident cost (right)", mode="lines",
                             line={"shape": "hv", "color": "#d62728", "dash": "dot"}),
                  secondary_y=True)
    fig.update_xaxes(title_text=tick_axis(run))
    fig.update_yaxes(title_text="calls to date", secondary_y=False, rangemode="tozero")
    fig.update_yaxes(title_text="USD", secondary_y=True, showgrid=False, rangemode="tozero")
    return Plot("Security incidents", styled(fig, "Threats and security incidents to date"),
                "Harmful calls attempted (ground truth) and those SecOps blocked; incidents: "
                "those that ran, stacked by threat kind; their cost (a loss, not in cost_usd) "
                "on the right axis.")


def _org(run: RunData) -> Section:
    items: list[Plot | Table] = [headcount_over_time(run), org_chart(run), org_table(run)]
    notes: tuple[str, ...] = ()
    if run.hr.height:
        items.insert(1, hr_timeline(run))
    else:
        notes = ("No promotion, demotion, hire, departure, move or absence in this run.",)
    return Section("Organisation", "Headcount, org changes and the departments' heads.",
                   tuple(items), notes)


def headcount_over_time(run: RunData) -> Plot:
    fig = go.Figure()
    palette = colours(run.departments)
    for dept in run.departments:
        rows = run.per_tick.filter(pl.col("department") == dept)
        fig.add_trace(go.Scatter(x=rows["tick"].to_numpy(), y=rows["headcount"].to_numpy(),
                                 name=dept, mode="lines",
                                 line={"color": palette[dept], "shape": "hv"}))
    return Plot("Headcount", styled(fig, "Headcount per department (at work)",
                                    xaxis_title=tick_axis(run), yaxis_title="agents",
                                    yaxis_rangemode="tozero"),
                "Agents at work each tick: hires and moves raise it, departures, moves out "
                "and absences lower it.")


def hr_timeline(run: RunData) -> Plot:
    fig = go.Figure()
    kinds = [k for k in HR_LABELS if k in set(run.hr["kind"].to_list())]
    palette = colours(kinds)
    for kind in kinds:
        rows = run.hr.filter(pl.col("kind") == kind)
        counts = rows["n"].to_numpy()
        text = [f"{n} x {HR_LABELS[kind]}<br>{who}{'…' if n > 6 else ''}"
                + (f"<br>reason: {why}" if why else "")
                for n, who, why in zip(counts.tolist(), rows["who"].to_list(),
                                       rows["reasons"].to_list(), strict=True)]
        fig.add_trace(go.Scatter(
            x=rows["tick"].to_numpy(), y=[HR_LABELS[kind]] * rows.height, mode="markers",
            name=HR_LABELS[kind], text=text, hovertemplate="tick %{x}<br>%{text}<extra></extra>",
            marker={"color": palette[kind], "size": (6 + 4 * counts.clip(1, 100) ** 0.5),
                    "line": {"width": 0.5, "color": "#333"}}))
    return Plot("HR events", styled(fig, "Org changes over time", xaxis_title=tick_axis(run),
                                    xaxis_range=[-1, max(run.ticks, 1)], showlegend=False),
                "One marker per tick and kind, sized by how many agents it concerns; hover "
                "for who and why (HR's reason, or the scenario).")


def org_chart(run: RunData) -> Plot:
    company = str(run.summary.get("company") or "company")
    heads = {r["department"]: r for r in run.org.iter_rows(named=True)}
    ids, labels, parents, values, text = [company], [company], [""], [0], [""]
    for dept in run.departments:
        roles = run.roles.filter(pl.col("department") == dept)
        head = heads.get(dept, {})
        ids.append(f"{company}/{dept}")
        # a parent's header shows only its label: the head and headcounts go in it
        labels.append(f"{dept}: head {head.get('head_end') or '—'}, "
                      f"{head.get('headcount_start', 0)} → {head.get('headcount_end', 0)} agents")
        parents.append(company)
        values.append(0)
        text.append(f"head at start: {head.get('head_start') or '—'}")
        for role, n in roles.select("role", "n").iter_rows():
            ids.append(f"{company}/{dept}/{role}")
            labels.append(role)
            parents.append(f"{company}/{dept}")
            values.append(int(n))
            text.append(f"{n} agents")
    fig = go.Figure(go.Treemap(ids=ids, labels=labels, parents=parents, values=values,
                               text=text, textinfo="label+text", branchvalues="remainder",
                               hovertemplate="%{label}<br>%{text}<extra></extra>"))
    return Plot("Org chart", styled(fig, "Org chart at the end", margin={"l": 5, "r": 5,
                                                                           "t": 50, "b": 5}),
                "Departments and their roles, sized by agents in the org at the end; each "
                "department with its head and headcount at the start → end.")


def org_table(run: RunData) -> Table:
    return Table("Departments", ("department", "head at start", "head at end",
                                 "headcount at start", "in the org at end", "joined", "left"),
                 tuple(tuple(r) for r in run.org.iter_rows()),
                 "Head at start: the config's; at end: the config's head while still a "
                 "member, else the most senior member.")


def summary_table(runs: list[RunData]) -> Table:
    """summary.json, one column per run: the headline fields first, then the rest."""
    flats = [flat_summary(r.summary) for r in runs]
    keys = list(dict.fromkeys([*(k for k in HEADLINE if any(k in f for f in flats)),
                               *(k for f in flats for k in f)]))
    header = ("field", *(r.label for r in runs))
    return Table("summary.json" if len(runs) == 1 else "summary.json side by side", header,
                 tuple((k, *(f.get(k) for f in flats)) for k in keys))
