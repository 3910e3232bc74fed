"""The CLI's contract for bad input: exit 2, a message naming the field/line/file, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synthorg.cli.app import app
from tests.conftest import DEFAULT_COMPANY, STARTUP

runner = CliRunner()
GOOD = DEFAULT_COMPANY.read_text()  # variants are written beside no template


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    assert old in GOOD, old
    p = tmp_path / "company.yaml"
    p.write_text(GOOD.replace(old, new, 1))
    return p


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("budget_usd: 375000", "budget_usd: lots", ["company.budget_usd", "line 4"]),
    ("autonomy: assisted", "autonomy: assisted\n  motto: move fast", ["company.motto", "unknown key"]),
    ("{id: pm, role: product_manager, department: product,",
     "{id: pm, role: product_manager, department: marketing,", ["agents[3].department", "marketing"]),
    ("head: pm-lead", "head: nobody", ["departments[1].head", "nobody"]),
    ("seniority: lead,", "seniority: boss,", ["agents[0].seniority", "line"]),
    ("company:\n", "company: [unclosed\n", ["broken YAML", "line"]),
])
def test_validate_rejects_bad_configs_with_exit_2(tmp_path, old, new, expected):
    result = runner.invoke(app, ["validate", str(_variant(tmp_path, old, new))])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    for fragment in expected:
        assert fragment in text, (fragment, text)
    assert "Traceback" not in result.output


def test_validate_accepts_the_template():
    result = runner.invoke(app, ["validate", str(STARTUP)])
    assert result.exit_code == 0
    assert "12 agents" in result.output


def test_missing_file_and_bad_override_exit_2(tmp_path):
    r = runner.invoke(app, ["validate", str(tmp_path / "nope.yaml")])
    assert r.exit_code == 2 and "not found" in r.output
    r = runner.invoke(app, ["run", str(STARTUP), "--set", "runtime.agents_per_actor=zero"])
    assert r.exit_code == 2 and "agents_per_actor" in r.output
    r = runner.invoke(app, ["run", str(STARTUP), "--set", "no-equals-sign"])
    assert r.exit_code == 2 and "dotted.path=value" in r.output


def test_replay_of_a_non_run_directory_exits_2(tmp_path):
    r = runner.invoke(app, ["replay", str(tmp_path)])
    assert r.exit_code == 2 and "config.resolved.yaml" in r.output


def test_schema_is_json_schema_of_the_config():
    r = runner.invoke(app, ["schema"])
    assert r.exit_code == 0
    schema = json.loads(r.output)
    assert {"company", "departments", "agents", "workload", "runtime"} <= set(schema["properties"])


def test_installed_command_prints_no_traceback(tmp_path):
    bad = _variant(tmp_path, "company:\n", "company: [unclosed\n")
    exe = Path(sys.executable).with_name("synthorg")
    proc = subprocess.run([str(exe), "validate", str(bad)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "broken YAML" in proc.stderr


def test_runs_of_different_settings_get_their_own_default_directories(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["run", str(STARTUP), "--ticks", "5", "--quiet", "--set", "runtime.backend=local"]
    for extra in ([], ["--set", "policies.work.learning_rate=0.05"], ["--seed", "3"]):
        r = runner.invoke(app, [*base, *extra])
        assert r.exit_code == 0, r.output
        assert r.stdout == ""  # --quiet: nothing but errors
    made = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(made) == 3 and all(m.startswith("startup-seed") for m in made)


def test_json_prints_the_summary_for_scripts(tmp_path):
    r = runner.invoke(app, ["run", str(STARTUP), "--ticks", "5", "--json", "--out",
                            str(tmp_path / "r"), "--set", "runtime.backend=local"])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)
    assert printed == json.loads((tmp_path / "r" / "summary.json").read_text())


def test_a_fork_takes_no_config_and_a_config_takes_no_fork(tmp_path):
    r = runner.invoke(app, ["run", str(STARTUP), "--from", str(tmp_path), "--at-tick", "4"])
    assert r.exit_code == 2 and "not both" in r.output
    r = runner.invoke(app, ["run"])
    assert r.exit_code == 2 and "give a CONFIG" in r.output


def test_an_error_message_quoting_markup_is_printed_as_written():
    """A value that reads like rich markup ('[/]') is shown, not interpreted (which raised)."""
    result = runner.invoke(app, ["validate", str(STARTUP), "--set", "company=[/]"])
    assert result.exit_code == 2, result.exception
    assert "[/]" in result.output and "company" in result.output
