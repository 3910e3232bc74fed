"""Event numbering within a tick, and the causal order of messages across ticks."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import synthorg
from synthorg.config import load_config
from synthorg.domain.enums import EventKind, MessageKind
from synthorg.domain.records import EVENT_DTYPE, MESSAGE_DTYPE
from synthorg.engine.events import EventBuffer, MessageBuffer
from tests.conftest import STARTUP

# ---- EventBuffer / MessageBuffer ----------------------------------------------------------------


def test_event_buffer_numbers_each_actor_in_emission_order():
    buf = EventBuffer(7)
    buf.add(EventKind.task_started, np.array([3, 1, 3], dtype=np.int32), np.array([10, 11, 12]))
    buf.add_one(EventKind.tool_call, 1, task=11, target=4, value=0.5, amount=20)
    buf.add_one(EventKind.waited, -2, task=13)
    buf.add(EventKind.task_completed, np.array([3, 1], dtype=np.int32), np.array([10, 11]),
            target=np.array([-1, -1]), value=np.array([0.9, 0.8]))
    buf.add(EventKind.waited, np.zeros(0, dtype=np.int32))  # nothing
    out = buf.collect()
    assert out.dtype == EVENT_DTYPE
    assert (out["tick"] == 7).all()
    rows = [(int(r["actor"]), int(r["seq"]), EventKind(int(r["kind"])).name, int(r["task"]))
            for r in out]
    assert rows == [
        (-2, 0, "waited", 13),
        (1, 0, "task_started", 11),
        (1, 1, "tool_call", 11),
        (1, 2, "task_completed", 11),
        (3, 0, "task_started", 10),
        (3, 1, "task_started", 12),
        (3, 2, "task_completed", 10),
    ]
    tool = out[out["kind"] == EventKind.tool_call][0]
    assert (tool["target"], tool["value"], tool["amount"]) == (4, 0.5, 20)


def test_event_buffer_empty():
    out = EventBuffer(0).collect()
    assert out.dtype == EVENT_DTYPE and len(out) == 0


def test_event_buffer_sorted_by_actor_then_seq_at_scale():
    rng = np.random.default_rng(1)
    buf = EventBuffer(2)
    emitted: dict[int, list[int]] = {}
    for k in range(50):
        actors = rng.integers(-3, 20, rng.integers(0, 30)).astype(np.int32)
        tasks = np.arange(len(actors)) + 1000 * k
        buf.add(EventKind.tool_call, actors, tasks)
        for a, t in zip(actors.tolist(), tasks.tolist(), strict=True):
            emitted.setdefault(a, []).append(t)
        if k % 3 == 0:
            buf.add_one(EventKind.waited, 5, task=-k)
            emitted.setdefault(5, []).append(-k)
    out = buf.collect()
    keys = list(zip(out["actor"].tolist(), out["seq"].tolist(), strict=True))
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    for actor, tasks in emitted.items():
        mine = out[out["actor"] == actor]
        assert mine["seq"].tolist() == list(range(len(tasks)))
        assert mine["task"].tolist() == tasks


def test_message_buffer_numbers_by_source():
    buf = MessageBuffer()
    a = np.zeros(3, dtype=MESSAGE_DTYPE)
    a["src"], a["dst"], a["t_task"] = [4, 2, 4], [1, 1, 1], [1, 2, 3]
    b = np.zeros(2, dtype=MESSAGE_DTYPE)
    b["src"], b["dst"], b["t_task"] = [2, 4], [0, 0], [4, 5]
    buf.add(a)
    buf.add(np.zeros(0, dtype=MESSAGE_DTYPE))
    buf.add(b)
    out = buf.collect()
    assert list(zip(out["src"].tolist(), out["seq"].tolist(), out["t_task"].tolist(),
                    strict=True)) == [(2, 0, 2), (2, 1, 4), (4, 0, 1), (4, 1, 3), (4, 2, 5)]
    assert len(MessageBuffer().collect()) == 0


# ---- through a run -------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["auto", "1"])
def events(request, tmp_path_factory) -> pl.DataFrame:
    cfg = load_config(STARTUP, ["runtime.backend=local",
                                f"runtime.agents_per_actor={request.param}"])
    out = tmp_path_factory.mktemp("order") / "a"
    res = synthorg.Simulation(cfg, seed=3, out=out).run(ticks=40)
    ev = res.events
    assert ev.height > 0
    return ev


def test_event_columns(events):
    assert {"tick", "actor", "actor_index", "seq", "kind", "task", "target", "value",
            "amount_usd"} <= set(events.columns)
    assert events["kind"].dtype == pl.String
    assert events["actor"].dtype == pl.String
    assert set(events["kind"].unique()) <= {k.name for k in EventKind}
    assert events["tick"].min() == 0 and events["tick"].max() == 39


def test_events_sorted_by_tick_actor_seq(events):
    keys = events.select("tick", "actor_index", "seq")
    assert keys.equals(keys.sort("tick", "actor_index", "seq"))


def test_event_keys_unique(events):
    assert events.select("tick", "actor_index", "seq").is_duplicated().sum() == 0


def test_seq_counts_from_zero_per_actor_and_tick(events):
    per = events.group_by("tick", "actor_index").agg(
        pl.col("seq").min().alias("lo"), pl.col("seq").max().alias("hi"), pl.len().alias("n"))
    assert (per["lo"] == 0).all()
    assert (per["hi"] == per["n"] - 1).all()


def _asks(events: pl.DataFrame) -> pl.DataFrame:
    return events.filter(
        (pl.col("kind") == "message_sent") & (pl.col("value") == float(MessageKind.ask))
    ).select(
        pl.col("tick").alias("ask_tick"), pl.col("actor_index").alias("asker"),
        pl.col("target").alias("helper"), "task",
    )


def test_help_given_follows_a_request(events):
    helps = events.filter(pl.col("kind") == "help_given").select(
        pl.col("tick").alias("help_tick"), pl.col("actor_index").alias("helper"),
        pl.col("target").alias("asker"), "task",
    )
    assert helps.height > 0, "the scenario should produce some help"
    joined = helps.join(_asks(events), on=["helper", "asker", "task"], how="left")
    earliest = joined.group_by("helper", "asker", "task", "help_tick").agg(
        pl.col("ask_tick").filter(pl.col("ask_tick") < pl.col("help_tick")).max().alias("ask"))
    orphans = earliest.filter(pl.col("ask").is_null())
    assert orphans.height == 0, orphans
    # messages take exactly one tick: the answer comes the tick after the question
    assert (earliest["help_tick"] - earliest["ask"] == 1).all()


def test_every_request_is_answered_or_declined_next_tick(events):
    """A helper answers up to its capacity; the requests beyond it are declined, never lost."""
    last = events["tick"].max()
    asks = _asks(events).filter(pl.col("ask_tick") < last)
    helps = events.filter(pl.col("kind").is_in(["help_given", "help_declined"])).select(
        (pl.col("tick") - 1).alias("ask_tick"), pl.col("actor_index").alias("helper"),
        pl.col("target").alias("asker"), "task")
    missing = asks.join(helps, on=["ask_tick", "helper", "asker", "task"], how="anti")
    assert missing.height == 0, missing


def test_tasks_start_after_they_are_created(events):
    created = events.filter(pl.col("kind") == "task_created").select(
        "task", pl.col("tick").alias("created"))
    assert created["task"].n_unique() == created.height
    started = events.filter(pl.col("kind") == "task_started").select(
        "task", pl.col("tick").alias("started"))
    assert started.height > 0
    joined = started.join(created, on="task", how="left")
    assert joined["created"].null_count() == 0
    assert (joined["started"] > joined["created"]).all()


def test_tasks_are_routed_the_tick_they_arrive(events):
    created = events.filter(pl.col("kind") == "task_created").select("task", "tick")
    routed = events.filter(pl.col("kind") == "task_routed").select("task", "tick")
    joined = routed.join(created, on="task", suffix="_created")
    assert joined.height == routed.height
    assert (joined["tick"] == joined["tick_created"]).all()


def test_each_task_starts_after_its_assignment(events):
    routed = events.filter(pl.col("kind") == "task_routed").select(
        "task", pl.col("target").alias("agent"), pl.col("tick").alias("routed"))
    started = events.filter(pl.col("kind") == "task_started").select(
        "task", pl.col("actor_index").alias("agent"), pl.col("tick").alias("started"))
    first = started.group_by("task").agg(pl.all().sort_by("started").first())
    joined = first.join(routed, on="task", how="left", suffix="_routed")
    assert joined["routed"].null_count() == 0
    assert (joined["started"] > joined["routed"]).all()
