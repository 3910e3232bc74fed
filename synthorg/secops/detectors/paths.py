"""The path family: climbing out of the workspace, credential files, reads and writes of
sensitive places, the workspace deleted whole, a URL that climbs out of a served directory."""

from __future__ import annotations

from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.credentials import SECRET_FILE, generates_keys
from synthorg.secops.detectors.patterns import finding
from synthorg.secops.detectors.reached_paths import paths_of
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import clean_path, climbs, place_of, resolve


def _own_file(call: ToolCall, raw: str) -> bool:
    """Whether `raw` is the file a write or a delete in the workspace is made on: a file
    named like a credential (.env, a .pem) written or removed there exposes nothing (what
    is written is read for secrets on its own)."""
    return call.action_type in ("fs:write", "fs:delete") and raw == call.texts.get("path")


def path_findings(call: ToolCall, _: tuple[str, ...]) -> Iterator[Finding]:
    for raw, written in dict.fromkeys(paths_of(call)):  # each path once (views repeat them)
        if not raw or raw.startswith(("http", "-")):
            continue
        path = resolve(raw, call.workspace)
        place = place_of(path, call.workspace)
        if climbs(raw) and place != "workspace":
            yield finding("path.traversal", f"climbs out of the workspace: {raw}")
            continue
        if SECRET_FILE.pattern.search(path.lower()) and not path.lower().endswith(  # (short: no hints)
                (".example", ".sample", ".template", ".dist")) and not (
                place == "workspace" and (generates_keys(call) or _own_file(call, raw))):
            yield finding("secrets.credential_file", f"touches a credential or key file: {path}")
        elif place == "sensitive":
            if written:
                yield finding("path.write_outside_workspace",
                              f"writes or deletes outside the workspace: {path}")
            else:
                yield finding("path.read_outside_workspace",
                              f"reads outside the workspace: {path}", tier=RiskTier.high)
        if call.action_type == "fs:delete" and path == resolve(".", call.workspace):
            yield finding("destructive.delete_workspace", "deletes the whole workspace")
    if call.action_type == "net:http":
        url = clean_path(call.text("url"))
        if _URL_CLIMB.search(url):
            yield finding("path.traversal", f"climbs out of a served directory: {url[:80]}")


_URL_CLIMB = fast_regex(r"(?:^|[/=?&])\.\.(?:/|$)")
