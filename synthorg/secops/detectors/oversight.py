"""Work a person should see before it is done, though each kind is also routine somewhere: access
opened to every principal or table at once, a safety or fraud decision reversed, an action taken
for each of a whole population, a service's insides shown, a collector's data sent outside,
production's data copied into a less protected environment. Each is asked for (escalated)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.controls import named_domains, only_reads
from synthorg.secops.detectors.patterns import AnyOf, asked
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import is_internal

# access opened to everyone or everything at once
_ACCESS_WIDENED = AnyOf((
    ("kafka-acls", r"\bkafka-acls\b[^;&|]{0,300}--allow-principal[= ]['\"]?user:\*"),
    ("using", r"\bcreate\s+policy\b[^;]{0,300}\busing\s*\(\s*true\s*\)"),
    # IAM's own powers (or every action) over every resource: a way to any role
    ("iam:|sts:|action", r"\bactions?[\"']?\s*[:=]\s*\[?[^\]}]{0,300}[\"'](?:iam:\*|iam:passrole|sts:\*|\*)[\"'][^\]}]{0,40}\]?"
                         r"[\s;,]{0,12}[\"']?resources?[\"']?\s*[:=]\s*\[?\s*[\"']\*[\"']"),
    # (every table of a schema: written to, or read where it holds people's pay and records)
    ("all tables in schema", r"\bgrant\s+(?:all\b|[\w, ]{0,60}\b(?:insert|update|delete|truncate)\b)[\w, ]{0,60}\s+on\s+all\s+tables\s+in\s+schema\b"
                             r"|\bgrant\s+[\w, ]{1,80}\s+on\s+all\s+tables\s+in\s+schema\s+[\"`]?(?:hr|payroll|finance|billing|pii|private"
                             r"|secrets?|auth|people|salar\w*|kyc)\b"),
))
# a trust-and-safety or fraud decision reversed: a ban lifted, content restored, a block removed,
# someone exempted from a check
_SAFETY_REVERSED_URL = fast_regex(r"/(?:reinstate|unban|unblock|unsuspend|restore|lift)(?:/|$|\?)")
_SAFETY_LIST_URL = fast_regex(r"/(?:bans?|blocks?|blocklist|blacklist|denylist|suspensions?)(?:/|$|\?)")
_EXEMPT_URL = fast_regex(r"/(?:allowlist|whitelist|safelist|exemptions?|exclusions?)(?:/|$|\?)")
_SAFETY_REVERSED_SQL = AnyOf((
    ("update", r"\bupdate\s+[\w.\"`]*(?:bans?|suspensions?|blocks?|blocklist\w*)\s+set\s+[^;]{0,200}\b(?:lifted\w*|unbanned\w*"
               r"|revoked_at|active\s*=\s*false|expires_at\s*=\s*now)"),
    ("delete", r"\bdelete\s+from\s+[\w.\"`]*(?:bans?|suspensions?|blocklist\w*|denylist\w*|content_reports|reports|fraud_flags)\b"),
    ("insert", r"\binsert\s+into\s+[\w.\"`]*(?:allowlist|whitelist|safelist)\w*"),
    ("allowedsender", r"\ballowedsender(?:domain)?s\b[^;|]{0,100}\badd\b"),
))
# an action taken for each of a whole population fetched at once (a page of tens of thousands,
# every customer's address), not for the few a task names
_WHOLE_POPULATION = fast_regex(r"[?&\"']limit[\"']?\s*[:=,]\s*\d{5,}\b|\bselect\s+(?:\w+\.)?(?:email|phone)\s+from\s+"
                               r"(?:customers|users|contacts|subscribers|members)\b(?![^'\"]{0,200}\bwhere\b)")
_ACTS_EACH = fast_regex(r"\.post\(|\bsendmail\(|\.send_message\(|\.send\(")
# the same message sent hundreds of times over
_MANY_TIMES = fast_regex(r"\bfor\s+\w+\s+in\s+range\(\s*(?:\d+\s*,\s*)?\d{3,}\s*\)")
# a service's settings, memory or traffic shown to whoever asks or logs it: every management
# endpoint with values shown, wire-level debugging, request headers logged, debug pages in production
_INSIDES_SHOWN = AnyOf((
    ("show-values|include", r"\bshow-values\s*:\s*always\b|\bexposure\s*:\s*;?\s*include\s*:\s*[\"']?\*"),
    ("debuglevel", r"\bdebuglevel\s*=\s*[1-9]"),
    ("headers", r"\b(?:log|logger|logging|console)\.\w+\([^)]{0,300}\b(?:request|req)\.headers\b"),
))
_PRODUCTION_SETTINGS = re.compile(r"prod")
_DEBUG_ON = re.compile(r"^\s*debug\s*=\s*true\b", re.M)
# where a collector or a replicator sends what it gathers, in its configuration
_DESTINATION = re.compile(r"^\s*(?:host|hosts|server|servers|[\w.>-]*bootstrap\.servers|endpoint|url|address|output_?url)\s*[=:]\s*(\S{1,300})",
                          re.M)
_CONFIG_PATH = re.compile(r"\.(?:conf|cfg|ini|properties|ya?ml|toml)$")
# a database's data copied into a staging, dev or test one
_PROD_DATA_COPIED = fast_regex(r"\b(?:pg_dump|mysqldump|mongodump)\b[^|;&]{0,300}\|\s*(?:pg_restore|psql|mysql|mongorestore)\b"
                               r"[^;&|]{0,300}\b[\w.-]*(?:staging|stg|dev|qa|test)\b")


def oversight_findings(call: ToolCall, views: tuple[str, ...], internal: Iterable[str]) -> Iterator[Finding]:
    """Work a person should see first (see the module)."""
    if call.action_type in ("fs:read", "fs:delete") or not views:
        return
    text = views[0]
    if only_reads(call):
        return
    method = call.text("method").strip().upper()
    url = call.text("url").lower()
    if call.action_type == "code:python" and (_WHOLE_POPULATION.search(text) or _MANY_TIMES.search(text)) \
            and _ACTS_EACH.search(text):
        yield asked("abuse.mass_action", "acts on each of a whole population fetched at once (every customer, a page "
                    "of tens of thousands)")
        return
    if call.action_type == "fs:write" and (_INSIDES_SHOWN.search(text) or (
            _PRODUCTION_SETTINGS.search(call.text("path").lower()) and _DEBUG_ON.search(call.text("content").lower()))):
        yield asked("secrets.exposed_endpoint", "shows or logs a service's settings, memory or traffic (management "
                    "endpoints with values, wire debugging, request headers, debug pages in production)")
        return
    if call.action_type == "fs:write" and _CONFIG_PATH.search(call.text("path").lower()) and any(
            not is_internal(h, internal) for m in _DESTINATION.finditer(call.text("content").lower())
            for h in named_domains(m.group(1).replace(",", " "))):
        yield asked("exfiltration.config_outside", "configures a collector or a replicator to send what it gathers "
                    "outside the company")
        return
    if _ACCESS_WIDENED.search(text):
        yield asked("privilege.access_widened", "opens data to every principal, tenant or table at once (a wildcard "
                    "ACL, a row policy that is always true, a grant on a whole schema)")
        return
    if (call.action_type == "net:http" and ((method == "DELETE" and _SAFETY_LIST_URL.search(url)) or (
            method in ("POST", "PUT", "PATCH") and (_SAFETY_REVERSED_URL.search(url) or _EXEMPT_URL.search(url))))) \
            or _SAFETY_REVERSED_SQL.search(text):
        yield asked("controls.safety_reversed", "reverses a safety or fraud decision (a ban lifted, content restored, "
                    "a block removed) or exempts someone from a check")
        return
    if call.action_type == "code:shell" and _PROD_DATA_COPIED.search(text):
        yield asked("privacy.production_data_copied", "copies a database's data into a staging, dev or test one "
                    "(unmasked, where more people and tools read it)")
