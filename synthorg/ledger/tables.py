"""events.parquet, tasks.parquet and agents.parquet, built from the ledger's part files with
ids and enum names in place of indices."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl

from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import (
    ActionStatus,
    Autonomy,
    BudgetRule,
    EventKind,
    FailReason,
    HrReason,
    LowerCause,
    MessageKind,
    ModelTier,
    Priority,
    RiskTier,
    Seniority,
    TaskStatus,
    Verdict,
    WorkState,
)
from synthorg.domain.records import (
    ACTION_DTYPE,
    EVENT_DTYPE,
    RESULT_DTYPE,
    SCENARIO_ACTOR,
    SYSTEM_ACTOR,
    TASK_DTYPE,
    TIMESERIES_DTYPE,
    dept_actor,
)
from synthorg.ledger.ledger import PARTS_DIR, frame_of, part_files, read_part
from synthorg.org.directory import MICRO, NEVER, OrgDirectory
from synthorg.secops.forms import THREAT_KINDS, TOKEN, SecOpsTables, secops_tables


def _names(enum: type) -> dict[int, str]:
    return {int(m): m.name for m in enum}  # type: ignore[attr-defined]


def _usd(micro: pl.Expr) -> pl.Expr:
    """micro-USD -> USD by true division in numpy: polars may multiply by the reciprocal in
    some chunks, which makes the same amount print differently depending on its row."""
    return micro.map_batches(
        lambda s: pl.Series(s.name, s.to_numpy().astype(np.float64) / MICRO).fill_nan(None),
        return_dtype=pl.Float64)


def _scan(files: list[Path], dtype: np.dtype) -> pl.LazyFrame:
    frames = [frame_of(read_part(f)) for f in files] or [frame_of(np.zeros(0, dtype))]
    return pl.concat(frames, rechunk=False).lazy()


_FAILURES = {k: v for k, v in _names(FailReason).items() if k != FailReason.none}


def actor_names(d: OrgDirectory) -> dict[int, str]:
    names = {i: a for i, a in enumerate(d.agent_ids)}
    names.update({dept_actor(k): f"dept:{dep}" for k, dep in enumerate(d.dept_ids)})
    names[SYSTEM_ACTOR] = "system"  # task creation and incidents: no agent or department
    names[SCENARIO_ACTOR] = "scenario"  # shocks: demand spikes, outages
    return names


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[Path]:
    """polars reports a full disk as a parquet error ("Invalid thrift: transport error"):
    name it for what it is, so the run says "No space left on device" about the file."""
    try:
        yield path
    except pl.exceptions.PolarsError as exc:
        stat = os.statvfs(path.parent)
        if stat.f_bavail * stat.f_frsize < 1 << 20:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from exc
        raise


def _sink(frame: pl.LazyFrame, path: Path) -> None:
    with _writing(path):
        frame.sink_parquet(path)


def _named_where(kinds: tuple[EventKind, ...], column: str, names: dict[int, str],
                 alias: str) -> pl.Expr:
    """`column` read as a name (from `names`) on rows of the event kinds `kinds`, else null."""
    return (pl.when(pl.col("kind").is_in([int(k) for k in kinds]))
            .then(pl.col(column).cast(pl.Int64).replace_strict(names, default=None,
                                                               return_dtype=pl.String))
            .otherwise(None).alias(alias))


def write_events(out: Path, files: list[Path], d: OrgDirectory, cfg: CompanyConfig,
                 created: list[Path]) -> None:
    """Every shard's events in one table, in ledger order: (tick, actor, seq), with the
    integer `target` also read out where it names a tool, a SecOps rule, a fail reason or
    (from `value`) a message kind, and the calls' SecOps columns (_call_columns)."""
    k = EventKind
    tables = secops_tables(cfg)
    (
        _scan(files, EVENT_DTYPE)
        .sort("tick", "actor", "seq", maintain_order=True)
        .with_columns(
            _named_where((k.tool_call, k.tool_failed, k.action_done), "target",
                         dict(enumerate(d.tool_ids)), "tool"),
            pl.coalesce(  # the SecOps rule, or the budget, that refused or escalated a call
                _named_where((k.tool_denied, k.tool_escalated), "target",
                             dict(enumerate(tables.verdicts.rule_ids)), "rule"),
                _named_where((k.budget_blocked,), "target", _names(BudgetRule), "rule")),
            _named_where((k.task_failed,), "target", _FAILURES, "fail_reason"),
            _named_where((k.message_sent,), "value", _names(MessageKind), "message_kind"),
            _named_where((k.autonomy_changed, k.autonomy_lowered, k.autonomy_restored,
                          k.autonomy_kept_low), "target", _names(Autonomy), "autonomy"),
            _named_where((k.autonomy_lowered,), "value", _names(LowerCause), "lowered_for"),
            _named_where((k.agent_joined, k.agent_left, k.agent_moved, k.agent_promoted,
                          k.agent_demoted, k.promotion_refused, k.model_tier_changed,
                          k.routing_changed), "value", _names(HrReason), "hr_reason"),
        )
        .pipe(_call_columns, tables, d, cfg, created)
        .with_columns(
            pl.col("actor").alias("actor_index"),
            pl.col("actor").replace_strict(actor_names(d), return_dtype=pl.String),
            pl.col("kind").replace_strict(_names(EventKind), return_dtype=pl.String),
            _usd(pl.col("amount")).alias("amount_usd"),
        )
        .drop("amount")
        .pipe(_sink, out / "events.parquet")
    )


