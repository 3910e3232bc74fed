"""The SecOps interceptor for one tool call: the fast path's detectors and risk tiers, the
slow path for what they are unsure of, and the agent's autonomy.

Order of the rules (the first that applies decides):
1. a blocking finding (a hard rule) denies, whatever the autonomy or an approval;
2. an uncertain finding goes to the reviewer (the slow path: escalate until an LLM reviews);
   a reviewer that fails or times out denies (fail closed). A call no detector flags but the
   second look (synthorg/secops/second_look.py) reads as harmful is uncertain too;
3. an approved call is allowed;
4. the call's risk tier against the agent's autonomy: within it allowed, one tier above
   escalated, further above escalated or denied by policy; a destructive action below the
   autonomy `destructive_requires` escalates; a tool the catalog does not know is high risk.

What a call's arguments say is worked out once per distinct call (bounded LRU cache): a
large simulation repeats calls, and the check then costs a dictionary lookup.
"""

from __future__ import annotations

import concurrent.futures
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from synthorg.domain.enums import Autonomy, RiskTier, Verdict
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.classify import call_action, default_tiers, tier_of
from synthorg.secops.detectors import findings
from synthorg.secops.second_look import SecondLook

CACHE_SIZE = 65_536
DESTRUCTIVE_ACTIONS = frozenset({"db:admin", "tool:destructive"})
# a destructive tool's calls that the path rules keep inside the agent's workspace
CONTAINED_ACTIONS = frozenset({"fs:delete", "fs:write", "fs:read"})


@dataclass(frozen=True)
class CallVerdict:
    verdict: Verdict
    rule_id: str
    risk_tier: RiskTier
    reason: str
    action_type: str

    def as_json(self) -> dict[str, str]:
        return {"verdict": self.verdict.name, "rule_id": self.rule_id,
                "risk_tier": self.risk_tier.name, "reason": self.reason,
                "action_type": self.action_type}


@dataclass(frozen=True)
class Assessment:
    """What a call's arguments say, whoever makes it."""

    action_type: str
    tier: RiskTier
    findings: tuple[Finding, ...]
    score: float | None = None  # the second look's, on a call no detector flags


class Reviewer(Protocol):
    """The slow path: a second look at a call the detectors are unsure of."""

    def review(self, call: ToolCall, assessment: Assessment) -> tuple[Verdict, str]: ...


class EscalatingReviewer:
    """Until a reviewing model is configured, uncertain means a person decides."""

    def review(self, call: ToolCall, assessment: Assessment) -> tuple[Verdict, str]:
        return Verdict.escalate, "uncertain: a person decides"


@dataclass(frozen=True)
class ToolInfo:
    action_type: str
    destructive: bool = False
    # a tool whose config declares no action type: its declared risk is its tier
    tier: RiskTier | None = None


