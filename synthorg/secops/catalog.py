"""The tool catalogs SecOps knows: the standard one (templates/tools/standard.yaml) and a
company's own tools, which take precedence; and a checker built from a company config."""

from __future__ import annotations

from functools import cache

from synthorg.config.catalogs import catalog_tools
from synthorg.config.models import CompanyConfig, ToolSpec
from synthorg.domain.enums import Autonomy, RiskTier, Verdict
from synthorg.secops.checker import CallChecker, ToolInfo
from synthorg.secops.classify import base_action_type
from synthorg.secops.second_look import shipped


@cache
def standard_tools() -> tuple[ToolSpec, ...]:
    return tuple(ToolSpec.model_validate(t) for t in catalog_tools("standard"))


def tool_info(spec: ToolSpec) -> ToolInfo:
    """A tool that declares its action type gets tiers from the registry (refined by each
    call's arguments); one that does not is as risky as its config says."""
    return ToolInfo(base_action_type(spec.name, spec.action_type, spec.read_only,
                                     spec.destructive), spec.destructive,
                    None if spec.action_type else RiskTier[spec.risk])


def checker_for(cfg: CompanyConfig) -> CallChecker:
    tools = {t.name: tool_info(t) for t in standard_tools()}
    tools.update({t.name: tool_info(t) for t in cfg.tools})
    policy = cfg.policies.security
    look = policy.second_look
    return CallChecker(tools, tier_overrides=policy.risk_tiers,
                       internal_domains=policy.internal_domains,
                       destructive_requires=Autonomy[policy.destructive_requires],
                       beyond_autonomy=Verdict[policy.beyond_autonomy],
                       second_look=shipped() if look.enabled else None,
                       escalate_above=look.escalate_above,
                       ask_instead_of_deny=policy.ask_instead_of_deny,
                       shared_folders=policy.shared_folders)
