"""Loading company configs: the template, errors that name field and line, extends, --set."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from synthorg.config import load_config
from synthorg.config.models import CompanyConfig, DecisionPolicy
from synthorg.errors import ConfigError, MisuseError
from tests.conftest import DEFAULT_COMPANY, STARTUP

GOOD = DEFAULT_COMPANY.read_text()


def _write(tmp_path: Path, text: str, name: str = "company.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    assert old in GOOD, old
    return _write(tmp_path, GOOD.replace(old, new, 1))


def _refused(path: Path, overrides: list[str] | tuple[str, ...] = ()) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    err = info.value
    assert isinstance(err, MisuseError)
    assert err.problems, "a ConfigError must list its problems"
    assert all(isinstance(p, str) and p for p in err.problems)
    for p in err.problems:
        assert p in str(err)
    return err


# ---- the template ---------------------------------------------------------------------------

def test_template_loads():
    cfg = load_config(STARTUP)
    assert isinstance(cfg, CompanyConfig)
    assert cfg.agent_count() == 12
    assert cfg.company.name == "Acme Startup"
    assert cfg.company.budget_usd == 375000
    assert [d.id for d in cfg.departments] == ["engineering", "product", "operations"]
    assert cfg.runtime.backend == "ray"
    assert cfg.runtime.agents_per_actor == "auto"


def test_template_loads_from_str_path():
    assert load_config(str(STARTUP)).agent_count() == 12


def test_copy_of_template_loads(tmp_path):
    assert load_config(_write(tmp_path, GOOD)).agent_count() == 12


# ---- errors -----------------------------------------------------------------------------------

def test_wrong_type_names_field_and_line(tmp_path):
    err = _refused(_variant(tmp_path, "budget_usd: 375000", 'budget_usd: "lots"'))
    assert "company.budget_usd" in str(err)
    assert "line 4" in str(err)
    assert err.source.endswith("company.yaml")
    assert "company.yaml" in str(err)


@pytest.mark.parametrize("override", ["agents.0.count=true", "simulation.ticks=yes",
                                      "company.budget_usd=no", "runtime.agents_per_actor=true"])
def test_a_boolean_is_not_a_number(override):
    """YAML reads yes/no/true as booleans and pydantic would read those as 1 and 0."""
    err = _refused(STARTUP, [override])
    assert f"--set {override}:" in str(err) and "got a boolean" in str(err)


def test_unknown_key_names_path(tmp_path):
    err = _refused(_variant(tmp_path, "autonomy: assisted", "autonomy: assisted\n  nme: Acme"))
    text = str(err)
    assert "unknown key" in text
    assert "company.nme" in text
    assert "line" in text


@pytest.mark.parametrize("key", ["nme", "info", "motto"])
def test_unknown_key_is_named_in_the_message(key):
    err = _refused(STARTUP, [f"company.{key}=1"])
    assert f"company.{key}" in str(err) and "unknown key" in str(err)


@pytest.mark.parametrize("override", ["company.strategy=1", "company.internal=1",
                                      "runtime.floaty=1", "agents.0.skills.strength=2"])
def test_error_keeps_keys_that_look_like_union_tags(override):
    err = _refused(STARTUP, [override])
    assert f"--set {override}:" in str(err)


def test_misspelt_required_key(tmp_path):
    err = _refused(_variant(tmp_path, "name: Acme Startup", "nme: Acme Startup"))
    text = str(err)
    assert "company.nme" in text and "unknown key" in text
    assert "company.name" in text  # the required key is reported missing too


def test_dangling_department_of_an_agent(tmp_path):
    err = _refused(_variant(
        tmp_path,
        "{id: pm, role: product_manager, department: product,",
        "{id: pm, role: product_manager, department: marketing,",
    ))
    text = str(err)
    assert "agents[3].department" in text
    assert "marketing" in text


def test_dangling_department_head(tmp_path):
    err = _refused(_variant(tmp_path, "head: eng-lead", "head: nobody"))
    assert "departments[0].head" in str(err)
    assert "nobody" in str(err)


def test_head_from_another_department(tmp_path):
    err = _refused(_variant(tmp_path, "head: eng-lead", "head: pm-lead"))
    assert "departments[0].head" in str(err)
    assert "product" in str(err)


def test_unknown_role_and_tool(tmp_path):
    err = _refused(_variant(tmp_path, "tools: [write_file, run_shell]",
                            "tools: [write_file, hammer]"))
    assert "roles[0].tools" in str(err) and "hammer" in str(err)


def test_broken_yaml_names_line(tmp_path):
    err = _refused(_variant(tmp_path, "company:\n", "company: [unclosed\n"))
    assert "broken YAML" in str(err)
    assert "line" in str(err)


@pytest.mark.parametrize("text", ["", "   \n", "# only a comment\n"])
def test_empty_file(tmp_path, text):
    err = _refused(_write(tmp_path, text))
    assert "empty" in str(err)


def test_top_level_not_a_mapping(tmp_path):
    err = _refused(_write(tmp_path, "- a\n- b\n"))
    assert "mapping" in str(err)


def test_missing_file(tmp_path):
    err = _refused(tmp_path / "nope.yaml")
    assert "not found" in str(err)
    assert "nope.yaml" in str(err)


def test_several_problems_are_all_reported(tmp_path):
    text = GOOD.replace("budget_usd: 375000", "budget_usd: -5", 1).replace(
        "autonomy: assisted", "autonomy: reckless", 1)
    err = _refused(_write(tmp_path, text))
    assert len(err.problems) >= 2
    assert "company.budget_usd" in str(err) and "company.autonomy" in str(err)


# ---- extends ----------------------------------------------------------------------------------

def test_extends_sibling_file_deep_merges(tmp_path):
    shutil.copy(DEFAULT_COMPANY, tmp_path / "startup.yaml")
    child = _write(tmp_path, "extends: startup.yaml\ncompany: {name: X}\n", "child.yaml")
    cfg = load_config(child)
    assert cfg.company.name == "X"
    assert cfg.company.budget_usd == 375000  # kept from the parent
    assert cfg.company.autonomy == "assisted"
    assert cfg.agent_count() == 12


def test_extends_bare_template_name(tmp_path):
    child = _write(tmp_path, "extends: startup\ncompany: {name: Y}\n", "child.yaml")
    cfg = load_config(child)
    assert cfg.company.name == "Y"
    assert cfg.company.budget_usd == 375000
    assert cfg.agent_count() == 12


def test_extends_replaces_lists_wholesale(tmp_path):
    shutil.copy(DEFAULT_COMPANY, tmp_path / "startup.yaml")
    child = _write(tmp_path, "extends: startup.yaml\nsimulation: {ticks: 7}\n", "child.yaml")
    cfg = load_config(child)
    assert cfg.simulation.ticks == 7
    assert cfg.simulation.seed == 0


def test_extends_chain(tmp_path):
    shutil.copy(DEFAULT_COMPANY, tmp_path / "startup.yaml")
    _write(tmp_path, "extends: startup.yaml\ncompany: {name: Mid}\n", "mid.yaml")
    child = _write(tmp_path, "extends: mid.yaml\ncompany: {budget_usd: 5}\n", "child.yaml")
    cfg = load_config(child)
    assert (cfg.company.name, cfg.company.budget_usd) == ("Mid", 5)


def test_extends_unknown_parent(tmp_path):
    err = _refused(_write(tmp_path, "extends: nosuchtemplate\n"))
    assert "nosuchtemplate" in str(err)


def test_extends_cycle_is_refused(tmp_path):
    _write(tmp_path, "extends: b.yaml\n", "a.yaml")
    _write(tmp_path, "extends: a.yaml\n", "b.yaml")
    err = _refused(tmp_path / "a.yaml")
    assert "extends" in str(err)


def test_extends_not_a_string(tmp_path):
    err = _refused(_write(tmp_path, "extends: [startup]\n"))
    assert "extends" in str(err)


# ---- overrides --------------------------------------------------------------------------------

def test_override_int():
    assert load_config(STARTUP, ["runtime.agents_per_actor=1"]).runtime.agents_per_actor == 1


def test_override_string():
    assert load_config(STARTUP, ["runtime.backend=local"]).runtime.backend == "local"


def test_override_list_item_by_id():
    cfg = load_config(STARTUP, ["departments.engineering.budget_share=0.3"])
    shares = {d.id: d.budget_share for d in cfg.departments}
    assert shares == {"engineering": 0.3, "product": 0.2, "operations": 0.2}


def test_override_list_item_by_index():
    cfg = load_config(STARTUP, ["agents.1.count=3"])
    assert cfg.agents[1].count == 3
    assert cfg.agent_count() == 10


def test_override_list_item_by_index_zero():
    # agents[0] is `eng-lead`, the head of engineering: with count 3 it becomes eng-lead-0001..3
    # and the head reference dangles. The override itself is applied; validation refuses it.
    err = _refused(STARTUP, ["agents.0.count=3"])
    assert "departments[0].head" in str(err)
    cfg = load_config(STARTUP, ["agents.0.count=3", "departments.0.head=eng-lead-0001"])
    assert cfg.agents[0].count == 3
    assert cfg.agent_count() == 14


def test_override_task_type_by_name():
    cfg = load_config(STARTUP, ["workload.task_types.feature.rate=2.5"])
    assert cfg.workload.task_types[0].rate == 2.5


def test_overrides_apply_in_order():
    cfg = load_config(STARTUP, ["runtime.agents_per_actor=1", "runtime.agents_per_actor=4"])
    assert cfg.runtime.agents_per_actor == 4


def test_override_after_extends(tmp_path):
    child = _write(tmp_path, "extends: startup\ncompany: {name: Z}\n", "child.yaml")
    cfg = load_config(child, ["company.budget_usd=10"])
    assert (cfg.company.name, cfg.company.budget_usd) == ("Z", 10)


@pytest.mark.parametrize("bad", ["nodots", "", "runtime..backend=local", "=3", ".x=1"])
def test_malformed_override(bad):
    _refused(STARTUP, [bad])


def test_override_without_equals_names_the_form():
    err = _refused(STARTUP, ["nodots"])
    assert "dotted.path=value" in str(err)


def test_override_invalid_value_names_the_field():
    err = _refused(STARTUP, ["runtime.agents_per_actor=0"])
    assert "agents_per_actor" in str(err)


def test_override_unknown_list_item():
    err = _refused(STARTUP, ["departments.nosuch.budget_share=1"])
    assert "nosuch" in str(err)


def test_override_unknown_key():
    err = _refused(STARTUP, ["runtime.colour=blue"])
    assert "runtime.colour" in str(err) and "unknown key" in str(err)


def test_override_descending_into_a_value():
    err = _refused(STARTUP, ["company.name.first=A"])
    assert "company.name.first" in str(err)


def test_override_list_index_out_of_range():
    _refused(STARTUP, ["agents.99.count=2"])


# ---- frozen models ----------------------------------------------------------------------------

def test_config_is_frozen():
    cfg = load_config(STARTUP)
    with pytest.raises(ValidationError):
        cfg.company.name = "Other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        cfg.runtime = cfg.runtime  # type: ignore[misc]
    with pytest.raises(ValidationError):
        DecisionPolicy().act_threshold = 0.1  # type: ignore[misc]
    assert cfg.company.name == "Acme Startup"


def test_model_copy_makes_a_changed_config():
    cfg = load_config(STARTUP)
    other = cfg.model_copy(update={"company": cfg.company.model_copy(update={"name": "B"})})
    assert other.company.name == "B"
    assert cfg.company.name == "Acme Startup"


@pytest.mark.parametrize(("override", "says"), [
    ("policies.work.learning_rate=abc", "--set policies.work.learning_rate=abc: Input should be"),
    ("agents.eng.count=-3", "--set agents.eng.count=-3: Input should be"),
    ("scenario=[{tick: 1, kind: fire, agents: [nobody]}]", "(scenario[0].agents): 'nobody'"),
    ("departments.product.head=ghost", "--set departments.product.head=ghost: unknown agent"),
])
def test_a_bad_set_value_names_the_flag_not_the_templates_line(override, says):
    with pytest.raises(ConfigError) as caught:
        load_config(STARTUP, [override])
    problems = " | ".join(caught.value.problems)
    assert says in problems and "(line" not in problems