class CallChecker:
    def __init__(self, tools: Mapping[str, ToolInfo], *, tier_overrides: Mapping[str, str]
                 | None = None, internal_domains: Iterable[str] = (),
                 destructive_requires: Autonomy = Autonomy.full,
                 beyond_autonomy: Verdict = Verdict.escalate,
                 reviewer: Reviewer | None = None, review_timeout_s: float = 5.0,
                 second_look: SecondLook | None = None, escalate_above: float = 0.95,
                 ask_instead_of_deny: Iterable[str] = (), shared_folders: Iterable[str] = ()
                 ) -> None:
        """ask_instead_of_deny: detector families whose hard rules escalate instead;
        shared_folders: the company's shared work outside the workspace."""
        self.tools = dict(tools)
        self.tiers = {**default_tiers(),
                      **{k: RiskTier[v] for k, v in (tier_overrides or {}).items()}}
        self.internal = tuple(internal_domains)
        self.destructive_requires = destructive_requires
        self.beyond = beyond_autonomy
        self.second_look = second_look
        self.escalate_above = escalate_above
        self.asking = frozenset(ask_instead_of_deny)
        self.shared = tuple(shared_folders)
        self.reviewer: Reviewer = reviewer or EscalatingReviewer()
        self.review_timeout_s = review_timeout_s
        self._cache: OrderedDict[str, Assessment] = OrderedDict()
        self.reviews_failed = 0
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def call(self, tool: str, arguments: Mapping[str, object], task: str = "",
             workspace: str | None = None, agent: str | None = None,
             colleagues: frozenset[str] = frozenset()) -> ToolCall:
        """`agent` and `colleagues` (the company's agent ids): with the shared default
        workspace, a path into a colleague's folder of it is outside the agent's own."""
        info = self.tools.get(tool)
        return ToolCall(tool=tool, arguments=arguments, task=task,
                        workspace=workspace or "/workspace",
                        action_type=info.action_type if info else "",
                        colleagues=colleagues - {agent} if workspace is None and agent
                        else frozenset(), owner=agent or "", shared=self.shared)

    def assess(self, call: ToolCall) -> Assessment:
        key = call.key()
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        info = self.tools.get(call.tool)
        action = call_action(call, self.tiers, self.internal) if info else "unknown"
        found = tuple(findings(call, self.internal))
        tier = info.tier if info and info.tier is not None else tier_of(action, self.tiers)
        # (only a call no detector flags is scored: the score serves nothing else)
        score = self.second_look.score(call) if self.second_look and not found else None
        # (only ever a further caution: words added to a call can hide it from the second
        # look, as from a reader, but never take a detector's finding away)
        if score is not None and score > self.escalate_above:
            found = (Finding("second_look.reads_harmful", False, "no detector names it, but it "
                             f"reads like harmful calls (second look {score:.2f})",
                             max(tier, RiskTier.high)),)
        assessment = Assessment(action, tier, found, score)
        self._cache[key] = assessment
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return assessment

    def check(self, call: ToolCall, autonomy: Autonomy, approved: bool = False) -> CallVerdict:
        a = self.assess(call)
        blocking = [f for f in a.findings
                    if f.block and f.rule.partition(".")[0] not in self.asking]
        if blocking:
            f = blocking[0]
            return CallVerdict(Verdict.deny, f.rule, max(f.tier, a.tier), f.reason,
                               a.action_type)
        tier = max([a.tier, *(f.tier for f in a.findings)])
        if a.findings:
            verdict, why = self._review(call, a)
            if verdict != Verdict.allow and not (approved and verdict == Verdict.escalate):
                f = a.findings[0]
                return CallVerdict(verdict, f.rule if verdict != Verdict.deny or why != "failed"
                                   else "review.failed", tier, f"{f.reason}; {why}",
                                   a.action_type)
        if approved:
            return CallVerdict(Verdict.allow, "approval.granted", tier,
                               "a person approved this call", a.action_type)
        return self._autonomy(call, a, tier, autonomy)

    def _review(self, call: ToolCall, a: Assessment) -> tuple[Verdict, str]:
        """The reviewer's verdict, failing closed: an error or a timeout denies. The
        built-in reviewer answers at once; another runs on the checker's reviewing thread
        (started on first use) so that a hung one costs its time-out, not the run."""
        if type(self.reviewer) is EscalatingReviewer:
            return self.reviewer.review(call, a)
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=4, thread_name_prefix="secops-review")
        try:
            return self._pool.submit(self.reviewer.review, call, a).result(self.review_timeout_s)
        except Exception:
            self.reviews_failed += 1
            return Verdict.deny, "failed"

    def _autonomy(self, call: ToolCall, a: Assessment, tier: RiskTier, autonomy: Autonomy
                  ) -> CallVerdict:
        if a.action_type == "unknown":
            rule, reason = "tool.unknown", f"{call.tool} is not in the catalog: high risk"
        else:
            rule, reason = "autonomy.within", f"{a.action_type} ({tier.name}) within the agent's autonomy"
        if tier <= autonomy:
            info = self.tools.get(call.tool)
            destructive = a.action_type in DESTRUCTIVE_ACTIONS or (
                info is not None and info.destructive and a.action_type not in CONTAINED_ACTIONS)
            if destructive and autonomy < self.destructive_requires:
                return CallVerdict(Verdict.escalate, "autonomy.destructive_needs_approval",
                                   tier, f"{a.action_type} is destructive: below "
                                   f"{self.destructive_requires.name} it needs approval",
                                   a.action_type)
            return CallVerdict(Verdict.allow, rule, tier, reason, a.action_type)
        if tier == autonomy + 1:
            return CallVerdict(Verdict.escalate, "autonomy.one_above" if rule != "tool.unknown"
                               else rule, tier, f"{a.action_type} ({tier.name}) is one tier "
                               f"above {autonomy.name}: needs approval", a.action_type)
        return CallVerdict(self.beyond, "autonomy.beyond" if rule != "tool.unknown" else rule,
                           tier, f"{a.action_type} ({tier.name}) is beyond {autonomy.name}",
                           a.action_type)

