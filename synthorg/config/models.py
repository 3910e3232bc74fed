"""The company config. Frozen, `extra="forbid"`: a typo is an error, never ignored."""

from __future__ import annotations

import string
from collections import Counter
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from synthorg.config.base import (
    AutonomyName,
    Frozen,
    HardRuleFamily,
    Identifier,
    Level,
    PriorityName,
    Probability,
    RiskName,
    RoutingName,
    SeniorityName,
    Span,
)
from synthorg.config.hr import HrSpec
from synthorg.config.limits import limit, over
from synthorg.config.llm import LlmSpec
from synthorg.config.scenario import Hire, ScenarioEvent, scenario_problems


class CompanySpec(Frozen):
    name: str = Field(min_length=1)
    budget_usd: float = Field(default=1_000_000.0, gt=0)
    autonomy: AutonomyName = "assisted"


class DepartmentSpec(Frozen):
    id: Identifier
    head: Identifier | None = Field(default=None, description="agent id of the department head")
    budget_share: float = Field(default=0.25, gt=0.0, le=1.0)
    routing: RoutingName = "load_balanced"
    autonomy: AutonomyName | None = None


class RoleSpec(Frozen):
    id: Identifier
    task_types: tuple[Identifier, ...] = Field(description="task types this role can work on")
    tools: tuple[Identifier, ...] = ()
    skills: dict[Identifier, Level] = Field(default_factory=dict)
    goal: str = Field(default="", max_length=2000, description=(
        "what agents of this role aim at: LLM mode tells the model"))


class AgentSpec(Frozen):
    """One agent, or `count` alike agents named `<id>-0001`, `<id>-0002`, ..."""

    id: Identifier
    role: Identifier
    department: Identifier
    seniority: SeniorityName | list[SeniorityName] = Field(
        default="mid", description="one level, or a list cycled over the `count` agents"
    )
    skills: dict[Identifier, Level] = Field(default_factory=dict)
    autonomy: AutonomyName | None = None
    budget_usd: Annotated[float, Field(ge=0)] | None = Field(default=None, description=(
        "each of these agents' own budget for what it spends (tool calls and the model's "
        "deliberations), per budget period; none: `policies.budget.agent_usd`"))
    count: int = Field(default=1, ge=1, le=100_000)

    @field_validator("seniority")
    @classmethod
    def _non_empty(cls, value: object) -> object:
        if isinstance(value, list) and not value:
            raise ValueError("seniority list must not be empty")
        return value

    def expanded_ids(self) -> list[str]:
        if self.count == 1:
            return [self.id]
        return [f"{self.id}-{i:04d}" for i in range(1, self.count + 1)]

    def seniority_of(self, k: int) -> SeniorityName:
        if isinstance(self.seniority, list):
            return self.seniority[k % len(self.seniority)]
        return self.seniority


ARGUMENT_FIELDS = frozenset({"task", "type", "agent", "department", "tick"})
ThreatKind = Literal["exfiltration", "sabotage", "mistake", "injection"]
ArgumentTemplates = dict[Identifier, Annotated[str, Field(max_length=2000)]]


def _check_templates(value: dict[str, str], where: str = "arguments") -> dict[str, str]:
    for name, template in value.items():
        try:
            used = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
        except ValueError as exc:
            raise ValueError(f"{where}.{name}: {exc} (write a literal brace twice: {{{{ }}}})"
                             ) from None
        if used - ARGUMENT_FIELDS:
            raise ValueError(f"{where}.{name}: unknown field(s) {sorted(used - ARGUMENT_FIELDS)}"
                             f" (known: {sorted(ARGUMENT_FIELDS)})")
    return value