_CALL_KINDS = (EventKind.tool_call, EventKind.tool_denied, EventKind.tool_escalated,
               EventKind.tool_failed, EventKind.threat, EventKind.security_incident,
               EventKind.approval_granted, EventKind.approval_rejected)
_VERDICT_OF = {int(EventKind.tool_call): "allow", int(EventKind.tool_denied): "deny",
               int(EventKind.tool_escalated): "escalate"}


def _call_columns(events: pl.LazyFrame, tables: SecOpsTables, d: OrgDirectory,
                  cfg: CompanyConfig, created: list[Path]) -> pl.LazyFrame:
    """On the events of a call (`value` holds its form): `form`; `harmful` and `threat_kind`
    (the ground truth); the call's tool `call_tool`, `action_type`, `risk_tier` and
    `arguments` (its JSON, fields filled from the row); on SecOps's own events, `verdict`
    and the rule's `reason`."""
    f = tables.forms
    kinds = [int(k) for k in _CALL_KINDS]
    info = pl.LazyFrame({
        "form": pl.Series(range(len(f)), dtype=pl.Int32),
        "harmful": f.kind >= 0,
        "threat_kind": [THREAT_KINDS[k] if k >= 0 else None for k in f.kind.tolist()],
        "call_tool": [cfg.tools[t].name for t in f.tool.tolist()],
        "action_type": list(tables.verdicts.action_type),
        "risk_tier": [RiskTier(int(t)).name for t in tables.verdicts.tier],
        "_args": [f.argument_json(i) for i in range(len(f))],
    })
    reasons = pl.LazyFrame(
        [(form, rule, why) for (form, rule), why in tables.verdicts.reasons.items()],
        schema={"form": pl.Int32, "_rule": pl.Int32, "reason": pl.String}, orient="row")
    types = (_scan(created, TASK_DTYPE).select("task", pl.col("type").replace_strict(
        dict(enumerate(d.type_ids)), return_dtype=pl.String).alias("_type")))
    dept_of = {i: d.dept_ids[k] for i, k in enumerate(d.agent_dept.tolist())}
    on_call = pl.col("kind").is_in(kinds) & (pl.col("value") >= 0)
    args = pl.col("_args")
    for field, value in (("task", pl.col("task").cast(pl.String)),
                         ("tick", pl.col("tick").cast(pl.String)),
                         ("type", pl.col("_type").fill_null("")),
                         ("agent", pl.col("actor").replace_strict(
                             dict(enumerate(d.agent_ids)), default="",
                             return_dtype=pl.String)),
                         ("department", pl.col("actor").replace_strict(
                             dept_of, default="", return_dtype=pl.String))):
        args = args.str.replace_all(TOKEN % field, value, literal=True)
    return (
        events
        .with_columns(pl.when(on_call).then(pl.col("value").cast(pl.Int32)).alias("form"),
                      pl.when(pl.col("kind").is_in([int(EventKind.tool_denied),
                                                    int(EventKind.tool_escalated)]))
                      .then(pl.col("target")).alias("_rule"))
        .join(info, on="form", how="left", maintain_order="left")
        .join(reasons, on=["form", "_rule"], how="left", maintain_order="left")
        .join(types, on="task", how="left", maintain_order="left")
        .with_columns(args.alias("arguments"),
                      pl.col("kind").replace_strict(_VERDICT_OF, default=None,
                                                    return_dtype=pl.String).alias("verdict"))
        .drop("_args", "_rule", "_type")
    )


