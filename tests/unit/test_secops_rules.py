"""The SecOps rule engine against the rules written out call by call."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import synthorg
from synthorg.config.models import SecurityPolicy
from synthorg.domain.enums import Autonomy, RiskTier, Verdict
from synthorg.org.directory import OrgDirectory
from synthorg.secops.rules import CALL_DTYPE, Rule, RuleEngine
from tests.conftest import ENTERPRISE

# supervised by default: calls two tiers above an agent's autonomy occur
DIRECTORY = OrgDirectory.from_config(synthorg.load_config(ENTERPRISE,
                                                          ["company.autonomy=supervised"]))


def expected(d: OrgDirectory, floor: Autonomy, beyond: str, agent: int, tool: int,
             approved: bool) -> tuple[Verdict, Rule]:
    """The rules as a reviewer reads them, one call at a time."""
    autonomy = int(d.autonomy[agent])
    known = 0 <= tool < len(d.tool_risk)
    risk = int(d.tool_risk[tool]) if known else RiskTier.critical
    if risk <= autonomy:
        if known and d.tool_destructive[tool] and autonomy < floor:
            verdict, rule = Verdict.escalate, Rule.destructive_needs_approval
        elif not known:
            verdict, rule = Verdict.escalate, Rule.unknown_tool
        else:
            return Verdict.allow, Rule.within_autonomy
    elif risk == autonomy + 1:
        verdict, rule = Verdict.escalate, Rule.one_above_autonomy
    elif not known or beyond == "deny":
        return Verdict.deny, Rule.unknown_tool if not known else Rule.beyond_autonomy
    else:
        verdict, rule = Verdict.escalate, Rule.beyond_autonomy
    return (Verdict.allow, Rule.approved) if approved else (verdict, rule)


@given(st.lists(st.tuples(st.integers(0, DIRECTORY.size - 1),
                          st.integers(-2, len(DIRECTORY.tool_risk) + 2), st.booleans()),
                max_size=40),
       st.sampled_from(list(Autonomy)), st.sampled_from(["escalate", "deny"]))
def test_every_call_gets_the_verdict_and_rule_of_the_written_rules(calls, floor, beyond):
    engine = RuleEngine(DIRECTORY, SecurityPolicy(destructive_requires=floor.name,
                                                  beyond_autonomy=beyond))
    verdict, rule = engine.check(np.array(calls, dtype=CALL_DTYPE))
    want = [expected(DIRECTORY, floor, beyond, *c) for c in calls]
    assert verdict.tolist() == [int(v) for v, _ in want]
    assert rule.tolist() == [int(r) for _, r in want]


def test_the_enterprise_template_meets_every_rule():
    """The hypothesis test above is only as good as the tools and autonomy levels it can
    draw: the template has tools of several risks, a destructive one, and several levels."""
    d = DIRECTORY
    assert len(set(d.tool_risk.tolist())) >= 3 and d.tool_destructive.any()
    assert len(set(d.autonomy.tolist())) >= 2
    assert (d.tool_risk.max() > d.autonomy.min() + 1)  # beyond autonomy: escalate or deny


def test_explain_names_the_rule_and_the_risk():
    engine = RuleEngine(DIRECTORY, SecurityPolicy())
    least_trusted = int(np.argmin(DIRECTORY.autonomy))
    assert DIRECTORY.autonomy[least_trusted] < Autonomy.autonomous
    unknown = engine.explain(least_trusted, len(DIRECTORY.tool_risk))
    assert (unknown.verdict, unknown.rule, unknown.risk) == ("deny", "unknown_tool", "critical")
    assert unknown.reason == "tool not in the catalog: treated as critical risk"
