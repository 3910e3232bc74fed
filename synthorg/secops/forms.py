"""The calls agents make in a simulation, and SecOps's verdicts on them.

Every call is one of a finite set of *forms*: a tool's argument templates, ordinary
(`forms`) or harmful (`threats`, with their ground truth). A call fills its form's
templates with identifiers only (task number, agent, department, type, tick), which never
carry a danger: the verdict depends on the form, so SecOps's fast path (the CallChecker on
each form's canonical fill) is worked out once per run into a table, and a 10,000-agent tick
checks its calls with one lookup. `test_secops_sim.py` holds the forms to that: different
fills of a form get the same verdict.

Which form a call takes is drawn per call from the run's key (synthorg/domain/rng.py): an
insider's attempts, an injected instruction a less vigilant agent follows, an honest
mistake, else an ordinary call of the tool.
"""

from __future__ import annotations

import json
import string
from collections import OrderedDict
from dataclasses import dataclass
from typing import get_args

import numpy as np

from synthorg.config.models import CompanyConfig, ThreatKind
from synthorg.domain.enums import Autonomy, Seniority, Verdict
from synthorg.domain.rng import Stream, uniform, uniforms
from synthorg.secops.catalog import checker_for

THREAT_KINDS: tuple[str, ...] = get_args(ThreatKind)
ORDINARY = -1  # the kind of an ordinary form
TOKEN = "\u241f%s\u241f"  # a field's place in argument_json (a character templates never hold)
CANONICAL = {"task": 0, "type": "task", "agent": "agent", "department": "department", "tick": 0}
# an honest mistake is likelier the less senior the agent (per Seniority)
MISTAKE_FACTOR = np.array([2.0, 1.0, 0.5, 0.5, 0.5])
# the autonomy rules: an approval of the task lifts them (not what the arguments say)
AUTONOMY_RULES = frozenset({"autonomy.within", "autonomy.one_above", "autonomy.beyond",
                            "autonomy.destructive_needs_approval", "tool.unknown",
                            "approval.granted"})


@dataclass(frozen=True, eq=False)
class Forms:
    """Every form of the company's tools, numbered tool by tool: ordinary ones first, then
    the threats grouped by kind."""

    tool: np.ndarray  # int32 per form
    kind: np.ndarray  # int8 per form: ORDINARY or an index of THREAT_KINDS
    cost_micro: np.ndarray  # int64 per form: an incident's cost if the call runs
    templates: tuple[dict[str, str], ...]
    task_text: tuple[str, ...]  # what a poisoned task says (injection forms), else ""
    ordinary_lo: np.ndarray  # int32 per tool
    ordinary_n: np.ndarray
    threat_lo: np.ndarray  # int32 [tool, kind]
    threat_n: np.ndarray

    @classmethod
    def of(cls, cfg: CompanyConfig) -> Forms:
        costs = cfg.workload.threats.incident_cost_usd
        tool: list[int] = []
        kind: list[int] = []
        cost: list[int] = []
        templates: list[dict[str, str]] = []
        texts: list[str] = []
        n_tools = len(cfg.tools)
        ordinary_lo = np.zeros(n_tools, np.int32)
        ordinary_n = np.zeros(n_tools, np.int32)
        threat_lo = np.zeros((n_tools, len(THREAT_KINDS)), np.int32)
        threat_n = np.zeros((n_tools, len(THREAT_KINDS)), np.int32)
        for t, spec in enumerate(cfg.tools):
            ordinary_lo[t] = len(tool)
            for form in spec.ordinary_forms():
                tool.append(t)
                kind.append(ORDINARY)
                cost.append(0)
                templates.append(dict(form))
                texts.append("")
            ordinary_n[t] = len(tool) - ordinary_lo[t]
            for k, name in enumerate(THREAT_KINDS):
                threat_lo[t, k] = len(tool)
                for threat in spec.threats:
                    if threat.kind != name:
                        continue
                    tool.append(t)
                    kind.append(k)
                    usd = threat.cost_usd if threat.cost_usd is not None else costs.get(name, 0.0)
                    cost.append(round(usd * 1_000_000))
                    templates.append(dict(threat.arguments))
                    texts.append(threat.task)
                threat_n[t, k] = len(tool) - threat_lo[t, k]
        return cls(np.array(tool, np.int32), np.array(kind, np.int8),
                   np.array(cost, np.int64), tuple(templates), tuple(texts),
                   ordinary_lo, ordinary_n, threat_lo, threat_n)

    def __len__(self) -> int:
        return len(self.tool)

    def arguments(self, form: int, fields: dict[str, object]) -> dict[str, str]:
        return {name: template.format(**fields) for name, template
                in self.templates[form].items()}

    def harmful(self, forms: np.ndarray) -> np.ndarray:
        return self.kind[forms] >= 0

    def argument_json(self, form: int) -> str:
        """The form's arguments as JSON with each field as TOKEN % name (literal braces
        undoubled): the readers of a run fill them per row, vectorised."""
        def tokenised(template: str) -> str:
            return "".join(literal + (TOKEN % field if field is not None else "")
                           for literal, field, _, _ in string.Formatter().parse(template))
        return json.dumps({k: tokenised(v) for k, v in self.templates[form].items()},
                          sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, eq=False)
