"""A group's side of LLM mode (config `llm`): which of its agents reason with the model, when
each deliberates, and what the answer changes in the loop.

An agent of `llm.agents` at work without a live plan deliberates: it asks the model (an
action of the `llm` executor, its situation as the arguments) and waits; the others go on.
The answer arrives `llm.latency_ticks` later, whatever the wall clock did, and is the agent's
evaluation (confidence), revision (rush or not) and plan (work, ask for help, escalate, wait),
checked against its constraints by the model and then by the budget rules and SecOps like
any other. A plan to work holds `llm.replan_every` ticks; any other step is taken once. A
failed deliberation fails closed: no plan, no action; the agent asks again next tick.
The model's cost is spent like a tool's: by the agent, its task and its department, within
their budgets; near the department's limit the agent asks a cheaper tier, and a budget spent
stops its deliberations (recorded) until the period turns: it goes on by the deterministic
strategies meanwhile."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from synthorg.config.llm import LlmSpec
from synthorg.domain.enums import (
    ActionKind,
    ActionStatus,
    Autonomy,
    BudgetRule,
    DecisionType,
    EventKind,
    ModelTier,
    Priority,
    Seniority,
    WorkState,
)
from synthorg.domain.records import take
from synthorg.engine.columns import NEVER
from synthorg.engine.events import EventBuffer
from synthorg.llm.deliberation import PlanChoice, unpack
from synthorg.llm.selection import llm_agents
from synthorg.loop.phases import check_work_transition
from synthorg.loop.protocols import Evaluation, Plan, WorkBatch
from synthorg.memory.texts import Renderer
from synthorg.org.directory import OrgDirectory
from synthorg.secops.forms import ORDINARY, THREAT_KINDS

if TYPE_CHECKING:
    from synthorg.engine.group import AgentGroup

_ACTION_OF = np.array([ActionKind.call_tool, ActionKind.send_message, ActionKind.ask_human,
                       ActionKind.none], dtype=np.int8)  # by PlanChoice
_DECISION_OF = np.array([DecisionType.act, DecisionType.investigate, DecisionType.escalate,
                         DecisionType.wait], dtype=np.int8)


class LlmDesk:
    def __init__(self, group: AgentGroup, spec: LlmSpec, executor: int) -> None:
        self.g = group
        self.spec = spec
        self.executor = executor
        self.situations: dict[int, str] = {}  # by call id, until the arguments are recorded
        self.selected = np.zeros(0, dtype=bool)

    def use(self, directory: OrgDirectory) -> None:
        g = self.g
        self.selected = llm_agents(g.cfg, directory, g.key)[g.lo:g.hi]
        self.renderer = Renderer(directory.agent_ids, directory.type_ids, directory.skill_ids,
                                 directory.dept_ids)

    # ---- before the batch: who deliberates now ----------------------------------------------
    def deliberate(self, tick: int, rows: np.ndarray, dept_spent: np.ndarray,
                   ev: EventBuffer) -> tuple[np.ndarray, np.ndarray]:
        """The working rows that stay in this tick's batch, and the deliberations issued by
        the others (who now wait for the model)."""
        g, a = self.g, self.g.a
        need = self.selected[rows] & (tick - a.plan_tick[rows] >= self.spec.replan_every)
        cand = rows[need]
        if not len(cand):
            return rows, _none()
        d = g.dir
        dept = g.dept[cand]
        budget = d.dept_budget_micro[dept]
        rule = np.where(dept_spent[dept] >= budget, BudgetRule.department_budget.value,
                        BudgetRule.allowed.value).astype(np.int8)
        own = d.agent_budget_micro[g.global_ids[cand]]
        rule[(rule == 0) & (own >= 0) & (a.period_spend[cand] >= own)] = BudgetRule.agent_budget
        if not g.cfg.policies.budget.enforce:  # budgets only watched: nothing stops
            rule[:] = BudgetRule.allowed
        stopped = rule != BudgetRule.allowed.value
        first = stopped & ~a.llm_stopped[cand]  # recorded once per agent and period
        ev.add(EventKind.llm_budget_exhausted, g.global_ids[cand[first]],
               a.cur["task"][cand[first]], target=rule[first])
        a.llm_stopped[cand[stopped]] = True
        asking = cand[~stopped]
        if not len(asking):
            return rows, _none()
        own_tier = d.model_tier[g.global_ids[asking]]
        own = d.agent_budget_micro[g.global_ids[asking]]
        near = ((dept_spent[g.dept[asking]]
                 >= self.spec.downgrade_at * d.dept_budget_micro[g.dept[asking]])
                | ((own >= 0) & (a.period_spend[asking] >= self.spec.downgrade_at * own)))
        tier = np.where(near, np.maximum(own_tier - 1, 0), own_tier).astype(np.int8)
        down = tier != own_tier
        ev.add(EventKind.llm_downgraded, g.global_ids[asking[down]], a.cur["task"][asking[down]],
               target=tier[down], value=own_tier[down])
        check_work_transition(a.state[asking], WorkState.waiting_action)
        a.state[asking] = WorkState.waiting_action
        a.llm_tier[asking] = tier
        a.plan_call[asking] = 0
        issued = g._action_rows(tick, asking, a.cur["tool"][asking], self.executor)
        for call, local, t in zip(issued["call"].tolist(), asking.tolist(), tier.tolist(),
                                  strict=True):
            self.situations[call] = self._situation(tick, local, t, dept_spent)
        keep = np.ones(len(rows), dtype=bool)
        keep[np.isin(rows, asking)] = False
        return rows[keep], issued

    def _situation(self, tick: int, local: int, tier: int, dept_spent: np.ndarray) -> str:
        """What the model is told (the deliberation's arguments, hashed into the ledger)."""
        g, a, d = self.g, self.g.a, self.g.dir
        agent, task = int(g.global_ids[local]), a.cur[local]
        dept = int(g.dept[local])
        budget = int(d.dept_budget_micro[dept])
        role = g.cfg.roles[int(d.agent_role[agent])]
        tool = int(task["tool"])
        offered, content = g.picker.offered(tool, int(task["task"]))
        fields = {"task": int(task["task"]), "type": d.type_ids[int(task["type"])],
                  "agent": d.agent_ids[agent], "department": d.dept_ids[dept], "tick": tick}
        forms = g.secops.forms
        situation = {
            "you": {"id": d.agent_ids[agent], "role": role.id, "department": d.dept_ids[dept],
                    "seniority": Seniority(int(d.seniority[agent])).name,
                    "company": g.cfg.company.name,
                    "goal": role.goal or "finish your tasks well, on time and in budget",
                    "tier": ModelTier(tier).name},
            "tick": tick,
            "task": {"id": int(task["task"]), "type": d.type_ids[int(task["type"])],
                     "priority": Priority(int(task["priority"])).name,
                     "difficulty": round(float(task["difficulty"]), 3),
                     "effort_left": round(float(task["effort"] - a.progress[local]), 3),
                     "deadline_in_ticks": int(task["deadline"]) - tick,
                     **({"content": content} if content else {})},
            # the calls the task allows, offered to the model as the API's `tools`
            "tool": {"name": d.tool_ids[tool], "description": g.cfg.tools[tool].description,
                     "calls": [forms.arguments(int(f), fields) for f in offered]},
            "you_now": {"skill": round(float(a.skills[local, int(task["skill"])]), 3),
                        "queue": int(a.queues.length[local]), "rushed": bool(a.rushed[local]),
                        "asked_for_help": int(a.asks[local]), "denials": int(a.denials[local]),
                        "waited_ticks": int(a.wait_streak[local]),
                        "autonomy": Autonomy(int(d.autonomy[agent])).name,
                        "help_received": round(float(a.help_bonus[local]), 3)},
            # what long-term memory retrieved for this task (engine/memory_desk.py)
            "remembered": {"experience_gain": round(float(a.experience[local]), 3),
                           "helpful_colleague": (d.agent_ids[int(a.mem_helper[local])]
                                                 if a.mem_helper[local] >= 0 else None),
                           **({"memories": [self.renderer.recalled(h) for h in
                                            g.memory.recalled_by(local)]}
                              if g.memory is not None else {})},
            "budget": {"department_spent_share": round(dept_spent[dept] / budget, 4)
                       if budget > 0 else None},
        }
        return json.dumps(situation, sort_keys=True, separators=(",", ":"))

    def argument_text(self, call: int) -> str:
        return self.situations.pop(call)

    # ---- the answers ---------------------------------------------------------------------------
    def arrived(self, tick: int, landed: np.ndarray, approvals: int, ev: EventBuffer,
                spend: np.ndarray, llm_spend: np.ndarray) -> np.ndarray:
        """Takes in the deliberations among the actions due now and pays for the model's
        work (also on approvals it reviewed); `llm_spend` gets it per department. Returns the
        other actions."""
        mine = landed["executor"] == self.executor
        if mine.any():
            thought = take(landed, mine)
            llm_spend += self.llm_spent(thought)
            self.landed(tick, thought, ev, spend)
        if self.g.cfg.policies.approvals.mode == "llm":
            reviewed = take(landed, landed["executor"] == approvals)
            llm_spend += self.llm_spent(reviewed)
            self.paid(reviewed, spend)
        return take(landed, ~mine) if mine.any() else landed

    def landed(self, tick: int, rows: np.ndarray, ev: EventBuffer, spend: np.ndarray) -> None:
        """Deliberations due now: the model's cost is spent whatever became of the agent; one
        still waiting takes the plan (or, failed, none) and is back at work."""
        g, a = self.g, self.g.a
        local = rows["agent"] - g.lo
        cost = rows["cost_micro"]
        tokens = rows["tokens_in"].astype(np.int64) + rows["tokens_out"]
        waiting = ((a.state[local] == WorkState.waiting_action.value)
                   & (a.cur["task"][local] == rows["task"]))
        self.paid(rows, spend)
        w = local[waiting]
        ok = rows["status"] == ActionStatus.succeeded.value
        took = waiting & ok
        plan, rush, conf, call = unpack(rows["value"][took])
        t = local[took]
        a.plan_tick[t] = tick
        a.plan_choice[t], a.plan_rush[t], a.plan_conf[t] = plan, rush, conf
        a.plan_call[t] = call
        check_work_transition(a.state[w], WorkState.working)
        a.state[w] = WorkState.working
        tier = a.llm_tier[local]
        ev.add(EventKind.llm_call, rows["agent"][ok], rows["task"][ok], target=tier[ok],
               value=tokens[ok], amount=cost[ok])
        ev.add(EventKind.llm_failed, rows["agent"][~ok], rows["task"][~ok],
               target=rows["value"][~ok].astype(np.int64), value=tokens[~ok], amount=cost[~ok])

    def paid(self, rows: np.ndarray, spend: np.ndarray) -> None:
        """The model's cost of actions due now (deliberations, or approvals it reviewed): the
        asking agent's, its department's, and its task's if it still holds it."""
        g, a = self.g, self.g.a
        local = rows["agent"] - g.lo
        cost = rows["cost_micro"]
        tokens = rows["tokens_in"].astype(np.int64) + rows["tokens_out"]
        np.add.at(a.period_spend, local, cost)
        np.add.at(spend, g.dept[local], cost)
        np.add.at(a.stats["llm_spend"], local, cost)
        np.add.at(a.stats["llm_calls"], local, 1)
        np.add.at(a.stats["llm_tokens"], local, tokens)
        same = a.cur["task"][local] == rows["task"]
        np.add.at(a.cost, local[same], cost[same])
        np.add.at(a.llm_cost, local[same], cost[same])
        np.add.at(a.tokens, local[same], tokens[same])

    def llm_spent(self, rows: np.ndarray) -> np.ndarray:
        """Per department, micro-USD of the deliberations among `rows` (for the timeseries)."""
        return np.bincount(self.g.dept[rows["agent"] - self.g.lo], weights=rows["cost_micro"],
                           minlength=len(self.g.dir.dept_ids)).astype(np.int64)

    # ---- in the batch: the plan replaces the deterministic steps -------------------------------
    def planned_rows(self, rows: np.ndarray) -> np.ndarray:
        """Positions in the batch of agents working by a live plan of the model."""
        a = self.g.a
        return np.nonzero(self.selected[rows] & (a.plan_tick[rows] != NEVER))[0]

    def evaluated(self, at: np.ndarray, rows: np.ndarray, evaluation: Evaluation) -> Evaluation:
        if not len(at):
            return evaluation
        confidence = evaluation.confidence.copy()
        confidence[at] = self.g.a.plan_conf[rows[at]]
        return Evaluation(competence=evaluation.competence, confidence=confidence,
                          rate=evaluation.rate, slack=evaluation.slack)

    def revised(self, at: np.ndarray, rows: np.ndarray, batch: WorkBatch,
                revised: np.ndarray) -> np.ndarray:
        if not len(at):
            return revised
        out = revised.copy()
        out[at] = self.g.a.plan_rush[rows[at]] & ~batch.rushed[at]
        return out

    def planned(self, at: np.ndarray, rows: np.ndarray, batch: WorkBatch, plan: Plan) -> Plan:
        """The model's plan where one is live; finishing a done task and failing an overdue
        one are facts, not choices, and stay. A plan other than work is taken once."""
        if not len(at):
            return plan
        a = self.g.a
        action, decision, helper = plan.action.copy(), plan.decision.copy(), plan.helper.copy()
        fact = (action[at] == ActionKind.finish.value) | (action[at] == ActionKind.fail.value)
        at = at[~fact]
        choice = a.plan_choice[rows[at]]
        action[at] = _ACTION_OF[choice]
        decision[at] = _DECISION_OF[choice]
        helper[at] = -1
        ask = at[choice == PlanChoice.ask_help.value]
        limit = self.g.cfg.policies.collaboration.max_help_requests_per_task
        ask = ask[batch.asks[ask] < limit]
        if len(ask):
            helper[ask] = batch.helpers(ask)
        no_help = at[(choice == PlanChoice.ask_help.value) & (helper[at] < 0)]
        action[no_help] = ActionKind.call_tool  # nobody to ask (or asked enough): works
        once = at[choice != PlanChoice.work.value]
        a.plan_tick[rows[once]] = NEVER
        return Plan(action=action, decision=decision, helper=helper)

    def plan_ends(self, local: np.ndarray) -> None:
        """A denial or a failed call ends the plan: the agent thinks again."""
        self.g.a.plan_tick[local] = NEVER
        self.g.a.plan_call[local] = 0

    def chosen_forms(self, local: np.ndarray, tasks: np.ndarray, picked: np.ndarray
                     ) -> np.ndarray:
        """The calls' forms with the model's choices: where an agent of the model chose one
        of the calls its task allows, that call is made, unless the seeded draw made this
        call an insider's attempt or an honest slip (the agent's nature, not its reasoning)."""
        g, a = self.g, self.g.a
        chose = self.selected[local] & (a.plan_call[local] > 0)
        if not chose.any():
            return picked
        kinds = g.secops.forms.kind
        injection = THREAT_KINDS.index("injection")
        out = picked.copy()
        for i in np.nonzero(chose)[0].tolist():
            if kinds[picked[i]] not in (ORDINARY, injection):
                continue
            offered, _ = g.picker.offered(int(tasks["tool"][i]), int(tasks["task"][i]))
            number = int(a.plan_call[local[i]])
            if number <= len(offered):
                out[i] = offered[number - 1]
        return out

    def period_starts(self) -> None:
        self.g.a.llm_stopped[:] = False


def _none() -> np.ndarray:
    from synthorg.domain.records import ACTION_DTYPE

    return np.zeros(0, dtype=ACTION_DTYPE)