class ThreatForm(Frozen):
    """A harmful call a tool can be made to carry (the ground truth SecOps never sees)."""

    kind: ThreatKind = Field(description=(
        "exfiltration or sabotage: an insider's; mistake: anyone's honest error; injection: "
        "what an instruction hidden in a task's content makes an agent do"))
    arguments: ArgumentTemplates
    task: Annotated[str, Field(max_length=2000)] = Field(default="", description=(
        "injection: the text the poisoned task carries (what the agent is told to do)"))
    cost_usd: Annotated[float, Field(ge=0)] | None = Field(default=None, description=(
        "the incident's cost if the call runs; none: workload.threats.incident_cost_usd"))

    @field_validator("arguments")
    @classmethod
    def _known_fields(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_templates(value)


class ToolSpec(Frozen):
    name: Identifier
    description: str = ""
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = True
    cacheable: bool = False
    risk: RiskName = "low"
    action_type: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*:[a-z][a-z0-9_]*$")] | None = Field(
        default=None, description="SecOps's category:action for the tool (e.g. code:shell, "
        "fs:read); none: from its name and annotations")
    cost_usd: float = Field(default=0.0, ge=0.0)
    sandboxed: bool = False
    executor: Identifier | None = Field(
        default=None, description="name of an entry of `executors` that runs this tool's calls "
        "as actions with a lifecycle (their results arrive at a tick the simulation fixes); "
        "none: the call is simulated in-process and takes effect in its tick")
    arguments: ArgumentTemplates = Field(
        default_factory=dict, description="the arguments of the tool's calls, each a "
        "template over {task}, {type}, {agent}, {department}, {tick} (when `forms` is empty)")
    forms: tuple[ArgumentTemplates, ...] = Field(default=(), max_length=256, description=(
        "the ordinary calls of the tool: argument templates, one picked per call by a seeded "
        "draw; empty: `arguments` is the one form"))
    threats: tuple[ThreatForm, ...] = Field(default=(), max_length=256, description=(
        "harmful calls the tool can carry, for workload.threats"))
    input_schema: dict[str, object] = Field(default_factory=dict)
    output_schema: dict[str, object] = Field(default_factory=dict)
    mcp_tool: Identifier | None = Field(default=None, description=(
        "the MCP tool a sandbox executor calls for this tool (none: its own name)"))
    checked: bool = Field(default=False, description=(
        "its work is a program whose answer is checked: the first form is the correct "
        "program, the others faulty variants; an agent writes the correct one with the "
        "probability of its competence, and the answer is compared with the first form's "
        "on the same task (forms may use {task} only)"))

    @field_validator("arguments")
    @classmethod
    def _known_fields(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_templates(value)

    @field_validator("forms")
    @classmethod
    def _known_form_fields(cls, value: tuple[dict[str, str], ...]) -> tuple[dict[str, str], ...]:
        for i, form in enumerate(value):
            _check_templates(form, f"forms[{i}]")
        return value

    def ordinary_forms(self) -> tuple[dict[str, str], ...]:
        return self.forms or (self.arguments,)

    @model_validator(mode="after")
    def _checked_forms(self) -> ToolSpec:
        if not self.checked:
            return self
        if len(self.forms) < 2:
            raise ValueError("checked: needs `forms`, the correct program first, then at "
                             "least one faulty variant")
        for i, form in enumerate(self.forms):
            for name, template in form.items():
                used = {f for _, f, _, _ in string.Formatter().parse(template) if f}
                if used - {"task"}:
                    raise ValueError(f"forms[{i}].{name}: a checked tool's forms may use "
                                     f"{{task}} only, not {sorted(used - {'task'})}")
        return self


class TaskTypeSpec(Frozen):
    name: Identifier
    department: Identifier
    skill: Identifier
    tool: Identifier
    rate: float = Field(ge=0.0, le=100_000.0, description="mean arrivals per tick (Poisson)")
    difficulty: Span = Span(low=0.2, high=0.6)
    effort: Span = Field(default=Span(low=2.0, high=6.0), description="work units")
    deadline_ticks: Span = Span(low=8, high=24)
    priority: dict[PriorityName, Annotated[float, Field(ge=0)]] = Field(
        default_factory=lambda: {"low": 1.0, "normal": 3.0, "high": 1.0}  # type: ignore[arg-type]
    )

    @model_validator(mode="after")
    def _ranges(self) -> TaskTypeSpec:
        if not (self.difficulty.low >= 0.0 and self.difficulty.high <= 1.0):
            raise ValueError("difficulty must lie within [0, 1]")
        if self.effort.low <= 0:
            raise ValueError("effort must be positive")
        if self.deadline_ticks.low < 1:
            raise ValueError("deadline_ticks must be at least 1")
        if sum(self.priority.values()) <= 0:
            raise ValueError("priority weights must not all be zero")
        return self


AUTONOMY_CAP: dict[SeniorityName, AutonomyName] = {"junior": "autonomous"}
FOLLOW_PROBABILITY: dict[SeniorityName, float] = {"junior": 0.5, "mid": 0.3, "senior": 0.15,
                                                  "lead": 0.08, "executive": 0.05}
INCIDENT_COST_USD: dict[ThreatKind, float] = {"exfiltration": 50_000.0, "sabotage": 20_000.0,
                                             "mistake": 5_000.0, "injection": 20_000.0}


class ThreatsSpec(Frozen):
    """Attacks and mistakes in the workload, seeded. Harmful calls use the `threats` forms of
    the tool a call is made with; a tool without a form of the kind drawn makes its ordinary
    call instead."""

    injection_rate: Probability = Field(default=0.0, description=(
        "share of tasks whose content carries an injected instruction"))
    follow_probability: dict[SeniorityName, Probability] = Field(
        default_factory=lambda: dict(FOLLOW_PROBABILITY),
        description="chance per call that an agent on a poisoned task follows the injected "
        "instruction (the less senior, the less vigilant)")
    insiders: tuple[Identifier, ...] = Field(default=(), description=(
        "agent ids of compromised or malicious insiders"))
    insider_share: Probability = Field(default=0.0, description=(
        "share of agents drawn (seeded) as insiders, on top of `insiders`"))
    insider_attempt_probability: Probability = Field(default=0.1, description=(
        "chance per call that an insider attempts exfiltration or sabotage"))
    mistake_probability: Probability = Field(default=0.0, description=(
        "chance per call of an honest mistake (a destructive command on the wrong path), "
        "for a mid-level agent: doubled for juniors, halved for seniors and above"))
    incident_cost_usd: dict[ThreatKind, Annotated[float, Field(ge=0)]] = Field(
        default_factory=lambda: dict(INCIDENT_COST_USD),
        description="what a harmful call that runs costs the company, by kind")

    def active(self) -> bool:
        return bool(self.injection_rate or self.insiders or self.insider_share
                    or self.mistake_probability)


class WorkloadSpec(Frozen):
    task_types: tuple[TaskTypeSpec, ...] = ()
    scale: float = Field(default=1.0, gt=0.0, le=1000.0, description=(
        "multiplies every task type's arrival rate (load studies)"))
    threats: ThreatsSpec = ThreatsSpec()


class ExecutorSpec(Frozen):
    """Runs actions that take wall-clock time. Whatever the wall clock does, an action's result
    is delivered `latency_ticks` after it was issued; a failure or time-out is an outcome."""

    kind: Literal["delay", "sandbox", "mcp"] = Field(description=(
        "delay: a test executor that sleeps a random wall-clock time and succeeds or fails "
        "by a seeded draw; sandbox: the call runs for real, its tool served over MCP in a "
        "hardened Docker container (sandbox/); mcp: the call goes to an external MCP server "
        "of `mcp_servers` (`server`)"))
    server: Identifier | None = Field(default=None, description=(
        "mcp: the name of the entry of `mcp_servers` that serves the calls"))
    max_in_flight: int = Field(default=8, ge=1, le=1024, description="concurrency limit")
    latency_ticks: int = Field(default=1, ge=1, le=10_000)
    timeout_s: float = Field(default=60.0, gt=0.0, le=86_400.0)
    sleep_s: Span = Field(default=Span(low=0.0, high=0.01),
                          description="wall-clock seconds a call sleeps (delay executor)")
    fail_probability: Probability = 0.0
    lifetime: Literal["call", "task", "agent"] = Field(default="task", description=(
        "sandbox: a container (and workspace) per call, per task (a later call of the task "
        "reads what an earlier one wrote) or per agent"))
    memory_mb: int = Field(default=256, ge=16, le=65_536, description="sandbox: per container")
    cpus: float = Field(default=1.0, gt=0.0, le=64.0, description="sandbox: per container")
    pids: int = Field(default=64, ge=8, le=65_536, description="sandbox: per container")
    network: bool = Field(default=False, description="sandbox: the containers may reach a network")
    wrong_quality: Probability = Field(default=0.3, description=(
        "sandbox, checked tools: the quality of a turn whose program gave the wrong answer"))
    pool: int = Field(default=2, ge=0, le=64, description=(
        "sandbox: sessions (container, MCP server, fresh workspace) started ahead, so a "
        "scope's first call does not pay a container start; each costs an idle container"))
    retries: int = Field(default=2, ge=0, le=10, description=(
        "sandbox, mcp: attempts after the outside service itself failed (Docker, the MCP "
        "server), each in a fresh session; still failing, the run rolls back to its last good "
        "state (an incident), since such a failure is never the call's outcome"))

    @model_validator(mode="after")
    def _sleep_range(self) -> ExecutorSpec:
        if self.sleep_s.low < 0 or self.sleep_s.high > 60:
            raise ValueError("sleep_s must lie within [0, 60] seconds")
        return self


class McpServerSpec(Frozen):
    """An external MCP server, started as a stdio command for the run."""

    command: tuple[Annotated[str, Field(min_length=1, max_length=4096)], ...] = Field(
        min_length=1, max_length=256, description="program and arguments")
    env: dict[str, str] = Field(default_factory=dict, description="added to its environment")
    timeout_s: float = Field(default=30.0, gt=0.0, le=3600.0, description="start and per call")


class DecisionPolicy(Frozen):
    act_threshold: Probability = 0.70
    critical_act_threshold: Probability = 0.85
    investigate_threshold: Probability = 0.50
    wait_threshold: Probability = 0.30

    @model_validator(mode="after")
    def _ordered(self) -> DecisionPolicy:
        if not (
            self.wait_threshold <= self.investigate_threshold <= self.act_threshold
            <= self.critical_act_threshold
        ):
            raise ValueError(
                "thresholds must satisfy wait <= investigate <= act <= critical_act"
            )
        return self


class CollaborationPolicy(Frozen):
    max_help_requests_per_task: int = Field(default=1, ge=0)
    help_bonus: float = Field(default=0.15, ge=0.0, le=1.0)
    help_capacity: int = Field(default=1, ge=0, le=1000, description=(
        "help requests a colleague answers per tick (each costs that tick's own work); the "
        "rest bounce: a helper's time is finite"))
    help_cost: float = Field(default=0.5, ge=0.0, le=1.0, description=(
        "share of a tick's work one answer costs the helper"))
    ask_cost: float = Field(default=0.25, ge=0.0, le=1.0, description=(
        "share of a tick's work asking costs an asker who does not wait"))
    heads_help: bool = Field(default=False, description=(
        "department heads are among the colleagues asked for help (false: they lead, and "
        "are asked only where nobody else is there)"))
    asker_waits: bool = Field(default=False, description=(
        "the asker stops until the answer comes (true) or works on with what it knows, "
        "the answer lifting its competence when it arrives (false)"))
    delegate_max_difficulty: Probability = 0.45
    delegate_queue_threshold: int = Field(default=2, ge=0)


class ApprovalPolicy(Frozen):
    mode: Literal["seeded", "human", "llm"] = Field(default="seeded", description=(
        "who decides: the seeded approver (simulations), a person with `synthorg "
        "approvals approve|deny RUN_DIR CALL` while the run waits at the decision's tick, or "
        "the model as SecOps's reviewer (llm: needs llm.enabled; fails closed)"))
    delay_ticks: int = Field(default=2, ge=0, description=(
        "ticks from a request to its decision reaching the agent"))
    approve_probability: Probability = 0.8
    catch_probability: Probability = Field(default=0.9, description=(
        "chance the approver recognises a harmful call and rejects it"))
    answer_probability: Probability = Field(default=1.0, description=(
        "seeded approver: chance it answers a request before it times out"))
    timeout_seconds: float = Field(default=3600.0, gt=0.0, le=7 * 86400.0, description=(
        "human mode: how long the run waits, at the decision's tick, for a person"))
    on_timeout: Literal["reject", "grant"] = Field(default="reject", description=(
        "the outcome of a request nobody answered in time"))
    guidance_bonus: float = Field(default=0.3, ge=0.0, le=1.0)
    on_reject: Literal["fail", "head"] = Field(default="fail", description=(
        "a rejected request ends the task (fail: reason `rejected`) or hands it to the "
        "department head (head), whose queue then carries it"))


class WorkPolicy(Frozen):
    deadline_grace_ticks: int = Field(default=4, ge=0)
    max_denials_per_task: int = Field(default=3, ge=1)
    learning_rate: float = Field(default=0.01, ge=0.0, le=1.0)
    rush_slack_ticks: int = Field(default=2, ge=0, description="revise goal to rush when slack is below")
    load_penalty: float = Field(default=0.0, ge=0.0, le=1.0, description=(
        "thrashing: confidence lost per queued task (up to 10). 0: queueing only, load "
        "lengthens waits but a tick of work is as good at any load"))


class BudgetPolicy(Frozen):
    enforce: bool = Field(default=True, description=(
        "budgets bind: a department whose remaining budget cannot cover one more tick (its "
        "payroll and the most its agents' tool calls can cost) halts; its agents are not "
        "paid and its tasks fail with reason `budget`. false: budgets are only watched"))
    period_ticks: int | None = Field(default=None, ge=1, le=10_000_000, description=(
        "budgets are per period of this many ticks (a month, a quarter), each department's "
        "share starting afresh; none: for the whole run"))
    block_tools_at: Probability = Field(default=0.9, description=(
        "share of a department's budget from which its tool calls are refused "
        "(budget_blocked), with `loop.constraints: budget`"))
    agent_usd: Annotated[float, Field(ge=0)] | None = Field(default=None, description=(
        "every agent's own budget for what it spends (tool calls; the model's deliberations), "
        "per budget period, unless its `agents` entry sets `budget_usd`: a call that would "
        "take the agent past it is refused (budget_blocked, rule agent_budget); none: agents "
        "spend within their department's budget only"))
    alerts: tuple[Probability, ...] = Field(default=(0.75, 0.9), description=(
        "shares of a department's budget whose crossing is recorded (budget_alert events); "
        "a halt is recorded as the alert 1.0"))
    def period_starts(self, tick: int) -> bool:
        """Whether a new budget period (spending afresh) begins at `tick`."""
        return self.period_ticks is not None and tick % self.period_ticks == 0

    salary_usd_per_tick: dict[SeniorityName, Annotated[float, Field(ge=0)]] = Field(
        default_factory=lambda: {  # type: ignore[arg-type]
            "junior": 40.0, "mid": 60.0, "senior": 85.0, "lead": 110.0, "executive": 150.0,
        }
    )


class DowngradePolicy(Frozen):
    """Autonomy falls by itself and rises only through an approval (no automatic system
    grants privileges): an agent is lowered a level after repeated denials or when its
    budget refuses its calls, to `supervised` after a security incident of its own."""

    after_denials: int | None = Field(default=3, ge=1, le=1000, description=(
        "denied calls within `window_ticks` that lower the agent's autonomy a level "
        "(none: denials never do)"))
    window_ticks: int = Field(default=20, ge=1, le=1_000_000)
    on_incident: bool = Field(default=True, description=(
        "a harmful call of the agent's that ran lowers it to supervised"))
    on_budget: bool = Field(default=True, description=(
        "a call refused by a budget lowers an agent not lowered yet by a level"))
    restore_after_ticks: int | None = Field(default=30, ge=1, le=1_000_000, description=(
        "ticks after its last lowering that a lowered agent asks, through an approval, for a "
        "level back (none: only a config or scenario change raises it)"))


class SecondLookPolicy(Frozen):
    """The second look (synthorg/secops/second_look.py): a model trained on labelled calls
    scores each call 0 (reads like ordinary work) to 1 (reads like the harmful ones)."""

    enabled: bool = True
    escalate_above: Probability = Field(default=0.95, description=(
        "a call no detector flags is asked about when it scores above this (the second "
        "look only adds caution: it never relaxes a detector's verdict)"))


# top-level folders that hold the machine itself, never the company's shared work
_SYSTEM_TOP = frozenset({"etc", "usr", "bin", "sbin", "lib", "lib32", "lib64", "boot", "proc",
                         "sys", "dev", "run", "root", "var", "home"})


class SecurityPolicy(Frozen):
    destructive_requires: AutonomyName = "full"
    downgrade: DowngradePolicy = DowngradePolicy()
    autonomy_cap: dict[SeniorityName, AutonomyName] = Field(
        default_factory=lambda: dict(AUTONOMY_CAP), description=(
            "the highest autonomy an agent of a seniority may hold, whatever its agent, "
            "department or company setting (or a scenario change) asks: a junior cannot "
            "hold `full`"))
    internal_domains: tuple[str, ...] = Field(default=(), description=(
        "the company's own domains: hosts and mail under them are inside (private IP ranges, "
        "localhost and *.internal, *.local, *.corp always are)"))
    risk_tiers: dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*:(?:[a-z][a-z0-9_]*|\*)$")],
                     RiskName] = Field(default_factory=dict, description=(
        "risk tiers by action type, over synthorg/secops/risk_tiers.yaml"))
    beyond_autonomy: Literal["escalate", "deny"] = Field(default="escalate", description=(
        "a call more than one risk tier above the agent's autonomy asks for approval "
        "(escalate) or is refused outright (deny)"))
    second_look: SecondLookPolicy = SecondLookPolicy()
    ask_instead_of_deny: tuple[HardRuleFamily, ...] = Field(default=(), description=(
        "detector families whose hard rules ask a person (escalate) instead of refusing: "
        "a harmful call then waits on an approver who may let it through, a benign one is "
        "delayed rather than lost"))
    shared_folders: tuple[str, ...] = Field(default=(), max_length=64, description=(
        "the company's shared work outside the agents' workspaces (absolute folders: a lab's "
        "data store, a firm's productions share): a read there is ordinary work, a write is "
        "asked for and a bulk delete refused, as in the workspace's shared folders; its "
        "credential files stay refused. Not the machine's own folders (/etc, /usr, /root, ...)"))

    @field_validator("shared_folders")
    @classmethod
    def _folders(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        import posixpath

        out = []
        for folder in v:
            clean = posixpath.normpath(folder) if folder.startswith("/") else ""
            if not clean or ".." in folder.split("/") or len(folder) > 300:
                raise ValueError(f"{folder!r}: an absolute folder without .. (at most 300 "
                                 "characters)")
            if clean == "/" or clean.split("/")[1] in _SYSTEM_TOP:
                raise ValueError(f"{folder!r}: the machine's own folders cannot be shared")
            out.append(clean)
        return tuple(out)


class Policies(Frozen):
    decision: DecisionPolicy = DecisionPolicy()
    collaboration: CollaborationPolicy = CollaborationPolicy()
    approvals: ApprovalPolicy = ApprovalPolicy()
    work: WorkPolicy = WorkPolicy()
    budget: BudgetPolicy = BudgetPolicy()
    security: SecurityPolicy = SecurityPolicy()


class MemorySpec(Frozen):
    """Long-term memory (synthorg/memory): what agents remember of their work and of who
    helped them, retrieved when they take up a task, and what it does to their work."""

    enabled: bool = False
    backend: Literal["mem0", "inprocess"] = Field(default="mem0", description=(
        "mem0: Mem0 over embedded Qdrant under the run directory (the store users deploy); "
        "inprocess: numpy arrays, for very large runs and tests of other parts"))
    embedder: Literal["minilm", "hashing"] = Field(default="minilm", description=(
        "minilm: all-MiniLM-L6-v2 from local files; hashing: feature hashing, no model"))
    shards: int = Field(default=1, ge=1, le=64, description=(
        "memory actors (ray backend), agents spread over them; each holds the organisation's "
        "memory too"))
    top_k: int = Field(default=5, ge=1, le=50, description="memories retrieved per new task")
    min_score: Probability | None = Field(default=None, description=(
        "similarity below which a retrieved memory does not count as relevant experience "
        "(default: 0.45 with minilm, 0.2 with hashing, whose scores run lower)"))
    experience_gain: float = Field(default=0.06, ge=0.0, le=1.0, description=(
        "competence each relevant memory adds, weighted by its relevance and what it is "
        "worth (quality of the work it recalls; 1 for a lesson)"))
    max_bonus: float = Field(default=0.2, ge=0.0, le=1.0, description=(
        "the most competence remembered experience can add on one task"))
    lesson_quality: Probability = Field(default=0.7, description=(
        "a task completed at this quality or better also leaves a lesson (procedural)"))
    org_quality: Probability = Field(default=0.8, description=(
        "... and, from an agent allowed to write it, organisation memory (semantic)"))
    org_writers: SeniorityName = Field(default="lead", description=(
        "the least seniority that writes organisation memory"))

    @property
    def relevance_floor(self) -> float:
        if self.min_score is not None:
            return self.min_score
        return 0.45 if self.embedder == "minilm" else 0.2


class LoopSpec(Frozen):
    """Which implementation of each strategy of the teleological loop the agents use."""

    evaluator: Literal["seeded"] = "seeded"
    reviser: Literal["deadline"] = "deadline"
    planner: Literal["threshold"] = "threshold"
    constraints: Literal["budget", "none"] = "budget"


class RuntimeSpec(Frozen):
    backend: Literal["ray", "local"] = "ray"
    workers: int | Literal["auto"] = Field(
        default="auto", description="CPUs the run's group actors use (and the most groups "
        "`auto` makes); auto = this machine's CPUs, not the whole cluster's")
    agents_per_actor: int | Literal["auto"] = Field(
        default="auto", description="agents hosted by one group actor (takes precedence over "
        "workers; at most MAX_GROUPS groups); auto = spread over the workers"
    )
    checkpoint_every: int = Field(default=0, ge=0, description="ticks between checkpoints; 0 = off")
    pipeline: Literal["auto", "shm", "graph", "tasks"] = Field(
        default="auto", description="how ticks travel between Ray group actors: shared memory "
        "(groups on one machine), a compiled graph (a few groups, any nodes), actor calls (any "
        "number), or auto (shm on one machine; across nodes the graph when there are no more "
        "groups than CPUs, at most 8)")

    @field_validator("agents_per_actor", "workers")
    @classmethod
    def _positive(cls, value: int | str, info: ValidationInfo) -> int | str:
        if isinstance(value, int) and not 1 <= value <= 100_000:
            raise ValueError(f"{info.field_name} must be between 1 and 100000, or 'auto'")
        return value


class SimulationSpec(Frozen):
    ticks: int = Field(default=100, ge=1, le=10_000_000)
    seed: int = Field(default=0, ge=0, le=2**63 - 1)


class CompanyConfig(Frozen):
    company: CompanySpec
    tool_catalogs: tuple[Literal["standard"], ...] = Field(default=(), description=(
        "tool catalogs (templates/tools/NAME.yaml) whose tools the company has; an entry of "
        "`tools` with a catalog tool's name overrides that tool's fields"))
    departments: tuple[DepartmentSpec, ...] = Field(min_length=1)
    roles: tuple[RoleSpec, ...] = Field(min_length=1)
    agents: tuple[AgentSpec, ...] = Field(min_length=1)
    tools: tuple[ToolSpec, ...] = ()
    workload: WorkloadSpec = WorkloadSpec()
    executors: dict[Identifier, ExecutorSpec] = Field(default_factory=dict)
    mcp_servers: dict[Identifier, McpServerSpec] = Field(default_factory=dict, description=(
        "external MCP servers (git, databases, internal APIs) an executor of kind mcp calls; "
        "their tools join the catalog as entries of `tools` and pass SecOps like any other"))
    policies: Policies = Policies()
    loop: LoopSpec = LoopSpec()
    memory: MemorySpec = MemorySpec()
    hr: HrSpec = HrSpec()
    llm: LlmSpec = LlmSpec()
    scenario: tuple[ScenarioEvent, ...] = Field(
        default=(), max_length=10_000, description="org changes and shocks at given ticks")
    runtime: RuntimeSpec = RuntimeSpec()
    simulation: SimulationSpec = SimulationSpec()

    @model_validator(mode="before")
    @classmethod
    def _catalog_tools(cls, raw: object) -> object:
        if not isinstance(raw, dict) or not raw.get("tool_catalogs"):
            return raw
        from synthorg.config.catalogs import with_catalog_tools
        return with_catalog_tools(raw)

    @model_validator(mode="after")
    def _references(self) -> CompanyConfig:
        problems = reference_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def agent_count(self) -> int:
        """Agents at the start (hires of the scenario come on top)."""
        return sum(a.count for a in self.agents)

    def slot_count(self) -> int:
        """Agent slots over the whole run: the starting agents, every scenario hire and the
    slots kept for HR's hires."""
        return (self.agent_count() + sum(e.count for e in self.scenario if isinstance(e, Hire))
                + self.hr.reserved_slots())


def _duplicates(names: list[str]) -> list[str]:
    return sorted(n for n, c in Counter(names).items() if c > 1)


def reference_problems(cfg: CompanyConfig) -> list[str]:
    """Dangling or duplicate references, each naming the field that holds it."""
    slots = cfg.slot_count()
    if slots > limit("SYNTHORG_MAX_AGENTS"):  # before any agent id is spelled out
        return ["agents: " + over("agents (counts summed, scenario hires included)", slots,
                                  "SYNTHORG_MAX_AGENTS")]
    arrivals = int(sum(t.rate for t in cfg.workload.task_types) * cfg.workload.scale)
    if arrivals > limit("SYNTHORG_MAX_ARRIVALS"):  # each tick's tasks are built in memory
        return ["workload: " + over("mean task arrivals per tick (rates summed, times scale)",
                                    arrivals, "SYNTHORG_MAX_ARRIVALS")]
    problems: list[str] = []
    depts = {d.id for d in cfg.departments}
    roles = {r.id: r for r in cfg.roles}
    tools = {t.name for t in cfg.tools}
    task_types = {t.name for t in cfg.workload.task_types}
    for kind, names in (
        ("departments", [d.id for d in cfg.departments]),
        ("roles", list(roles)),
        ("tools", [t.name for t in cfg.tools]),
        ("workload.task_types", [t.name for t in cfg.workload.task_types]),
    ):
        for dup in _duplicates(names):
            problems.append(f"{kind}: duplicate id '{dup}'")
    agent_ids: list[str] = []
    agent_dept: dict[str, str] = {}
    for i, a in enumerate(cfg.agents):
        if a.role not in roles:
            problems.append(f"agents[{i}].role: unknown role '{a.role}' (known: {sorted(roles)})")
        if a.department not in depts:
            problems.append(
                f"agents[{i}].department: unknown department '{a.department}' "
                f"(known: {sorted(depts)})"
            )
        for aid in a.expanded_ids():
            agent_ids.append(aid)
            agent_dept[aid] = a.department
    for dup in _duplicates(agent_ids):
        problems.append(f"agents: duplicate agent id '{dup}'")
    for i, r in enumerate(cfg.roles):
        for t in r.tools:
            if t not in tools:
                problems.append(f"roles[{i}].tools: unknown tool '{t}'")
        for tt in r.task_types:
            if tt not in task_types:
                problems.append(f"roles[{i}].task_types: unknown task type '{tt}'")
    for i, d in enumerate(cfg.departments):
        if d.head is not None:
            if d.head not in agent_dept:
                problems.append(f"departments[{i}].head: unknown agent '{d.head}'")
            elif agent_dept[d.head] != d.id:
                problems.append(
                    f"departments[{i}].head: agent '{d.head}' belongs to "
                    f"department '{agent_dept[d.head]}', not '{d.id}'"
                )
    share = sum(d.budget_share for d in cfg.departments)
    if share > 1.0 + 1e-9:
        problems.append(f"departments: budget_share values add up to {share:.3f} > 1")
    if "approvals" in cfg.executors:
        problems.append("executors: 'approvals' is reserved (the SecOps office's approvals)")
    if cfg.policies.approvals.mode == "llm" and not cfg.llm.enabled:
        problems.append("policies.approvals.mode: llm needs llm.enabled (the model decides)")
    if "llm" in cfg.executors:
        problems.append("executors: 'llm' is reserved (agents' deliberations, config `llm`)")
    dept_names, role_names = {d.id for d in cfg.departments}, {r.id for r in cfg.roles}
    for name in cfg.llm.agents.departments:
        if name not in dept_names:
            problems.append(f"llm.agents.departments: no department '{name}'")
    for name in cfg.llm.agents.roles:
        if name not in role_names:
            problems.append(f"llm.agents.roles: no role '{name}'")
    for i, aid in enumerate(cfg.workload.threats.insiders):
        if aid not in agent_dept:
            problems.append(f"workload.threats.insiders[{i}]: unknown agent '{aid}'")
    for i, tool in enumerate(cfg.tools):
        if tool.executor is not None and tool.executor not in cfg.executors:
            problems.append(f"tools[{i}].executor: unknown executor '{tool.executor}' "
                            f"(known: {sorted(cfg.executors)})")
    for name, ex in cfg.executors.items():
        if ex.kind == "mcp" and ex.server not in cfg.mcp_servers:
            problems.append(f"executors.{name}.server: {ex.server!r} is not an entry of "
                            f"mcp_servers (known: {sorted(cfg.mcp_servers)})")
    problems += scenario_problems(cfg, depts, roles, tools, task_types, agent_ids)
    problems += _hr_problems(cfg, roles, agent_ids)
    for i, spec in enumerate(cfg.workload.task_types):
        where = f"workload.task_types[{i}]"
        if spec.department not in depts:
            problems.append(f"{where}.department: unknown department '{spec.department}'")
        if spec.tool not in tools:
            problems.append(f"{where}.tool: unknown tool '{spec.tool}'")
        handlers = [
            a for a in cfg.agents
            if a.department == spec.department and a.role in roles
            and spec.name in roles[a.role].task_types
        ]
        if spec.department in depts and not handlers:
            problems.append(
                f"{where}: no agent in department '{spec.department}' has a role that handles "
                f"'{spec.name}'"
            )
    return problems


def _hr_problems(cfg: CompanyConfig, roles: dict[str, RoleSpec], agent_ids: list[str]
                 ) -> list[str]:
    from synthorg.config.role_templates import role_template
    from synthorg.org.directory import hr_hire_ids

    problems = [f"hr.overrides: unknown agent '{a}'" for a in cfg.hr.overrides
                if a not in agent_ids]
    for i, name in enumerate(cfg.hr.hiring.role_templates):
        try:
            template = role_template(name)
        except ValueError as exc:
            problems.append(f"hr.hiring.role_templates[{i}]: {exc}")
            continue
        if template.role not in roles:
            problems.append(f"hr.hiring.role_templates[{i}]: template '{name}' is for role "
                            f"'{template.role}', which the company does not have")
    scenario_ids = {a for e in cfg.scenario if isinstance(e, Hire) for a in e.expanded_ids()}
    taken = sorted((set(agent_ids) | scenario_ids) & set(hr_hire_ids(cfg)))
    if taken:
        problems.append(f"agents: id '{taken[0]}' is kept for HR's hires (hr.hiring.max_hires)")
    return problems
