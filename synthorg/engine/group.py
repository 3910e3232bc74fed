"""An agent group: the agents [lo, hi) of the org, stepped through the loop together.

One group is what one Ray actor hosts (or the local backend, in-process). Per-agent state is
columnar; phases are vectorised over the group; Python loops run only over messages and task
hand-overs, never over all agents.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import (
    ActionKind,
    EventKind,
    FailReason,
    MessageKind,
    TaskStatus,
    Verdict,
    WorkState,
)
from synthorg.domain.records import (
    MESSAGE_DTYPE,
    RESULT_DTYPE,
    TASK_DTYPE,
    carries_task,
    take,
    task_fields_of,
)
from synthorg.domain.rng import Stream, uniform, uniforms
from synthorg.engine.events import EventBuffer, MessageBuffer, ResultBuffer
from synthorg.engine.queues import TaskQueues
from synthorg.loop.deterministic import (
    BudgetConstraint,
    DeadlineReviser,
    SeededEvaluator,
    ThresholdPlanner,
    task_quality,
)
from synthorg.loop.phases import LoopCycle, LoopPhase, check_work_transition
from synthorg.loop.protocols import BATCH_STREAMS, Evaluation, Plan, WorkBatch
from synthorg.org.directory import SENIORITY_BONUS, OrgDirectory
from synthorg.secops.rules import CALL_DTYPE, SecOpsPort

ESCALATE_ON_CONFIDENCE, ESCALATE_ON_TOOL = 0, 1


@dataclass(frozen=True, eq=False)
class GroupTick:
    """What a group hands back after a tick."""

    messages: np.ndarray  # MESSAGE_DTYPE, sorted by (src, seq)
    loads: np.ndarray  # int32 per agent of the group: queued + current task
    spend: np.ndarray  # int64 per department, micro-USD spent this tick
    events: np.ndarray  # EVENT_DTYPE, sorted by (actor, seq)
    results: np.ndarray  # RESULT_DTYPE, finished tasks


class AgentGroup:
    def __init__(self, config: CompanyConfig, directory: OrgDirectory, key: np.uint64,
                 lo: int, hi: int) -> None:
        self.cfg = config
        self.dir = directory
        self.key = key
        self.lo, self.hi = lo, hi
        m = hi - lo
        self.global_ids = np.arange(lo, hi, dtype=np.int32)
        self.dept = directory.agent_dept[lo:hi]
        self.seniority = directory.seniority[lo:hi]
        self.salary = directory.salary_micro[lo:hi]
        # every agent of a department is paid each tick, busy or not
        self.payroll = np.zeros(len(directory.dept_ids), dtype=np.int64)
        np.add.at(self.payroll, self.dept, self.salary)
        self.skills = directory.skills[lo:hi].copy()
        self.state = np.zeros(m, dtype=np.int8)
        self.cur = np.zeros(m, dtype=TASK_DTYPE)
        self.progress = np.zeros(m)
        self.quality_sum = np.zeros(m)
        self.worked = np.zeros(m, dtype=np.int32)
        self.turns = np.zeros(m, dtype=np.int32)
        self.cost = np.zeros(m, dtype=np.int64)
        self.started = np.zeros(m, dtype=np.int32)
        self.asks = np.zeros(m, dtype=np.int32)
        self.denials = np.zeros(m, dtype=np.int32)
        self.help_bonus = np.zeros(m)
        self.guidance = np.zeros(m)
        self.rushed = np.zeros(m, dtype=bool)
        self.approved = np.zeros(m, dtype=bool)
        self.blocked_until = np.zeros(m, dtype=np.int32)
        self.wait_streak = np.zeros(m, dtype=np.int32)
        self.queues = TaskQueues(m)
        self.stats = {name: np.zeros(m, dtype=np.int64) for name in (
            "completed", "failed", "cost", "tool_calls", "denied", "helps_given",
            "help_requests", "escalations", "delegated", "waited")}
        self.quality_total = np.zeros(m)
        heads = directory.dept_head
        self.heads_here = [int(h) - lo for h in heads if lo <= h < hi]
        p = config.policies
        self.evaluator = SeededEvaluator(p)
        self.reviser = DeadlineReviser(p)
        self.constraints = BudgetConstraint(p, directory.dept_budget_micro)

    # ---- the tick -------------------------------------------------------------------------
    def step(self, tick: int, inbox: np.ndarray, loads: np.ndarray, dept_spent: np.ndarray,
             secops: SecOpsPort) -> GroupTick:
        cycle = LoopCycle()
        ev = EventBuffer(tick)
        out = MessageBuffer()
        results = ResultBuffer()
        spend = np.zeros(len(self.dir.dept_ids), dtype=np.int64)

        cycle.enter(LoopPhase.perceive)
        asks = self._perceive(tick, inbox, ev, out, results)
        helping = self._answer_help(asks, ev, out)

        cycle.enter(LoopPhase.evaluate)
        rows = np.nonzero((self.state == WorkState.working.value) & ~helping)[0]
        batch = self._batch(tick, rows)
        evaluation = self.evaluator.evaluate(batch)

        cycle.enter(LoopPhase.revise)
        revised = self.reviser.revise(batch, evaluation)
        self.rushed[rows[revised]] = True
        ev.add(EventKind.goal_revised, self.global_ids[rows[revised]], batch.tasks["task"][revised],
               value=evaluation.slack[revised])

        cycle.enter(LoopPhase.plan)
        helper_choice = self._helper_choice(batch)
        plan = ThresholdPlanner(self.cfg.policies, helper_choice >= 0).plan(batch, evaluation)
        self._delegate(tick, loads, ev, out)

        cycle.enter(LoopPhase.filter)
        action, on_tool = self._filter(batch, plan, dept_spent, secops, ev)

        cycle.enter(LoopPhase.act)
        busy = self.state != WorkState.idle.value
        self.cost[busy] += self.salary[busy]
        spend += self.payroll
        self._act(tick, rows, batch, evaluation, action, on_tool, helper_choice, ev, out, results,
                  spend)

        cycle.enter(LoopPhase.reflect)
        acted = rows[action != ActionKind.none.value]
        self.wait_streak[acted] = 0
        self.turns[rows] += 1
        cycle.finish()

        loads_out = self.queues.length + (self.state != WorkState.idle.value)
        return GroupTick(out.collect(), loads_out.astype(np.int32), spend, ev.collect(),
                         results.collect())

    # ---- perceive -------------------------------------------------------------------------
    def _perceive(self, tick: int, inbox: np.ndarray, ev: EventBuffer, out: MessageBuffer,
                  results: ResultBuffer) -> np.ndarray:
        """Take in the inbox (ordered by destination, then sender); returns the help requests."""
        asks = np.zeros(0, dtype=MESSAGE_DTYPE)
        if len(inbox):
            kind = inbox["kind"]
            carrying = carries_task(inbox)
            if carrying.any():
                batch = take(inbox, carrying)
                self.queues.push_many(batch["dst"] - self.lo, task_fields_of(batch))
            asks = take(inbox, kind == MessageKind.ask.value)
            self._receive_replies(take(inbox, kind == MessageKind.reply.value))
        self._approvals(tick, ev, out, results)
        self._take_next(tick, ev, results)
        return asks

    def _receive_replies(self, reply: np.ndarray) -> None:
        """A reply to the agent's open help request lifts its competence for the task."""
        local = reply["dst"] - self.lo
        match = ((self.state[local] == WorkState.waiting_help.value)
                 & (self.cur["task"][local] == reply["t_task"]))
        got, value = local[match], reply["value"][match]
        strength = (self.skills[got, self.cur["skill"][got]]
                    + SENIORITY_BONUS[self.seniority[got]])
        check_work_transition(self.state[got], WorkState.working)
        self.state[got] = WorkState.working
        bonus = self.cfg.policies.collaboration.help_bonus + 0.5 * np.maximum(0.0, value - strength)
        np.maximum.at(self.help_bonus, got, bonus)

    def _approvals(self, tick: int, ev: EventBuffer, out: MessageBuffer,
                   results: ResultBuffer) -> None:
        due = np.nonzero((self.state == WorkState.blocked.value) & (self.blocked_until <= tick))[0]
        if not len(due):
            return
        policy = self.cfg.policies.approvals
        granted = uniform(self.key, self.global_ids[due], tick, Stream.approval) \
            < policy.approve_probability
        ok, no = due[granted], due[~granted]
        check_work_transition(self.state[ok], WorkState.working)
        self.state[ok] = WorkState.working
        self.guidance[ok] = policy.guidance_bonus
        self.approved[ok] = True
        ev.add(EventKind.approval_granted, self.global_ids[ok], self.cur["task"][ok])
        ev.add(EventKind.approval_rejected, self.global_ids[no], self.cur["task"][no])
        check_work_transition(self.state[no], WorkState.idle)
        heads = self.dir.dept_head[self.dept[no]]
        handoff = no[heads != self.global_ids[no]]
        if len(handoff):
            msgs = np.zeros(len(handoff), dtype=MESSAGE_DTYPE)
            self._fill_task(msgs, take(self.cur, handoff))
            msgs["src"] = self.global_ids[handoff]
            msgs["dst"] = self.dir.dept_head[self.dept[handoff]]
            msgs["kind"] = MessageKind.handoff
            out.add(msgs)
            ev.add(EventKind.message_sent, msgs["src"], msgs["t_task"], target=msgs["dst"],
                   value=float(MessageKind.handoff))
        self._close(no[heads == self.global_ids[no]], tick, TaskStatus.failed,
                    FailReason.rejected, ev, results)
        self.state[no] = WorkState.idle

    @staticmethod
    def _fill_task(msgs: np.ndarray, tasks: np.ndarray) -> None:
        for name in TASK_DTYPE.names or ():
            msgs[f"t_{name}"] = tasks[name]

    def _take_next(self, tick: int, ev: EventBuffer, results: ResultBuffer) -> None:
        grace = self.cfg.policies.work.deadline_grace_ticks
        ready = np.nonzero((self.state == WorkState.idle.value) & (self.queues.length > 0))[0]
        started, tasks, expired = self.queues.pop_next(ready.tolist(), tick, grace)
        for local, task_id in expired:
            self._record_failure(local, task_id, tick, FailReason.expired, ev, results)
        if not started:
            return
        idx = np.array(started, dtype=np.intp)
        self.cur[idx] = tasks
        check_work_transition(self.state[idx], WorkState.working)
        self.state[idx] = WorkState.working
        for arr in (self.progress, self.quality_sum, self.help_bonus, self.guidance):
            arr[idx] = 0.0
        for arr_i in (self.worked, self.turns, self.cost, self.asks, self.denials,
                      self.wait_streak):
            arr_i[idx] = 0
        self.rushed[idx] = False
        self.approved[idx] = False
        self.started[idx] = tick
        ev.add(EventKind.task_started, self.global_ids[idx], self.cur["task"][idx])

    def _answer_help(self, asks: np.ndarray, ev: EventBuffer, out: MessageBuffer) -> np.ndarray:
        """Helpers answer every request they got (in order of helper, then of arrival); it
        costs them this tick's own work."""
        helping = np.zeros(self.hi - self.lo, dtype=bool)
        if not len(asks):
            return helping
        asks = take(asks, np.argsort(asks["dst"], kind="stable"))
        local, skill = asks["dst"] - self.lo, asks["t_skill"]
        helping[local] = True
        np.add.at(self.stats["helps_given"], local, 1)
        msgs = np.zeros(len(asks), dtype=MESSAGE_DTYPE)
        msgs["src"], msgs["dst"], msgs["t_task"] = asks["dst"], asks["src"], asks["t_task"]
        msgs["t_skill"] = skill
        msgs["value"] = self.skills[local, skill] + SENIORITY_BONUS[self.seniority[local]]
        msgs["kind"] = MessageKind.reply
        out.add(msgs)
        ev.add(EventKind.help_given, msgs["src"], msgs["t_task"], target=msgs["dst"],
               value=msgs["value"])
        return helping

    # ---- evaluate / plan -------------------------------------------------------------------
    def _batch(self, tick: int, rows: np.ndarray) -> WorkBatch:
        tasks = take(self.cur, rows)
        agents = self.global_ids[rows]
        return WorkBatch(
            tick=tick, agents=agents, seniority=self.seniority[rows],
            dept=self.dept[rows], skill=self.skills[rows, tasks["skill"]], tasks=tasks,
            progress=self.progress[rows], asks=self.asks[rows], help_bonus=self.help_bonus[rows],
            guidance=self.guidance[rows], rushed=self.rushed[rows],
            wait_streak=self.wait_streak[rows], queue_len=self.queues.length[rows],
            draws=uniforms(self.key, agents, tick, BATCH_STREAMS),
        )

    def _helper_choice(self, batch: WorkBatch) -> np.ndarray:
        """A colleague to ask per batch row (-1: nobody), picked among the strongest three."""
        cands = self.dir.helpers[batch.dept, batch.tasks["skill"]]
        valid = (cands >= 0) & (cands != batch.agents[:, None])
        count = valid.sum(axis=1)
        u = batch.draw(Stream.helper)
        pick = np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))
        # position of the pick-th valid candidate in each row
        rank = np.cumsum(valid, axis=1) - 1
        hit = valid & (rank == pick[:, None])
        choice = np.where(count > 0, cands[np.arange(len(cands)), np.argmax(hit, axis=1)], -1)
        return choice.astype(np.int32)

    def _delegate(self, tick: int, loads: np.ndarray, ev: EventBuffer, out: MessageBuffer) -> None:
        """A busy head passes the easiest-to-hand-off task on top of its queue to a report."""
        collab = self.cfg.policies.collaboration
        for local in self.heads_here:
            if self.queues.length[local] <= collab.delegate_queue_threshold:
                continue
            top = self.queues.peek(local)[0]
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
            task = self.queues.pop(local)
            msg = np.zeros(1, dtype=MESSAGE_DTYPE)
            self._fill_task(msg, task)
            msg["src"], msg["dst"], msg["kind"] = head, target, MessageKind.delegate
            out.add(msg)
            self.stats["delegated"][local] += 1
            ev.add_one(EventKind.message_sent, head, int(task["task"][0]), target,
                       float(MessageKind.delegate))

    # ---- filter -----------------------------------------------------------------------------
    def _filter(self, batch: WorkBatch, plan: Plan, dept_spent: np.ndarray, secops: SecOpsPort,
                ev: EventBuffer) -> tuple[np.ndarray, np.ndarray]:
        """Planned actions after constraints and SecOps, and which escalations SecOps asked for."""
        action = plan.action.copy()
        on_tool = np.zeros(len(action), dtype=bool)
        blocked = self.constraints.blocked(batch, plan, dept_spent)
        action[blocked] = ActionKind.none
        ev.add(EventKind.budget_blocked, batch.agents[blocked], batch.tasks["task"][blocked])
        calls_at = np.nonzero(action == ActionKind.call_tool.value)[0]
        if not len(calls_at):
            return action, on_tool
        calls = np.empty(len(calls_at), dtype=CALL_DTYPE)
        calls["agent"] = batch.agents[calls_at]
        calls["tool"] = batch.tasks["tool"][calls_at]
        calls["approved"] = self.approved[batch.agents[calls_at] - self.lo]
        verdict, rule = secops.check(calls)
        denies, escalates = verdict == Verdict.deny.value, verdict == Verdict.escalate.value
        denied, escalated = calls_at[denies], calls_at[escalates]
        ev.add(EventKind.tool_denied, batch.agents[denied], batch.tasks["task"][denied],
               target=rule[denies])
        ev.add(EventKind.tool_escalated, batch.agents[escalated], batch.tasks["task"][escalated],
               target=rule[escalates])
        local = batch.agents[denied] - self.lo
        self.denials[local] += 1
        self.stats["denied"][local] += 1
        give_up = self.denials[local] >= self.cfg.policies.work.max_denials_per_task
        action[denied] = np.where(give_up, ActionKind.fail.value, ActionKind.none.value)
        action[escalated] = ActionKind.ask_human
        on_tool[escalated] = True
        return action, on_tool

    # ---- act ----------------------------------------------------------------------------------
    def _act(self, tick: int, rows: np.ndarray, batch: WorkBatch, evaluation: Evaluation,
             action: np.ndarray, on_tool: np.ndarray, helper_choice: np.ndarray,
             ev: EventBuffer, out: MessageBuffer,
             results: ResultBuffer, spend: np.ndarray) -> None:
        ids = batch.agents
        tasks = batch.tasks["task"]

        work = action == ActionKind.call_tool.value
        w = rows[work]
        tool = batch.tasks["tool"][work]
        tool_cost = self.dir.tool_cost_micro[tool]
        self.progress[w] += evaluation.rate[work]
        self.quality_sum[w] += task_quality(batch, evaluation)[work]
        self.worked[w] += 1
        self.cost[w] += tool_cost
        self.stats["tool_calls"][w] += 1
        np.add.at(spend, self.dept[w], tool_cost)
        skill = batch.tasks["skill"][work]
        lr = self.cfg.policies.work.learning_rate
        self.skills[w, skill] += lr * (1.0 - self.skills[w, skill])
        ev.add(EventKind.tool_call, ids[work], tasks[work], target=tool, amount=tool_cost)

        ask = action == ActionKind.send_message.value
        a = rows[ask]
        if len(a):
            msgs = np.zeros(len(a), dtype=MESSAGE_DTYPE)
            self._fill_task(msgs, take(batch.tasks, ask))
            msgs["src"], msgs["dst"], msgs["kind"] = ids[ask], helper_choice[ask], MessageKind.ask
            out.add(msgs)
            check_work_transition(self.state[a], WorkState.waiting_help)
            self.state[a] = WorkState.waiting_help
            self.asks[a] += 1
            self.stats["help_requests"][a] += 1
            ev.add(EventKind.message_sent, ids[ask], tasks[ask], target=helper_choice[ask],
                   value=float(MessageKind.ask))

        wait = action == ActionKind.none.value
        self.wait_streak[rows[wait]] += 1
        self.stats["waited"][rows[wait]] += 1
        ev.add(EventKind.waited, ids[wait], tasks[wait], value=evaluation.confidence[wait])

        human = action == ActionKind.ask_human.value
        h = rows[human]
        if len(h):
            reason = np.where(on_tool[human], ESCALATE_ON_TOOL, ESCALATE_ON_CONFIDENCE)
            check_work_transition(self.state[h], WorkState.blocked)
            self.state[h] = WorkState.blocked
            self.blocked_until[h] = tick + self.cfg.policies.approvals.delay_ticks
            self.stats["escalations"][h] += 1
            ev.add(EventKind.escalated, ids[human], tasks[human], target=reason,
                   value=evaluation.confidence[human])

        finishing = rows[action == ActionKind.finish.value]
        self._close(finishing, tick, TaskStatus.completed, FailReason.none, ev, results)
        heads = self.dir.dept_head[self.dept[finishing]]
        reporting = finishing[heads != self.global_ids[finishing]]
        if len(reporting):
            msgs = np.zeros(len(reporting), dtype=MESSAGE_DTYPE)
            self._fill_task(msgs, take(self.cur, reporting))
            msgs["src"] = self.global_ids[reporting]
            msgs["dst"] = self.dir.dept_head[self.dept[reporting]]
            msgs["kind"] = MessageKind.report
            out.add(msgs)
            ev.add(EventKind.message_sent, msgs["src"], msgs["t_task"], target=msgs["dst"],
                   value=float(MessageKind.report))
        fail = action == ActionKind.fail.value
        failing = rows[fail]
        why = np.where(self.denials[failing] >= self.cfg.policies.work.max_denials_per_task,
                       FailReason.denied.value, FailReason.deadline.value)
        self._close(failing, tick, TaskStatus.failed, why, ev, results)
        done = rows[(action == ActionKind.finish.value) | fail]
        check_work_transition(self.state[done], WorkState.idle)
        self.state[done] = WorkState.idle

    def _close(self, local: np.ndarray, tick: int, status: TaskStatus,
               reason: FailReason | np.ndarray, ev: EventBuffer, results: ResultBuffer) -> None:
        """Record the end of the current task of the agents `local` (distinct; the caller
        sets their work state). Quality is the mean over the turns worked; 0 if failed."""
        if not len(local):
            return
        rows = np.zeros(len(local), dtype=RESULT_DTYPE)
        rows["task"] = self.cur["task"][local]
        rows["agent"] = self.global_ids[local]
        rows["status"] = status
        rows["reason"] = reason
        rows["finished"] = tick
        rows["started"] = self.started[local]
        if status == TaskStatus.completed:
            worked = self.worked[local]
            rows["quality"] = np.divide(self.quality_sum[local], worked,
                                        out=np.zeros(len(local)), where=worked > 0)
        rows["cost_micro"] = self.cost[local]
        rows["turns"] = self.turns[local] + 1
        results.add(rows)
        if status == TaskStatus.completed:
            self.stats["completed"][local] += 1
            self.quality_total[local] += rows["quality"]
            ev.add(EventKind.task_completed, rows["agent"], rows["task"], value=rows["quality"],
                   amount=rows["cost_micro"])
        else:
            self.stats["failed"][local] += 1
            ev.add(EventKind.task_failed, rows["agent"], rows["task"], target=rows["reason"],
                   amount=rows["cost_micro"])
        self.stats["cost"][local] += rows["cost_micro"]

    def _record_failure(self, local: int, tid: int, tick: int, reason: FailReason,
                        ev: EventBuffer, results: ResultBuffer) -> None:
        """A queued task that fails before it starts (expired in the queue)."""
        results.add_one((tid, self.lo + local, TaskStatus.failed, reason, tick, tick, 0.0, 0, 0, 0))
        self.stats["failed"][local] += 1
        ev.add_one(EventKind.task_failed, self.lo + local, tid, int(reason))

    # ---- checkpoints ---------------------------------------------------------------------
    _MUTABLE = ("state", "skills", "cur", "progress", "quality_sum", "worked", "turns", "cost",
                "started", "asks", "denials", "help_bonus", "guidance", "rushed", "approved",
                "blocked_until", "wait_streak", "queues", "stats", "quality_total")

    def state_dict(self) -> dict[str, object]:
        """Everything that changes during a run; config, directory and key are rebuilt."""
        return {"lo": self.lo, "hi": self.hi, **{k: getattr(self, k) for k in self._MUTABLE}}

    def load_state(self, state: dict[str, object]) -> None:
        if (state["lo"], state["hi"]) != (self.lo, self.hi):
            raise ValueError(f"group state for agents {state['lo']}..{state['hi']} "
                             f"does not fit group {self.lo}..{self.hi}")
        # deep copies: arrays handed over by Ray's object store are read-only views
        for k in self._MUTABLE:
            setattr(self, k, copy.deepcopy(state[k]))

    # ---- read-outs -------------------------------------------------------------------------
    def open_task_ids(self) -> list[int]:
        active = self.cur["task"][self.state != WorkState.idle.value].tolist()
        return sorted(active + self.queues.task_ids())

    def agent_rows(self) -> dict[str, np.ndarray]:
        completed = self.stats["completed"]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_q = np.where(completed > 0, self.quality_total / np.maximum(completed, 1), 0.0)
        return {
            "agent_index": self.global_ids,
            "state": self.state.copy(),
            "queue_len": self.queues.length.copy(),
            "mean_quality": mean_q,
            **{k: v.copy() for k, v in self.stats.items()},
        }
