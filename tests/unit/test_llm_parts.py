"""LLM mode's parts through their public interfaces: the packed decision, reply parsing, the
config's checks, cassettes read back from disk (crafted, truncated), and the CLI's errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import synthorg
from synthorg.errors import ConfigError
from synthorg.llm import deliberation
from synthorg.llm.cassette import CassetteError, Entry, Recorder, load
from synthorg.llm.deliberation import PlanChoice
from synthorg.llm.messages import ChatReply
from tests.conftest import STARTUP

LLM = ["llm.enabled=true", "llm.base_url=http://127.0.0.1:9/v1", "llm.model=m"]


@given(st.sampled_from(list(PlanChoice)), st.booleans(), st.floats(0.0, 1.0),
       st.integers(0, 300))
def test_a_decision_packs_into_one_value_and_back(plan, rush, confidence, call):
    p, r, c, k = deliberation.unpack([deliberation.pack(plan, rush, confidence, call)])
    assert (int(p[0]), bool(r[0]), int(k[0])) == (int(plan), rush, call)
    assert c[0] == pytest.approx(confidence, abs=1e-12)


def test_the_call_the_model_made_is_the_offered_one_it_matches_best():
    from synthorg.llm.messages import ToolCall

    situation = {"tool": {"name": "write_file", "calls": [
        {"path": "a.py", "content": "x"}, {"path": "b.py", "content": "y"}]}}
    offer = deliberation.tool_offer(situation)[0]["function"]
    assert offer["parameters"]["properties"]["path"]["enum"] == ["a.py", "b.py"]

    def made(name: str, arguments: str) -> int | None:
        return deliberation.chosen_call(situation, (ToolCall(name=name, arguments=arguments),))

    assert deliberation.chosen_call(situation, ()) == 0
    assert made("write_file", '{"path": "b.py", "content": "y"}') == 2
    assert made("write_file", '{"path": "b.py", "content": "x"}') == 1  # mixed: the first of equals
    assert made("write_file", '{"path": "/etc/passwd", "content": "z"}') is None
    assert made("run_shell", '{"path": "a.py", "content": "x"}') is None
    assert made("write_file", "not json") is None


def test_replies_are_parsed_strictly():
    good = {"evaluate": {"confidence": 0.7, "reason": "known ground"}, "revise": "keep",
            "plan": "ask_help", "within_constraints": True}
    d = deliberation.parse(json.dumps(good))
    assert d is not None and deliberation.decided(d) == (PlanChoice.ask_help, False, 0.7)
    for bad in ("", "{not json", "[]", json.dumps({**good, "plan": "delete_everything"}),
                json.dumps({**good, "evaluate": {"confidence": 1.5, "reason": ""}}),
                json.dumps({**good, "extra": 1}), "9" * 5000):
        assert deliberation.parse(bad) is None
    # a plan to work that the model itself finds outside its constraints is not carried out
    outside = deliberation.parse(json.dumps({**good, "plan": "work", "within_constraints": False}))
    assert outside is not None and deliberation.decided(outside)[0] is PlanChoice.wait


def test_the_config_names_what_llm_mode_lacks():
    with pytest.raises(ConfigError, match="llm"):
        synthorg.load_config(STARTUP, ["llm.enabled=true", "llm.model=m"])  # no server
    with pytest.raises(ConfigError, match="llm"):
        synthorg.load_config(STARTUP, ["llm.enabled=true", "llm.base_url=http://x/v1"])
    with pytest.raises(ConfigError, match=r"llm\.agents\.departments"):
        synthorg.load_config(STARTUP, [*LLM, "llm.agents.departments=[nowhere]"])
    with pytest.raises(ConfigError, match=r"approvals\.mode"):
        synthorg.load_config(STARTUP, ["policies.approvals.mode=llm"])
    cfg = synthorg.load_config(STARTUP, [*LLM, "llm.models.large=big"])
    provider = cfg.llm.provider_list()[0]
    assert (cfg.llm.model_for(provider, "large"), cfg.llm.model_for(provider, "small")) == ("big", "m")


def _entry(n: int = 0) -> Entry:
    return Entry(key="a" * 64, n=n, reply=ChatReply(content="{}", tokens_in=3, model="m"))


def test_a_cassette_round_trips_and_refuses_what_it_did_not_write(tmp_path):
    path = tmp_path / "c.jsonl"
    recorder = Recorder(path)
    recorder.add(_entry(0))
    recorder.add(Entry(key="b" * 64, n=0, error="provider down"))
    got = load(path)
    assert got[("a" * 64, 0)].reply.tokens_in == 3 and got[("b" * 64, 0)].error == "provider down"
    header, *lines = path.read_text().splitlines(keepends=True)
    crafted = {
        "no header": "".join(lines),
        "truncated": header + lines[0][:-10],
        "a bad key": header + lines[0].replace("a" * 64, "../etc"),
        "reply and error": header + json.dumps(
            {"key": "c" * 64, "n": 0, "reply": {"content": "x"}, "error": "y"}) + "\n",
        "negative tokens": header + lines[0].replace('"tokens_in":3', '"tokens_in":-3'),
        "not json": header + "{\n",
    }
    for name, text in crafted.items():
        bad = tmp_path / f"{name}.jsonl"
        bad.write_text(text)
        with pytest.raises(CassetteError, match=str(bad)):
            load(bad)
    with pytest.raises(CassetteError, match="cannot read"):
        load(tmp_path / "missing.jsonl")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("synthorg")
    return subprocess.run([str(exe), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_the_cli_refuses_bad_cassettes_before_running(tmp_path):
    sets = [a for s in LLM for a in ("--set", s)]
    out = ["--out", str(tmp_path / "run"), "--ticks", "2"]
    both = _cli("run", str(STARTUP), *sets, *out, "--record-cassette", "a",
                "--replay-cassette", "b", cwd=tmp_path)
    assert both.returncode == 2 and "one or the other" in both.stderr
    missing = _cli("run", str(STARTUP), *sets, *out, "--replay-cassette",
                   str(tmp_path / "none.jsonl"), cwd=tmp_path)
    assert missing.returncode == 2 and "none.jsonl" in missing.stderr
    assert "Traceback" not in missing.stderr
    no_llm = _cli("run", str(STARTUP), *out, "--record-cassette", "c.jsonl", cwd=tmp_path)
    assert no_llm.returncode == 2 and "llm.enabled" in no_llm.stderr
    (tmp_path / "exists.jsonl").write_text("x")
    exists = _cli("run", str(STARTUP), *sets, *out, "--record-cassette",
                  str(tmp_path / "exists.jsonl"), cwd=tmp_path)
    assert exists.returncode == 2 and "exists" in exists.stderr
    assert not (tmp_path / "run" / "summary.json").exists()


def test_a_hybrid_selection_is_seeded_and_stable():
    from synthorg.domain.rng import root_key
    from synthorg.llm.selection import llm_agents
    from synthorg.org.directory import OrgDirectory

    cfg = synthorg.load_config(STARTUP, [*LLM, "llm.agents.fraction=0.5"])
    d = OrgDirectory.from_config(cfg)
    a, b = llm_agents(cfg, d, root_key(1)), llm_agents(cfg, d, root_key(1))
    assert np.array_equal(a, b) and 0 < a.sum() < len(a)
    capped = synthorg.load_config(STARTUP, [*LLM, "llm.agents.max_agents=2"])
    assert llm_agents(capped, d, root_key(1)).sum() == 2
