"""Actions with a lifecycle: outcomes arrive at the tick the simulation fixed, whatever the wall
clock did; failures and time-outs are recorded outcomes."""

from __future__ import annotations

import asyncio
import json
import time

import numpy as np
import polars as pl
import pytest

import synthorg
from synthorg.actions.executors import DelayExecutor, Outcome
from synthorg.actions.runner import ActionRunner
from synthorg.config.models import ExecutorSpec
from synthorg.domain.enums import ActionStatus
from synthorg.domain.records import ACTION_DTYPE, call_ids
from tests.conftest import STARTUP, interrupted_at

# every write_file call runs on an executor that sleeps at random, and some fail
SLOW_TOOLS = [
    "executors={slow: {kind: delay, max_in_flight: 3, latency_ticks: 2, sleep_s: [0, 0.02], "
    "fail_probability: 0.2}, sandbox: {kind: sandbox, latency_ticks: 2, lifetime: agent}}",
    "tools.write_file.executor=slow",
    "tools.write_file.forms=[{path: 'src/{type}/{task}.py', content: '{agent}'}]",
    "workload.threats.insiders=[]",  # write_file's harmful forms are other tests' business
    "tools.deploy.executor=slow",
]


def _actions(tick: int, agents: list[int], due: int, executor: int = 0) -> np.ndarray:
    rows = np.zeros(len(agents), dtype=ACTION_DTYPE)
    rows["call"] = call_ids(tick, np.array(agents))
    rows["tick"], rows["due"], rows["agent"], rows["executor"] = tick, due, agents, executor
    return rows


class Raising:
    async def run(self, actions: np.ndarray, arguments: list[str]) -> list[Outcome]:
        raise RuntimeError("the executor broke")


class Hanging:
    async def run(self, actions: np.ndarray, arguments: list[str]) -> list[Outcome]:
        await asyncio.sleep(0.05)
        return [(int(ActionStatus.succeeded), 1.0)]  # one outcome for several actions


def test_outcomes_wait_for_their_tick_and_come_in_call_order():
    spec = ExecutorSpec(kind="delay", sleep_s=(0.0, 0.05), latency_ticks=2)
    runner = ActionRunner({0: DelayExecutor(spec, np.uint64(7))})
    try:
        runner.issue(_actions(3, [9, 2, 5], due=5))
        assert len(runner.due(4)) == 0  # not due yet, however quickly they finished
        out = runner.due(5)
        assert out["agent"].tolist() == [2, 5, 9]
        assert (out["status"] == ActionStatus.succeeded).all()
        assert runner.idle
    finally:
        runner.close()


def test_a_broken_executor_fails_its_actions_instead_of_the_run():
    runner = ActionRunner({0: Raising(), 1: Hanging()})
    try:
        runner.issue(_actions(0, [1, 2], due=1, executor=0))
        runner.issue(_actions(0, [3, 4], due=1, executor=1))
        out = runner.due(1)
        assert out["status"].tolist() == [ActionStatus.failed] * 4
    finally:
        runner.close()


def test_a_call_that_outlives_its_timeout_is_timed_out():
    spec = ExecutorSpec(kind="delay", sleep_s=(0.5, 0.5), timeout_s=0.05)
    runner = ActionRunner({0: DelayExecutor(spec, np.uint64(1))})
    try:
        t0 = time.monotonic()
        runner.issue(_actions(0, [1], due=1))
        assert runner.due(1)["status"].tolist() == [ActionStatus.timed_out]
        assert time.monotonic() - t0 < 0.4
    finally:
        runner.close()


def test_the_concurrency_limit_holds():
    spec = ExecutorSpec(kind="delay", sleep_s=(0.05, 0.05), max_in_flight=2)
    runner = ActionRunner({0: DelayExecutor(spec, np.uint64(1))})
    try:
        t0 = time.monotonic()
        runner.issue(_actions(0, list(range(6)), due=1))
        runner.due(1)
        assert time.monotonic() - t0 >= 0.14  # three rounds of two
    finally:
        runner.close()


def _run(tmp, overrides, seed=4, ticks=80) -> synthorg.RunResult:
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local", *SLOW_TOOLS, *overrides])
    return synthorg.Simulation(cfg, seed=seed, out=tmp).run(ticks=ticks)


@pytest.fixture(scope="module")
def slow_run(tmp_path_factory) -> synthorg.RunResult:
    return _run(tmp_path_factory.mktemp("actions") / "run", [])


def test_actions_are_recorded_with_their_lifecycle(slow_run):
    s = slow_run.summary
    assert s.actions > 0 and 0 < s.actions_failed < s.actions
    assert s.conservation_ok
    every = pl.read_parquet(slow_run.run_dir / "actions.parquet")
    assert every.height == s.actions
    assert every["call_id"].n_unique() == every.height
    assert set(every["executor"]) == {"slow", "approvals", "sandbox"}  # analyses: sandbox
    actions = every.filter(pl.col("executor") == "slow")
    assert set(actions["tool"]) <= {"write_file", "deploy"}
    assert set(actions["status"]) == {"succeeded", "failed"}
    assert set(actions["verdict"]) == {"allow"}
    assert set(every.filter(pl.col("executor") == "approvals")["verdict"]) == {"escalate"}
    assert (actions["due_tick"] - actions["issued_tick"] == 2).all()
    edits = actions.filter(pl.col("tool") == "write_file")
    assert edits.height > 0
    threats = slow_run.events.filter(pl.col("kind") == "threat")
    harmful = set(zip(threats["tick"].to_list(), threats["actor"].to_list(), strict=True))
    for row in edits.iter_rows(named=True):
        if (row["issued_tick"], row["agent"]) in harmful:
            continue
        assert json.loads(row["arguments"]) == {
            "path": f"src/{slow_run.tasks.filter(pl.col('task') == row['task'])['type'][0]}/"
                    f"{row['task']}.py", "content": row["agent"]}
    for row in actions.filter(pl.col("tool") == "deploy").iter_rows(named=True):
        assert json.loads(row["arguments"]) == {"service": "operations",  # the template's
                                                "change": f"release-{row['task']}"}
    assert every.filter(pl.col("executor") == "approvals")["arguments"].null_count() == \
        every.filter(pl.col("executor") == "approvals").height
    events = slow_run.events
    assert events.filter(pl.col("kind") == "action_failed").height > 0
    done = events.filter(pl.col("kind") == "action_done")
    assert done.height > 0 and done["tick"].min() >= 2


