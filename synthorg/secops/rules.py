"""The minimal SecOps rule set: autonomy against risk tier, destructive tools, approvals.

Vectorised: one call checks every tool call of a group's tick. Fails closed: a tool the
catalog does not know is treated as critical risk.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict

from synthorg.config.models import SecurityPolicy
from synthorg.domain.enums import Autonomy, RiskTier, Verdict
from synthorg.org.directory import OrgDirectory

CALL_DTYPE = np.dtype([("agent", "<i4"), ("tool", "<i4"), ("approved", "?")])


class Rule(IntEnum):
    approved = 0
    within_autonomy = 1
    one_above_autonomy = 2
    beyond_autonomy = 3
    destructive_needs_approval = 4
    unknown_tool = 5


RULE_REASON = {
    Rule.approved: "a human approved this call",
    Rule.within_autonomy: "risk tier within the agent's autonomy",
    Rule.one_above_autonomy: "risk tier one above the agent's autonomy: needs approval",
    Rule.beyond_autonomy: "risk tier more than one above the agent's autonomy",
    Rule.destructive_needs_approval: "destructive tool below the required autonomy",
    Rule.unknown_tool: "tool not in the catalog: treated as critical risk",
}


class SecOpsVerdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    verdict: str
    rule: str
    risk: str
    reason: str


class SecOpsPort(Protocol):
    """Where a group sends its tool calls: the rule engine itself, or the SecOps actor."""

    def check(self, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


class RuleEngine:
    """Every (tool, autonomy, approved) combination is decided once, at start-up, by the
    rules below; a check is then one table lookup per call (the rules' dozens of numpy calls
    a check cost each group microseconds apiece, every tick)."""

    def __init__(self, directory: OrgDirectory, policy: SecurityPolicy) -> None:
        self._autonomy = directory.autonomy
        self._risk = directory.tool_risk
        self._destructive = directory.tool_destructive
        self._destructive_floor = int(Autonomy[policy.destructive_requires])
        self._beyond = (Verdict.escalate if policy.beyond_autonomy == "escalate"
                        else Verdict.deny)
        self._unknown = len(self._risk)  # the table's row for any tool not in the catalog
        tool, autonomy, approved = (a.ravel() for a in np.meshgrid(
            np.arange(self._unknown + 1), np.arange(len(Autonomy)), [False, True],
            indexing="ij"))
        self._table = np.stack(self._decide(tool, autonomy, approved), axis=-1).reshape(
            self._unknown + 1, len(Autonomy), 2, 2)

    def check(self, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(verdict int8, rule int8) per call."""
        tool = calls["tool"]
        row = np.where((tool >= 0) & (tool < self._unknown), tool, self._unknown)
        decided = self._table[row, self._autonomy[calls["agent"]],
                              calls["approved"].view(np.uint8)]
        return decided[:, 0], decided[:, 1]

    def _decide(self, tool: np.ndarray, autonomy: np.ndarray, approved: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """(verdict int8, rule int8) per call, rules applied in a fixed order."""
        n = len(tool)
        known = (tool >= 0) & (tool < self._unknown)
        safe_tool = np.where(known, tool, 0)
        risk = np.where(known, self._risk[safe_tool], RiskTier.critical).astype(np.int16)
        autonomy = autonomy.astype(np.int16)
        verdict = np.full(n, Verdict.deny, dtype=np.int8)
        rule = np.full(n, Rule.beyond_autonomy, dtype=np.int8)

        def put(mask: np.ndarray, v: Verdict, r: Rule) -> None:
            verdict[mask] = v
            rule[mask] = r

        # later lines take precedence over earlier ones
        put(risk > autonomy + 1, self._beyond, Rule.beyond_autonomy)
        put(risk == autonomy + 1, Verdict.escalate, Rule.one_above_autonomy)
        put(risk <= autonomy, Verdict.allow, Rule.within_autonomy)
        destructive = known & self._destructive[safe_tool] & (autonomy < self._destructive_floor)
        put(destructive & (verdict == Verdict.allow), Verdict.escalate,
            Rule.destructive_needs_approval)
        put(~known & (verdict == Verdict.allow), Verdict.escalate, Rule.unknown_tool)
        put(~known & (risk > autonomy + 1), Verdict.deny, Rule.unknown_tool)  # fails closed
        put(approved & (verdict == Verdict.escalate), Verdict.allow, Rule.approved)
        return verdict, rule

    def explain(self, agent: int, tool: int, approved: bool = False) -> SecOpsVerdict:
        calls = np.array([(agent, tool, approved)], dtype=CALL_DTYPE)
        v, r = self.check(calls)
        known = 0 <= tool < self._unknown
        risk = RiskTier(int(self._risk[tool])) if known else RiskTier.critical
        return SecOpsVerdict(verdict=Verdict(int(v[0])).name, rule=Rule(int(r[0])).name,
                             risk=risk.name, reason=RULE_REASON[Rule(int(r[0]))])
