"""What one process hosts, the same in both backends: an agent group with its ledger shard,
its SecOps interceptor and every department's router. Hosts exchange plain arrays,
so the local backend calls them directly and the Ray backend passes them between actors as
object refs, without the driver touching the bytes.

The exchange between tick t and t+1 is a set of named channels (sim/channels.py): each
host's messages split by destination group, each group's loads and each group's spend. A
group merges its inbox parts itself.

Departments are routed inside the groups rather than in processes of their own: routing a
tick's arrivals is a few milliseconds of numpy, less than what a Ray call per department and
tick costs on a small machine, and it keeps routing parallel across the groups. Every group
steps the tick's arrivals as drawn from the seed (by itself, or on the shm pipeline by one
group for all); the driver only says which group routes each
department (routing is stateless, so any group can: sim/placement.py). The driver's per-tick
work is then a few hundred bytes, and it takes no core from the groups.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np

from synthorg.actions.executors import (
    LLM,
    ApprovalDesk,
    Decide,
    Executor,
    ExecutorContext,
    build_executor,
)
from synthorg.actions.runner import ActionRunner
from synthorg.config.models import CompanyConfig
from synthorg.domain.records import (
    EVENT_DTYPE,
    MESSAGE_DTYPE,
    RESULT_DTYPE,
    join,
    take,
)
from synthorg.engine.group import AgentGroup
from synthorg.engine.memory_desk import Recall
from synthorg.errors import MisuseError
from synthorg.hr.feed import FeedBuffer
from synthorg.hr.link import HrLink
from synthorg.ledger.ledger import LedgerShard, PartSink, ShardTotals
from synthorg.org.decisions import decisions_of, rows_of
from synthorg.org.directory import OrgDirectory
from synthorg.org.timeline import OrgTimeline
from synthorg.org.workload import WorkloadGenerator, creation_events, shock_events
from synthorg.sim.channels import NO_SKILLS, Received, flatten
from synthorg.sim.claims import CLAIMED, RoutingClaims, claim_order

MASKED_SPLIT_MAX_GROUPS = 3  # up to this many groups, a pass per group beats a sort


def group_starts(bounds: Sequence[tuple[int, int]]) -> np.ndarray:
    """First agent of every group but the first: the cut points for `split_by_group`."""
    return np.array([lo for lo, _ in bounds[1:]], dtype=np.int64)


def split_by_group(msgs: np.ndarray, starts: np.ndarray) -> list[np.ndarray]:
    """Messages per destination group, each part keeping the sender order."""
    if not len(starts):
        return [msgs]
    dest = np.searchsorted(starts, msgs["dst"], side="right")
    if len(starts) + 1 <= MASKED_SPLIT_MAX_GROUPS:
        return [take(msgs, dest == g) for g in range(len(starts) + 1)]
    order = np.argsort(dest, kind="stable")
    cuts = np.searchsorted(dest[order], np.arange(1, len(starts) + 1))
    return np.split(take(msgs, order), cuts)


def merge_inbox(parts: Sequence[np.ndarray]) -> np.ndarray:
    """One group's inbox ordered by (dst, src, seq). When the parts' concatenation is sorted
    by (src, seq) already, a stable sort by destination finishes the job."""
    msgs = join(list(parts), MESSAGE_DTYPE)
    src, seq = msgs["src"], msgs["seq"]
    if np.all((src[1:] > src[:-1]) | ((src[1:] == src[:-1]) & (seq[1:] > seq[:-1]))):
        return take(msgs, np.argsort(msgs["dst"], kind="stable"))
    return take(msgs, np.lexsort((seq, src, msgs["dst"])))


def shard_name(group: int) -> str:
    return f"g{group:05d}"


class StepTiming(NamedTuple):
    seconds: float  # wall time of the whole step
    routing: np.ndarray  # of which, routing each department's arrivals (0: none here)
    routed: np.ndarray  # tasks routed per department


class GroupHost:
    """An agent group with what travels with it: a ledger shard, a SecOps interceptor (the
    rule engine, in-process: a round trip mid-step would stall every agent of the group),
    the workload (every host steps the same arrivals), every department's router (it routes
    the departments it is assigned) and its running view of department spend."""

    def __init__(self, config: CompanyConfig, directory: OrgDirectory, key: np.uint64,
                 seed: int, bounds: Sequence[tuple[int, int]], index: int, sink: PartSink,
                 decide_approvals: Decide, background_flush: bool = False,
                 claims: RoutingClaims | None = None,
                 context: ExecutorContext | None = None, recall: Recall | None = None,
                 hr: HrLink | None = None) -> None:
        """decide_approvals: the SecOps office's `decide` (or a call to the `secops` actor's)."""
        lo, hi = bounds[index]
        self.index = index
        self.config = config
        self.key = key
        self.timeline = OrgTimeline(config, directory)
        self.group = AgentGroup(config, directory, key, lo, hi)
        if recall is not None:  # the run's memory service (config `memory`)
            self.group.attach_memory(recall)
        self.workload = WorkloadGenerator(config.workload, directory, seed)
        self.next_task = 0  # the id of the next arriving task (the same in every host)
        self.tick = -1  # the last tick stepped
        self.ledger = LedgerShard(shard_name(index), sink, background=background_flush)
        context = context or ExecutorContext(config, f"g{index}")
        executors: dict[int, Executor] = {
            i: (_llm_executor(config, context) if name == LLM
                else build_executor(config.executors[name], key, context))
            for i, name in enumerate(directory.executor_ids[:-1])}
        executors[len(executors)] = ApprovalDesk(decide_approvals)
        self.actions = ActionRunner(executors)
        self.dept_spent = np.zeros(len(directory.dept_ids), dtype=np.int64)
        self.period_base = self.dept_spent.copy()  # spent before the budget period began
        self._starts = group_starts(bounds)
        self._claims = claims  # where departments marked CLAIMED are handed out
        none = np.zeros(len(directory.dept_ids))
        self.timing = StepTiming(0.0, none, none.astype(np.int64))  # the last step's, for placement
        self._ahead: tuple[int, np.ndarray] | None = None  # a tick's arrivals, drawn early
        self._unrecorded: tuple | None = None  # the last step's ledger rows, until `record`
        # HR reviews (config `hr`): this group's rows since the last one, and where they go
        self.hr = hr if config.hr.enabled else None
        self.feed = FeedBuffer()

    def step(self, tick: int, route: np.ndarray, got: Received,
             defer_record: bool = False, draw_next: bool = False) -> list[np.ndarray]:
        """Take up the org version of the tick (if it changes), wait for the actions due,
        draw the tick's arrivals, step the agents, then route the arrivals of the departments
        `route` (the group per department, or CLAIMED) gives this host, both on the loads as
        of the end of the last tick, issue the actions the step asked for, and record it all
        in the ledger shard (with `defer_record`, at `record`). `got`: what this group
        received on each channel. With `draw_next`, the next tick's arrivals are drawn too
        (`drawn_ahead` has them), before routing: with claims, the other hosts then route
        more while this one draws. Returns this group's output, flat (sim/channels.py)."""
        began = time.perf_counter()
        ahead, self._ahead = self._ahead, None
        arrivals = (ahead[1] if ahead is not None and ahead[0] == tick
                    else self._draw(tick))
        self.next_task += len(arrivals)
        last_spend = np.zeros_like(self.dept_spent)  # every group's, in the last tick
        for s in got["spend"]:
            last_spend += s
        self.dept_spent += last_spend
        if self.config.policies.budget.period_starts(tick):  # its spend starts at 0
            self.period_base = self.dept_spent.copy()
        all_loads = np.concatenate(got["loads"])
        if self.hr is not None:
            self._review(tick, all_loads)
        changes = self.timeline.advance(tick, self._current_skills(got["skills"]))
        org = None
        if changes is not None:  # a new org version from this tick on
            org = (self.timeline.directory, changes)
        landed = self.actions.due(tick)  # waits for the outcomes due now
        spending = (self.dept_spent - self.period_base, last_spend)  # in this budget period
        out = self.group.step(tick, merge_inbox(got["messages"]), all_loads, spending,
                              landed, self.timeline.tools_down(tick), org)
        self.actions.issue(out.issued, out.call_arguments)
        self.actions.release(out.results["task"])
        if draw_next:
            self.draw_ahead(tick + 1)
        # routing last: with claims, the group that is done with its agents first takes more
        routers = self.group.routers
        counts = np.bincount(arrivals["dept"], minlength=len(routers))
        routing = np.zeros(len(routers))
        routes = {}  # department -> (messages, events, failed results)
        for k in self._departments_to_route(tick, route, counts):
            t0 = time.perf_counter()
            routes[k] = routers[k].route(tick, take(arrivals, arrivals["dept"] == k), all_loads)
            routing[k] = time.perf_counter() - t0
        # descending department index: their sender ids (-1 - dept) ascend, ahead of agents'
        done = [routes[k] for k in sorted(routes, reverse=True)]
        mine = np.zeros(len(routers), dtype=bool)  # a table: np.isin costs ~50 µs
        mine[list(routes)] = True
        here = mine[arrivals["dept"]]
        self.tick = tick
        self._unrecorded = (tick, arrivals, here, [r[1] for r in done], [r[2] for r in done], out)
        if not defer_record:
            self.record()
        parts = split_by_group(join([*(r[0] for r in done), out.messages], MESSAGE_DTYPE),
                               self._starts)
        routed = np.zeros_like(counts)
        routed[mine] = counts[mine]
        self.timing = StepTiming(time.perf_counter() - began, routing, routed)
        # before the org changes, every group hands on its agents' current skill levels
        skills = (self.group.a.skills.ravel().copy() if self.timeline.changes_due(tick + 1)
                  else NO_SKILLS)
        return flatten({"messages": parts, "loads": out.loads, "spend": out.spend,
                        "skills": skills}, len(self._starts) + 1)

    def _review(self, tick: int, loads: np.ndarray) -> None:
        """Hand HR this group's rows at a review tick; take up a review's decisions at the
        tick they take effect (HR may still be reviewing: this waits for it)."""
        spec = self.config.hr
        if spec.reviews_at(tick):
            self.record()
            first = self.index == 0  # every group sees the same loads and spend
            self.hr.take(tick, self.index, self.feed.take(  # type: ignore[union-attr]
                loads if first else None, self.dept_spent - self.period_base if first else None))
        if spec.reviews_at(tick - spec.decision_lag):
            self.timeline.decide(self.hr.decisions(tick - spec.decision_lag))  # type: ignore[union-attr]

    def _current_skills(self, parts: Sequence[np.ndarray]) -> np.ndarray | None:
        """Every slot's skill levels as the groups handed them on (None if they did not)."""
        if not any(len(p) for p in parts):
            return None
        return np.concatenate(parts).reshape(self.timeline.directory.skills.shape)

    def record(self) -> None:
        """Append the last step's rows to the ledger shard. A group on the shm pipeline does
        it after it has handed its output to the others, while they finish their steps."""
        if self._unrecorded is None:
            return
        tick, arrivals, here, events, failed, out = self._unrecorded
        self._unrecorded = None
        shocks = shock_events(tick, self.timeline.shocks_starting(tick)) if self.index == 0 else None
        all_events = join([creation_events(tick, arrivals, here),
                           *([shocks] if shocks is not None else []), *events, out.events],
                          EVENT_DTYPE)  # SYSTEM_ACTOR and SCENARIO_ACTOR sort first
        results, created = join([*failed, out.results], RESULT_DTYPE), take(arrivals, here)
        if self.hr is not None:
            self.feed.collect(all_events, results, created)
        self.ledger.append(
            all_events, results, created,
            actions=out.delivered, timeseries=out.timeseries, arguments=out.arguments,
            argument_text=out.argument_text)

    def draw_ahead(self, tick: int) -> np.ndarray:
        """Draw the arrivals of `tick`, the next to step, now (and return them): its step
        then uses them, and other hosts can be handed them (`expect_arrivals`)."""
        arrivals = self._draw(tick)
        self._ahead = (tick, arrivals)
        return arrivals

    def _draw(self, tick: int) -> np.ndarray:
        return self.workload.arrivals(tick, self.next_task, self.timeline.rate_factors(tick))

    def drawn_ahead(self, tick: int) -> np.ndarray:
        """The arrivals of `tick` that `draw_ahead` (or a step with `draw_next`) drew."""
        if self._ahead is None or self._ahead[0] != tick:
            raise RuntimeError(f"the arrivals of tick {tick} were not drawn ahead")
        return self._ahead[1]

    def expect_arrivals(self, tick: int, arrivals: np.ndarray) -> None:
        """The arrivals of `tick`, the next to step, as another host drew them (every host
        draws the same), so this one need not draw them again."""
        self._ahead = (tick, arrivals)

    def _departments_to_route(self, tick: int, route: np.ndarray, counts: np.ndarray
                              ) -> Iterator[int]:
        yield from np.flatnonzero((route == self.index) & (counts > 0)).tolist()
        line = claim_order(np.where(route == CLAIMED, counts, 0))
        if not line:
            return
        if self._claims is None:
            raise RuntimeError("departments marked CLAIMED but this host has no claims file")
        while (place := self._claims.take(tick)) < len(line):
            yield line[place]

    def totals(self) -> ShardTotals:
        self.record()
        return self.ledger.totals()

    def state_dict(self) -> dict[str, object]:
        """Everything to continue from here (waits for the actions in flight: their outcomes
        are part of the state)."""
        self.record()
        return {"group": self.group.state_dict(), "ledger": self.ledger.state(),
                "dept_spent": self.dept_spent.copy(), "period_base": self.period_base.copy(),
                "next_task": self.next_task,
                "tick": self.tick, "org": self.timeline.directory.digest(),
                "org_skills": self.timeline.directory.skills,
                "org_decisions": rows_of(self.timeline.decisions), "hr_feed": self.feed.state(),
                "actions": self.actions.state()}

    def load_state(self, state: dict[str, object]) -> None:
        self.group.load_state(state["group"])  # type: ignore[arg-type]
        self.ledger.restore(state["ledger"])  # type: ignore[arg-type]
        self.dept_spent = np.array(state["dept_spent"], dtype=np.int64)
        self.period_base = np.array(state["period_base"], dtype=np.int64)
        self.next_task = int(state["next_task"])  # type: ignore[call-overload]
        self.tick = int(state["tick"])  # type: ignore[call-overload]
        # the org as of that tick, from the config's scenario
        self.timeline = OrgTimeline(self.config, OrgDirectory.from_config(self.config),
                                    decisions_of(state["org_decisions"]))
        self.timeline.advance(self.tick)
        self.feed.load(state["hr_feed"])  # type: ignore[arg-type]
        self.timeline.directory = self.timeline.directory.with_skills(
            np.asarray(state["org_skills"]))
        if self.timeline.directory.digest() != state["org"]:
            raise MisuseError(f"the checkpoint's org chart at tick {self.tick} is not the one "
                              "this config's scenario and the run's HR decisions give (a fork "
                              "may change the scenario only after its fork tick)")
        self.group.use(self.timeline.directory)
        self.actions.restore(np.asarray(state["actions"]))
        self._ahead = None
        self._unrecorded = None  # rows of a step after the state restored: not this run's

    def close(self) -> None:
        self.actions.close()


def _llm_executor(config: CompanyConfig, context: ExecutorContext) -> Executor:
    from synthorg.llm.executor import LlmExecutor  # the openai SDK only where a model is used

    return LlmExecutor(config.llm, context)