def write_tasks(out: Path, created: list[Path], results: list[Path], d: OrgDirectory,
                holders: dict[int, int] | None = None) -> pl.DataFrame:
    """Writes tasks.parquet (and returns it). An open task's agent is who holds or queues
    it (`holders`: task id -> agent; or its addressee, for one travelling in a message);
    a failed task has no quality."""
    res = _scan(results, RESULT_DTYPE).rename({"status": "status_code"})
    agents = dict(enumerate(d.agent_ids))
    held = pl.LazyFrame({"task": list((holders or {}).keys()),
                         "holder": list((holders or {}).values())},
                        schema={"task": pl.Int64, "holder": pl.Int32})
    frame = (
        _scan(created, TASK_DTYPE)
        .join(res, on="task", how="left")
        .join(held, on="task", how="left")
        .with_columns(
            pl.coalesce("agent", "holder").alias("agent"),
            pl.when(pl.col("status_code") == int(TaskStatus.completed)).then(pl.col("quality"))
            .alias("quality"),
        )
        .with_columns(
            pl.col("type").replace_strict(dict(enumerate(d.type_ids)), return_dtype=pl.String),
            pl.col("dept").replace_strict(dict(enumerate(d.dept_ids)), return_dtype=pl.String)
            .alias("department"),
            pl.col("skill").replace_strict(dict(enumerate(d.skill_ids)), return_dtype=pl.String),
            pl.col("tool").replace_strict(dict(enumerate(d.tool_ids)), return_dtype=pl.String),
            pl.col("priority").replace_strict(_names(Priority), return_dtype=pl.String),
            pl.col("status_code").replace_strict(_names(TaskStatus), default="open",
                                                 return_dtype=pl.String).alias("status"),
            # null unless failed, as for open tasks (a completed task's reason code is 0)
            pl.col("reason").replace_strict(_FAILURES, default=None,
                                            return_dtype=pl.String).alias("fail_reason"),
            pl.col("agent").replace_strict(agents, default=None, return_dtype=pl.String),
            _usd(pl.col("cost_micro")).alias("cost_usd"),
            _usd(pl.col("llm_cost_micro")).alias("cost_llm_usd"),
            (pl.col("finished") - pl.col("started")).alias("duration_ticks"),
            (pl.col("finished") - pl.col("created")).alias("lead_time_ticks"),
        )
        .drop("dept", "status_code", "reason", "cost_micro", "llm_cost_micro", "holder")
        .sort("task")
        .collect()
    )
    with _writing(out / "tasks.parquet") as path:
        frame.write_parquet(path)
    return frame


