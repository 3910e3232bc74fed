"""What made a run: synthorg's version and git commit, its key dependencies' versions and the
config's digest, in DIR/provenance.json. `replay` and `resume` read it to say whether a
mismatch comes from different code or a different config."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

FILE = "provenance.json"
DEPENDENCIES = ("numpy", "polars", "pydantic", "ray", "pyyaml")
_SOURCE = Path(__file__).resolve().parents[2]


class Provenance(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    synthorg: str
    commit: str | None  # git HEAD of the source checkout (None: an installed wheel)
    dirty: bool | None  # uncommitted changes in that checkout
    python: str
    dependencies: dict[str, str | None]
    config_digest: str

    def code(self) -> tuple[object, ...]:
        return (self.synthorg, self.commit, self.dirty, self.python,
                tuple(sorted(self.dependencies.items())))

    def differences(self, other: Provenance) -> list[str]:
        """What differs between two runs' making, in words (empty: nothing)."""
        said = []
        if self.code() != other.code():
            said.append(f"different code ({self.describe()} vs {other.describe()})")
        if self.config_digest != other.config_digest:
            said.append("different config")
        return said

    def describe(self) -> str:
        commit = (self.commit or "no commit")[:12] + ("+changes" if self.dirty else "")
        return f"synthorg {self.synthorg} {commit}"


def current(config_digest: str) -> Provenance:
    return Provenance(synthorg=_version("synthorg") or "unknown", commit=_git("rev-parse", "HEAD"),
                      dirty=_dirty(), python=sys.version.split()[0],
                      dependencies={d: _version(d) for d in DEPENDENCIES},
                      config_digest=config_digest)


def write(run_dir: Path, made: Provenance) -> None:
    (run_dir / FILE).write_text(made.model_dump_json(indent=2) + "\n")


def read(run_dir: Path) -> Provenance | None:
    """The recorded provenance, or None when there is none (or it is unreadable)."""
    with contextlib.suppress(OSError, ValidationError, ValueError):
        return Provenance.model_validate(json.loads((run_dir / FILE).read_text()[:100_000]))
    return None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    if not (_SOURCE / ".git").exists():
        return None
    try:
        # (--no-optional-locks: `status` would otherwise take the checkout's index.lock to
        # refresh it, and a run killed meanwhile would leave the lock to block the user's git)
        done = subprocess.run(["git", "--no-optional-locks", "-C", str(_SOURCE), *args], capture_output=True,
                              text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _dirty() -> bool | None:
    status = _git("status", "--porcelain", "--untracked-files=no")
    if status is None:
        return None if _git("rev-parse", "HEAD") is None else False
    return bool(status)
