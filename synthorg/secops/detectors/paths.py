"""The path family: climbing out of the workspace, credential files, reads and writes of
sensitive places, the workspace deleted whole, a URL that climbs out of a served directory."""

from __future__ import annotations

from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.credentials import SECRET_FILE, generates_keys
from synthorg.secops.detectors.patterns import Hinted, finding
from synthorg.secops.detectors.reached_paths import paths_of
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import clean_path, climbs, place_of, resolve


def _own_file(call: ToolCall, raw: str) -> bool:
    """Whether `raw` is the file a write or a delete in the workspace is made on: a file
    named like a credential (.env, a .pem) written or removed there exposes nothing (what
    is written is read for secrets on its own)."""
    return call.action_type in ("fs:write", "fs:delete") and raw == call.texts.get("path")


def path_findings(call: ToolCall, code: tuple[str, ...]) -> Iterator[Finding]:
    for raw, written in dict.fromkeys(paths_of(call)):  # each path once (views repeat them)
        if not raw or raw.startswith(("http", "-")) or (raw.startswith("\\") and len(raw) <= 3):
            continue  # (a "\n" in a string is no path)
        path = resolve(raw, call.workspace)
        place = place_of(path, call.workspace)
        if climbs(raw) and place != "workspace":
            yield finding("path.traversal", f"climbs out of the workspace: {raw}")
            continue
        if SECRET_FILE.pattern.search(path.lower()) and not path.lower().endswith(  # (short: no hints)
                (".example", ".sample", ".template", ".dist")) and not (
                place == "workspace" and _TEST_KEY.search(path.lower())) and not (
                place == "workspace" and (generates_keys(call) or _own_file(call, raw))):
            yield finding("secrets.credential_file", f"touches a credential or key file: {path}")
        elif place == "workspace" and raw.lstrip("\"'").startswith("/") and call.colleague_path(path):
            if written:
                yield finding("path.colleague_workspace",
                              f"writes or deletes in a colleague's workspace: {path}")
            else:
                yield finding("path.colleague_workspace",
                              f"reads a colleague's workspace: {path}", block=False,
                              tier=RiskTier.high)
        elif place == "sensitive":
            if written:
                yield finding("path.write_outside_workspace",
                              f"writes or deletes outside the workspace: {path}")
            else:
                yield finding("path.read_outside_workspace",
                              f"reads outside the workspace: {path}", tier=RiskTier.high)
        if call.action_type == "fs:delete" and path == resolve(".", call.workspace):
            yield finding("destructive.delete_workspace", "deletes the whole workspace")
        if call.action_type == "fs:delete" and path == resolve(".git", call.workspace):
            yield finding("destructive.history_deleted", "deletes the repository's history (.git)")
        if call.action_type == "fs:delete" and _GOVERNANCE.search(path.lower()):
            yield finding("privilege.governance_removed", f"removes a review or security control: "
                          f"{path}", block=False, tier=RiskTier.high)
    if call.action_type == "code:python" and any(_PY_PARENT.search(v) for v in code):
        yield finding("path.traversal", "works out and reads the folder above the workspace")
        return
    if call.action_type == "net:http":
        url = clean_path(call.text("url"))
        if _URL_CLIMB.search(url):
            yield finding("path.traversal", f"climbs out of a served directory: {url[:80]}")


# the files that make changes reviewed and scanned
_GOVERNANCE = fast_regex(r"(?:^|/)(?:codeowners|security\.md|\.gitleaks\.toml|\.pre-commit-config\.ya?ml|\.snyk"
                         r"|dependabot\.ya?ml)$|/\.github/workflows/[\w.-]*(?:secur|scan|codeql|audit|sast|trivy|gitleaks"
                         r"|semgrep|snyk|dependency)[\w.-]*$")
# a key of the project's tests: a fixture, named fake or dummy
_TEST_KEY = fast_regex(r"/(?:tests?|fixtures?|testdata|spec)/|(?:fake|dummy|example|sample)[\w-]*\.\w+$")
# the folder above the workspace, worked out in code
_PY_PARENT = Hinted(fast_regex(r"\bdirname\(\s*os\.getcwd\(\)\s*\)|\bpath\.cwd\(\)\.(?:parent|resolve\(\)\.parent)\b"
                        r"|\bos\.path\.join\(\s*os\.getcwd\(\)\s*,\s*[\"']\.\.[\"']|\bos\.chdir\(\s*[\"']\.\.[\"'/]"
                        r"|\bpath\(__file__\)\.(?:resolve\(\)\.)?parents\[\s*[3-9]\s*\]"), "getcwd|cwd()|chdir|__file__")
_URL_CLIMB = fast_regex(r"(?:^|[/=?&])\.\.(?:/|$)")
