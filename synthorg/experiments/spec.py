"""Experiment and study files: a base company, what varies (dotted config paths), the seeds.

An experiment (`synthorg sweep`) crosses a grid with seeded random samples; a study
(`synthorg tune`) gives Ray Tune a search space and an objective. Both are frozen models read
with the config's own bounded YAML reader, and a problem names the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from synthorg.config.limits import read_bounded
from synthorg.config.loader import _bounded_yaml  # the bounded reader every config goes through
from synthorg.errors import ConfigError

Scalar = bool | int | float | str | None
MAX_SEEDS = 10_000
MAX_RUNS = 100_000  # points x seeds: a typo in a grid must not plan a billion runs


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Uniform(_Frozen):
    uniform: tuple[float, float]


class LogUniform(_Frozen):
    loguniform: tuple[Annotated[float, Field(gt=0)], Annotated[float, Field(gt=0)]]


class IntRange(_Frozen):
    randint: tuple[int, int]  # both ends included


class Choice(_Frozen):
    choice: Annotated[list[Any], Field(min_length=1)]


Distribution = Uniform | LogUniform | IntRange | Choice


class Samples(_Frozen):
    """`n` seeded draws over `params`; each draw is crossed with every grid point."""
    n: Annotated[int, Field(ge=1, le=MAX_RUNS)]
    seed: int = 0
    params: dict[str, Distribution]


class SeedRange(_Frozen):
    count: Annotated[int, Field(ge=1, le=MAX_SEEDS)]
    start: Annotated[int, Field(ge=0)] = 0


class Resources(_Frozen):
    """What one run reserves. `backend: local` runs each simulation in its task's own process
    (nested group actors on a small machine would wait for CPUs their parent holds); `config`
    keeps the company's backend, for runs big enough to spread over a cluster."""
    cpus: Annotated[float, Field(gt=0, le=1024)] = 1.0
    memory_mb: Annotated[int, Field(ge=64)] | None = None  # default: from the headcount
    backend: Literal["local", "config"] = "local"


class _Common(_Frozen):
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[\w.-]+$")]
    question: str = ""
    base: str  # a company config file, relative to this file, or a template name
    set: dict[str, Any] = {}  # fixed overrides for every run
    seeds: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1, max_length=MAX_SEEDS)
                     ] | SeedRange = [0]
    resources: Resources = Resources()

    def seed_list(self) -> list[int]:
        if isinstance(self.seeds, SeedRange):
            return list(range(self.seeds.start, self.seeds.start + self.seeds.count))
        return list(self.seeds)


class ExperimentSpec(_Common):
    grid: dict[str, Annotated[list[Any], Field(min_length=1)]] = {}
    samples: Samples | None = None

    @model_validator(mode="after")
    def _something_varies_once(self) -> ExperimentSpec:
        both = set(self.grid) & set(self.samples.params if self.samples else {})
        if both:
            raise ValueError(f"{sorted(both)} both in grid and in samples.params")
        fixed = set(self.set) & (set(self.grid) | set(self.samples.params if self.samples else {}))
        if fixed:
            raise ValueError(f"{sorted(fixed)} both fixed in `set` and varied")
        return self


class Objective(_Frozen):
    """A weighted sum of summary fields, e.g. {tasks_completed: 1, cost_usd: -0.001}."""
    maximize: Annotated[dict[str, float], Field(min_length=1)]


class Asha(_Frozen):
    grace_ticks: Annotated[int, Field(ge=1)] = 50
    reduction_factor: Annotated[float, Field(gt=1)] = 2.0


class StudySpec(_Common):
    space: Annotated[dict[str, Distribution], Field(min_length=1)]
    objective: Objective
    search: Literal["random", "grid", "optuna"] = "random"
    trials: Annotated[int, Field(ge=1, le=10_000)] = 8  # samples drawn (grid: every point once)
    search_seed: int = 0  # seeds the search itself (random draws, Optuna's sampler)
    report_every: Annotated[int, Field(ge=1)] = 25  # ticks between a trial's reports
    asha: Asha | None = None  # early stopping; None runs every trial to its end
    max_concurrent: Annotated[int, Field(ge=1)] | None = None

    @model_validator(mode="after")
    def _grid_needs_choices(self) -> StudySpec:
        if self.search == "grid":
            bad = [p for p, d in self.space.items() if not isinstance(d, Choice)]
            if bad:
                raise ValueError(f"search grid: {bad} need `choice` lists")
        fixed = set(self.set) & set(self.space)
        if fixed:
            raise ValueError(f"{sorted(fixed)} both fixed in `set` and searched")
        return self


def load_spec(path: Path, kind: type[ExperimentSpec] | type[StudySpec]
              ) -> ExperimentSpec | StudySpec:
    """Read an experiment or study file; any problem is a ConfigError naming file and field."""
    source = str(path)
    try:
        text = read_bounded(source)
    except FileNotFoundError:
        raise ConfigError(source, ["file not found"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(source, [f"cannot read file: {exc}"]) from None
    raw, _ = _bounded_yaml(text, source)
    if not isinstance(raw, dict):
        raise ConfigError(source, ["top level must be a mapping"])
    try:
        return kind.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            where = ".".join(str(p) for p in e["loc"]) or "(top level)"
            problems.append(f"{where}: {e['msg'].removeprefix('Value error, ')}")
        raise ConfigError(source, problems) from None


def base_path(spec_file: Path, base: str) -> Path:
    """The base company: a file beside the spec, any path, or a template name."""
    from synthorg.config.loader import template_path

    candidate = Path(base) if Path(base).is_absolute() else spec_file.parent / base
    if candidate.is_file():
        return candidate
    found = template_path(base)
    if found is None:
        raise ConfigError(str(spec_file), [f"base: no file or template named '{base}'"])
    return found
