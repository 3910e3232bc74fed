"""Manifests: the sha256 of the files a run wrote, kept beside them, so what a later command
reads (a checkpoint to resume or fork from, the config and summary to replay) is checked
before use. `DIR/checkpoints/manifest.json` lists the checkpoints (updated after each one is
written); `DIR/manifest.json` lists the outputs, written when the run ends."""

from __future__ import annotations

import json
import os
from pathlib import Path

from synthorg.errors import MisuseError
from synthorg.ledger.ledger import file_digest

NAME = "manifest.json"
MAX_BYTES = 2**22  # a manifest of a few thousand files; more is not one of ours


class ManifestError(MisuseError):
    """A file does not match the manifest its run wrote (changed, truncated or replaced)."""


def read(folder: Path) -> dict[str, str] | None:
    """The manifest of `folder`, or None when there is none."""
    path = folder / NAME
    if not path.is_file():
        return None
    try:
        with path.open("rb") as f:
            listed = json.loads(f.read(MAX_BYTES + 1)[:MAX_BYTES])
    except (OSError, ValueError):
        raise ManifestError(f"{path}: unreadable manifest") from None
    if not isinstance(listed, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in listed.items()):
        raise ManifestError(f"{path}: not a manifest")
    return listed


def record(folder: Path, files: list[Path]) -> None:
    """Add `files` (in `folder`) with their sha256 to its manifest, atomically."""
    listed = read(folder) or {}
    listed.update({f.name: file_digest(f) for f in files})
    tmp = folder / f".{NAME}.tmp"
    tmp.write_text(json.dumps(listed, indent=1, sort_keys=True) + "\n")
    with tmp.open("rb") as f:
        os.fsync(f.fileno())
    tmp.replace(folder / NAME)


def verify(path: Path, required: bool = False) -> None:
    """Check `path` against its folder's manifest (when there is one, or `required`)."""
    listed = read(path.parent)
    if listed is None:
        if required:
            raise ManifestError(f"{path.parent / NAME}: missing")
        return
    if path.name not in listed:
        raise ManifestError(f"{path}: not in {path.parent / NAME} (not written by this run)")
    if not path.is_file():
        raise ManifestError(f"{path}: missing (listed in {path.parent / NAME})")
    if file_digest(path) != listed[path.name]:
        raise ManifestError(f"{path}: changed or truncated since its run wrote it (does not "
                            f"match {path.parent / NAME})")