def write_agents(out: Path, rows: list[dict[str, np.ndarray]], d: OrgDirectory,
                 hr_scores: pl.DataFrame | None = None,
                 teleology: pl.DataFrame | None = None,
                 with_model: np.ndarray | None = None) -> pl.DataFrame:
    """One row per agent that was in the org during the run, as the org stands at its end
    (department, role, seniority, autonomy, model tier), with the ticks it joined and left
    (null: still there), whether it reasons with the model (LLM mode), its teleological
    metrics (`teleo_*`) and, with HR on, its scores at the last review (`hr_*`)."""
    merged = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
    joined = d.joined[merged["agent_index"]] != NEVER
    merged = {k: v[joined] for k, v in merged.items()}
    idx = merged["agent_index"]
    frame = pl.DataFrame({
        "agent": [d.agent_ids[i] for i in idx],
        "department": [d.dept_ids[k] for k in d.agent_dept[idx]],
        "role": [d.role_ids[k] for k in d.agent_role[idx]],
        "seniority": [Seniority(int(s)).name for s in d.seniority[idx]],
        "autonomy": [Autonomy(int(a)).name for a in d.autonomy[idx]],
        "model_tier": [ModelTier(int(t)).name for t in d.model_tier[idx]],
        # LLM mode: whether it reasons with the model (llm.agents), else deterministic
        "llm_agent": (with_model[idx] if with_model is not None
                      else np.zeros(len(idx), dtype=bool)),
        "state": [WorkState(int(s)).name for s in merged.pop("state")],
        "joined_tick": pl.Series(d.joined[idx], dtype=pl.Int32),
        "exit_tick": pl.Series(d.left[idx], dtype=pl.Int32).replace(NEVER, None),
        **{k: v for k, v in merged.items()
           if k not in ("cost", "paid", "tool_spend", "llm_spend")},
        "cost_usd": merged["cost"] / MICRO,  # of the tasks it ended
        "paid_usd": merged["paid"] / MICRO,  # its salary over the run
        "tool_spend_usd": merged["tool_spend"] / MICRO,
        "llm_spend_usd": merged["llm_spend"] / MICRO,  # the model, over the run
    }).sort("agent_index")
    if hr_scores is not None:
        scores = hr_scores.drop("dept", "seniority", strict=False)
        scores = scores.rename({c: f"hr_{c}" for c in scores.columns if c != "agent"})
        frame = (frame.with_columns(pl.col("agent_index").cast(pl.Int64).alias("_slot"))
                 .join(scores.select(pl.col("agent").cast(pl.Int64).alias("_slot"),
                                     pl.exclude("agent")), on="_slot", how="left")
                 .drop("_slot"))
    if teleology is not None:  # per agent id (synthorg/hr/teleology.py)
        frame = frame.join(teleology.rename({c: f"teleo_{c}" for c in teleology.columns
                                             if c != "agent"}), on="agent", how="left")
    with _writing(out / "agents.parquet") as path:
        frame.write_parquet(path)
    return frame


def arguments_frame(parts: Path) -> pl.LazyFrame:
    """(call, arguments) of every call that has a side-table row: each `arguments` part and
    the `argument_text` part of the same shard and number hold the rows and their texts."""
    calls, texts = [], []
    for rows_file in part_files(parts, "arguments"):
        rows = read_part(rows_file)
        text = read_part(rows_file.with_name(rows_file.name.replace("arguments-",
                                                                    "argument_text-", 1)))
        ends = np.cumsum(rows["size"])
        blob = bytes(text)
        calls.append(np.asarray(rows["call"]))
        texts += [blob[e - n:e].decode() for e, n in zip(ends.tolist(), rows["size"].tolist(),
                                                         strict=True)]
    return pl.DataFrame({"call": np.concatenate(calls) if calls else np.zeros(0, np.int64),
                         "arguments": pl.Series(texts, dtype=pl.String)}).lazy()


