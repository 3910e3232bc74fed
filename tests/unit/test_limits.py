"""Bounded input: configs built to exhaust memory or the stack are refused by name, with the
setting that raises the limit, quickly and in little memory; duplicate keys are errors."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

import synthorg
from synthorg.errors import ConfigError
from tests.conftest import DEFAULT_COMPANY, STARTUP

SYNTHORG = str(Path(sys.executable).with_name("synthorg"))


def _bomb(levels: int = 9) -> str:
    """The billion-laughs document: each level lists the one before nine times."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    prev = "a"
    for i in range(levels):
        name = chr(ord("b") + i)
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
        prev = name
    return "\n".join(lines) + "\n"


CASES = {
    "alias bomb": (_bomb(), "SYNTHORG_MAX_YAML_NODES"),
    "recursive anchor": ("company: &a [*a]\n", "SYNTHORG_MAX_YAML_DEPTH"),
    "deep nesting": ("company: " + "[" * 50_000 + "]" * 50_000 + "\n", "nesting depth"),
    "huge string": ("company: {name: '" + "x" * (3 * 2**20) + "'}\n", "SYNTHORG_MAX_STRING"),
    "a hundred million agents": (
        "extends: " + str(STARTUP) + "\nagents:\n" + "".join(
            f"  - {{id: a{i}, role: engineer, department: engineering, count: 100000}}\n"
            for i in range(1000)), "SYNTHORG_MAX_AGENTS"),
    "duplicate key": (DEFAULT_COMPANY.read_text() + "\ncompany: {name: Twice}\n",
                      "duplicate key 'company'"),
}


def _limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))  # 1 GiB of address space


@pytest.mark.parametrize("case", list(CASES))
def test_crafted_configs_exit_2_fast_in_little_memory(tmp_path, case):
    text, says = CASES[case]
    path = tmp_path / "crafted.yaml"
    path.write_text(text)
    t0 = time.monotonic()
    proc = subprocess.run([SYNTHORG, "validate", str(path)], capture_output=True, text=True,
                          timeout=60, preexec_fn=_limited_memory)
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr and "Traceback" not in proc.stderr
    assert time.monotonic() - t0 < 10  # and within 1 GiB: the child cannot map more


def test_a_device_that_never_ends_is_refused():
    with pytest.raises(ConfigError, match="SYNTHORG_MAX_CONFIG_BYTES"):
        synthorg.load_config("/dev/zero")


def test_an_alias_bomb_in_an_override_is_refused():
    bomb = "{" + ", ".join(_bomb().strip().splitlines()) + "}"
    with pytest.raises(ConfigError, match="SYNTHORG_MAX_YAML_NODES"):
        synthorg.load_config(STARTUP, [f"company.name={bomb}"])


def test_a_limit_can_be_raised(tmp_path, monkeypatch):
    path = tmp_path / "c.yaml"
    path.write_text(f"extends: {STARTUP}\ncompany: {{name: '{'x' * 2000}'}}\n")
    monkeypatch.setenv("SYNTHORG_MAX_STRING", "1000")
    with pytest.raises(ConfigError, match="raise it with SYNTHORG_MAX_STRING"):
        synthorg.load_config(path)
    monkeypatch.setenv("SYNTHORG_MAX_STRING", "5000")
    assert synthorg.load_config(path).company.name == "x" * 2000
    monkeypatch.setenv("SYNTHORG_MAX_STRING", "lots")
    with pytest.raises(ConfigError, match="SYNTHORG_MAX_STRING='lots' is not a whole number"):
        synthorg.load_config(path)
