"""An agent group: the agent slots [lo, hi) of the org, stepped through the loop together.

One group is what one Ray actor hosts (or the local backend, in-process). Per-agent state is
columnar (engine/columns.py); phases are vectorised over the group; Python loops run only
over messages, task hand-overs and org changes, never over all agents.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from synthorg.actions.executors import LLM
from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import (
    ActionKind,
    ActionStatus,
    BudgetRule,
    EventKind,
    FailReason,
    MessageKind,
    RiskTier,
    TaskStatus,
    Verdict,
    WorkState,
)
from synthorg.domain.records import (
    ACTION_DTYPE,
    ARGUMENT_DTYPE,
    MESSAGE_DTYPE,
    RESULT_DTYPE,
    TIMESERIES_DTYPE,
    answers_to,
    call_ids,
    carries_task,
    dept_actor,
    join,
    messages_carrying,
    take,
    task_fields_of,
)
from synthorg.domain.rng import Stream, uniforms
from synthorg.engine.autonomy import RESTORE_TASK, AutonomyGuard, restore_context
from synthorg.engine.columns import AgentColumns
from synthorg.engine.events import EventBuffer, MessageBuffer, ResultBuffer
from synthorg.engine.llm_desk import LlmDesk
from synthorg.engine.memory_desk import MemoryDesk, Recall
from synthorg.engine.staffing import Staffing
from synthorg.loop.deterministic import task_quality
from synthorg.loop.phases import LoopCycle, LoopPhase, check_work_transition
from synthorg.loop.protocols import BATCH_STREAMS, Evaluation, Plan, Spending, WorkBatch
from synthorg.loop.registry import strategies_for
from synthorg.org.directory import OrgDirectory, strength
from synthorg.org.routing import Department
from synthorg.org.timeline import OrgChange
from synthorg.secops.forms import CallPicker, secops_tables
from synthorg.secops.office import GRANTED

ESCALATE_ON_CONFIDENCE, ESCALATE_ON_TOOL = 0, 1


def _spread(rows: np.ndarray, helpers: np.ndarray, time_off: np.ndarray) -> np.ndarray | None:
    """Per row of `rows` (sorted agents), the share of the tick its agent spent helping
    (None: nobody helped)."""
    if not len(helpers):
        return None
    at = np.searchsorted(rows, helpers)
    found = at < len(rows)
    found[found] = rows[at[found]] == helpers[found]
    off = np.zeros(len(rows))
    off[at[found]] = time_off[found]
    return off
_NO_ARGUMENTS = np.zeros(0, dtype=ARGUMENT_DTYPE)
_NO_TEXT = np.zeros(0, dtype=np.uint8)
_NO_ACTIONS = np.zeros(0, dtype=ACTION_DTYPE)
_NO_ROWS = np.zeros(0, dtype=np.intp)
_ON_CONFIDENCE = json.dumps({"tool": "", "rule": "confidence", "reason": (
    "the agent's confidence in its next step is below the act threshold")})


@dataclass(frozen=True, eq=False)
class GroupTick:
    """What a group hands back after a tick."""

    messages: np.ndarray  # MESSAGE_DTYPE, sorted by (src, seq)
    loads: np.ndarray  # int32 per agent of the group: queued + current task
    spend: np.ndarray  # int64 per department, micro-USD spent this tick
    events: np.ndarray  # EVENT_DTYPE, sorted by (actor, seq)
    results: np.ndarray  # RESULT_DTYPE, finished tasks
    issued: np.ndarray  # ACTION_DTYPE: actions issued this tick, for the runner
    arguments: np.ndarray  # ARGUMENT_DTYPE: the side table of the calls issued this tick
    argument_text: np.ndarray  # uint8: their JSON texts, one after the other
    call_arguments: dict[int, str]  # call id -> its arguments, for the executors
    delivered: np.ndarray  # ACTION_DTYPE: actions whose outcome arrived this tick
    timeseries: np.ndarray  # TIMESERIES_DTYPE: one row per department


class AgentGroup:
    def __init__(self, config: CompanyConfig, directory: OrgDirectory, key: np.uint64,
                 lo: int, hi: int) -> None:
        self.cfg = config
        self.key = key
        self.lo, self.hi = lo, hi
        self.global_ids = np.arange(lo, hi, dtype=np.int32)
        self.a = AgentColumns.empty(directory.skills[lo:hi])
        self.staffing = Staffing(self)
        self.strategies = strategies_for(config, directory)
        # ticks from issue to outcome, per executor (the last: the SecOps office's approvals)
        self._latency = np.array([*(config.llm.latency_ticks if e == LLM
                                    else config.executors[e].latency_ticks
                                    for e in directory.executor_ids[:-1]),
                                  max(1, config.policies.approvals.delay_ticks)], dtype=np.int32)
        self.approvals = len(directory.executor_ids) - 1
        # the local copy of SecOps's fast path: each call's form, and the verdicts on forms
        self.secops = secops_tables(config)
        self.picker = CallPicker(config, self.secops, directory.agent_ids, key)
        self.guard = AutonomyGuard(config.policies.security.downgrade, self.global_ids)
        self._why_cache: dict[tuple[int, int], str] = {}
        self.memory: MemoryDesk | None = None  # attach_memory, when the config has memory
        self._started_now = np.zeros(0, dtype=np.intp)
        # LLM mode: the model's deliberations are actions of the `llm` executor
        self.llm = (LlmDesk(self, config.llm, directory.executor_ids.index(LLM))
                    if config.llm.enabled else None)
        self.use(directory)

    def attach_memory(self, recall: Recall) -> None:
        self.memory = MemoryDesk(self, self.cfg.memory, recall)

    def use(self, directory: OrgDirectory) -> None:
        """Take up an org version: every table derived from it is rebuilt here."""
        lo, hi = self.lo, self.hi
        self.dir = directory
        if self.llm is not None:
            self.llm.use(directory)
        self.dept = directory.agent_dept[lo:hi]
        self.seniority = directory.seniority[lo:hi]
        self.salary = directory.salary_micro[lo:hi]
        self.active = directory.active[lo:hi]
        self.everyone_active = bool(self.active.all())
        # every agent at work is paid each tick, busy or not
        self.payroll = np.zeros(len(directory.dept_ids), dtype=np.int64)
        np.add.at(self.payroll, self.dept[self.active], self.salary[self.active])
        self.headcount = np.bincount(self.dept[self.active], minlength=len(directory.dept_ids))
        self.heads_here = [int(h) - lo for h in directory.dept_head if lo <= h < hi]
        # what one more tick can cost each department (all groups): its payroll and, at
        # most, one call of its dearest tool per agent at work
        everyone = directory.active
        n_depts = len(directory.dept_ids)
        dept_of = directory.agent_dept[everyone]
        dearest = int(directory.tool_cost_micro.max()) if len(directory.tool_cost_micro) else 0
        self.tick_cost_bound = (
            np.bincount(dept_of, weights=directory.salary_micro[everyone],
                        minlength=n_depts).astype(np.int64)
            + np.bincount(dept_of, minlength=n_depts) * dearest)
        # a department's budget alerts are recorded once: by the group of its first agent
        first = np.full(n_depts, -1)
        ids = np.nonzero(everyone)[0]
        first[directory.agent_dept[ids[::-1]]] = ids[::-1]
        self.records_budget_of = np.nonzero((first >= lo) & (first < hi))[0]
        self.deferred_tools = directory.tool_executor >= 0
        self.any_deferred = bool(self.deferred_tools.any())
        # every department's router: it routes arrivals and tasks passed on by leavers
        self.routers = [Department(directory, k) for k in range(len(directory.dept_ids))]

    # ---- the tick -------------------------------------------------------------------------
    def step(self, tick: int, inbox: np.ndarray, loads: np.ndarray,
             spending: tuple[np.ndarray, np.ndarray], landed: np.ndarray,
             down: np.ndarray | None = None,
             org: tuple[OrgDirectory, list[OrgChange]] | None = None) -> GroupTick:
        """One tick. spending: per department, what was spent up to the last tick and in
        it; landed: the actions due now with their outcomes; down: per tool, whether it is
        out (None: all work); org: a new org version and its changes, from this tick."""
        dept_spent, last_spend = spending
        a = self.a
        cycle = LoopCycle()
        ev = EventBuffer(tick)
        out = MessageBuffer()
        results = ResultBuffer()
        spend = np.zeros(len(self.dir.dept_ids), dtype=np.int64)
        if org is not None:
            self.staffing.reorganise(tick, *org, loads, ev, out, results)
        if self.cfg.policies.budget.period_starts(tick):  # agents' spending starts at 0
            a.period_spend[:] = 0
            if self.llm is not None:
                self.llm.period_starts()
        llm_spend = np.zeros(len(self.dir.dept_ids), dtype=np.int64)
        others = landed
        if self.llm is not None and len(landed):  # the model's answers, and what it cost
            others = self.llm.arrived(tick, landed, self.approvals, ev, spend, llm_spend)

        halted = self._budget_control(tick, dept_spent, last_spend, ev)

        cycle.enter(LoopPhase.perceive)
        asks = self._perceive(tick, inbox, others, loads, halted, ev, out, results)
        if self.memory is not None:
            self.memory.perceive(tick, self._started_now, ev)
        helpers, time_off = self._answer_help(asks, ev, out)  # and the share of their tick

        cycle.enter(LoopPhase.evaluate)
        working = a.state == WorkState.working.value
        if len(helpers) and (time_off >= 1.0).any():  # helping took their whole tick
            working[helpers[time_off >= 1.0]] = False
        rows = np.nonzero(working if self.everyone_active else working & self.active)[0]
        deliberating = _NO_ACTIONS
        if self.llm is not None:  # who asks the model now leaves the batch and waits
            rows, deliberating = self.llm.deliberate(tick, rows, dept_spent, ev)
        batch = self._batch(tick, rows)
        s = self.strategies
        evaluation = s.evaluator.evaluate(batch)
        by_model = self.llm.planned_rows(rows) if self.llm is not None else _NO_ROWS
        if len(by_model):
            evaluation = self.llm.evaluated(by_model, rows, evaluation)  # type: ignore[union-attr]

        cycle.enter(LoopPhase.revise)
        revised = s.reviser.revise(batch, evaluation)
        if len(by_model):
            revised = self.llm.revised(by_model, rows, batch, revised)  # type: ignore[union-attr]
        a.rushed[rows[revised]] = True
        ev.add(EventKind.goal_revised, self.global_ids[rows[revised]], batch.tasks["task"][revised],
               value=evaluation.slack[revised])

        cycle.enter(LoopPhase.plan)
        plan = s.planner.plan(batch, evaluation)
        if len(by_model):
            plan = self.llm.planned(by_model, rows, batch, plan)  # type: ignore[union-attr]
        self._delegate(tick, loads, ev, out)

        cycle.enter(LoopPhase.filter)
        action, on_tool, asking, form = self._filter(batch, plan, dept_spent, ev)

        cycle.enter(LoopPhase.act)
        busy = a.state != WorkState.idle.value
        if not self.everyone_active:
            busy &= self.active
        a.cost[busy] += self.salary[busy]
        paid = np.where(halted, 0, self.payroll)  # a halted department pays nobody
        spend += paid
        if self.everyone_active and not halted.any():
            a.stats["paid"] += self.salary
        else:
            paying = self.active & ~halted[self.dept]
            a.stats["paid"][paying] += self.salary[paying]
        issued, escalated = self._act(tick, rows, batch, evaluation, action, on_tool, form,
                                      np.where(asking, plan.helper, -1),
                                      _spread(rows, helpers, time_off), down, ev, out,
                                      results, spend)
        if len(deliberating):
            issued = join([issued, deliberating], ACTION_DTYPE)
        restoring = self.guard.asking(tick, a, None if self.everyone_active else self.active,
                                      issued["agent"])
        if len(restoring):
            asked = self._action_rows(tick, restoring, np.full(len(restoring), -1), self.approvals)
            asked["task"] = RESTORE_TASK
            asked["value"] = -1
            issued = join([issued, asked], ACTION_DTYPE)
        arguments, text, by_call = self._arguments(tick, issued)
        if len(escalated) or len(restoring):
            by_call.update(self._approval_contexts(tick, issued))

        cycle.enter(LoopPhase.reflect)
        acted = rows[action != ActionKind.none.value]
        a.wait_streak[acted] = 0
        a.turns[rows] += 1
        cycle.finish()

        loads_out = a.queues.length + (a.state != WorkState.idle.value)
        return GroupTick(out.collect(), loads_out.astype(np.int32), spend, ev.collect(),
                         results.collect(), issued, arguments, text, by_call, landed,
                         self._timeseries(tick, busy, escalated, paid, spend, llm_spend))

    def _timeseries(self, tick: int, busy: np.ndarray, escalated: np.ndarray,
                    paid: np.ndarray, spend: np.ndarray, llm_spend: np.ndarray) -> np.ndarray:
        n = len(self.dir.dept_ids)
        rows = np.zeros(n, dtype=TIMESERIES_DTYPE)
        rows["tick"] = tick
        rows["dept"] = np.arange(n)
        rows["headcount"] = self.headcount
        rows["busy"] = np.bincount(self.dept[busy], minlength=n)
        rows["queued"] = np.bincount(self.dept, weights=self.a.queues.length, minlength=n)
        rows["escalations"] = np.bincount(self.dept[escalated], minlength=n)
        rows["salary_micro"] = paid
        rows["tool_micro"] = spend - paid - llm_spend
        rows["llm_micro"] = llm_spend
        return rows

    # ---- perceive -------------------------------------------------------------------------
    def _perceive(self, tick: int, inbox: np.ndarray, landed: np.ndarray, loads: np.ndarray,
                  halted: np.ndarray, ev: EventBuffer, out: MessageBuffer,
                  results: ResultBuffer) -> np.ndarray:
        """Take in the inbox (ordered by destination, then sender) and the outcomes of actions
        due now; returns the help requests. What reaches an agent who is away or gone is
        passed on: tasks go back to routing, help requests bounce."""
        asks = np.zeros(0, dtype=MESSAGE_DTYPE)
        if len(inbox):
            if not self.everyone_active:
                inbox = self.staffing.pass_on(tick, inbox, loads, ev, out, results)
            kind = inbox["kind"]
            carrying = carries_task(inbox)
            if carrying.any():
                batch = take(inbox, carrying)
                self.a.queues.push_many(batch["dst"] - self.lo, task_fields_of(batch))
            asks = take(inbox, kind == MessageKind.ask.value)
            self._receive_replies(take(inbox, (kind == MessageKind.reply.value)
                                       | (kind == MessageKind.bounce.value)), tick, ev)
        if len(landed):
            asked = landed["executor"] == self.approvals
            self._approvals(tick, take(landed, asked), ev, out, results)
            self._tool_results(take(landed, ~asked), ev)
        if halted.any():
            self._stop_work(tick, halted, ev, results)
        self._take_next(tick, ev, results)
        return asks

    def _budget_control(self, tick: int, spent: np.ndarray, last: np.ndarray,
                        ev: EventBuffer) -> np.ndarray:
        """Which departments halt this tick (budgets bind: one whose remaining budget cannot
        cover one more tick), and the alerts of the departments this group records."""
        policy = self.cfg.policies.budget
        budget = self.dir.dept_budget_micro
        halted = (budget - spent < self.tick_cost_bound) if policy.enforce else (
            np.zeros(len(budget), dtype=bool))
        for k in self.records_budget_of.tolist():
            before = spent[k] - last[k]
            for share in policy.alerts:
                if before < share * budget[k] <= spent[k]:
                    ev.add_one(EventKind.budget_alert, dept_actor(k), target=k, value=share)
            if halted[k] and (last[k] > 0 or tick == 0):  # it spent last tick: halts now
                ev.add_one(EventKind.budget_alert, dept_actor(k), target=k, value=1.0)
        return halted

    def _stop_work(self, tick: int, halted: np.ndarray, ev: EventBuffer,
                   results: ResultBuffer) -> None:
        """Agents of halted departments drop their tasks: each fails with reason budget. (Not
        a step of the loop, as a departure is not: the agents' states are set directly.)"""
        a = self.a
        stop = halted[self.dept] & self.active
        held = np.nonzero(stop & (a.state != WorkState.idle.value))[0]
        if len(held):
            self._close(held, tick, TaskStatus.failed, FailReason.budget, ev, results)
            a.state[held] = WorkState.idle
        for local in np.nonzero(stop & (a.queues.length > 0))[0].tolist():
            for task_id in a.queues.drain(local)["task"].tolist():
                self._record_failure(local, task_id, tick, FailReason.budget, ev, results)

    def _receive_replies(self, reply: np.ndarray, tick: int, ev: EventBuffer) -> None:
        """A reply to the agent's open help request lifts its competence for the task; a
        bounce (nobody there to help) only ends the wait."""
        a = self.a
        local = reply["dst"] - self.lo
        state = a.state[local]
        match = (((state == WorkState.waiting_help.value) | (state == WorkState.working.value))
                 & (a.cur["task"][local] == reply["t_task"]))
        got, value = local[match], reply["value"][match]
        own = strength(a.skills[got, a.cur["skill"][got]], self.seniority[got])
        waited = got[a.state[got] == WorkState.waiting_help.value]
        check_work_transition(a.state[waited], WorkState.working)
        a.state[waited] = WorkState.working
        bonus = self.cfg.policies.collaboration.help_bonus + 0.5 * np.maximum(0.0, value - own)
        bounced = reply["kind"][match] == MessageKind.bounce.value
        np.maximum.at(a.help_bonus, got, np.where(bounced, 0.0, bonus))
        if self.memory is not None and (~bounced).any():
            helped = got[~bounced]
            self.memory.helped(tick, helped, reply["src"][match][~bounced],
                               take(a.cur, helped), ev)

    def _tool_results(self, landed: np.ndarray, ev: EventBuffer) -> None:
        """Outcomes of tool calls due now: a success brings the work the call was for; a
        failure or time-out costs the tick it waited."""
        a = self.a
        local = landed["agent"] - self.lo
        waiting = ((a.state[local] == WorkState.waiting_action.value)
                   & (a.cur["task"][local] == landed["task"]))
        ok = waiting & (landed["status"] == ActionStatus.succeeded.value)
        w = local[ok]
        a.progress[w] += a.pending_rate[w]
        # the outcome's value is the turn's quality factor (a checked program's answer)
        a.quality_sum[w] += a.pending_quality[w] * landed["value"][ok]
        a.worked[w] += 1
        self._learn(w, a.cur["skill"][w])
        bad = waiting & ~ok
        if self.llm is not None:
            self.llm.plan_ends(local[bad])
        a.stats["actions_failed"][local[bad]] += 1
        back = local[waiting]
        check_work_transition(a.state[back], WorkState.working)
        a.state[back] = WorkState.working
        ev.add(EventKind.action_done, landed["agent"][ok], landed["task"][ok],
               target=landed["tool"][ok], value=landed["value"][ok])
        ev.add(EventKind.action_failed, landed["agent"][bad], landed["task"][bad],
               target=landed["status"][bad])

    def _learn(self, local: np.ndarray, skill: np.ndarray) -> None:
        """Learning by doing: a tick of work raises the skill it used."""
        lr = self.cfg.policies.work.learning_rate
        self.a.skills[local, skill] += lr * (1.0 - self.a.skills[local, skill])

    def _approvals(self, tick: int, decided: np.ndarray, ev: EventBuffer, out: MessageBuffer,
                   results: ResultBuffer) -> None:
        """The SecOps office's decisions on the approvals asked for: a request nobody
        answered in time has the policy's default outcome (timed out, its value says which);
        one that failed counts as rejected (SecOps fails closed)."""
        a = self.a
        restore = decided["task"] == RESTORE_TASK
        if restore.any():
            rows = take(decided, restore)
            self.guard.decided(tick, a, self.dir.autonomy[rows["agent"]], rows,
                               rows["agent"] - self.lo, ev)
            decided = take(decided, ~restore)
        local = decided["agent"] - self.lo
        asking = ((a.state[local] == WorkState.blocked.value)
                  & (a.cur["task"][local] == decided["task"]))
        timed_out = decided["status"] == ActionStatus.timed_out.value
        granted = (((decided["status"] == ActionStatus.succeeded.value) | timed_out)
                   & (decided["value"] == GRANTED))
        late = asking & timed_out
        ev.add(EventKind.approval_timed_out, self.global_ids[local[late]],
               a.cur["task"][local[late]], target=granted[late].astype(np.int64))
        ok, no = local[asking & granted], local[asking & ~granted]
        policy = self.cfg.policies.approvals
        check_work_transition(a.state[ok], WorkState.working)
        a.state[ok] = WorkState.working
        a.guidance[ok] = policy.guidance_bonus
        a.approved[ok] = True
        form = a.approved_form[local]
        ev.add(EventKind.approval_granted, self.global_ids[ok], a.cur["task"][ok],
               value=form[asking & granted])
        ev.add(EventKind.approval_rejected, self.global_ids[no], a.cur["task"][no],
               value=form[asking & ~granted])
        a.approved_form[no] = -1
        check_work_transition(a.state[no], WorkState.idle)
        heads = self.dir.dept_head[self.dept[no]]
        to_head = (heads != self.global_ids[no]) & (heads >= 0) & (policy.on_reject == "head")
        handoff = no[to_head]
        self._send_tasks(handoff, self.dir.dept_head[self.dept[handoff]], MessageKind.handoff,
                         ev, out)
        self._close(no[~to_head], tick, TaskStatus.failed, FailReason.rejected, ev, results)
        a.state[no] = WorkState.idle

    def _send_tasks(self, local: np.ndarray, to: np.ndarray, kind: MessageKind,
                    ev: EventBuffer, out: MessageBuffer) -> None:
        """The agents `local` send their current task to `to` (a report or a hand-off)."""
        if not len(local):
            return
        msgs = messages_carrying(take(self.a.cur, local))
        msgs["src"] = self.global_ids[local]
        msgs["dst"] = to
        msgs["kind"] = kind
        out.add(msgs)
        ev.add(EventKind.message_sent, msgs["src"], msgs["t_task"], target=msgs["dst"],
               value=float(kind))

    def _take_next(self, tick: int, ev: EventBuffer, results: ResultBuffer) -> None:
        a = self.a
        grace = self.cfg.policies.work.deadline_grace_ticks
        for local, task_id in a.queues.expire(tick, grace):  # on time, wherever queued
            self._record_failure(local, task_id, tick, FailReason.expired, ev, results)
        self._expire_held(tick, grace, ev, results)
        ready = (a.state == WorkState.idle.value) & (a.queues.length > 0)
        if not self.everyone_active:
            ready &= self.active
        started, tasks, expired = a.queues.pop_next(np.nonzero(ready)[0].tolist(), tick, grace)
        for local, task_id in expired:
            self._record_failure(local, task_id, tick, FailReason.expired, ev, results)
        self._started_now = np.array(started, dtype=np.intp)
        if not started:
            return
        idx = self._started_now
        check_work_transition(a.state[idx], WorkState.working)
        a.state[idx] = WorkState.working
        a.start_task(idx, tasks, tick)
        ev.add(EventKind.task_started, self.global_ids[idx], a.cur["task"][idx])

    def _expire_held(self, tick: int, grace: int, ev: EventBuffer,
                     results: ResultBuffer) -> None:
        """A task its agent holds while waiting (for help, an approval, an action's outcome)
        fails at its deadline too; a working agent's planner fails its own."""
        a = self.a
        waiting = np.flatnonzero(a.state > WorkState.working.value)  # the waiting states
        late = waiting[tick > a.cur["deadline"][waiting] + grace]
        if not len(late):
            return
        self._close(late, tick, TaskStatus.failed, FailReason.deadline, ev, results)
        check_work_transition(a.state[late], WorkState.idle)
        a.state[late] = WorkState.idle

    def _answer_help(self, asks: np.ndarray, ev: EventBuffer, out: MessageBuffer
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Helpers answer up to `help_capacity` requests each (in order of arrival), each
        costing them `help_cost` of this tick's own work; the rest
        bounce back unanswered. Returns the helpers and the share of the tick each spent."""
        nobody = (np.zeros(0, dtype=np.intp), np.zeros(0))
        if not len(asks):
            return nobody
        asks = take(asks, np.argsort(asks["dst"], kind="stable"))
        # each request's place in its helper's line this tick
        first = np.searchsorted(asks["dst"], asks["dst"], side="left")
        place = np.arange(len(asks)) - first
        over = place >= self.cfg.policies.collaboration.help_capacity
        if over.any():
            bounced = take(asks, over)
            back = answers_to(bounced, MessageKind.bounce)
            out.add(back)
            ev.add(EventKind.help_declined, back["src"], back["t_task"], target=back["dst"])
            asks = take(asks, ~over)
            if not len(asks):
                return nobody
        local, skill = asks["dst"] - self.lo, asks["t_skill"]
        helpers, answers = np.unique(local, return_counts=True)
        time_off = answers * self.cfg.policies.collaboration.help_cost
        np.add.at(self.a.stats["helps_given"], local, 1)
        msgs = answers_to(asks, MessageKind.reply)
        msgs["value"] = strength(self.a.skills[local, skill], self.seniority[local])
        out.add(msgs)
        ev.add(EventKind.help_given, msgs["src"], msgs["t_task"], target=msgs["dst"],
               value=msgs["value"])
        return helpers, time_off

    # ---- evaluate / plan -------------------------------------------------------------------
    def _batch(self, tick: int, rows: np.ndarray) -> WorkBatch:
        a = self.a
        tasks = take(a.cur, rows)
        agents = self.global_ids[rows]
        draws = uniforms(self.key, agents, tick, BATCH_STREAMS)
        dept = self.dept[rows]
        return WorkBatch(
            tick=tick, agents=agents, seniority=self.seniority[rows],
            dept=dept, skill=a.skills[rows, tasks["skill"]], tasks=tasks,
            progress=a.progress[rows], asks=a.asks[rows], help_bonus=a.help_bonus[rows],
            guidance=a.guidance[rows], experience=a.experience[rows], rushed=a.rushed[rows],
            wait_streak=a.wait_streak[rows], queue_len=a.queues.length[rows], draws=draws,
            helpers=lambda at: self._remembered_or(
                rows[at], self._helper_choice(agents[at], dept[at], tasks["skill"][at],
                                              draws[BATCH_STREAMS.index(Stream.helper)][at])),
        )

    def _remembered_or(self, local: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """A colleague remembered as helpful with such work is asked, if still at work."""
        remembered = self.a.mem_helper[local]
        ok = remembered >= 0
        if ok.any():
            ok[ok] = self.dir.active[remembered[ok]] & (remembered[ok] != self.lo + local[ok])
        return np.where(ok, remembered, chosen).astype(np.int32)

    def _helper_choice(self, agents: np.ndarray, dept: np.ndarray, skill: np.ndarray,
                       u: np.ndarray) -> np.ndarray:
        """A colleague to ask per row (-1: nobody), picked among the strongest three."""
        cands = self.dir.helpers[dept, skill]
        valid = (cands >= 0) & (cands != agents[:, None])
        count = valid.sum(axis=1)
        pick = np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))
        # position of the pick-th valid candidate in each row
        rank = np.cumsum(valid, axis=1) - 1
        hit = valid & (rank == pick[:, None])
        choice = np.where(count > 0, cands[np.arange(len(cands)), np.argmax(hit, axis=1)], -1)
        return choice.astype(np.int32)

    def _delegate(self, tick: int, loads: np.ndarray, ev: EventBuffer, out: MessageBuffer) -> None:
        """A busy head passes the easiest-to-hand-off task on top of its queue to a report."""
        collab = self.cfg.policies.collaboration
        queues = self.a.queues
        for local in self.heads_here:
            if queues.length[local] <= collab.delegate_queue_threshold:
                continue
            top = queues.peek(local)[0]
            if top["difficulty"] > collab.delegate_max_difficulty:
                continue
            head = self.lo + local
            cands = self.dir.handlers.get((int(self.dept[local]), int(top["type"])))
            if cands is None:
                continue
            cands = cands[cands != head]
            if not len(cands):
                continue
            skill = self.dir.skills[cands, int(top["skill"])]
            target = int(cands[np.argmin(loads[cands] - skill * 1e-3)])
            task = queues.pop(local)
            msg = messages_carrying(task)
            msg["src"], msg["dst"], msg["kind"] = head, target, MessageKind.delegate
            out.add(msg)
            self.a.stats["delegated"][local] += 1
            ev.add_one(EventKind.message_sent, head, int(task["task"][0]), target,
                       float(MessageKind.delegate))

    # ---- filter -----------------------------------------------------------------------------
    def _filter(self, batch: WorkBatch, plan: Plan, dept_spent: np.ndarray, ev: EventBuffer
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Planned actions after constraints and SecOps, which escalations SecOps asked for,
        who asks a colleague for help this tick, and each row's call form (-1: no call). An
        asker who does not wait for the answer also works on this tick (its call goes
        through the checks like any other)."""
        a = self.a
        action = plan.action.copy()
        asking = action == ActionKind.send_message.value
        if not self.cfg.policies.collaboration.asker_waits:
            action[asking] = ActionKind.call_tool
            plan = Plan(action=action.copy(), decision=plan.decision, helper=plan.helper)
        on_tool = np.zeros(len(action), dtype=bool)
        form = np.full(len(action), -1, dtype=np.int32)
        rule = self.strategies.constraints.blocked(
            batch, plan, Spending(dept_spent, self.a.period_spend, self.lo))
        blocked = rule != BudgetRule.allowed.value
        action[blocked] = ActionKind.none
        ev.add(EventKind.budget_blocked, batch.agents[blocked], batch.tasks["task"][blocked],
               target=rule[blocked])
        if blocked.any():
            self.guard.budget(batch.tick, a, self.dir.autonomy[batch.agents[blocked]],
                              batch.agents[blocked] - self.lo, ev)
        calls_at = np.nonzero(action == ActionKind.call_tool.value)[0]
        if not len(calls_at):
            return action, on_tool, asking, form
        agents = batch.agents[calls_at]
        local = agents - self.lo
        tasks = batch.tasks["task"][calls_at]
        competence = None
        if self.picker.any_checked:  # who writes a checked program right: the able, on easy tasks
            t = batch.tasks[calls_at]
            competence = np.clip(strength(a.skills[local, t["skill"]], self.seniority[local])
                                 - t["difficulty"] + 0.5, 0.05, 0.98)
        f = self.picker.pick(batch.tick, agents, tasks, batch.tasks["tool"][calls_at],
                             self.seniority[local], competence)
        if self.llm is not None:  # the calls the model chose, where it chose
            f = self.llm.chosen_forms(local, batch.tasks[calls_at], f)
        # the call a person approved is made as approved; the approval of a task also lifts
        # the autonomy rules for its other calls, not what their arguments say
        retry = a.approved_form[local] >= 0
        if retry.any():
            f[retry] = a.approved_form[local[retry]]
            a.approved_form[local[retry]] = -1
        form[calls_at] = f
        autonomy = self.guard.held(a, self.dir.autonomy[agents], local)
        table = self.secops.verdicts
        approved = a.approved[local] & (retry | table.by_autonomy[f, autonomy])
        verdict, rule = table.check(f, autonomy, approved)
        first = self.secops.forms.harmful(f) & ~retry  # ground truth, once per attempt
        ev.add(EventKind.threat, agents[first], tasks[first],
               target=self.secops.forms.kind[f[first]], value=f[first])
        denies, escalates = verdict == Verdict.deny.value, verdict == Verdict.escalate.value
        denied, escalated = calls_at[denies], calls_at[escalates]
        ev.add(EventKind.tool_denied, batch.agents[denied], batch.tasks["task"][denied],
               target=rule[denies], value=f[denies])
        ev.add(EventKind.tool_escalated, batch.agents[escalated], batch.tasks["task"][escalated],
               target=rule[escalates], value=f[escalates])
        local = batch.agents[denied] - self.lo
        a.denials[local] += 1
        a.stats["denied"][local] += 1
        self.guard.denied(batch.tick, a, self.dir.autonomy[batch.agents[denied]], local, ev)
        if self.llm is not None:
            self.llm.plan_ends(local)
        give_up = a.denials[local] >= self.cfg.policies.work.max_denials_per_task
        action[denied] = np.where(give_up, ActionKind.fail.value, ActionKind.none.value)
        action[escalated] = ActionKind.ask_human
        on_tool[escalated] = True
        return action, on_tool, asking, form

    # ---- act ----------------------------------------------------------------------------------
    def _act(self, tick: int, rows: np.ndarray, batch: WorkBatch, evaluation: Evaluation,
             action: np.ndarray, on_tool: np.ndarray, form: np.ndarray,
             asks_whom: np.ndarray,
             time_off: np.ndarray | None,
             down: np.ndarray | None, ev: EventBuffer, out: MessageBuffer,
             results: ResultBuffer, spend: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Returns the actions issued and the rows (group-local) that escalated. A row's work
        this tick is its rate less the share of the tick spent asking or helping.
        form: each row's call form; asks_whom: the colleague a row asks for help (-1: it
        does not ask)."""
        asking = asks_whom >= 0
        a = self.a
        ids = batch.agents
        tasks = batch.tasks["task"]

        work = action == ActionKind.call_tool.value
        tool_all = batch.tasks["tool"]
        if down is not None:  # an outage: the call fails, the tick is lost, nothing is spent
            out_of_order = work & down[tool_all]
            ev.add(EventKind.tool_failed, ids[out_of_order], tasks[out_of_order],
                   target=tool_all[out_of_order], value=form[out_of_order])
            work &= ~out_of_order
        w = rows[work]
        tool = tool_all[work]
        tool_cost = self.dir.tool_cost_micro[tool]
        gained = evaluation.rate[work]
        if time_off is not None or asking.any():  # less work for the share spent with others
            off = np.zeros(len(rows)) if time_off is None else time_off
            off = off + np.where(asking, self.cfg.policies.collaboration.ask_cost, 0.0)
            gained = gained * (1.0 - np.minimum(1.0, off[work]))
        quality = task_quality(batch, evaluation)[work]
        issued = np.zeros(0, dtype=ACTION_DTYPE)
        now = np.ones(len(w), dtype=bool)
        if self.any_deferred:
            later = self.deferred_tools[tool]
            if later.any():
                now = ~later
                issued = self._issue(tick, w[later], tool[later], gained[later], quality[later])
                issued["value"] = form[work][later]  # the call's form, until its outcome
        wn = w[now]
        a.progress[wn] += gained[now]
        a.quality_sum[wn] += quality[now]
        a.worked[wn] += 1
        a.cost[w] += tool_cost
        a.stats["tool_spend"][w] += tool_cost
        a.period_spend[w] += tool_cost
        a.stats["tool_calls"][w] += 1
        np.add.at(spend, self.dept[w], tool_cost)
        self._learn(wn, batch.tasks["skill"][work][now])
        ev.add(EventKind.tool_call, ids[work], tasks[work], target=tool, value=form[work],
               amount=tool_cost)
        ran = form[work]
        harm = self.secops.forms.harmful(ran)
        if harm.any():  # a harmful call that runs is a security incident
            ev.add(EventKind.security_incident, ids[work][harm], tasks[work][harm],
                   target=self.secops.forms.kind[ran[harm]], value=ran[harm],
                   amount=self.secops.forms.cost_micro[ran[harm]])
            self.guard.incident(tick, a, self.dir.autonomy[ids[work][harm]], w[harm], ev)

        ask = asking & (action != ActionKind.fail.value)
        q = rows[ask]
        if len(q):
            msgs = messages_carrying(take(batch.tasks, ask))
            msgs["src"], msgs["dst"], msgs["kind"] = ids[ask], asks_whom[ask], MessageKind.ask
            out.add(msgs)
            if self.cfg.policies.collaboration.asker_waits:
                check_work_transition(a.state[q], WorkState.waiting_help)
                a.state[q] = WorkState.waiting_help
            a.asks[q] += 1
            a.stats["help_requests"][q] += 1
            ev.add(EventKind.message_sent, ids[ask], tasks[ask], target=asks_whom[ask],
                   value=float(MessageKind.ask))

        wait = action == ActionKind.none.value
        a.wait_streak[rows[wait]] += 1
        a.stats["waited"][rows[wait]] += 1
        ev.add(EventKind.waited, ids[wait], tasks[wait], value=evaluation.confidence[wait])

        human = action == ActionKind.ask_human.value
        h = rows[human]
        if len(h):
            reason = np.where(on_tool[human], ESCALATE_ON_TOOL, ESCALATE_ON_CONFIDENCE)
            check_work_transition(a.state[h], WorkState.blocked)
            a.state[h] = WorkState.blocked
            a.stats["escalations"][h] += 1
            ev.add(EventKind.escalated, ids[human], tasks[human], target=reason,
                   value=evaluation.confidence[human])
            # the approval attaches to the call the agent wants to make (its form, in value)
            a.approved_form[h] = np.where(on_tool[human], form[human], -1)
            asked = self._action_rows(tick, h, tool_all[human], self.approvals)
            asked["value"] = form[human]
            issued = join([issued, asked], ACTION_DTYPE)

        finishing = rows[action == ActionKind.finish.value]
        self._close(finishing, tick, TaskStatus.completed, FailReason.none, ev, results)
        heads = self.dir.dept_head[self.dept[finishing]]
        reporting = finishing[(heads != self.global_ids[finishing]) & (heads >= 0)]
        self._send_tasks(reporting, self.dir.dept_head[self.dept[reporting]], MessageKind.report,
                         ev, out)
        fail = action == ActionKind.fail.value
        failing = rows[fail]
        why = np.where(a.denials[failing] >= self.cfg.policies.work.max_denials_per_task,
                       FailReason.denied.value, FailReason.deadline.value)
        self._close(failing, tick, TaskStatus.failed, why, ev, results)
        done = rows[(action == ActionKind.finish.value) | fail]
        check_work_transition(a.state[done], WorkState.idle)
        a.state[done] = WorkState.idle
        return issued, h

    def _issue(self, tick: int, local: np.ndarray, tool: np.ndarray, gained: np.ndarray,
               quality: np.ndarray) -> np.ndarray:
        """Tool calls run by executors: the agents wait for the outcome, which brings the work
        (`gained`, `quality`) when it arrives."""
        a = self.a
        check_work_transition(a.state[local], WorkState.waiting_action)
        a.state[local] = WorkState.waiting_action
        a.pending_rate[local] = gained
        a.pending_quality[local] = quality
        return self._action_rows(tick, local, tool, self.dir.tool_executor[tool])

    def _action_rows(self, tick: int, local: np.ndarray, tool: np.ndarray,
                     executor: np.ndarray | int) -> np.ndarray:
        """Actions issued now by the agents `local` (one each) for their current task."""
        rows = np.zeros(len(local), dtype=ACTION_DTYPE)
        rows["call"] = call_ids(tick, self.global_ids[local])
        rows["tick"] = tick
        rows["agent"] = self.global_ids[local]
        rows["task"] = self.a.cur["task"][local]
        rows["tool"] = tool
        rows["executor"] = executor
        rows["verdict"] = np.where(rows["executor"] == self.approvals, Verdict.escalate.value,
                                   Verdict.allow.value)
        rows["due"] = tick + self._latency[executor]
        rows["status"] = ActionStatus.issued
        return rows

    def _arguments(self, tick: int, issued: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
        """The arguments of the tool calls among `issued` (approvals have none), filled from
        their forms (in `value` until the outcome): the side-table rows, their JSON texts,
        and the texts by call."""
        calls = take(issued, issued["executor"] != self.approvals) if len(issued) else issued
        if not len(calls):
            return _NO_ARGUMENTS, _NO_TEXT, {}
        texts = self._filled(tick, calls)
        encoded = [t.encode() for t in texts]
        rows = np.zeros(len(calls), dtype=ARGUMENT_DTYPE)
        rows["call"] = calls["call"]
        rows["size"] = [len(b) for b in encoded]
        rows["digest"] = [int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little")
                          for b in encoded]
        return (rows, np.frombuffer(b"".join(encoded), dtype=np.uint8),
                dict(zip(calls["call"].tolist(), texts, strict=True)))

    def _filled(self, tick: int, calls: np.ndarray) -> list[str]:
        """Each call's arguments as JSON: its form (in `value`) filled for its agent and task."""
        d = self.dir
        local = calls["agent"] - self.lo
        types, depts = self.a.cur["type"][local].tolist(), self.dept[local].tolist()
        forms = self.secops.forms
        texts = []
        thinking = self.llm.executor if self.llm is not None else -1
        for call, executor, agent, task, form, t, k in zip(
                calls["call"].tolist(), calls["executor"].tolist(), calls["agent"].tolist(),
                calls["task"].tolist(), calls["value"].astype(np.int64).tolist(), types, depts,
                strict=True):
            if executor == thinking:  # a deliberation: the situation the model is told
                texts.append(self.llm.argument_text(call))  # type: ignore[union-attr]
                continue
            fields = {"task": task, "type": d.type_ids[t], "agent": d.agent_ids[agent],
                      "department": d.dept_ids[k], "tick": tick}
            texts.append(json.dumps(forms.arguments(form, fields), sort_keys=True,
                                    separators=(",", ":")))
        return texts

    def _approval_contexts(self, tick: int, issued: np.ndarray) -> dict[int, str]:
        """What the SecOps office parks with each approval asked for, as JSON: the call the
        agent wants to make (tool, filled arguments) and why SecOps escalated it."""
        asked = take(issued, issued["executor"] == self.approvals)
        local = asked["agent"] - self.lo
        charted = self.dir.autonomy[asked["agent"]]
        held = np.maximum(charted - self.a.lowered[local], 0).tolist()
        on_call = asked["value"] >= 0
        filled = iter(self._filled(tick, take(asked, on_call)))
        contexts = {}
        for call, form, task, h, c, at, ok in zip(
                asked["call"].tolist(), asked["value"].astype(np.int64).tolist(),
                asked["task"].tolist(), held, charted.tolist(),
                self.a.lowered_at[local].tolist(), on_call.tolist(), strict=True):
            if task == RESTORE_TASK:
                contexts[call] = restore_context(h, c, at)
            elif not ok:
                contexts[call] = _ON_CONFIDENCE
            else:
                contexts[call] = f'{self._why(form, h)}"arguments":{next(filled)}}}'
        return contexts

    def _why(self, form: int, autonomy: int) -> str:
        """The start of an approval's context: the call's tool and why SecOps escalated it
        at this autonomy (worked out once per form and autonomy)."""
        key = (form, autonomy)
        head = self._why_cache.get(key)
        if head is None:
            table = self.secops.verdicts
            rule = int(table.rule[form, autonomy, 0])
            head = json.dumps({
                "tool": self.cfg.tools[int(self.secops.forms.tool[form])].name,
                "rule": table.rule_ids[rule], "reason": table.reasons[(form, rule)],
                "risk_tier": RiskTier(int(table.tier[form])).name})[:-1] + ","
            self._why_cache[key] = head
        return head

    def _close(self, local: np.ndarray, tick: int, status: TaskStatus,
               reason: FailReason | np.ndarray, ev: EventBuffer, results: ResultBuffer) -> None:
        """Record the end of the current task of the agents `local` (distinct; the caller
        sets their work state). Quality is the mean over the turns worked; 0 if failed."""
        if not len(local):
            return
        a = self.a
        rows = np.zeros(len(local), dtype=RESULT_DTYPE)
        rows["task"] = a.cur["task"][local]
        rows["agent"] = self.global_ids[local]
        rows["status"] = status
        rows["reason"] = reason
        rows["finished"] = tick
        rows["started"] = a.started[local]
        if status == TaskStatus.completed:
            worked = a.worked[local]
            rows["quality"] = np.divide(a.quality_sum[local], worked,
                                        out=np.zeros(len(local)), where=worked > 0)
        rows["cost_micro"] = a.cost[local]
        rows["turns"] = a.turns[local] + 1
        rows["tokens"] = a.tokens[local]
        rows["llm_cost_micro"] = a.llm_cost[local]
        results.add(rows)
        if self.memory is not None:
            self.memory.closed(tick, local, rows, take(a.cur, local), ev)
        if status == TaskStatus.completed:
            a.stats["completed"][local] += 1
            a.quality_total[local] += rows["quality"]
            ev.add(EventKind.task_completed, rows["agent"], rows["task"], value=rows["quality"],
                   amount=rows["cost_micro"])
        else:
            a.stats["failed"][local] += 1
            ev.add(EventKind.task_failed, rows["agent"], rows["task"], target=rows["reason"],
                   amount=rows["cost_micro"])
        a.stats["cost"][local] += rows["cost_micro"]

    def _record_failure(self, local: int, tid: int, tick: int, reason: FailReason,
                        ev: EventBuffer, results: ResultBuffer) -> None:
        """A queued task that fails before it starts (expired in the queue)."""
        results.add_one((tid, self.lo + local, TaskStatus.failed, reason, tick, tick, 0.0, 0, 0, 0, 0))
        self.a.stats["failed"][local] += 1
        ev.add_one(EventKind.task_failed, self.lo + local, tid, int(reason))

    # ---- checkpoints ---------------------------------------------------------------------
    def state_dict(self) -> dict[str, object]:
        """Everything that changes during a run; config, org version and key are rebuilt."""
        state: dict[str, object] = {"lo": self.lo, "hi": self.hi, "agents": self.a.state_dict()}
        if self.memory is not None:
            state["memory"] = self.memory.state()
        return state

    def load_state(self, state: dict[str, object]) -> None:
        if (state["lo"], state["hi"]) != (self.lo, self.hi):
            raise ValueError(f"group state for agents {state['lo']}..{state['hi']} "
                             f"does not fit group {self.lo}..{self.hi}")
        self.a = AgentColumns.from_state(state["agents"])  # type: ignore[arg-type]
        if self.memory is not None:
            if "memory" not in state:
                raise ValueError("group state without the memory its config has")
            self.memory.load(state["memory"])  # type: ignore[arg-type]

    # ---- read-outs -------------------------------------------------------------------------
    def open_tasks(self) -> list[tuple[int, int]]:
        """(task id, agent) of every task an agent of the group holds or has queued."""
        a = self.a
        holding = np.nonzero(a.state != WorkState.idle.value)[0]
        held = list(zip(a.cur["task"][holding].tolist(),
                        self.global_ids[holding].tolist(), strict=True))
        return sorted(held + [(t, self.lo + local) for t, local in a.queues.task_agents()])

    def agent_rows(self) -> dict[str, np.ndarray]:
        a = self.a
        completed = a.stats["completed"]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_q = np.where(completed > 0, a.quality_total / np.maximum(completed, 1), 0.0)
        return {
            "agent_index": self.global_ids,
            "state": a.state.copy(),
            "queue_len": a.queues.length.copy(),
            "mean_quality": mean_q,
            "autonomy_lowered": a.lowered.copy(),
            **{k: v.copy() for k, v in a.stats.items()},
        }

