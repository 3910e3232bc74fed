"""The per-agent state of a group that changes during a run, one column per field.

Everything here is what a checkpoint must carry: `state_dict` takes every field of the
dataclass, so a field added to it is carried without being listed anywhere else.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

import numpy as np

from synthorg.domain.records import TASK_DTYPE
from synthorg.engine.queues import TaskQueues

STAT_NAMES = ("completed", "failed", "cost", "tool_calls", "denied", "helps_given",
              "help_requests", "escalations", "delegated", "waited", "actions_failed",
              "paid", "tool_spend", "llm_calls", "llm_tokens", "llm_spend")
# paid, tool_spend, llm_spend: micro-USD over the run
NEVER = -(1 << 30)  # the tick of something that has not happened


@dataclass
class AgentColumns:
    state: np.ndarray  # int8 WorkState
    skills: np.ndarray  # float64 [m, n_skills], current levels (they grow by doing)
    cur: np.ndarray  # TASK_DTYPE: the current task
    progress: np.ndarray
    quality_sum: np.ndarray
    worked: np.ndarray
    turns: np.ndarray
    cost: np.ndarray  # micro-USD spent on the current task
    started: np.ndarray
    asks: np.ndarray
    denials: np.ndarray
    help_bonus: np.ndarray
    guidance: np.ndarray
    rushed: np.ndarray
    approved: np.ndarray
    wait_streak: np.ndarray
    pending_rate: np.ndarray  # work an action in flight brings if it succeeds
    pending_quality: np.ndarray
    queues: TaskQueues
    stats: dict[str, np.ndarray]
    quality_total: np.ndarray
    period_spend: np.ndarray  # micro-USD the agent spent in this budget period (tool calls)
    approved_form: np.ndarray  # int32: the call form an approval was asked for (-1: none)
    # autonomy lowered automatically (synthorg/engine/autonomy.py), for the whole run
    lowered: np.ndarray  # int8: levels below the org chart's autonomy
    lowered_at: np.ndarray  # int32: tick of the last lowering (or answer on a restore)
    strikes: np.ndarray  # int16: denials in the current window
    strike_tick: np.ndarray  # int32: tick of the last denial
    restore_asked: np.ndarray  # bool: an approval for a level back is pending
    # long-term memory (synthorg/engine/memory_desk.py), for the current task
    experience: np.ndarray  # competence that remembered experience adds
    mem_helper: np.ndarray  # int32: the colleague remembered as helpful (-1: none)
    # LLM mode (synthorg/engine/llm_desk.py): the plan of the last deliberation
    plan_tick: np.ndarray  # int32: tick it was taken (NEVER: none; deliberate first)
    plan_choice: np.ndarray  # int8 PlanChoice
    plan_rush: np.ndarray  # bool
    plan_conf: np.ndarray  # the model's confidence
    tokens: np.ndarray  # int64: the model's tokens on the current task
    llm_cost: np.ndarray  # int64: micro-USD of the model on the current task
    llm_stopped: np.ndarray  # bool: a budget stopped its deliberations this period
    llm_tier: np.ndarray  # int8 ModelTier its deliberation in flight asked
    plan_call: np.ndarray  # int16: the call the model chose among those offered, from 1 (0: none)

    @classmethod
    def empty(cls, skills: np.ndarray) -> AgentColumns:
        m = len(skills)

        def zeros(dtype: type | np.dtype = np.float64) -> np.ndarray:
            return np.zeros(m, dtype=dtype)

        return cls(
            state=zeros(np.int8), skills=skills.copy(), cur=zeros(TASK_DTYPE), progress=zeros(),
            quality_sum=zeros(), worked=zeros(np.int32), turns=zeros(np.int32),
            cost=zeros(np.int64), started=zeros(np.int32), asks=zeros(np.int32),
            denials=zeros(np.int32), help_bonus=zeros(), guidance=zeros(), rushed=zeros(bool),
            approved=zeros(bool), wait_streak=zeros(np.int32),
            pending_rate=zeros(), pending_quality=zeros(), queues=TaskQueues(m),
            stats={name: zeros(np.int64) for name in STAT_NAMES}, quality_total=zeros(),
            period_spend=zeros(np.int64), approved_form=np.full(m, -1, dtype=np.int32),
            lowered=zeros(np.int8), lowered_at=zeros(np.int32), strikes=zeros(np.int16),
            strike_tick=np.full(m, NEVER, dtype=np.int32), restore_asked=zeros(bool),
            experience=zeros(), mem_helper=np.full(m, -1, dtype=np.int32),
            plan_tick=np.full(m, NEVER, dtype=np.int32), plan_choice=zeros(np.int8),
            plan_rush=zeros(bool), plan_conf=zeros(), tokens=zeros(np.int64),
            llm_cost=zeros(np.int64), llm_stopped=zeros(bool), llm_tier=zeros(np.int8),
            plan_call=zeros(np.int16))

    def state_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_state(cls, state: dict[str, object]) -> AgentColumns:
        names = {f.name for f in dataclasses.fields(cls)}
        if set(state) != names:
            raise ValueError(f"agent state with fields {sorted(set(state) ^ names)} missing or "
                             "unknown")
        # deep copies: arrays handed over by Ray's object store are read-only views
        return cls(**{k: copy.deepcopy(v) for k, v in state.items()})  # type: ignore[arg-type]

    def start_task(self, idx: np.ndarray, tasks: np.ndarray, tick: int) -> None:
        """The agents `idx` take up `tasks` (their per-task columns start afresh)."""
        self.cur[idx] = tasks
        for arr in (self.progress, self.quality_sum, self.help_bonus, self.guidance,
                    self.experience):
            arr[idx] = 0.0
        self.mem_helper[idx] = -1
        for arr_i in (self.worked, self.turns, self.cost, self.asks, self.denials,
                      self.wait_streak, self.tokens, self.llm_cost):
            arr_i[idx] = 0
        self.plan_tick[idx] = NEVER
        self.plan_call[idx] = 0
        self.rushed[idx] = False
        self.approved[idx] = False
        self.approved_form[idx] = -1
        self.started[idx] = tick
