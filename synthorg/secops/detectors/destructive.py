"""The destructive family: disks wiped, the root or home deleted, databases and tables
dropped, shared history rewritten, infrastructure torn down, the system shut down."""

from __future__ import annotations

import re
from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.patterns import Hinted, finding
from synthorg.secops.normalise import fast_regex

_DESTRUCTIVE = [
    (Hinted(fast_regex(r"\bmkfs(?:\.\w+)?\b|\bwipefs\b|\bdd\b[^|;&]*\bof=/dev/(?!null\b)"
                r"|>\s*/dev/(?:sd|nvme|xvd|vd|hd|mapper|disk)"), "mkfs|wipefs|dd|/dev/"), "disk_wipe",
     "formats or overwrites a disk"),
    (Hinted(fast_regex(r"--no-preserve-root|\brm -[a-z]*[rf][a-z]* (?:-\S+ )*(?:/|/\*|\*|/root|/home|~)(?:\s|$)"), "--no-preserve-root|rm "),
     "delete_root", "deletes the root, home or everything"),
    (Hinted(fast_regex(r"\bshred\b|\bsrm\b"), "shred|srm"), "shred", "shreds files beyond recovery"),
    (Hinted(fast_regex(r"\bdropdb\b(?![^;&|]*\b\w*(?:dev|test|tmp|local|scratch|ci)\w*\b)|\bdropuser\b|\bflushall\b|\bdropdatabase\(|\bdb\.dropdatabase\b"
                r"|\bmongo\w*\b[^;&|]*\.drop\(|\bredis-cli\b[^;&|]*\bflush"), "dropdb|dropuser|flushall|dropdatabase|mongo|redis-cli"),
     "database_wipe", "drops a database"),
    (Hinted(fast_regex(r"\bgit push\b(?=[^;&|]*(?:\s--force|\s-f\b|\s\+\w))(?:[^;&|]*\b(?:main|master|trunk|"
                r"release\S*|prod\S*)\b|(?:\s+(?:--force\S*|-f|-u|origin|upstream))*\s*(?:$|[;&|]))"
                r"|\bgit push\b[^;&|]*(?:\s:(?:main|master)\b|--delete\s+(?:origin\s+)?(?:main|master)\b)"
                r"|\bgit push\b[^;&|]*\s--mirror\b|\bgit filter-branch\b|\bgit reflog expire\b"), "git push|filter-branch|reflog"),
     "history_rewrite", "rewrites or deletes shared history"),
    (Hinted(fast_regex(r"\bdrop\s+(?:table|database|schema|view|user|role)\b|\btruncate\s+(?:table\s+)?[\w\"`.]+"
                r"|\bdelete\s+from\s+[\w\"`.]+\s*(?:;|$|returning\b)"
                r"|\bdelete\s+from\s+[\w\"`.]+\s+where\s+(?:1\s*=\s*1|true|1|'1'\s*=\s*'1'|\d+\s*>\s*0)\s*(?:;|$)"
                r"|\bupdate\s+[\w\"`.]+\s+set\s+(?:(?!\bwhere\b).)*(?:;|$)"
                r"|\bdelete\s+\w+\s*$|\bdropdatabase\b|\bflushall\b|\bflushdb\b"
                r"|\.drop\(\)|\bdeletemany\(\s*\{\s*\}\s*\)|\bremove\(\s*\{\s*\}\s*\)"), "drop|truncate|delete|update|flush|remove("),
     "mass_data_loss", "drops or empties a table or database"),
    (Hinted(fast_regex(r"\bterraform (?:destroy|apply -destroy)\b|\bkubectl delete\b[^;&|]*(?:\bnamespace\b|\bns\b|--all\b|\bnodes?\b|\bpv\b)"
                r"|\baws s3 (?:rm|rb)\b[^;&|]*--recursive|\baws s3 rb\b|\bterminate-instances\b|\bdelete-db-instance\b"
                r"|\bhelm (?:uninstall|delete)\b|\bdocker (?:system prune|volume prune|rm -f \$\(docker ps)"
                r"|\bgcloud [\w ]*delete\b[^;&|]*--quiet|\baz group delete\b"
                r"|\bgsutil\b[^;&|]*\b(?:rm\b[^;&|]*\s-\w*r|rb\b)|\bgcloud storage (?:rm\b[^;&|]*--recursive|buckets delete)"
                r"|\baz storage (?:blob delete-batch|container delete|account delete)\b|\brclone (?:purge|delete)\b"
                r"|\bs3cmd (?:rb|del\b[^;&|]*(?:-r\b|--recursive))|\.objects\.all\(\)\.delete\(\)|\.delete_bucket\("
                r"|\.delete_db_(?:instance|cluster)\(|\.delete_objects\(|\bkubectl delete\b[^;&|]*\s-f\s+\S+\s+--all\b"), "terraform|kubectl|aws |terminate-instances|helm|docker|gcloud|az |gsutil|rclone|s3cmd|.objects|.delete_"),
     "infrastructure_teardown", "tears down infrastructure"),
    (Hinted(fast_regex(r"\b(?:shutdown|reboot|halt|poweroff)\b(?!\s*\(\))|\binit [06]\b|\bsystemctl (?:poweroff|reboot|halt)"
                r"|\bkill(?:all)? -9 -1\b|\bkill -(?:9|kill) 1\b|\bkillall5\b|\bpkill -9 -?\.\b|\biptables -f\b|\bcrontab -r\b"
                r"|\bsysrq\b|\becho [bco] > /proc/sysrq-trigger"), "shutdown|reboot|halt|poweroff|init |systemctl|kill|iptables|crontab -r|sysrq"),
     "system_disruption", "shuts down, kills everything or removes safeguards"),
    (Hinted(fast_regex(r"\bchmod -r 0*00\b|\bchmod -r [0-7]*7 /|\bchown -r \S+ /(?:\s|$)|\bfind / [^;&|]*-delete\b"
                r"|\bfind / [^;&|]*-exec rm\b|\bmv \S+ /dev/null\b|\b:> ?/|\btruncate -s ?0 /"), "chmod|chown|find /|mv |:>|truncate"),
     "mass_damage", "damages files across the system"),
]


def destructive_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    for pattern, rule, reason in _DESTRUCTIVE:
        if rule == "mass_data_loss" and call.action_type == "fs:write":
            continue  # SQL in a file written is text (a test's string), not a statement run
        if any(pattern.search(v) for v in views):
            yield finding(f"destructive.{rule}", reason)
            return
    if call.action_type == "net:http" and call.text("method").strip().lower() == "delete" and \
            _CRITICAL_RESOURCE.search(call.text("url").lower()):
        yield finding("destructive.delete_critical_resource", "deletes a database, environment or "
                      "whole collection through an API")
        return
    if call.action_type == "db:query" or "query" in call.arguments:
        for v in views:
            if re.search(r"\balter\s+table\b[^;]*\bdrop\b|\bdrop\s+index\b", v):
                yield finding("destructive.schema_change", "drops part of a schema", block=False,
                              tier=RiskTier.high)
                return


_CRITICAL_RESOURCE = fast_regex(r"/(?:databases?|dbs?|clusters?|namespaces?|buckets?|backups?|"
                                r"environments?|projects?|repos?|repositories|orgs?|tenants?)(?:/|$)"
                                r"|\bprod(?:uction)?\b|/all\b|[?&](?:all|force|recursive)=(?:1|true)")