@pytest.mark.parametrize("layout", ["runtime.agents_per_actor=1", "runtime.agents_per_actor=5"])
def test_random_wall_clock_delays_do_not_change_the_ledger(slow_run, tmp_path, layout):
    again = _run(tmp_path / "again", [layout])
    assert again.summary.ledger_sha256 == slow_run.summary.ledger_sha256


def test_slow_actions_change_what_happens(slow_run, tmp_path):
    """The same company with instant tools is another organisation: the waiting shows."""
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local", "tools.deploy.executor=null",
                                         "tools.analyse.executor=null"])
    instant = synthorg.Simulation(cfg, seed=4, out=tmp_path / "instant").run(ticks=80)
    assert instant.summary.ledger_sha256 != slow_run.summary.ledger_sha256
    executors = pl.read_parquet(instant.run_dir / "actions.parquet")["executor"]
    assert set(executors) == {"approvals"}


def test_approvals_are_actions_on_calls_decided_by_the_secops_office(slow_run):
    """An escalation asks the SecOps office about the call; its decision arrives after the
    approval delay, and every granted or rejected approval in the events is one of them (a
    decision that arrives after its task failed at its deadline changes nothing)."""
    approvals = pl.read_parquet(slow_run.run_dir / "actions.parquet").filter(
        pl.col("executor") == "approvals")
    # those of no task: agents asking for autonomy they lost back (test_autonomy.py)
    asked = approvals.filter(pl.col("task") >= 0)
    assert approvals.filter(pl.col("task") < 0)["tool"].null_count() == approvals.height - asked.height
    delay = synthorg.load_config(STARTUP).policies.approvals.delay_ticks
    assert asked.height > 0
    assert (asked["due_tick"] - asked["issued_tick"] == max(1, delay)).all()
    assert set(asked["value"]) <= {0.0, 1.0}
    events = slow_run.events
    escalated = events.filter(pl.col("kind") == "escalated")
    assert asked.height <= escalated.height  # those due after the last tick are not delivered
    granted = events.filter(pl.col("kind") == "approval_granted")
    rejected = events.filter(pl.col("kind") == "approval_rejected")
    ended = slow_run.tasks.select("task", pl.col("finished").alias("ended"))
    live = asked.join(ended, on="task", how="left").filter(
        pl.col("ended").is_null() | (pl.col("ended") >= pl.col("due_tick")))
    decided = live.join(granted.select(pl.col("actor").alias("agent"),
                                       pl.col("tick").alias("due_tick"), pl.lit(1).alias("g")),
                        on=["agent", "due_tick"], how="left")
    assert granted.height == decided["g"].sum() == live.filter(pl.col("value") == 1.0).height
    assert rejected.height == live.filter(pl.col("value") == 0.0).height


def test_checkpoints_carry_actions_in_flight(tmp_path):
    every = ["runtime.checkpoint_every=7", "simulation.ticks=80"]
    whole = _run(tmp_path / "whole", every)
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local", *SLOW_TOOLS, *every])
    sim = synthorg.Simulation(cfg, seed=4, out=tmp_path / "resumed")
    interrupted_at(sim, 80, at=36)
    resumed = sim.resume()
    assert resumed.summary.ledger_sha256 == whole.summary.ledger_sha256


def test_an_unknown_executor_is_named(tmp_path):
    with pytest.raises(synthorg.errors.ConfigError,
                       match=r"--set tools.write_file.executor=nope: unknown executor"):
        synthorg.load_config(STARTUP, ["tools.write_file.executor=nope"])


def test_arguments_are_part_of_the_ledger(slow_run, tmp_path):
    """The same calls with other arguments are another ledger: the side table is hashed."""
    other = _run(tmp_path / "other",
                 ["tools.write_file.forms=[{path: 'lib/{task}.py', content: '{agent}'}]"])
    assert other.summary.tool_calls == slow_run.summary.tool_calls
    assert other.summary.ledger_sha256 != slow_run.summary.ledger_sha256


def test_an_argument_template_with_an_unknown_field_is_named():
    with pytest.raises(synthorg.errors.ConfigError, match=r"arguments.path: unknown field"):
        synthorg.load_config(STARTUP, ["tools.deploy.arguments={path: '{secret}'}"])
    with pytest.raises(synthorg.errors.ConfigError, match=r"forms\[0\].path: unknown field"):
        synthorg.load_config(STARTUP, ["tools.write_file.forms=[{path: '{secret}'}]"])
