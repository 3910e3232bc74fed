"""Approvals: parked in the run directory with their call, decided by the seeded approver or a
person (`synthorg approvals`), timed out with the policy's default, replayed as decided, and
kept across a restart of the SecOps actor. Promotions that need approval wait for the same
person in the same store."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import synthorg
from synthorg.cli.app import app
from synthorg.secops.parking import FILE, ApprovalStore, ParkedCall
from tests.conftest import CAREERS, STARTUP

runner = CliRunner()
LOCAL = ["runtime.backend=local"]


def _cli(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def _parked(out: Path, *extra: str) -> list[dict]:
    r = _cli("approvals", "list", out, "--json", *extra)
    assert r.exit_code == 0, r.output
    return [json.loads(line) for line in r.stdout.splitlines()]


def _decided_events(result) -> pl.DataFrame:
    return result.events.filter(pl.col("kind").is_in(["approval_granted", "approval_rejected"]))


class PersonAtTheDesk:
    """A run in a thread of its own, with `decide(call) -> "approve"|"deny"|None` standing
    for a person who answers what the run parks (None: leaves it waiting)."""

    def __init__(self, sim: synthorg.Simulation, ticks: int, decide) -> None:
        self.sim, self.decide = sim, decide
        self.result = None
        self.error: BaseException | None = None
        self.answered: dict[int, str] = {}
        self._thread = threading.Thread(target=self._run, args=(ticks,), daemon=True)

    def _run(self, ticks: int) -> None:
        try:
            self.result = self.sim.run(ticks=ticks)
        except BaseException as exc:  # re-raised by answer_until_done
            self.error = exc

    def start(self) -> PersonAtTheDesk:
        self._thread.start()
        return self

    def answer_until_done(self, limit_s: float = 240.0, on_parked=None) -> None:
        out = self.sim.out
        end = time.monotonic() + limit_s
        while self._thread.is_alive() and time.monotonic() < end:
            if (out / FILE).exists():
                for row in _parked(out):
                    if on_parked is not None and on_parked(row):
                        continue
                    what = self.decide(row["call"])
                    if what is not None and row["call"] not in self.answered:
                        r = _cli("approvals", what, out, row["call"], "--note", "checked")
                        assert r.exit_code == 0, r.output
                        self.answered[row["call"]] = what
            time.sleep(0.05)
        self._thread.join(timeout=1)
        assert not self._thread.is_alive(), "the run did not end"
        if self.error is not None:
            raise self.error


def test_seeded_approvals_park_the_call_and_its_reason(tmp_path):
    cfg = synthorg.load_config(STARTUP, LOCAL)
    result = synthorg.Simulation(cfg, out=tmp_path).run(ticks=80)
    rows = _parked(tmp_path, "--all")
    assert rows and not _parked(tmp_path)  # all decided, by the approver
    assert {r["decided_by"] for r in rows} == {"approver"}
    on_tool = [r for r in rows if r["tool"]]
    assert on_tool and all(r["arguments"] and r["rule"] and r["reason"] for r in on_tool)
    # each decision reaches its agent at the decided tick, as the store says
    store = {(r["agent"], r["task"], r["due"]): r["status"] for r in rows}
    events = _decided_events(result).select("actor", "task", "tick", "kind").rows()
    assert events
    for actor, task, tick, kind in events:
        assert kind == f"approval_{store[(actor, task, tick)]}"


@pytest.mark.parametrize("default", ["reject", "grant"])
def test_unanswered_requests_time_out_to_the_policy_default(tmp_path, default):
    cfg = synthorg.load_config(STARTUP, [*LOCAL, "policies.approvals.answer_probability=0",
                                         f"policies.approvals.on_timeout={default}"])
    result = synthorg.Simulation(cfg, out=tmp_path).run(ticks=80)
    s = result.summary
    assert s.approvals_timed_out > 0
    assert s.approvals_timed_out == s.approvals + s.approvals_rejected
    assert (s.approvals if default == "grant" else s.approvals_rejected) == s.approvals_timed_out
    rows = _parked(tmp_path, "--all")  # (one due after the last tick may still be parked)
    assert {r["decided_by"] for r in rows if r["due"] < 80} == {"timeout"}


def test_a_person_decides_while_the_run_waits_and_replay_gives_it_back(tmp_path):
    cfg = synthorg.load_config(STARTUP, [*LOCAL, "policies.approvals.mode=human"])
    desk = PersonAtTheDesk(synthorg.Simulation(cfg, out=tmp_path / "run"), 60,
                           lambda call: "approve" if call % 3 else "deny").start()
    desk.answer_until_done()
    result = desk.result
    assert len(desk.answered) >= 4 and set(desk.answered.values()) == {"approve", "deny"}
    rows = {r["call"]: r for r in _parked(tmp_path / "run", "--all")}
    for call, what in desk.answered.items():
        assert rows[call]["decided_by"] == "person" and rows[call]["note"] == "checked"
        assert rows[call]["status"] == {"approve": "granted", "deny": "rejected"}[what]
    # the decisions reached the agents still waiting for them, as the person made them
    delivered = {(r["agent"], r["task"], r["due"]): r["status"] for r in rows.values()
                 if r["due"] < 60 and r["task"] >= 0}
    events = _decided_events(result).select("actor", "task", "tick", "kind").rows()
    assert {kind for *_, kind in events} == {"approval_granted", "approval_rejected"}
    for a, t, k, kind in events:
        assert kind == f"approval_{delivered[(a, t, k)]}"
    r = _cli("replay", tmp_path / "run")
    assert r.exit_code == 0 and "identical" in r.stdout, r.output


def test_nobody_at_the_desk_means_the_default_after_the_time_out(tmp_path):
    cfg = synthorg.load_config(STARTUP, [*LOCAL, "policies.approvals.mode=human",
                                         "policies.approvals.timeout_seconds=0.2"])
    result = synthorg.Simulation(cfg, out=tmp_path).run(ticks=40)
    s = result.summary
    assert s.approvals_timed_out > 0 and s.approvals == 0
    rows = _parked(tmp_path, "--all")
    # a request whose decision is due after the run's last tick may still be parked at its end
    due_in_run = [r for r in rows if r["due"] < 40]
    assert {r["decided_by"] for r in due_in_run} == {"timeout"}
    assert all("nobody decided" in r["note"] for r in due_in_run)


def test_the_approvals_cli_refuses_what_it_cannot_do(tmp_path):
    r = _cli("approvals", "list", tmp_path)
    assert r.exit_code == 2 and "not found" in r.output
    cfg = synthorg.load_config(STARTUP, LOCAL)
    synthorg.Simulation(cfg, out=tmp_path / "run").run(ticks=40)
    call = _parked(tmp_path / "run", "--all")[0]["call"]
    r = _cli("approvals", "approve", tmp_path / "run", call)
    assert r.exit_code == 2 and f"call {call}: already" in r.output
    r = _cli("approvals", "deny", tmp_path / "run", 12345)
    assert r.exit_code == 2 and "call 12345: not in" in r.output
    r = _cli("approvals", "approve", tmp_path / "run", "x")
    assert r.exit_code == 2


@pytest.mark.parametrize("damage", ["not_sqlite", "other_table", "bad_row", "huge_arguments"])
def test_a_crafted_approvals_store_is_reported(tmp_path, damage):
    path = tmp_path / FILE
    if damage == "not_sqlite":
        path.write_bytes(b"SQLite format 3\x00" + os.urandom(200))
    elif damage == "other_table":
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE parked (call INTEGER, evil TEXT)")
    else:
        store = ApprovalStore(path)
        store.park([ParkedCall(call=1, tick=0, due=2, agent="a", task=1, tool="run_shell")])
        store.close()
        with sqlite3.connect(path) as db:
            value = "'not json'" if damage == "bad_row" else "'{\"a\": \"' || hex(zeroblob(70000)) || '\"}'"
            db.execute(f"UPDATE parked SET arguments = {value}")
    r = _cli("approvals", "list", tmp_path, "--all")
    assert r.exit_code == 2, r.output
    assert FILE in r.output and "Traceback" not in r.output


@pytest.mark.ray
def test_a_parked_approval_survives_a_restart_of_the_secops_actor(ray_session, tmp_path):
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=ray", "runtime.checkpoint_every=5",
                                         "policies.approvals.mode=human"])
    sim = synthorg.Simulation(cfg, out=tmp_path / "run")
    killed: list[int] = []

    def kill_once_then_answer(row: dict) -> bool:
        """Kill the secops actor while the first call waits; answer only after that."""
        if killed:
            return False
        time.sleep(0.5)  # the run is now waiting for this call at its due tick
        pid = sim.backend.secops_pid()  # type: ignore[union-attr]
        os.kill(pid, signal.SIGKILL)
        killed.append(row["call"])
        return True

    desk = PersonAtTheDesk(sim, 40, lambda call: "approve").start()
    desk.answer_until_done(on_parked=kill_once_then_answer)
    s = desk.result.summary
    assert killed and s.incidents >= 1
    first = {r["call"]: r for r in _parked(tmp_path / "run", "--all")}[killed[0]]
    assert first["status"] == "granted" and first["decided_by"] == "person"
    events = _decided_events(desk.result).filter(
        (pl.col("actor") == first["agent"]) & (pl.col("tick") == first["due"]))
    assert events["kind"].to_list() == ["approval_granted"]
    r = _cli("replay", tmp_path / "run")
    assert r.exit_code == 0 and "identical" in r.stdout, r.output


# careers with every promotion asking (to mid and above), and few calls asking
PROMOTIONS_ASK = ["policies.approvals.mode=human", "hr.promotion.approval_from=mid",
                  "company.autonomy=autonomous", "policies.decision.wait_threshold=0",
                  "workload.threats.injection_rate=0", "workload.threats.insiders=[]",
                  "workload.threats.mistake_probability=0"]


def _promotions(out: Path) -> list[dict]:
    return [r for r in _parked(out, "--all") if r["tool"] == "hr:promotion"]


def _career_events(result) -> dict[tuple[str, int], tuple[str, int, str]]:
    rows = result.events.filter(pl.col("kind").is_in(["agent_promoted", "promotion_refused"]))
    return {(a, t): (k, v, why) for a, t, k, v, why in
            rows.select("actor", "tick", "kind", "target", "hr_reason").rows()}


@pytest.mark.parametrize("backend", ["local", pytest.param("ray", marks=pytest.mark.ray)])
def test_a_person_decides_promotions_and_replay_gives_them_back(request, tmp_path, backend):
    if backend == "ray":
        request.getfixturevalue("ray_session")
    cfg = synthorg.load_config(CAREERS, [f"runtime.backend={backend}", *PROMOTIONS_ASK])
    seen: list[int] = []

    def in_turn(call: int) -> str:  # approve, deny, approve, ... in the order they are asked
        if call not in seen:
            seen.append(call)
        return "deny" if seen.index(call) % 2 else "approve"

    ticks = 250
    desk = PersonAtTheDesk(synthorg.Simulation(cfg, out=tmp_path / "run"), ticks, in_turn).start()
    desk.answer_until_done()
    asked = _promotions(tmp_path / "run")
    assert len(asked) >= 4 and {r["status"] for r in asked} == {"granted", "rejected"}
    careers = _career_events(desk.result)
    for r in asked:
        assert r["decided_by"] == "person" and r["note"] == "checked" and r["task"] == -1
        assert "hr.promotion.approval_from: mid" in r["reason"]
        kind, level, why = careers[(r["agent"], r["due"])]
        assert level == ["junior", "mid", "senior", "lead", "executive"].index(
            r["arguments"]["to"])
        if r["status"] == "granted":
            assert (kind, why) == ("agent_promoted", "criteria_met")
        else:
            assert (kind, why) == ("promotion_refused", "approver_refused")
    assert len(careers) == len(asked)  # every promotion asked, and only as decided
    s = desk.result.summary
    assert (s.promotions, s.promotions_refused) == (
        sum(r["status"] == "granted" for r in asked), sum(r["status"] == "rejected" for r in asked))
    r = _cli("replay", tmp_path / "run")
    assert r.exit_code == 0 and "identical" in r.stdout, r.output


def test_a_promotion_nobody_decides_takes_the_default_after_the_time_out(tmp_path):
    cfg = synthorg.load_config(CAREERS, [*LOCAL, *PROMOTIONS_ASK,
                                         "policies.approvals.timeout_seconds=0.2"])
    result = synthorg.Simulation(cfg, out=tmp_path).run(ticks=160)
    asked = _promotions(tmp_path)
    assert asked and {(r["status"], r["decided_by"]) for r in asked} == {("rejected", "timeout")}
    careers = _career_events(result)
    assert {careers[(r["agent"], r["due"])] [::2] for r in asked} == {
        ("promotion_refused", "approval_timed_out")}
    assert len(careers) == len(asked)


@pytest.mark.ray
def test_a_review_due_after_the_last_tick_asks_nobody(ray_session, tmp_path):
    """On Ray too the HR review waits for a person only when its decisions are due: a run
    that ends at the tick a review is fed (its decisions due after the end) parks nothing
    for it and does not wait."""
    cfg = synthorg.load_config(CAREERS, ["runtime.backend=ray", *PROMOTIONS_ASK,
                                         "policies.approvals.timeout_seconds=20"])
    reviews, lag = cfg.hr.review_every, cfg.hr.decision_lag
    desk = PersonAtTheDesk(synthorg.Simulation(cfg, out=tmp_path / "run"), 9 * reviews + 1,
                           lambda call: "approve").start()
    desk.answer_until_done(on_parked=lambda row: row["due"] > 9 * reviews)
    asked = _promotions(tmp_path / "run")
    assert asked and max(r["due"] for r in asked) <= 8 * reviews + lag
