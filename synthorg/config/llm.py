"""The config's `llm` section: agents that reason through an OpenAI-compatible model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from synthorg.config.base import Frozen, Identifier, Probability, SeniorityName

TierName = Literal["small", "medium", "large"]


class ProviderSpec(Frozen):
    """One OpenAI-compatible server. Providers are tried in `priority` order (lowest first); one
    that keeps failing rests for `llm.cooldown_s` while the next takes its calls."""

    name: Identifier
    base_url: str = Field(min_length=1, max_length=2048, description=(
        "the server's API root, e.g. http://127.0.0.1:8000/v1 (vLLM, Ollama, llama.cpp ...)"))
    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1, max_length=200, description=(
        "the environment variable holding the key (a server that needs none gets a dummy)"))
    priority: int = Field(default=0, ge=0, le=1000)
    models: dict[TierName, str] = Field(default_factory=dict, description=(
        "this provider's own model per tier (default: `llm.models`)"))


class PriceSpec(Frozen):
    """USD per million tokens."""

    input_per_mtok: float = Field(default=0.0, ge=0.0, le=10_000.0)
    output_per_mtok: float = Field(default=0.0, ge=0.0, le=10_000.0)


class LlmAgentsSpec(Frozen):
    """Which agents reason with the model: those matching every criterion given (none given:
    all), then a seeded `fraction` of them. The rest stay deterministic."""

    departments: tuple[Identifier, ...] = ()
    roles: tuple[Identifier, ...] = ()
    seniority: tuple[SeniorityName, ...] = ()
    ids: tuple[str, ...] = Field(default=(), max_length=100_000, description=(
        "agent ids (as in agents.parquet, e.g. eng-0003)"))
    fraction: Probability = 1.0
    max_agents: int | None = Field(default=None, ge=0, description="at most this many (the first by id)")


class LlmSpec(Frozen):
    enabled: bool = False
    base_url: str | None = Field(default=None, max_length=2048, description=(
        "the one server's API root; for several with fallback use `providers`"))
    model: str | None = Field(default=None, max_length=200, description=(
        "the model for every tier not named in `models`"))
    models: dict[TierName, str] = Field(default_factory=dict, description=(
        "model per tier: agents use the tier of their seniority (hr.model_tiers)"))
    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1, max_length=200)
    providers: tuple[ProviderSpec, ...] = Field(default=(), max_length=32)
    prices: dict[str, PriceSpec] = Field(default_factory=dict, description="by model name")
    agents: LlmAgentsSpec = LlmAgentsSpec()
    max_in_flight: int = Field(default=64, ge=1, le=4096, description=(
        "requests in flight per group host at once"))
    timeout_s: float = Field(default=30.0, gt=0.0, le=3600.0, description="per request")
    retries: int = Field(default=2, ge=0, le=10, description=(
        "attempts after a provider error (5xx, connection, time-out), with exponential "
        "backoff and jitter, each on the healthiest provider"))
    backoff_s: float = Field(default=0.2, ge=0.0, le=60.0)
    invalid_retries: int = Field(default=1, ge=0, le=5, description=(
        "asks again after a reply that is not valid JSON or breaks the schema; still invalid, "
        "the step fails closed (the agent takes no action) and is recorded"))
    failures_to_cooldown: int = Field(default=3, ge=1, le=1000)
    cooldown_s: float = Field(default=30.0, ge=0.0, le=3600.0)
    latency_ticks: int = Field(default=1, ge=1, le=1000, description=(
        "ticks from asking the model to acting on its answer, whatever the wall clock does"))
    replan_every: int = Field(default=4, ge=1, le=10_000, description=(
        "ticks an agent works by one plan before it deliberates again (a finished step, a "
        "denial, a failure or a new task also ends a plan)"))
    downgrade_at: Probability = Field(default=0.8, description=(
        "share of its department's period budget, or of its own, spent from which an agent "
        "asks the next cheaper tier"))
    max_tokens: int = Field(default=300, ge=16, le=32_768)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    offer_tools: bool = Field(default=True, description=(
        "offer the task's tool through the API's `tools` parameter, so the model chooses its "
        "call; false (for servers that refuse `tools` beside `response_format`): the call is "
        "drawn as in deterministic mode"))
    judge_tier: TierName = Field(default="large", description=(
        "the tier that reviews escalated calls with `policies.approvals.mode: llm`"))
    memory_facts: bool = Field(default=True, description=(
        "with memory on: the model states the facts each memory of a reasoning agent keeps "
        "(fact extraction, as Mem0 does with infer=True, through this client and its "
        "cassettes); false: memories keep the record of what happened, as in "
        "deterministic mode"))
    memory_facts_tier: TierName = Field(default="small", description=(
        "the tier that extracts memories' facts"))

    @model_validator(mode="after")
    def _servers(self) -> LlmSpec:
        if not self.enabled:
            return self
        if self.base_url is None and not self.providers:
            raise ValueError("llm.enabled needs llm.base_url or llm.providers")
        every_tier = len(self.models) == 3 or (
            bool(self.providers) and all(len({**self.models, **p.models}) == 3
                                         for p in self.providers))
        if self.model is None and not every_tier:
            raise ValueError("llm.enabled needs llm.model, or llm.models for small, medium "
                             "and large")
        names = [p.name for p in self.providers]
        if len(set(names)) != len(names):
            raise ValueError("llm.providers: names must be unique")
        return self

    def provider_list(self) -> tuple[ProviderSpec, ...]:
        """The providers by priority (llm.base_url alone is one called `default`)."""
        if self.providers:
            return tuple(sorted(self.providers, key=lambda p: (p.priority, p.name)))
        assert self.base_url is not None
        return (ProviderSpec(name="default", base_url=self.base_url,
                             api_key_env=self.api_key_env),)

    def model_for(self, provider: ProviderSpec, tier: TierName) -> str:
        name = provider.models.get(tier) or self.models.get(tier) or self.model
        assert name is not None
        return name

    def price_of(self, model: str) -> PriceSpec:
        return self.prices.get(model, PriceSpec())
