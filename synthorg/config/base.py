"""Base types of the config models: frozen, `extra="forbid"`, numbers never given as booleans."""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

Identifier = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.\-]+$")]
Level = Annotated[float, Field(ge=0.0, le=1.0)]
Probability = Annotated[float, Field(ge=0.0, le=1.0)]
SeniorityName = Literal["junior", "mid", "senior", "lead", "executive"]
AutonomyName = Literal["supervised", "assisted", "autonomous", "full"]
RiskName = Literal["low", "medium", "high", "critical"]
# the detector families with hard rules (a finding's rule id is `family.what`)
HardRuleFamily = Literal["abuse", "destructive", "exfiltration", "fraud", "injection", "path",
                         "privilege", "secrets"]
PriorityName = Literal["low", "normal", "high", "critical"]
RoutingName = Literal["role_based", "load_balanced"]


def _takes_numbers(annotation: Any) -> bool:
    """Whether a field's type is a number (or a union with one) that is not also a bool."""
    if annotation in (int, float):
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        options = get_args(annotation)
        return bool not in options and any(_takes_numbers(a) for a in options)
    return False


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_number(cls, value: object, info: ValidationInfo) -> object:
        """pydantic reads true as 1: in YAML that is a slip (`count: yes`), not a count."""
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(value, bool) and field is not None and _takes_numbers(field.annotation):
            raise ValueError("expected a number, got a boolean")
        return value


class Span(Frozen):
    """An inclusive range [low, high] from which a value is drawn uniformly."""

    low: float
    high: float

    @model_validator(mode="before")
    @classmethod
    def _from_pair(cls, value: object) -> object:
        if isinstance(value, list | tuple) and len(value) == 2:
            return {"low": value[0], "high": value[1]}
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {"low": value, "high": value}
        return value

    @model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) must not exceed high ({self.high})")
        return self
