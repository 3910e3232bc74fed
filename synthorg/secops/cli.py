"""`synthorg secops check`: verdicts for tool calls read as JSON lines."""

from __future__ import annotations

import json
from typing import IO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import Autonomy
from synthorg.org.directory import OrgDirectory
from synthorg.secops.catalog import checker_for


class CallLine(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    agent: str
    tool: str
    arguments: dict[str, object]
    task: str = ""
    workspace: str | None = Field(default=None, pattern=r"^/")


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "line"
    return f"{where}: {first['msg']}"


def check_lines(cfg: CompanyConfig, source: IO[bytes], out: IO[str], max_line: int) -> int:
    """Writes one JSON line per input line; returns how many were malformed."""
    checker = checker_for(cfg)
    directory = OrgDirectory.from_config(cfg)
    autonomy = {a: Autonomy(int(x)) for a, x in zip(directory.agent_ids, directory.autonomy,
                                                     strict=True)}
    colleagues = frozenset(directory.agent_ids)
    malformed = 0
    number = 0
    while True:
        raw = source.readline(max_line + 1)
        if not raw:
            break
        number += 1
        if len(raw) > max_line and not raw.endswith(b"\n"):
            while (rest := source.readline(max_line)) and not rest.endswith(b"\n"):
                pass  # skip the rest of the over-long line
            error = f"longer than {max_line} bytes"
        else:
            error = None
        if error is None:
            try:
                call = CallLine.model_validate_json(raw)
            except ValidationError as exc:
                error = _problem(exc) if raw.strip() else "empty line"
            else:
                if call.agent not in autonomy:
                    error = f"agent: {call.agent!r} is not an agent of {cfg.company.name}"
        if error is not None:
            malformed += 1
            out.write(json.dumps({"line": number, "error": error}) + "\n")
            continue
        verdict = checker.check(checker.call(call.tool, call.arguments, call.task,
                                             call.workspace, call.agent, colleagues),
                                autonomy[call.agent])
        out.write(json.dumps(verdict.as_json()) + "\n")
    out.flush()
    return malformed