class VerdictTable:
    """SecOps's verdict on each form, for each autonomy, approved or not."""

    verdict: np.ndarray  # int8 [form, autonomy, approved]
    rule: np.ndarray  # int16 [form, autonomy, approved]: an index of rule_ids
    by_autonomy: np.ndarray  # bool [form, autonomy]: unapproved verdict from the autonomy rules
    tier: np.ndarray  # int8 per form
    action_type: tuple[str, ...]  # per form
    rule_ids: tuple[str, ...]
    reasons: dict[tuple[int, int], str]  # (form, rule) -> reason

    @classmethod
    def of(cls, cfg: CompanyConfig, forms: Forms) -> VerdictTable:
        checker = checker_for(cfg)
        n, na = len(forms), len(Autonomy)
        decided: list[list[list[tuple[Verdict, str, str]]]] = []
        tiers, actions = [], []
        for f in range(n):
            spec = cfg.tools[int(forms.tool[f])]
            call = checker.call(spec.name, forms.arguments(f, CANONICAL), forms.task_text[f])
            rows = []
            for autonomy in Autonomy:
                cells = []
                for approved in (False, True):
                    v = checker.check(call, autonomy, approved)
                    reason = v.reason if v.rule_id not in AUTONOMY_RULES else (
                        f"{v.action_type} ({v.risk_tier.name}): {v.rule_id}")
                    cells.append((v.verdict, v.rule_id, reason))
                rows.append(cells)
            decided.append(rows)
            first = checker.check(call, Autonomy.supervised)
            tiers.append(int(first.risk_tier))
            actions.append(first.action_type)
        rule_ids = tuple(sorted({c[1] for rows in decided for cells in rows for c in cells}))
        code = {r: i for i, r in enumerate(rule_ids)}
        verdict = np.zeros((n, na, 2), np.int8)
        rule = np.zeros((n, na, 2), np.int16)
        reasons: dict[tuple[int, int], str] = {}
        for f, rows in enumerate(decided):
            for a, cells in enumerate(rows):
                for ap, (decision, r, why) in enumerate(cells):
                    verdict[f, a, ap], rule[f, a, ap] = int(decision), code[r]
                    reasons.setdefault((f, code[r]), why)
        by_autonomy = np.isin(rule[:, :, 0], [code[r] for r in rule_ids if r in AUTONOMY_RULES])
        return cls(verdict, rule, by_autonomy, np.array(tiers, np.int8), tuple(actions),
                   rule_ids, reasons)

    def check(self, forms: np.ndarray, autonomy: np.ndarray, approved: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        return (self.verdict[forms, autonomy, approved.view(np.uint8)],
                self.rule[forms, autonomy, approved.view(np.uint8)])


@dataclass(frozen=True, eq=False)
class SecOpsTables:
    """What a group needs to make and check its calls: the forms, the verdicts, and who is
    an insider (a pure function of the config and the run's key)."""

    forms: Forms
    verdicts: VerdictTable
    threats_on: bool
    any_choice: bool  # some tool has more than one ordinary form


def _key(cfg: CompanyConfig) -> str:
    return json.dumps([[t.model_dump(mode="json") for t in cfg.tools],
                       cfg.policies.security.model_dump(mode="json"),
                       cfg.workload.threats.model_dump(mode="json")], sort_keys=True)


_BUILT: OrderedDict[str, SecOpsTables] = OrderedDict()


def secops_tables(cfg: CompanyConfig) -> SecOpsTables:
    """Built once per process and config (a host of several groups, the office, the
    readers of a run directory share them)."""
    key = _key(cfg)
    if key not in _BUILT:
        forms = Forms.of(cfg)
        _BUILT[key] = SecOpsTables(forms, VerdictTable.of(cfg, forms),
                                   cfg.workload.threats.active(),
                                   bool((forms.ordinary_n > 1).any()))
        if len(_BUILT) > 8:
            _BUILT.popitem(last=False)
    return _BUILT[key]


class CallPicker:
    """Draws each call's form: seeded by (key, agent, tick), whatever group hosts it."""

    def __init__(self, cfg: CompanyConfig, tables: SecOpsTables, agent_ids: tuple[str, ...],
                 key: np.uint64) -> None:
        self.t = tables
        self.key = key
        threats = cfg.workload.threats
        self.p_insider = threats.insider_attempt_probability
        self.injection_rate = threats.injection_rate
        self.follow = np.array([threats.follow_probability.get(s.name, 0.0)  # type: ignore[call-overload]
                                for s in Seniority])
        self.mistake = threats.mistake_probability * MISTAKE_FACTOR
        # tools whose work is a checked program: the first form is the correct one
        self.checked = np.array([t.checked for t in cfg.tools], dtype=bool)
        self.any_checked = bool(self.checked.any())
        slots = np.arange(len(agent_ids), dtype=np.int64)
        named = set(threats.insiders)
        self.insider = (np.array([a in named for a in agent_ids], dtype=bool)
                        | (uniform(key, slots, 0, Stream.insider) < threats.insider_share))

    def pick(self, tick: int, agents: np.ndarray, tasks: np.ndarray, tools: np.ndarray,
             seniority: np.ndarray, competence: np.ndarray | None = None) -> np.ndarray:
        """competence: each caller's on its task (for checked tools: the chance it writes
        the correct program)."""
        f = self.t.forms
        n = f.ordinary_n[tools]
        if not self.t.threats_on:
            if not self.t.any_choice:
                return f.ordinary_lo[tools].copy()
            u = uniform(self.key, agents, tick, Stream.form)
            return self._written(f.ordinary_lo[tools] + np.minimum((u * n).astype(np.int32),
                                                                   n - 1),
                                 u, tools, n, competence)
        u_form, u_ins, u_follow, u_mis = uniforms(
            self.key, agents, tick, (Stream.form, Stream.insider, Stream.injection,
                                     Stream.mistake))
        kind = np.full(len(agents), ORDINARY, np.int8)
        mistake = u_mis < self.mistake[seniority]
        kind[mistake] = THREAT_KINDS.index("mistake")
        kind[self.poisoned(tasks) & (u_follow < self.follow[seniority])] = \
            THREAT_KINDS.index("injection")
        attempt = self.insider[agents] & (u_ins < self.p_insider)
        if attempt.any():  # the attempt's own uniform, rescaled, picks exfiltration or sabotage
            sabotage = u_ins >= self.p_insider / 2
            kind[attempt] = np.where(sabotage[attempt], THREAT_KINDS.index("sabotage"),
                                     THREAT_KINDS.index("exfiltration"))
        threat = kind >= 0
        tn = np.where(threat, f.threat_n[tools, np.maximum(kind, 0)], 0)
        harmful = tn > 0  # a tool without a form of the kind makes its ordinary call
        lo = np.where(harmful, f.threat_lo[tools, np.maximum(kind, 0)], f.ordinary_lo[tools])
        count = np.where(harmful, tn, n)
        form = lo + np.minimum((u_form * count).astype(np.int32), count - 1)
        return self._written(form, u_form, np.where(harmful, -1, tools), n, competence)

    def _written(self, form: np.ndarray, u: np.ndarray, tools: np.ndarray, n: np.ndarray,
                 competence: np.ndarray | None) -> np.ndarray:
        """Calls of checked tools (tool -1: a harmful call, left as drawn): the correct
        program with the caller's competence, else one of the faulty variants."""
        if not self.any_checked or competence is None:
            return form
        on = (tools >= 0) & self.checked[np.maximum(tools, 0)]
        if not on.any():
            return form
        c, lo = competence[on], self.t.forms.ordinary_lo[tools[on]]
        wrong = np.clip((u[on] - c) / np.maximum(1.0 - c, 1e-9), 0.0, 0.999999)
        faulty = 1 + np.minimum((wrong * (n[on] - 1)).astype(np.int32), n[on] - 2)
        form = form.copy()
        form[on] = lo + np.where(u[on] < c, 0, faulty)
        return form

    def offered(self, tool: int, task: int) -> tuple[np.ndarray, str]:
        """The calls an agent that reasons with a model may choose for its task (LLM mode):
        the tool's ordinary forms and, if the task's content carries an injected instruction,
        the call it asks for; and that content ("" if none). Insiders and honest mistakes stay
        seeded (`pick`): they are the agent's nature and slips, not its reasoning."""
        f = self.t.forms
        lo, n = int(f.ordinary_lo[tool]), int(f.ordinary_n[tool])
        forms = list(range(lo, lo + n))
        text = ""
        k = THREAT_KINDS.index("injection")
        if self.t.threats_on and f.threat_n[tool, k] and self.poisoned(np.array([task]))[0]:
            injected = int(f.threat_lo[tool, k] + task % f.threat_n[tool, k])
            forms.append(injected)
            text = f.task_text[injected]
        return np.array(forms, dtype=np.int32), text

    def poisoned(self, tasks: np.ndarray) -> np.ndarray:
        if not self.injection_rate:
            return np.zeros(len(tasks), bool)
        return uniform(self.key, tasks, 0, Stream.poisoned) < self.injection_rate
