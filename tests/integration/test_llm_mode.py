"""LLM mode against a real OpenAI-compatible server process (synthorg/llm/fake_server.py):
accounting, record and replay, hybrid populations, failover, replies that break the schema,
time-outs and budgets. Runs are small (local backend, sandboxed tools as delay actions)."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import synthorg
from synthorg.errors import MisuseError
from synthorg.llm.cassette import CassetteSpec
from synthorg.llm.fake_server import FakeServerProcess
from tests.conftest import DEFAULT_COMPANY, STARTUP

TICKS = 30


def llm_config(base_url: str | None, *extra: str):
    # every agent reasons with the model (the company's own llm.agents names its seniors)
    sets = ["runtime.backend=local", "executors.sandbox.kind=delay", "llm.enabled=true",
            "llm.agents.seniority=[]",
            "llm.model=fake-model", "llm.prices.fake-model.input_per_mtok=3",
            "llm.prices.fake-model.output_per_mtok=15", "llm.backoff_s=0.01"]
    if base_url is not None:
        sets.append(f"llm.base_url={base_url}")
    return synthorg.load_config(STARTUP, [*sets, *extra])


def run(cfg, out: Path, cassette: CassetteSpec | None = None, seed: int = 0):
    return synthorg.Simulation(cfg, seed=seed, out=out, cassette=cassette).run(ticks=TICKS)


@pytest.fixture(scope="module")
def server():
    with FakeServerProcess(latency=0.01) as s:
        yield s


@pytest.fixture(scope="module")
def llm_run(server, tmp_path_factory):
    return run(llm_config(server.base_url), tmp_path_factory.mktemp("llm") / "run")


def test_the_company_reasons_with_the_model_and_every_token_is_counted(llm_run):
    s = llm_run.summary
    assert s.mode == "llm"
    assert s.llm_calls > 0 and s.tokens_in > 0 and s.tokens_out > 0
    assert s.tasks_completed > 0 and s.conservation_ok
    actions = pl.read_parquet(llm_run.run_dir / "actions.parquet").filter(
        pl.col("executor") == "llm")
    assert actions.height == s.llm_calls
    assert actions["tokens_in"].sum() == s.tokens_in
    cost = actions["cost_micro"].sum() / 1e6
    assert cost == pytest.approx(s.cost_llm_usd)
    # the price: 3 and 15 USD per million tokens in and out
    assert cost == pytest.approx((3 * s.tokens_in + 15 * s.tokens_out) / 1e6, abs=1e-4)
    assert s.cost_usd == pytest.approx(s.cost_salaries_usd + s.cost_tools_usd + s.cost_llm_usd)
    # a deliberation's situation is its arguments: the task and who asks
    situation = actions["arguments"][0]
    assert '"task":' in situation and '"you":' in situation
    # ... and what long-term memory retrieved for the task, quoted
    memories = [json.loads(text)["remembered"]["memories"] for text in actions["arguments"]]
    quoted = [m for ms in memories for m in ms]
    assert quoted and any(ms for ms in memories[-20:])
    assert all(re.match(r"(I completed|I failed|lesson:|the organisation:|[\w.-]+ (showed|helped"
                        r")|[\w.-]+: )", m) for m in quoted), quoted[:5]
    tasks = pl.read_parquet(llm_run.run_dir / "tasks.parquet")
    ended = tasks.filter(pl.col("status") != "open")
    assert 0 < ended["tokens"].sum() <= s.tokens_in + s.tokens_out
    assert 0 < ended["cost_llm_usd"].sum() <= s.cost_llm_usd + 1e-9
    agents = pl.read_parquet(llm_run.run_dir / "agents.parquet")
    assert agents["llm_calls"].sum() == s.llm_calls
    assert agents["llm_spend_usd"].sum() == pytest.approx(s.cost_llm_usd)
    assert (agents["paid_usd"].sum() + agents["tool_spend_usd"].sum()
            + agents["llm_spend_usd"].sum()) == pytest.approx(s.cost_usd, abs=0.005)
    ts = pl.read_parquet(llm_run.run_dir / "timeseries.parquet")
    assert ts["cost_llm_usd"].sum() == pytest.approx(s.cost_llm_usd, abs=1e-6)
    assert ts["cost_tools_usd"].sum() == pytest.approx(s.cost_tools_usd, abs=0.005)


def test_the_models_plans_are_carried_out(llm_run):
    """The fake server's replies vary by request: agents work, ask for help, escalate and wait
    as the model says."""
    events = pl.read_parquet(llm_run.run_dir / "events.parquet")
    kinds = set(events["kind"])
    assert {"llm_call", "tool_call", "escalated", "waited"} <= kinds
    assert llm_run.summary.help_requests > 0


def test_record_stop_the_server_replay(tmp_path):
    cassette = tmp_path / "cassette.jsonl"
    with FakeServerProcess(latency=0.01, seed=5) as live:
        cfg = llm_config(live.base_url)
        recorded = run(cfg, tmp_path / "rec", CassetteSpec(cassette, "record"))
    # the server is gone: every reply comes from the cassette
    replayed = run(cfg, tmp_path / "play", CassetteSpec(cassette, "replay"))
    assert replayed.summary.ledger_sha256 == recorded.summary.ledger_sha256
    assert replayed.summary.llm_calls == recorded.summary.llm_calls > 0
    # a request the cassette lacks is a clear error, not a made-up reply
    lines = cassette.read_text().splitlines(keepends=True)
    short = tmp_path / "short.jsonl"
    short.write_text("".join(lines[: len(lines) // 2]))
    with pytest.raises(MisuseError, match="does not hold"):
        run(cfg, tmp_path / "short", CassetteSpec(short, "replay"))


def test_a_hybrid_population_only_the_selected_agents_ask_the_model(server, tmp_path):
    cfg = llm_config(server.base_url, "llm.agents.seniority=[senior,lead,executive]")
    result = run(cfg, tmp_path / "hybrid")
    agents = pl.read_parquet(result.run_dir / "agents.parquet")
    asked = agents.filter(pl.col("llm_calls") > 0)
    assert asked.height > 0
    assert set(asked["seniority"]) <= {"senior", "lead", "executive"}
    chosen = agents["seniority"].is_in(["senior", "lead", "executive"])
    assert (agents["llm_agent"] == chosen).all()
    others = agents.filter(~pl.col("seniority").is_in(["senior", "lead", "executive"]))
    assert others.height > 0 and others["tool_calls"].sum() > 0  # deterministic, at work


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_failover_when_the_first_provider_is_down(server, tmp_path):
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    cfg = llm_config(None,
                     f"llm.providers=[{{name: primary, base_url: '{dead}', priority: 0}},"
                     f" {{name: backup, base_url: '{server.base_url}', priority: 1}}]")
    result = run(cfg, tmp_path / "failover")
    events = pl.read_parquet(result.run_dir / "events.parquet")
    assert result.summary.llm_calls > 0
    assert events.filter(pl.col("kind") == "llm_failed").height == 0


@pytest.mark.parametrize("mode", ["malformed", "violate", "text"])
def test_replies_that_break_the_schema_fail_closed_and_are_recorded(mode, tmp_path):
    with FakeServerProcess(mode=mode) as bad:
        result = run(llm_config(bad.base_url, "llm.invalid_retries=1"), tmp_path / mode)
    s = result.summary
    events = pl.read_parquet(result.run_dir / "events.parquet")
    failed = events.filter(pl.col("kind") == "llm_failed")
    assert s.llm_calls == failed.height > 0
    assert set(failed["target"]) == {2}  # LlmFailReason.invalid_reply
    # no plan, no action: agents that only reason with the model call no tool
    assert s.tool_calls == 0 and s.conservation_ok
    actions = pl.read_parquet(result.run_dir / "actions.parquet").filter(
        pl.col("executor") == "llm")
    assert set(actions["status"]) == {"failed"}
    assert actions["tokens_out"].sum() > 0  # what the invalid replies cost is counted


def test_timeouts_fail_closed(tmp_path):
    with FakeServerProcess(latency=1.5) as slow:
        cfg = llm_config(slow.base_url, "llm.timeout_s=0.2", "llm.retries=0")
        result = synthorg.Simulation(cfg, seed=0, out=tmp_path / "slow").run(ticks=6)
    actions = pl.read_parquet(result.run_dir / "actions.parquet").filter(
        pl.col("executor") == "llm")
    assert actions.height > 0 and set(actions["status"]) == {"timed_out"}
    assert result.summary.tool_calls == 0


def test_budgets_downgrade_the_tier_then_stop_deliberations(server, tmp_path):
    """A small own budget per agent: past `downgrade_at` of it an agent asks a cheaper tier;
    spent, it asks the model no more this period (recorded once) and works by the
    deterministic strategies."""
    cfg = llm_config(server.base_url, "llm.prices.fake-model.input_per_mtok=2000",
                     "llm.prices.fake-model.output_per_mtok=2000", "policies.budget.agent_usd=6",
                     "policies.budget.period_ticks=1000", "llm.downgrade_at=0.5",
                     "llm.models.small=fake-model", "llm.models.medium=fake-model",
                     "llm.models.large=fake-model")
    result = run(cfg, tmp_path / "budget")
    events = pl.read_parquet(result.run_dir / "events.parquet")
    kinds = events["kind"]
    assert (kinds == "llm_downgraded").sum() > 0
    stopped = events.filter(pl.col("kind") == "llm_budget_exhausted")
    assert stopped.height > 0
    assert stopped.group_by("actor").len()["len"].max() == 1  # once per agent and period
    for row in stopped.iter_rows(named=True):  # no deliberation is asked after the stop
        later = events.filter((pl.col("actor") == row["actor"]) & (pl.col("kind") == "llm_call")
                              & (pl.col("tick") > row["tick"] + cfg.llm.latency_ticks))
        assert later.height == 0
    assert result.summary.tool_calls > 0  # the stopped agents went on working
    watched = run(cfg.model_copy(update={"policies": cfg.policies.model_copy(update={
        "budget": cfg.policies.budget.model_copy(update={"enforce": False})})}),
        tmp_path / "watched")
    kinds = pl.read_parquet(watched.run_dir / "events.parquet")["kind"]
    assert (kinds == "llm_budget_exhausted").sum() == 0 and (kinds == "llm_downgraded").sum() > 0


def _reviews(run_dir: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(run_dir / "approvals.sqlite") as db:
        return db.execute("SELECT status, decided_by, note FROM parked").fetchall()


def test_the_model_reviews_the_calls_secops_escalates(server, tmp_path):
    result = run(llm_config(server.base_url, "policies.approvals.mode=llm"), tmp_path / "judge")
    reviews = _reviews(result.run_dir)
    assert reviews and {by for _, by, _ in reviews} == {"model"}
    assert {status for status, _, _ in reviews} == {"granted", "rejected"}
    assert all(note for _, _, note in reviews)  # the reviewer says why
    actions = pl.read_parquet(result.run_dir / "actions.parquet")
    asked = actions.filter(pl.col("executor").is_in(["llm", "approvals"]))
    assert result.summary.llm_calls == asked.height
    assert result.summary.cost_llm_usd == pytest.approx(asked["cost_micro"].sum() / 1e6)


def test_a_reviewer_that_answers_nonsense_rejects_everything(tmp_path):
    with FakeServerProcess(mode="malformed") as bad:
        cfg = llm_config(bad.base_url, "policies.approvals.mode=llm",
                         "llm.agents.seniority=[executive]")
        result = run(cfg, tmp_path / "nonsense")
    reviews = _reviews(result.run_dir)
    assert reviews and {status for status, _, _ in reviews} == {"rejected"}
    assert result.summary.approvals == 0 and result.summary.conservation_ok


def test_the_model_chooses_its_calls_and_can_be_injected(server, tmp_path):
    """Every task's content carries an injected instruction and no seeded agent follows one:
    whatever injected calls are made, the model chose them among the calls offered as the
    API's `tools`, and SecOps judged them like any other call."""
    threats = ["workload.threats.injection_rate=1.0", "workload.threats.insiders=[]",
               "workload.threats.insider_share=0", "workload.threats.mistake_probability=0",
               "workload.threats.follow_probability={}"]
    result = run(llm_config(server.base_url, *threats), tmp_path / "injected")
    events = pl.read_parquet(result.run_dir / "events.parquet")
    threats_seen = events.filter(pl.col("kind") == "threat")
    assert threats_seen.height > 0 and set(threats_seen["threat_kind"]) == {"injection"}
    assert result.summary.harmful_calls == threats_seen.height
    assert result.summary.harmful_blocked > 0  # SecOps stopped some of what the model chose
    actions = pl.read_parquet(result.run_dir / "actions.parquet").filter(
        pl.col("executor") == "llm")
    told = json.loads(actions["arguments"][0])
    assert told["tool"]["calls"] and "content" in told["task"]
    # the same company, its agents deterministic: nobody follows an injection
    seeded = run(llm_config(server.base_url, *threats, "llm.agents.max_agents=0"),
                 tmp_path / "seeded")
    assert seeded.summary.harmful_calls == 0