def write_actions(out: Path, files: list[Path], d: OrgDirectory) -> None:
    """actions.parquet: one row per action whose outcome was delivered, by call id, with the
    call's arguments (null for approvals)."""
    (
        _scan(files, ACTION_DTYPE)
        .join(arguments_frame(out / PARTS_DIR), on="call", how="left")
        .sort("call")
        .with_columns(
            pl.col("agent").replace_strict(dict(enumerate(d.agent_ids)), return_dtype=pl.String),
            pl.col("tool").replace_strict(dict(enumerate(d.tool_ids)), default=None,
                                          return_dtype=pl.String),  # none: autonomy asked
            pl.col("executor").replace_strict(dict(enumerate(d.executor_ids)),
                                              return_dtype=pl.String),
            pl.col("status").replace_strict(_names(ActionStatus), return_dtype=pl.String),
            pl.col("verdict").replace_strict(_names(Verdict), return_dtype=pl.String),
        )
        .rename({"call": "call_id", "tick": "issued_tick", "due": "due_tick"})
        .pipe(_sink, out / "actions.parquet")
    )


TIMESERIES_SUMS = ("headcount", "busy", "queued", "escalations")


def timeseries_totals(files: list[Path]) -> tuple[int, int, int, int, int]:
    """(busy agent-ticks, agent-ticks at work, salaries paid, tool spend, model spend:
    micro-USD) over the run, from the groups' timeseries rows."""
    row = (_scan(files, TIMESERIES_DTYPE)
           .select(pl.col("busy").sum(), pl.col("headcount").sum(),
                   pl.col("salary_micro").sum(), pl.col("tool_micro").sum(),
                   pl.col("llm_micro").sum())
           .collect().row(0))
    return tuple(int(v or 0) for v in row)  # type: ignore[return-value]


def write_timeseries(out: Path, files: list[Path], tasks_file: Path, d: OrgDirectory) -> None:
    """timeseries.parquet: one row per tick and department (the groups' rows summed, with
    arrivals, completions and failures of the department's tasks from tasks.parquet)."""
    per_tick = (
        _scan(files, TIMESERIES_DTYPE)
        .group_by("tick", "dept")
        .agg(*(pl.col(c).sum() for c in (*TIMESERIES_SUMS, "salary_micro", "tool_micro",
                                          "llm_micro")))
    )
    tasks = pl.scan_parquet(tasks_file)
    dept_of = {name: k for k, name in enumerate(d.dept_ids)}

    def count(tick_col: str, name: str, status: str | None = None) -> pl.LazyFrame:
        rows = tasks if status is None else tasks.filter(pl.col("status") == status)
        return (rows.group_by(pl.col(tick_col).alias("tick"),
                              pl.col("department").replace_strict(dept_of, return_dtype=pl.Int32)
                              .alias("dept"))
                .agg(pl.len().cast(pl.Int64).alias(name)))

    frame = per_tick
    for extra in (count("created", "arrivals"), count("finished", "completed", "completed"),
                  count("finished", "failed", "failed")):
        frame = frame.join(extra, on=["tick", "dept"], how="left")
    (
        frame.with_columns(
            pl.col("arrivals", "completed", "failed").fill_null(0),
            pl.col("dept").replace_strict(dict(enumerate(d.dept_ids)), return_dtype=pl.String)
            .alias("department"),
            (pl.col("busy") / pl.col("headcount").clip(lower_bound=1)).alias("load"),
            _usd(pl.col("salary_micro")).alias("cost_salary_usd"),
            _usd(pl.col("tool_micro")).alias("cost_tools_usd"),
            _usd(pl.col("llm_micro")).alias("cost_llm_usd"),
        )
        .drop("dept", "salary_micro", "tool_micro", "llm_micro")
        .select("tick", "department", "headcount", "arrivals", "completed", "failed", "queued",
                "busy", "load", "escalations", "cost_salary_usd", "cost_tools_usd",
                "cost_llm_usd")
        .sort("tick", "department")
        .pipe(_sink, out / "timeseries.parquet")
    )
