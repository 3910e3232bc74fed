"""Role templates for hiring (templates/roles/NAME.yaml): the role a hire takes, its level
and its skill levels on joining (each drawn, seeded, within `spread` of the template's)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml
from pydantic import Field, ValidationError

from synthorg.config.base import Frozen, Identifier, Level, SeniorityName

_HERE = Path(__file__).resolve().parent
ROLE_DIRS = (_HERE.parent.parent / "templates" / "roles",  # a checkout
             _HERE.parent / "_templates" / "roles")  # an installed wheel


class RoleTemplate(Frozen):
    role: Identifier = Field(description="a role of the company")
    seniority: SeniorityName = "junior"
    skills: dict[Identifier, Level] = Field(default_factory=dict)
    spread: float = Field(default=0.1, ge=0.0, le=0.5)


@cache
def role_template(name: str) -> RoleTemplate:
    """The template `name`; ValueError naming the file when it is missing or wrong."""
    for folder in ROLE_DIRS:
        path = folder / f"{name}.yaml"
        if path.is_file():
            try:
                return RoleTemplate.model_validate(yaml.safe_load(path.read_text()))
            except (yaml.YAMLError, ValidationError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ValueError(f"{path}: {first}") from None
    raise ValueError(f"no role template '{name}' in templates/roles")
