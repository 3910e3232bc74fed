"""The tool catalogs SecOps knows: the standard one (templates/tools/standard.yaml) and a
company's own tools, which take precedence; and a checker built from a company config."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from synthorg.config.models import CompanyConfig, ToolSpec
from synthorg.domain.enums import Autonomy, Verdict
from synthorg.secops.checker import CallChecker, ToolInfo
from synthorg.secops.classify import base_action_type

STANDARD = Path(__file__).resolve().parents[2] / "templates" / "tools" / "standard.yaml"


@cache
def standard_tools() -> tuple[ToolSpec, ...]:
    raw = yaml.safe_load(STANDARD.read_text())
    return tuple(ToolSpec.model_validate(t) for t in raw["tools"])


def tool_info(spec: ToolSpec) -> ToolInfo:
    return ToolInfo(base_action_type(spec.name, spec.action_type, spec.read_only,
                                     spec.destructive), spec.destructive)


def checker_for(cfg: CompanyConfig) -> CallChecker:
    tools = {t.name: tool_info(t) for t in standard_tools()}
    tools.update({t.name: tool_info(t) for t in cfg.tools})
    policy = cfg.policies.security
    return CallChecker(tools, tier_overrides=policy.risk_tiers,
                       internal_domains=policy.internal_domains,
                       destructive_requires=Autonomy[policy.destructive_requires],
                       beyond_autonomy=Verdict[policy.beyond_autonomy])