def test_a_cassette_replays_on_ray_in_groups(ray_session, server, tmp_path):
    """The replies are keyed by request, not by who hosts the agent: a run recorded in one
    process replays in Ray actors, in groups, to the same ledger."""
    cassette = tmp_path / "c.jsonl"
    local = run(llm_config(server.base_url), tmp_path / "local", CassetteSpec(cassette, "record"))
    cfg = llm_config("http://127.0.0.1:9/v1", "runtime.backend=ray", "runtime.agents_per_actor=6")
    on_ray = run(cfg, tmp_path / "ray", CassetteSpec(cassette, "replay"))
    assert on_ray.summary.groups >= 2
    assert on_ray.summary.ledger_sha256 == local.summary.ledger_sha256


def test_the_cli_records_and_replays_a_run(server, tmp_path):
    exe = Path(sys.executable).with_name("synthorg")
    sets = ["--set", "runtime.backend=local", "--set", "executors.sandbox.kind=delay",
            "--set", "llm.enabled=true", "--set", f"llm.base_url={server.base_url}",
            "--set", "llm.model=local"]
    cassette = tmp_path / "c.jsonl"
    run_dir = tmp_path / "run"
    done = subprocess.run([str(exe), "run", str(STARTUP), "--ticks", "12", "--out", str(run_dir),
                           "--quiet", *sets, "--record-cassette", str(cassette)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    again = subprocess.run([str(exe), "replay", str(run_dir), "--cassette", str(cassette)],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr


def test_kill_and_resume_of_an_llm_run_asks_the_same_questions(server, tmp_path):
    """The prompts after a resume are those of the uninterrupted run (what each agent recalled
    for its task is in the checkpoint), so a server that answers by the request gives the
    same ledger."""
    from tests.conftest import interrupted_at

    cfg = llm_config(server.base_url, "runtime.checkpoint_every=20")
    whole = synthorg.Simulation(cfg, seed=0, out=tmp_path / "whole").run(ticks=80)
    sim = synthorg.Simulation(cfg, seed=0, out=tmp_path / "cut")
    interrupted_at(sim, 80, 50)
    resumed = synthorg.Simulation(cfg, seed=0, out=tmp_path / "cut").resume()
    assert resumed.summary.ledger_sha256 == whole.summary.ledger_sha256
    assert resumed.summary.llm_calls == whole.summary.llm_calls > 0
    # memories' facts asked in flight at the checkpoint are asked again: the same counts
    facts = [f"memory_facts_{k}" for k in ("extracted", "empty", "failed", "tokens", "cost_usd")]
    assert ([getattr(resumed.summary, f) for f in facts]
            == [getattr(whole.summary, f) for f in facts])
    assert whole.summary.memory_facts_extracted > 0


def _stored(run_dir: Path, agent_ids: list[str]) -> dict[str, list[dict]]:
    """Each owner's memories as Mem0 reads them from the run's store (text and payload)."""
    from synthorg.memory.embedders import HashingEmbedder
    from synthorg.memory.mem0_store import Mem0Store

    store = Mem0Store(run_dir / "memory" / "shard-0", HashingEmbedder(), tuple(agent_ids))
    try:
        return {name: store.mem0_view(i).get_all(filters={"user_id": name})["results"]
                for i, name in enumerate(agent_ids)}
    finally:
        store.close()


def test_the_model_states_the_facts_a_reasoning_agents_memories_keep(tmp_path):
    """Fact extraction in LLM mode, Mem0 over embedded Qdrant: the leads reason with the model
    and their memories keep the facts it stated (its replies, as the cassette recorded them);
    the others keep the record of what happened. Replayed with no server: the same ledger
    and the same memories."""
    cassette = tmp_path / "cassette.jsonl"
    sets = ["runtime.backend=local", "executors.sandbox.kind=delay", "llm.enabled=true",
            "llm.agents.seniority=[lead]", "llm.model=fake-model",
            "llm.prices.fake-model.input_per_mtok=3", "llm.prices.fake-model.output_per_mtok=15"]
    with FakeServerProcess(latency=0.01, seed=3) as live:
        cfg = synthorg.load_config(DEFAULT_COMPANY, [*sets, f"llm.base_url={live.base_url}"])
        recorded = synthorg.Simulation(cfg, seed=0, out=tmp_path / "rec",
                                       cassette=CassetteSpec(cassette, "record")).run(ticks=40)
    s = recorded.summary
    assert s.memory_facts_extracted > 0 and s.memory_facts_failed == 0
    assert s.memory_facts_tokens > 0 and s.memory_facts_cost_usd > 0
    # what the model said, as the cassette recorded each extraction's reply
    said = set()
    for line in cassette.read_text().splitlines()[1:]:
        entry = json.loads(line)
        content = (entry.get("reply") or {}).get("content") or ""
        try:
            facts = json.loads(content).get("facts")
        except (ValueError, AttributeError):
            continue
        if isinstance(facts, list) and facts:
            said.add("; ".join(" ".join(f.split()) for f in facts))
    agents = pl.read_parquet(recorded.run_dir / "agents.parquet")
    ids = agents.sort("agent_index")["agent"].to_list()
    leads = set(agents.filter(pl.col("seniority") == "lead")["agent"])
    stored = _stored(recorded.run_dir, ids)
    by_model = [m for a in leads for m in stored.get(a, [])]
    by_record = [m for a, ms in stored.items() if a not in leads for m in ms]
    assert by_model and by_record
    assert all("facts" in m["metadata"]["tags"] and m["memory"] in said for m in by_model)
    assert not any("facts" in m["metadata"]["tags"] for m in by_record)
    assert all(re.match(r"(completed|failed|lesson:|[\w.-]+ (showed|helped))", m["memory"])
               for m in by_record)
    # the server is gone: the cassette answers, the same run comes out
    replayed = synthorg.Simulation(cfg, seed=0, out=tmp_path / "play",
                                   cassette=CassetteSpec(cassette, "replay")).run(ticks=40)
    assert replayed.summary.ledger_sha256 == s.ledger_sha256
    assert replayed.summary.memory_facts_extracted == s.memory_facts_extracted
    again = _stored(replayed.run_dir, ids)
    assert sorted(m["memory"] for a in leads for m in again.get(a, [])) == \
        sorted(m["memory"] for m in by_model)


def test_extraction_without_a_valid_reply_keeps_the_record_and_counts_it(tmp_path):
    # deliberations are answered; every request for a memory's facts gets prose, not JSON
    script = [{"match": "what_happened", "content": "I think they did fine."}]
    with FakeServerProcess(latency=0.01, script=script) as bad:
        result = run(llm_config(bad.base_url, "llm.invalid_retries=1"), tmp_path / "bad")
    s = result.summary
    assert s.memory_facts_extracted == 0 and s.memory_facts_empty == 0
    assert s.memory_facts_failed > 0
    assert s.memory_facts_tokens > 0  # the invalid replies were paid for
