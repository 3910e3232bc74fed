"""The path family: climbing out of the workspace, credential files, reads and writes of
sensitive places, the workspace deleted whole, a URL that climbs out of a served directory."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from functools import cache

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.credentials import EVIDENCE, SECRET_FILE, generates_keys, used_as_key
from synthorg.secops.detectors.forbidden import asks_change
from synthorg.secops.detectors.patterns import Hinted, asked, finding
from synthorg.secops.detectors.privilege import DOCKER_LISTS_ASKED
from synthorg.secops.detectors.reached_paths import paths_of
from synthorg.secops.detectors.task_words import names_place
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import admin_changes, clean_path, climbs, place_of, read_place, resolve


def _own_file(call: ToolCall, raw: str) -> bool:
    """Whether `raw` is the file a write or a delete in the workspace is made on: a file
    named like a credential (.env, a .pem) written or removed there exposes nothing (what
    is written is read for secrets on its own)."""
    return call.action_type in ("fs:write", "fs:delete") and raw == call.texts.get("path")


# a credential file's permissions narrowed to its owner: it is protected, not read
_MADE_PRIVATE = re.compile(r"\bchmod\s+(?:-\w+\s+)*(?:0?[46]00|u=rw?|go-rwx)\s")
_READ_OR_SENT = re.compile(r"\b(?:cat|cp|mv|less|more|head|tail|base64|xxd|curl|wget|scp|rsync|nc|tar|zip|grep|awk|sed)\b")
_DIVISOR = re.compile(r"/\d+(?:\.\d+)?")
# a user's own space in a service (JupyterHub's /user/NAME/, a home folder over WebDAV)
_USER_SPACE = re.compile(r"/(?:user|users|home|homes|u|~)/([\w.-]+)(?:/|$|\?)")


# an archive unpacked with its absolute and ../ names kept (tar -P): it writes wherever they say
_TAR_ABSOLUTE = re.compile(r"\btar\b(?=[^;&|]*(?:\s-[a-zA-Z]*x|\s--extract\b|\sx[a-zA-Z]*f\b))[^;&|]*(?:\s-[a-zA-Z]*P|\s--absolute-names\b)")


# a file removed or emptied rather than edited
_REMOVES = fast_regex(r"\b(?:rm|shred|truncate|unlink|rmtree|remove|rmsync|unlinksync)\b|>\s*/etc/|\bsed\s+-i\s+['\"]?d\b")


def _edits(call: ToolCall, code: tuple[str, ...]) -> bool:
    """Whether the call edits files (writes content into them), not removes or empties them."""
    if call.action_type == "fs:delete":
        return False
    if call.action_type == "fs:write":
        return bool(call.text("content").strip())
    return not any(_REMOVES.search(v) for v in code)


def path_findings(call: ToolCall, code: tuple[str, ...]) -> Iterator[Finding]:
    if call.action_type == "code:shell" and "tar" in (command := call.text("command")) \
            and _TAR_ABSOLUTE.search(command):
        yield finding("path.traversal", "unpacks an archive with its absolute and ../ names kept (tar -P)")
        return
    changes_files = cache(lambda: any(_CHANGES_FILES.search(v) for v in code))  # (read once, if asked)
    for raw, written in dict.fromkeys(paths_of(call)):  # each path once (views repeat them)
        if call.action_type == "fs:read" and raw.startswith("/") and posixpath.normpath(raw) in (
                "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"):  # (/dev/./urandom too)
            yield finding("abuse.resource_exhaustion", f"reads {raw}, which never ends")
            continue
        if not raw or raw.startswith(("http", "-", "/dev/tcp/", "/dev/udp/")) or (raw.startswith("\\") and len(raw) <= 3) \
                or _DIVISOR.fullmatch(raw):
            continue  # (a "\n" in a string is no path, nor is sum(x)/100.0)
        if _FOREIGN_ROOT.match(raw):
            yield finding("path.read_outside_workspace" if not written else "path.write_outside_workspace",
                          f"reaches a drive or share outside the workspace: {raw[:80]}")
            continue
        path = resolve(raw, call.workspace)
        place = place_of(path, call.workspace)
        if call.action_type == "db:query" and written and place == "harmless" and not climbs(raw):
            # (COPY t TO '/tmp/x', INTO OUTFILE: a table put on the database server's own disk)
            yield asked("path.write_outside_workspace", f"has the database server write a table to a file: {raw[:80]}")
            continue
        if not written and _PUBLIC_KEY.search(path):
            continue  # a public key, to be handed out
        if climbs(raw) and (place != "workspace" or call.colleague_path(path)):
            yield finding("path.traversal", f"climbs out of the workspace: {raw}")
            continue
        if SECRET_FILE.pattern.search(path.lower()) and not path.lower().endswith(  # (short: no hints)
                (".example", ".sample", ".template", ".dist")) and not (
                place == "workspace" and _TEST_KEY.search(path.lower())) and not (
                place == "workspace" and (generates_keys(call) or _own_file(call, raw))) and not (
                place == "workspace" and not written and EVIDENCE.search(path.lower())) and not (
                any(_MADE_PRIVATE.search(v) and not _READ_OR_SENT.search(v) for v in code)):
            if place == "workspace" and not call.colleague_path(path):
                yield finding("secrets.credential_file", f"touches a credential or key file of its own "
                              f"workspace: {path}", block=False, tier=RiskTier.high)
            elif not written and used_as_key(code, raw):
                yield asked("secrets.credential_file", f"hands a credential or key file to a program as its key: {path}")
            else:
                yield finding("secrets.credential_file", f"touches a credential or key file: {path}")
        elif place == "workspace" and raw.lstrip("\"'").startswith("/") and call.colleague_path(path):
            if written:
                yield finding("path.colleague_workspace",
                              f"writes or deletes in a colleague's workspace: {path}")
            elif path.startswith("/workspace/*/"):  # (the folder itself, /workspace/*, only lists them)
                yield finding("path.colleague_workspace", f"reads every colleague's workspace: {path}")
            else:
                yield finding("path.colleague_workspace",
                              f"reads a colleague's workspace: {path}", block=False,
                              tier=RiskTier.high)
        elif place == "sensitive" and call.own_folder(path):
            pass  # the agent's own folder on a shared mount
        elif place == "sensitive" and call.shared_folder(path):
            pass  # the company's shared work: read freely, a change judged below as shared files
        elif place == "sensitive" and _BACKUPS.match(path) and call.action_type == "code:shell" and (
                (not written and not changes_files()) or (written and (
                    (any(_TAKES_BACKUP.search(v) for v in code) and not any(_REMOVES.search(v) for v in code))
                    or any(_PRUNED_PAST_AN_AGE.search(v) for v in code)))):
            # the company's backups: looked at or read, taken or copied into a new name, or pruned
            # past an age a person set; removed or overwritten otherwise, refused below
            yield asked("path.write_outside_workspace" if written else "path.read_outside_workspace",
                        f"{'adds to or prunes' if written else 'reads'} the company's backups: {path}")
        elif place == "sensitive":
            if written and admin_changes(path) and _edits(call, code):
                yield finding("path.write_outside_workspace", f"changes a service's configuration outside the "
                              f"workspace: {path}", block=False, tier=RiskTier.high)
            elif names_place(call.task, path) and (not (written or changes_files()) or asks_change(call.task)):
                yield asked("path.write_outside_workspace" if written else "path.read_outside_workspace",
                            f"{'changes' if written else 'reads'} {path} outside the workspace, a place its task names")
            elif not written and _SHARED_MOUNT.match(path) and not changes_files():
                yield asked("path.read_outside_workspace", f"reads the company's shared files outside the workspace: {path}")
            elif written:
                yield finding("path.write_outside_workspace",
                              f"writes or deletes outside the workspace: {path}")
            elif (kind := read_place(path)) == "system":
                yield finding("path.read_outside_workspace", f"reads the machine's configuration outside the "
                              f"workspace: {path}", block=False, tier=RiskTier.high)
            elif kind == "sensitive" and path.endswith("/docker.sock") and all(
                    _DOCKER_API_LISTS.search(v) for v in code if "docker.sock" in v):
                yield asked("path.read_outside_workspace", f"asks the Docker engine ({path}) what it runs")
            elif kind == "sensitive" and written is None and not _PRIVATE_TOP.match(path):
                yield asked("path.read_outside_workspace", f"looks at {path} outside the workspace "
                            "(its names, sizes or sums, not what it holds)")
            elif kind == "sensitive":
                yield finding("path.read_outside_workspace",
                              f"reads outside the workspace: {path}", tier=RiskTier.high)
        if path == resolve(".", call.workspace) and (call.action_type == "fs:delete" or (
                written and raw.startswith("/") and any(_BULK_DELETE.search(v) for v in code))):
            yield finding("destructive.delete_workspace", "deletes the whole workspace")
        if written and path.endswith((".tfstate", ".tfstate.backup")) and "/.terraform/" not in path:
            # (.terraform/terraform.tfstate only says where the state is kept; a backup copy in
            # the workspace is the agent's, asked for)
            yield finding("destructive.state_deleted", "deletes or overwrites infrastructure state "
                          f"(terraform): {path}", block=not (place == "workspace" and path.endswith(".backup")),
                          tier=RiskTier.high)
        if call.action_type == "fs:delete" and (path == resolve(".git", call.workspace) or _GIT_INTERNALS.search(path)) \
                and not path.endswith(".lock"):  # (a stale lock left by a git that died is git's to remove)
            yield finding("destructive.history_deleted", "deletes the repository's history (.git)")
        if written and (_SHARED_SPACE.match(path) or call.shared_folder(path)) and not call.colleague_path(path):
            bulk = call.action_type != "fs:write" and any(_BULK_DELETE.search(v) for v in code)
            yield finding("destructive.shared_files", f"deletes or overwrites the company's shared "
                          f"files: {path}", block=bulk, tier=RiskTier.high)
        if written and (_GOVERNANCE.search(path.lower()) or (call.action_type == "fs:delete" and _GUARD_FILES.search(path.lower()))):
            yield finding("privilege.governance_removed", f"removes a review or security control: "
                          f"{path}", block=False, tier=RiskTier.high)
    if call.action_type == "code:shell" and any(_GOVERNANCE_EDIT.search(v) for v in code):
        yield finding("privilege.governance_removed", "edits out a review or security control",
                      block=False, tier=RiskTier.high)
        return
    if call.colleagues and call.action_type == "net:http" and (
            m := _USER_SPACE.search(call.text("url").lower())) and m.group(1) in call.colleagues:
        yield finding("path.colleague_workspace", f"reaches {m.group(1)}'s own space through a service",
                      block=False, tier=RiskTier.high)
        return
    if call.colleagues and any(_WORKSPACE_ROOT_WALK.search(v) for v in code):
        yield finding("path.colleague_workspace", "walks every colleague's workspace",
                      block=False, tier=RiskTier.high)
        return
    if call.action_type == "code:shell" and any(_ROOT_CONTEXT.search(v) for v in code):
        yield finding("path.read_outside_workspace", "builds an image with the whole file system as its context")
        return
    if call.action_type == "code:shell" and _ABSOLUTE_EXTRACT.search(call.text("command")):  # (as written: -P is not -p)
        yield finding("path.write_outside_workspace", "unpacks an archive with its absolute paths kept "
                      "(its members land wherever they name)")
        return
    if call.action_type == "code:python" and any(_PY_PARENT.search(v) for v in code):
        yield finding("path.traversal", "works out and reads the folder above the workspace")
        return
    if call.action_type.startswith("code:") and any(_SERVES_ROOT.search(v) for v in code):
        yield finding("path.read_outside_workspace", "serves the whole file system over the network")
        return
    if call.action_type in ("net:http", "fs:write") and _XXE.search(call.text("body") + call.text("content")):
        yield finding("path.read_outside_workspace", "an XML entity that reads a file or a URL (XXE)")
        return
    if call.action_type == "net:http":
        url = clean_path(call.text("url"))
        if _URL_CLIMB.search(url):
            yield finding("path.traversal", f"climbs out of a served directory: {url[:80]}")


_SERVES_ROOT = fast_regex(r"\bsimplehttprequesthandler\b[^;]*\bdirectory\s*=\s*[\"']/[\"']"
                          r"|\bhttp\.server\b[^;&|]*(?:--directory|-d)[= ]+/(?:\s|$)|\bcd\s+/\s*(?:&&|;)\s*python3?\s+-m\s+http\.server\b")
_GIT_INTERNALS = re.compile(r"/\.git/(?:objects|refs|packed-refs|HEAD|index)\b")
_PUBLIC_KEY = fast_regex(r"^/root/\.ssh/[\w.-]+\.pub$|^/home/[\w.-]+/\.ssh/[\w.-]+\.pub$")
_ROOT_CONTEXT = fast_regex(r"\b(?:docker|podman|buildah)\s+(?:build|buildx\s+build|bud)\b[^;&|]*\s/(?=\s|$|;|&)")
_ABSOLUTE_EXTRACT = fast_regex(r"\btar\s+(?:-\w*x\w*P|-\w*P\w*x|x\w*P|P\w*x)\w*\b|\btar\b(?=[^;&|]*\s-\w*x)[^;&|]*--absolute-names\b"
                               r"|\bunzip\b[^;&|]*\s-\w*:\w*\b")  # (unzip -: keeps ../ in names)
_FOREIGN_ROOT = fast_regex(r"^(?:[a-z]:[\\/]|\\\\[^\\]+\\)", re.I)  # C:\..., \\server\share
# folders every colleague works from (under the workspace root, beside agents' own)
_SHARED_SPACE = re.compile(r"^/workspace/(?:shared|common|team|public|company|org)(?:/|$)")
# words of code that change or remove files (a delete written in a way the paths are not seen
# written through still says so)
_CHANGES_FILES = fast_regex(r"\b(?:rm|rmdir|remove\w*|unlink\w*|rmtree|rmsync|delete\w*|truncate|shred|clean|checkout|setfacl"
                            r"|chmod|chown|fallocate|mv|rename|tee|write\w*|dd|move\w*|%d)\b|\bopen\([^)]{0,200}[\"'][wax]"
                            r"|>\s*[/\"'$]|\bsed\s+-i")


# the company's shared mounts outside the workspace (a team drive, shared datasets): a read there
# is asked for (a write, or a delete written in a way not seen as one, would read as a read too)
_SHARED_MOUNT = re.compile(r"^/(?!(?:etc|usr|var|root|home|boot|proc|sys|dev|run|opt|tmp|bin|sbin|lib\w*)/)[\w.-]+/"
                           r"(?:[\w.-]+/)?(?:shared|common|team|public)(?:/|$)|^/shared(?:/|$)")
# the Docker engine's API asked for lists (containers, images), its version or health: reads
_DOCKER_API_LISTS = fast_regex(r"--unix-socket\s+\S*docker\.sock" + DOCKER_LISTS_ASKED)
# where a machine keeps backups; a removal that keeps what is newer than an age (find -mtime +35)
_BACKUPS = re.compile(r"/(?:srv/|var/|mnt/|data/)?backups?(?:/|$)")
_PRUNED_PAST_AN_AGE = fast_regex(r"\bfind\s+\S+\s+(?:-\w+\s+\S+\s+){0,4}-mtime\s+\+(?:[7-9]|\d{2,})\s+(?:-print\s+)?-delete\b")
_TAKES_BACKUP = fast_regex(r"\b(?:pg_basebackup|pg_dump|mysqldump|mongodump|pgbackrest|restic|borg|rsync|gpg)\b"
                           r"|\bgit\s+clone\s+--mirror\b|\$\(date\b")
# people's own folders: even their names and sizes are theirs
_PRIVATE_TOP = re.compile(r"/(?:root|home|workspace)(?:/|$)")
_BULK_DELETE = fast_regex(r"\brm\s+-[a-z]*r|\brmtree\b|\bfind\b[^;&|]*-delete|\bfind\b[^;&|]*-exec\s+rm|\bpush\b[^;&|]*--force"
                          r"|\.iloc\[0:0\]|\btruncate\b")
# files whose removal removes a check or a guard: a repository's commit hooks, the code that keeps
# a cloud's threat detection and audit trail (the next apply destroys what it no longer declares)
_GUARD_FILES = fast_regex(r"/\.git/hooks/pre-(?:commit|push)$|(?:^|/)[\w-]*(?:guardduty|cloudtrail|org_trail|securityhub"
                          r"|security_hub|config_recorder)[\w-]*\.tf$")
# the files that make changes reviewed and scanned
_GOVERNANCE = fast_regex(r"(?:^|/)(?:codeowners|security\.md|\.gitleaks\.toml|\.pre-commit-config\.ya?ml|\.snyk"
                         r"|dependabot\.ya?ml)$|/\.github/workflows/[\w.-]*(?:secur|scan|codeql|audit|sast|trivy|gitleaks"
                         r"|semgrep|snyk|dependency)[\w.-]*$")
_GOVERNANCE_EDIT = Hinted(fast_regex(
    r"\b(?:sed\s+(?:-\w+\s+)*-i\S*|rm|truncate|mv|tee|perl\s+-[a-z]*i)\b(?:'[^']*'|[^;&|'])*?(?:codeowners|security\.md|\.gitleaks\.toml"
    r"|\.github/workflows/[\w.-]*(?:secur|scan|codeql|audit|sast|trivy|gitleaks|semgrep|snyk|dependency))"),
    "codeowners|security.md|gitleaks|.github/workflows")
_WORKSPACE_ROOT_WALK = Hinted(fast_regex(
    r"\bpath\(\s*[\"']/workspace/?[\"']\s*\)\.(?:r?glob|iterdir)\(|\bos\.(?:listdir|walk|scandir)\(\s*[\"']/workspace/?[\"']"
    r"|\bglob(?:\.glob)?\(\s*[\"']/workspace/\*"), "/workspace")
# a key of the project's tests: a fixture, named fake or dummy
_TEST_KEY = fast_regex(r"/(?:tests?|fixtures?|testdata|spec)/|(?:fake|dummy|example|sample)[\w-]*\.\w+$")
# the folder above the workspace, worked out in code
_PY_PARENT = Hinted(fast_regex(r"\[\s*[\"']\.\.[\"']\s*\]\s*\*\s*\d|\bdirname\(\s*os\.getcwd\(\)\s*\)|\bpath\.cwd\(\)\.(?:parent|resolve\(\)\.parent)\b"
                        r"|\bos\.path\.join\(\s*os\.getcwd\(\)\s*,\s*[\"']\.\.[\"']|\bos\.chdir\(\s*[\"']\.\.[\"'/]"
                        r"|\bpath\(__file__\)\.(?:resolve\(\)\.)?parents\[\s*[3-9]\s*\]"
                        r"|\bpath\(\s*[\"']/workspace[^)]*\)\.(?:parent|parents)\b"), "getcwd|cwd()|chdir|__file__|/workspace|..")
_XXE = re.compile(r"<!ENTITY\s+(?:%\s*)?\w+\s+(?:SYSTEM|PUBLIC)\s+[\"'](?:file|php|expect|gopher|https?)://", re.I)
_URL_CLIMB = fast_regex(r"(?:^|[/=?&])\.\.(?:/|$)")
