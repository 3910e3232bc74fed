"""Closed vocabularies of the simulation. Integer values are stable: they are stored in
columnar records and therefore in the ledger hash.

Hot code compares arrays with a member's `.value`: numpy takes an IntEnum member (an int
subclass) for a strongly typed int64, casts the int8 array to compare, and looks the type up
on the way; each such call costs several microseconds where a plain int costs one."""

from __future__ import annotations

from enum import IntEnum


class Seniority(IntEnum):
    junior = 0
    mid = 1
    senior = 2
    lead = 3
    executive = 4


class Autonomy(IntEnum):
    """How much an agent may do without a human: the highest risk tier it may run alone."""

    supervised = 0
    assisted = 1
    autonomous = 2
    full = 3


class RiskTier(IntEnum):
    low = 0
    medium = 1
    high = 2
    critical = 3


class Priority(IntEnum):
    low = 0
    normal = 1
    high = 2
    critical = 3


class DecisionType(IntEnum):
    """Outcome of the confidence thresholds (seed 004)."""

    act = 0
    investigate = 1
    wait = 2
    escalate = 3


class ActionKind(IntEnum):
    """What the planner may return."""

    none = 0
    call_tool = 1
    send_message = 2
    transition = 3
    ask_human = 4
    finish = 5
    fail = 6


class WorkState(IntEnum):
    """An agent's situation between ticks."""

    idle = 0
    working = 1
    waiting_help = 2
    blocked = 3
    waiting_action = 4  # a tool call runs as an action; its result arrives at a fixed tick


class TaskStatus(IntEnum):
    created = 0
    routed = 1
    queued = 2
    active = 3
    completed = 4
    failed = 5


class MessageKind(IntEnum):
    assign = 0  # department -> agent, carries a task
    delegate = 1  # lead -> report, carries a task
    ask = 2  # agent -> colleague, help request
    reply = 3  # colleague -> agent, help given
    report = 4  # agent -> department head, task finished
    handoff = 5  # agent -> head, task returned after a rejected escalation
    bounce = 6  # a help request to an agent who is away or gone: no help comes


TASK_CARRYING = (MessageKind.assign, MessageKind.delegate, MessageKind.handoff)


class Verdict(IntEnum):
    allow = 0
    deny = 1
    escalate = 2


class FailReason(IntEnum):
    none = 0
    unroutable = 1
    deadline = 2
    expired = 3
    denied = 4
    rejected = 5
    budget = 6


class BudgetRule(IntEnum):
    """Which budget refused a planned call (the `rule` of a budget_blocked event)."""

    allowed = 0
    department_budget = 1
    agent_budget = 2


class EventKind(IntEnum):
    task_created = 0
    task_routed = 1
    task_started = 2
    tool_call = 3
    tool_denied = 4
    tool_escalated = 5
    message_sent = 6
    help_given = 7
    goal_revised = 8
    waited = 9
    escalated = 10
    approval_granted = 11
    approval_rejected = 12
    budget_blocked = 13
    task_completed = 14
    task_failed = 15
    incident = 16
    action_done = 17  # an action's result arrived: target = tool, value = outcome value
    action_failed = 18  # target = ActionStatus (failed, timed out)
    tool_failed = 19  # the tool is down (an outage): target = tool
    agent_joined = 20  # target = department
    agent_left = 21  # fired: target = department
    agent_moved = 22  # target = the new department
    agent_promoted = 23  # target = the new seniority
    autonomy_changed = 24  # target = the new autonomy
    agent_away = 25  # value = ticks away
    agent_back = 26
    task_returned = 27  # a leaver's or an absent agent's task routed anew: target = new agent
    shock = 28  # scenario actor: a demand spike or an outage starts; target = its index
    help_declined = 29  # the helper's capacity this tick was used up: target = the asker
    budget_alert = 30  # department actor: value = the budget share crossed (1.0: it halts)
    threat = 31  # ground truth: a harmful call attempted; target = threat kind, value = form
    security_incident = 32  # a harmful call ran: target = threat kind, value = form, amount = cost
    approval_timed_out = 33  # nobody answered in time: target = the default outcome (1 granted)
    autonomy_lowered = 34  # automatic: target = the autonomy now held, value = LowerCause
    autonomy_restored = 35  # an approval gave a level back: target = the autonomy now held
    autonomy_kept_low = 36  # the approval asked for a level back was refused
    memory_written = 37  # target = the memory's category, value = the quality it recalls
    memory_searched = 38  # the agent took up a task: target = memories found, value = the
    # competence their experience added
    agent_demoted = 39  # target = the new seniority, value = HrReason
    promotion_refused = 40  # the approver said no: target = the level asked, value = HrReason
    model_tier_changed = 41  # at a task boundary: target = ModelTier
    routing_changed = 42  # department actor: target = the routing now used (RoutingKind)
    llm_call = 43  # a deliberation answered: target = ModelTier, value = tokens, amount = cost
    llm_failed = 44  # none usable: target = LlmFailReason, value = tokens, amount; fails closed
    llm_budget_exhausted = 45  # no deliberation (BudgetRule in target): the agent goes on by
    # the deterministic strategies until the budget period turns
    llm_downgraded = 46  # asked on a cheaper tier: target = ModelTier used, value = its own


class HrReason(IntEnum):
    """Why the org changed (the `value` of org-change events; events.parquet: hr_reason)."""

    scenario = 0  # the config's scenario
    criteria_met = 1  # promotion: N of M criteria over the review windows
    criteria_missed = 2  # demotion: too few criteria met, reviews running
    under_performing = 3  # fired: quality under the floor, reviews running
    queue_pressure = 4  # hired: the department's load stayed high, its budget allowed
    load_balance = 5  # reassigned: from a department much less loaded per member
    approver_refused = 6  # promotion: the approver said no
    seniority_tier = 7  # the model tier follows the seniority
    load_high = 8  # routing: load-balanced while the department's load stays high
    load_eased = 9
    approval_timed_out = 10  # promotion: nobody decided in time (policies.approvals.on_timeout)


class ModelTier(IntEnum):
    small = 0
    medium = 1
    large = 2


class LlmFailReason(IntEnum):
    """Why a deliberation gave no decision (the step failed closed)."""

    provider = 1  # every provider attempt failed, or the request was refused
    invalid_reply = 2  # not JSON of the schema, after the retries
    timed_out = 3


class RoutingKind(IntEnum):
    role_based = 0
    load_balanced = 1


class LowerCause(IntEnum):
    """Why an agent's autonomy was lowered (the value of an autonomy_lowered event)."""

    denials = 0
    incident = 1
    budget = 2


class ActionStatus(IntEnum):
    """Where an action is in its lifecycle (issued, then one of the outcomes)."""

    issued = 0
    succeeded = 1
    failed = 2
    timed_out = 3
