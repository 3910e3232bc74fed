"""Property-based: no config text and no --set override makes synthorg crash. Each input
either loads or is refused with a ConfigError (exit 2 on the CLI) that names where."""

from __future__ import annotations

import contextlib

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from synthorg.cli.app import app
from synthorg.config import load_config, load_config_text
from synthorg.errors import ConfigError
from tests.conftest import DEFAULT_COMPANY, STARTUP

TEMPLATE = yaml.safe_load(DEFAULT_COMPANY.read_text())
FUZZ = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, str(i)))


PATHS = [p for p in _paths(TEMPLATE) if p]


@FUZZ
@given(path=st.sampled_from(PATHS), value=values)
def test_any_override_loads_or_is_refused_by_name(path, value):
    override = ".".join(path) + "=" + yaml.safe_dump(value, default_flow_style=True).strip()
    try:
        load_config(STARTUP, [override])
    except ConfigError as exc:
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)


@FUZZ
@given(path=st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=4),
       value=st.text(max_size=20))
def test_arbitrary_override_paths_never_crash(path, value):
    with contextlib.suppress(ConfigError):
        load_config(STARTUP, [".".join(path) + "=" + value])


@FUZZ
@given(path=st.sampled_from(PATHS), value=values)
def test_mutated_documents_load_or_are_refused(path, value):
    doc = yaml.safe_load(DEFAULT_COMPANY.read_text())
    node = doc
    for key in path[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last = path[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    try:
        load_config_text(yaml.safe_dump(doc), source="fuzz.yaml")
    except ConfigError as exc:
        assert "fuzz.yaml" in str(exc)


@FUZZ
@given(text=st.text(max_size=200))
def test_arbitrary_text_is_never_a_traceback(text):
    try:
        load_config_text(text, source="text.yaml")
    except ConfigError as exc:
        assert "text.yaml" in str(exc)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=values)
def test_cli_exit_code_is_0_or_2(tmp_path, path, value):
    override = ".".join(path) + "=" + yaml.safe_dump(value, default_flow_style=True).strip()
    result = CliRunner().invoke(app, ["validate", str(STARTUP), "--set", override])
    assert result.exit_code in (0, 2), (override, result.output, result.exception)
    assert "Traceback" not in result.output
