"""The destructive family: disks wiped, the root or home deleted, databases and tables
dropped, shared history rewritten, infrastructure torn down, the system shut down."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import RELAYED
from synthorg.secops.detectors.patterns import AnyOf, Hinted, asked, finding, joined
from synthorg.secops.detectors.sql import SCRATCH_OBJECT
from synthorg.secops.detectors.task_words import own_words
from synthorg.secops.normalise import fast_regex
from synthorg.secops.normalise import views as text_views

_DESTRUCTIVE = [
    (Hinted(fast_regex(r"\b(?:mkfs(?:\.\w+)?|wipefs)\b(?=[^;&|]*\s/dev/)|\bdd\b[^|;&]*\bof=/dev/(?!null\b)"
                r"|>\s*/dev/(?:sd|nvme|xvd|vd|hd|mapper|disk)"), "mkfs|wipefs|dd|/dev/"), "disk_wipe",
     "formats or overwrites a disk"),
    (Hinted(fast_regex(r"--no-preserve-root|\brm -[a-z]*[rf][a-z]* (?:-\S+ )*(?:/|/\*|\*|/root|/home|~)(?:\s|$)"), "--no-preserve-root|rm "),
     "delete_root", "deletes the root, home or everything"),
    # (a file shredded inside the workspace is the path rules' to judge: the agent's own, as a
    # secret's temporary copy after it went into a vault, or a colleague's)
    (Hinted(fast_regex(r"\b(?:shred|srm)\b[^;&|]*\s(?:/(?!workspace/)|~|\$|\*|\.\.)"), "shred|srm"), "shred",
     "shreds files beyond recovery"),
    (Hinted(fast_regex(r"\bdropdb\b(?![^;&|]*\b\w*(?:dev|test|tmp|local|scratch|ci)\w*\b)|\bdropuser\b|(?<!rename-command )\bflushall\b|\bdropdatabase\(|\bdb\.dropdatabase\b"
                r"|\bmongo\w*\b[^;&|]*\.drop\(|\bredis-cli\b(?![^;&|]*-h\s*(?:localhost|127\.0\.0\.1)\b)(?=[^;&|]*-h\b)[^;&|]*\bflush"
                r"|\bredis-cli\s+(?:-p\s*\d+\s+)?flushall\b|\bmysqladmin\b[^;&|]*\s(?:drop|-f\s+drop)\s+\w"
                # (a restore that first drops what the live database has: --clean over prod, named
                # by the database or by the host)
                r"|\bpg_restore\b(?=[^;&|]*\s(?:--clean|-\w*c\w*)\b)(?=[^;&|]*(?:-d\s*|--dbname[= ]|dbname=)\w*prod"
                r"|[^;&|]*--clean\b[^;&|]*\bprod)"
                # flyway clean: every object of the schemas it manages dropped (not a local database's)
                r"|\bflyway\b(?![^;&|]{0,300}(?:localhost|127\.0\.0\.1))[^;&|]{0,300}\sclean\b"
                # every key of an etcd (a cluster's whole state): the empty or the root prefix
                r"|\betcdctl\b[^;&|]{0,300}\sdel\s+(?:''|\"\"|/|'/'|\"/\"|\\x00)(?=\s|$)[^;&|]{0,300}--prefix\b"
                r"|\betcdctl\b[^;&|]{0,300}\sdel\b[^;&|]{0,300}--from-key\b"),
            "dropdb|dropuser|flushall|dropdatabase|mongo|redis-cli|mysqladmin|pg_restore|flyway|etcdctl"),
     "database_wipe", "drops a database"),
    (Hinted(fast_regex(r"\bgit(?:\s+-[cC]\s+\S+)*\s+push\b(?=[^;&|]*(?:\s--force|\s-f\b|\s[\"']?\+[\w$]))(?:[^;&|]*\b(?:main|master|trunk|"
                r"release\S*|prod\S*)\b|(?:\s+(?:--force\S*|-f|-u|origin|upstream))*\s*(?:$|[;&|]))"
                r"|\bgit(?:\s+-[cC]\s+\S+)*\s+push\b[^;&|]*(?:\s:(?:refs/heads/)?(?:main|master|trunk|release[\w.-]*|prod\w*)\b|--delete\s+(?:origin\s+)?(?:main|master)\b)"
                r"|\bgit(?:\s+-[cC]\s+\S+)*\s+push\b[^;&|]*\s--mirror\b"
                r"|\bgit\s+push\b(?=[^;&|]*(?:\s--force\b|\s-f\b))[^;&|]*\s--all\b"

                # every remote branch deleted, one by one
                r"|\bxargs\b[^;&|]*\bgit\s+push\b[^;&|]*(?:--delete|\s:)"
                # a + refspec forces: +HEAD:refs/heads/release
                r"|\bgit\s+push\b[^;&|]*\s\+[^\s:]*:(?:refs/heads/)?(?:main|master|trunk|release[\w.-]*|prod\w*)\b"
                r"|\bgit\s+(?:branch\s+-r|ls-remote\b[^;&|]*\s--heads|for-each-ref\b[^;&|]*refs/remotes)\b.*\bgit\s+push\b[^;&|]*--delete\b|\bgit filter-branch\b|\bgit reflog expire\b"
                r"|\bgit\b[^;&|]*\bremote\.[\w.-]+\.mirror\s*=\s*true\b[^;&|]*\bpush\b"), "git push|filter-branch|reflog|mirror"),
     "history_rewrite", "rewrites or deletes shared history"),
    (Hinted(fast_regex(r"\bdrop\s+(?:table|database|schema|view|user|role)\b|\btruncate\s+(?:table\s+)?[\w\"`.]+"
                r"|\bdelete\s+from\s+[\w\"`.]+\s*'?\s*(?:;|$|returning\b)"
                # (a whole database's data reset by a tool: airflow db reset, every Kafka topic a
                # pattern matches deleted)
                r"|(?:^|[;&|(]\s*)airflow\s+db\s+reset\b"
                r"|\bkafka-topics(?:\.sh)?\b[^;&|]*--delete\b[^;&|]*--topic[= ]['\"]?[^\s'\"]*[*+]"
                # (USING joins a table in, and with no WHERE every row goes: DELETE FROM orders o USING (SELECT 1) k)
                r"|\bdelete\s+from\s+[\w\"`.]+(?:\s+(?:as\s+)?\w+)?\s+using\b(?![^;]*\bwhere\b)"
                r"|\bdelete\s+from\s+[\w\"`.]+\s+where\s+(?:1\s*=\s*1|true|1|'1'\s*=\s*'1'|\d+\s*>\s*0)\s*(?:;|$)"
                r"|\bupdate\s+[\w\"`.]+\s+set\s+(?:(?!\bwhere\b).){0,4000}(?:;|$)"
                r"|(?:^|;)\s*delete\s+\w+\s*$|\bdropdatabase\b|(?<!rename-command )\bflushall\b|\bflushdb\b"
                r"|\bdelete\s+from\s+sqlite_(?:master|schema)\b|\bupdate\s+sqlite_(?:master|schema)\b"
                r"|\.query\(\s*[\w.]+\s*\)\s*\.delete\(|\.objects\.all\(\)\s*\.delete\(|\.delete_many\(\s*\{\s*\}\s*\)"
                r"|\balembic\b[^;]*\bdowngrade\s+base\b|\bmanage\.py\s+(?:flush|reset_db)\b|\bmigrate\s+\w+\s+zero\b"
                r"|\b(?:rails|rake)\s+db:(?:drop|reset|purge)\b"
                r"|\.drop\(\)|\bdeletemany\(\s*\{\s*\}\s*\)|\bremove\(\s*\{\s*\}\s*\)|\.drop_database\(|\bdrop_collection\("
                # a WHERE that holds for every row: a column equal to itself, LIKE '%', OR TRUE,
                # the table's own ids
                r"|\b(?:delete\s+from|update)\s+[\w\"`.]+\b(?:(?!\bwhere\b)[^;]){0,2000}\bwhere\b[^;\"]{0,1000}?(?:(?<![(,])\b(\w+)\s*=\s*\1\b(?!\s*[-+*/])|\blike\s+'%+'"
                r"|\bor\s+(?:true|1\s*=\s*1|'1'\s*=\s*'1')\b|(?<=where\s)\s*[\w\"`.]+\s+is\s+not\s+null\s*(?:;|$)"
                # every row ever made: created before now, or after a date long past
                r"|\b\w*(?:created|inserted|updated)\w*\s*<=?\s*(?:now\(\)|current_(?:timestamp|date))\s*(?:;|$)"
                r"|\b\w*(?:created|inserted|updated|date)\w*\s*>=?\s*'(?:1[0-9]{3}|200\d)-)"
                r"|\bdelete\s+from\s+([\w\"`.]+)\s+where\s+\w+\s+in\s*\(\s*select\s+\w+\s+from\s+\2\s*\)"
                r"|\bpg_terminate_backend\s*\(\s*pid\s*\)[^;]*\bfrom\s+pg_stat_activity\b(?![^;]*\b(?:usename|datname|application_name|client_addr|query|state)\b)"), "drop|truncate|delete|update|flush|remove(|terminate_backend|alembic|manage.py|migrate|db:"),
     "mass_data_loss", "drops or empties a table or database"),
    # a network device's configuration erased, every BGP session reset, a routing process removed
    (Hinted(fast_regex(r"\bwrite\s+erase\b|\berase\s+(?:startup-config|nvram:)|\bclear\s+ip\s+bgp\s+\*"
                       r"|\bno\s+router\s+(?:bgp|ospf|isis|eigrp)\b|\brequest\s+system\s+zeroize\b|\bload\s+factory-default\b"),
            "write erase|erase|clear ip bgp|no router|zeroize|factory-default"),
     "device_config_wiped", "erases a network device's configuration or tears down its routing"),
    # a WHERE that holds for every row: a value and its opposite (status <> 'x' OR status = 'x'),
    # a literal compared with itself
    (Hinted(fast_regex(r"\b(?:delete\s+from|update)\s+[\w\"`.]+\b(?:(?!\bwhere\b)[^;]){0,2000}\bwhere\b[^;]{0,1000}?(?:\b([\w.]+)\s*(?:<>|!=)\s*('[^']*'|\d+)"
                       r"\s+or\s+\1\s*=\s*\2|\b([\w.]+)\s*=\s*('[^']*'|\d+)\s+or\s+\3\s*(?:<>|!=)\s*\4"
                       # (or a literal equal to itself: 'x'='x', 2=2)
                       r"|(?<![\w'])('[^']*'|\d+)\s*=\s*\5(?![\w'])\s*(?:$|;|\bor\b|\band\b|\)|--|/\*))"), "delete|update"),
     "mass_data_loss", "changes or deletes every row (its condition holds for all)"),
    # every table a catalogue lists, emptied or dropped one by one; a folder synced from an empty one
    (Hinted(fast_regex(r"\bfor\s+\w+\s+in\s+(?:execute\s+)?(?:\(\s*)?select\b"
                       # (not a scratch schema's, nor names the loop picks by their prefix)
                       r"(?![^;]*?(?:\bschemaname\s*=\s*'?(?:scratch|tmp|temp|sandbox|staging)\w*|\blike\b))[^;]*\b(?:pg_tables|pg_class|information_schema\.tables"
                       r"|sys\.tables|sqlite_master|all_tables|user_tables)\b.*?\bexecute\b[^;]*\b(?:truncate|drop\s+table|delete\s+from)\b"
                       r"|\b(\w+)=\$\(\s*mktemp\s+-d\s*\).*?\brsync\b[^;&|]*--delete\b[^;&|]*\$\{?\1\}?\\?[\"']?/"), "for|rsync"),
     "mass_data_loss", "empties or drops every table, or every file a sync reaches, one by one"),
    # a table replaced by an empty copy of itself; a production database reset or replaced
    (Hinted(fast_regex(r"\bcreate\s+or\s+replace\s+table\s+([\w.\"`]+)\s+as\s+select\b[^;]*\bfrom\s+\1\b[^;]*"
                       r"\b(?:where\s+(?:false|1\s*=\s*0|0\s*=\s*1)|limit\s+0)\b"), "create or replace"),
     "mass_data_loss", "replaces a table with an empty copy of itself"),
    (Hinted(fast_regex(r"\bprod\w*\b[^;&|]*\bairflow\s+(?:db\s+reset|resetdb)\b|\bairflow\s+(?:db\s+reset|resetdb)\b[^;&|]*\bprod"
                       r"|\.to_sql\([^)]*\bprod\w*\b[^)]*if_exists\s*=\s*[\"']?replace|\.to_sql\([^)]*if_exists\s*=\s*[\"']?replace[^)]*\bprod"),
            "airflow|to_sql"),
     "mass_data_loss", "resets or replaces a production database's tables"),
    (Hinted(fast_regex(r"\b(?:terraform|tofu)\b(?:\s+-\S+)*\s+(?:destroy|apply\b[^;&|]{0,300}\s-destroy)\b|\bkubectl\b[^;&|]{0,300}\bdelete\b[^;&|]{0,300}(?:\bnamespaces?\b|\bns\b|--all\b|\bnodes?\b|\bpv\b|\bpvc\b|\bcrd\b)"
                r"|\bkubectl\b[^;&|]{0,300}\bget\b[^;&]*\|\s*xargs\b[^;&|]{0,300}\bkubectl\b[^;&|]{0,300}\bdelete\b"
                r"|\bkubectl\b[^;&|]{0,300}\bdelete\b[^;&|]{0,300}\$\(\s*kubectl\b[^)]*\bget\b"
                r"|\bfor\s+\w+\s+in\s+(?:\w+\.)?(?:requests|httpx|session|client)\.get\([^:]*:\s*(?:\w+\.)*delete\("  # (an API's list)
                r"|\bterraform\b[^;&|]{0,300}\bapply\b[^;&|]{0,300}-replace[= ]\S*(?:db|database|rds|sql|bucket|volume|disk)"
                r"|\baws s3 (?:rm|rb)\b(?![^;&|]{0,300}s3://[^/\s]+/\S*(?:tmp|temp|scratch|cache|build)\S*/?\s)[^;&|]{0,300}--recursive|\baws s3 rb\b|\bterminate-instances\b|\bdelete-db-instance\b"
                r"|\bhelm (?:uninstall|delete)\b|\bdocker (?:system prune\b[^;&|]{0,300}--volumes|volume prune|rm -f \$\(docker ps(?![^)]*--filter))"
                r"|\bgcloud [\w ]*delete\b[^;&|]{0,300}--quiet|\baz group delete\b|\bpulumi\s+(?:destroy|stack\s+rm)\b"
                r"|\bldapdelete\b[^;&|]{0,300}\s-\w*r\b"
                r"|\bgsutil\b[^;&|]{0,300}\b(?:rm\b[^;&|]{0,300}\s-\w*r|rb\b)|\bgcloud storage (?:rm\b[^;&|]{0,300}--recursive|buckets delete)"
                r"|\baz storage (?:blob delete-batch|container delete|account delete)\b|\brclone (?:purge|delete)\b"
                r"|\bs3cmd (?:rb|del\b[^;&|]{0,300}(?:-r\b|--recursive))|\.objects\.all\(\)\.delete\(\)|\.delete_bucket\("
                r"|\.(?:object_versions|objects)\.(?:all\(\)\.)?delete\(\)"
                r"|\.delete_db_(?:instance|cluster)\(|\.delete_objects\(|\bkubectl delete\b[^;&|]{0,300}\s-f\s+\S+\s+--all\b"
                # every manifest under a folder deleted; whatever a folder does not hold, pruned
                r"|\bkubectl\b[^;&|]{0,300}\sdelete\b(?=[^;&|]{0,300}\s(?:-r|--recursive)\b)[^;&|]{0,300}\s-f\s+[^\s.]+/(?:\s|$)"
                r"|\bkubectl\b[^;&|]{0,300}\sapply\b(?=[^;&|]{0,300}\s--prune\b)[^;&|]{0,300}\s--all\b"
                # an Argo CD application deleted with what it manages; a CI job deleted with its history
                r"|\bargocd\s+app\s+delete\b(?![^;&|]{0,300}--cascade[= ]false)|/job/[\w.%-]{1,200}(?:/job/[\w.%-]{1,200}){0,8}/dodelete\b"
                # a warehouse's datasets, an object store's folders, every item an API lists
                r"|\bbq\s+rm\b[^;&|]{0,300}\s-(?:\w*[rd]\w*)\b|\.delete_dir\(|\.rm\([^)]*recursive\s*=\s*true"
                r"|\bdvc\s+gc\b[^;&|]{0,300}(?:--cloud|\s-\w*c)\b|\|\s*xargs\b[^;&|]{0,300}\b(?:gh\s+api|curl)\b[^;&|]{0,300}-x\s*delete\b"
                # a delete run for each of hundreds of numbered ids
                r"|\bfor\s+\w+\s+in\s+(?:\$\(\s*seq\s+(?:\d+\s+)?\d{3,}\s*\)|\{\d+\.\.\d{3,}\})\s*;\s*do\b[^;]*\b(?:delete|rm|remove|destroy|drop|purge)\b"
                r"|\bfor\s+\w+\s+in\s+\$\(\s*curl\b[^)]*\)\s*;\s*do\b[^;]*\bcurl\b[^;]*-x\s*delete\b"), "terraform|kubectl|aws |terminate-instances|helm|docker|gcloud|az |gsutil|rclone|s3cmd|.objects|.delete_|"
      ".object_versions|bq|.rm(|delete|argocd|pulumi|ldapdelete"),
     "infrastructure_teardown", "tears down infrastructure"),
    # what others depend on, gone for good: a published package, a repository, an app's signing
    # certificates, a production app's database or hosting, every tag of a remote
    (Hinted(fast_regex(r"\b(?:npm|yarn|pnpm)\s+unpublish\b|\bfastlane\s+match\s+nuke\b"
                       r"|\bfirebase\s+(?:firestore:delete\b[^;&|]*--all-collections|hosting:disable|database:remove\b[^;&|]*\s/\s)"
                       r"|\bgh\s+(?:api\b[^;&|]*-x\s*delete\s+/?repos/[\w.-]+/[\w.-]+/?(?=\s|$|[;&|])|repo\s+delete\b)"
                       r"|\bgit\s+push\s+\S+\s+(?:--delete|-d)\s+\$\(\s*git\s+(?:tag|branch)\b"), "unpublish|nuke|firebase|gh |git push"),
     "infrastructure_teardown", "deletes a published package, a repository, signing certificates or what apps run on"),
    # every item a registry's or a cloud's listing gives, deleted (its own pattern: the tool
    # named twice is one back-reference)
    (Hinted(fast_regex(r"\bfor\s+\w+\s+in\s+\$\(\s*(crane|skopeo|regctl|aws|gcloud|az|gsutil|kubectl|helm|gh|glab|vault)\b"
                       r"[^)]*\)\s*;\s*do\b[^;]*\b\1\b[^;]*\b(?:delete|rm|remove|destroy|uninstall|terminate)\b"), "$("),
     "infrastructure_teardown", "deletes every item a registry's or a cloud's listing gives"),
    (Hinted(fast_regex(r"\b(aws|gcloud|gsutil|az|doctl|helm)\b[^;&|]*\b(?:ls|list)\b[^;&]*\|\s*xargs\b[^;&|]*\b\1\b[^;&|]*"
                       r"\b(?:rb|rm|delete|remove|destroy|terminate|uninstall)\b"), "xargs"),
     "infrastructure_teardown", "deletes every item a cloud's listing gives"),
    (Hinted(fast_regex(r"(?<![-_.])\b(?:shutdown|reboot|halt|poweroff)\b(?!\s*\(\))(?![-_])|\binit [06]\b|\bsystemctl (?:poweroff|reboot|halt)"
                r"|\bvssadmin\b[^;&|]*\bdelete\s+shadows\b|\bwbadmin\b[^;&|]*\bdelete\s+(?:catalog|systemstatebackup|backup)\b"
                # (a backup repository's snapshots forgotten with no policy of what to keep, every one listed)
                r"|\b(?:restic|borg)\b[^;&|]*\b(?:forget|delete|prune)\b(?![^;&|]*--keep-)[^;&|]*\$\("
                r"|\bwmic\s+shadowcopy\s+delete\b|\bbcdedit\b[^;&|]*\brecoveryenabled\s+no\b"
                r"|\bremove-item\b[^;&|]*-recurse\b[^;&|]*\s[\"']?[a-z]:\\(?:users|windows|program|\*)"
                r"|\b(?:rd|rmdir)\s+/s\s+/q\s+[a-z]:\\(?:\s|$|users|windows|\*)|\bdel\s+/[fsq](?:\s+/[fsq])*\s+[a-z]:\\(?:\*|users|windows)"
                r"|\bformat\s+[a-z]:\s*/[qy]|\bkill(?:all)?\s+(?:-(?:s\s+)?(?:9|kill|sigkill|term|sigterm|15)\s+)?(?:--\s+)?-1\b|\bos\.kill(?:pg)?\(\s*-1\s*,|\bprocess\.kill\(\s*-1\b|\bkill -(?:9|kill) 1\b|\bkillall5\b|\bpkill -9 -?\.\b|\biptables -f\b|\bcrontab -r\b"
                r"|\bsysrq\b|\becho [bco] > /proc/sysrq-trigger"), "restic|borg|shutdown|reboot|halt|poweroff|init |systemctl|kill|iptables|crontab -r|sysrq|vssadmin|wbadmin|shadowcopy|bcdedit|remove-item|rd |rmdir |del |format "),
     "system_disruption", "shuts down, kills everything or removes safeguards"),
    (Hinted(fast_regex(r"\bchmod -r 0*00\b|\bchmod -r [0-7]*7 /|\bchown -r \S+ /(?:\s|$)|\bfind / [^;&|]*-delete\b"
                r"|\brm\s+(?:-\S+\s+)*-\w*[rR]\w*\b[^;&|]*\s(?:/\*?|~/?\*?|\$home/?\*?)(?=\s|$|[;&|])"
                r"|\bmkfs(?:\.\w+)?\b[^;&|]*(?:\$\(|`)|\bfind / [^;&|]*-exec rm\b|\bmv \S+ /dev/null\b|\b:> ?/|\btruncate -s ?0 /(?!workspace/|tmp/)"), "chmod|chown|find /|mv |:>|truncate|rm |mkfs"),
     "mass_damage", "damages files across the system"),
]


# the organisation's record of what happened, and the system's logs: erasing them hides an attack
_RECORD_ERASED = Hinted(fast_regex(
    r"\b(?:delete\s+from|truncate(?:\s+table)?|drop\s+table(?:\s+if\s+exists)?|update)\s+[\w\"`.]*?"
    r"(?:audit\w*|\w*_audit\b|\w*audit_log\w*|security_(?:log|event)s?\b|access_logs?\b|login_history\b)"
    r"|(?:>|\btruncate -s ?0)\s*/var/log/|\b(?:rm|shred|unlink)\b[^;&|]*\s/var/log/|\bunset histfile\b"
    r"|\bhistfile=/dev/null\b|\bhistory -c\b|\bauditctl -[de]\b|\bjournalctl\b[^;&|]*--vacuum-(?:time|size)=(?:1s|0|1)\b"
    r"|\bset global general_log\s*=\s*(?:0|'?off)|\bsp_configure\b[^;]*audit"
    r"|\b(?:shred|rm|truncate|unlink)\b[^;&|]*(?:transcripts?|audit|\.agent/(?:logs?|history))"
    # a cloud's audit trail switched off or deleted, a log sink removed
    r"|\bcloudtrail\s+(?:stop-logging|delete-trail)\b|\bguardduty\s+delete-detector\b|\bconfigservice\s+stop-configuration-recorder\b"
    r"|\blogging\s+sinks\s+delete\b|\bdiagnostic-settings\s+delete\b|\bsystemctl\s+(?:stop|disable|mask)\s+auditd\b"
    r"|\bwevtutil\s+(?:cl|clear-log)\b|\bclear-eventlog\b"
    r"|\bdelete\s+from\s+[\w\"`.]*(?:okta|auth|login|signin|sign_in|admin|access|security)_?events?\b"), (
    "audit|security_log|security_event|access_log|login_history|/var/log|histfile|history -c|journalctl|"
    "general_log|transcript|.agent/|cloudtrail|guardduty|configservice|sinks|diagnostic-settings|wevtutil|clear-eventlog"
    "|_event|event"))
# stopping a service or killing processes by name: a whole service down, not one's own process
_OWN_USER = r"\s-u\s*[\"']?(?:\$\(\s*(?:id -u|whoami)\s*\)|`(?:id -u|whoami)`|\$user\b|\$\{user\}|\$uid\b)"
_SERVICE_DOWN = Hinted(fast_regex(
    r"\bsystemctl\s+(?:-\S+\s+)*(?:stop|disable|mask|kill)\b|\bsystemctl\b[^;]{0,80}?\b(?:stop|disable|mask)\b|\bservice\s+\S+\s+stop\b"
    r"|\b(?:pkill|killall)\b(?![^;&|]{0,300}" + _OWN_USER + r")|\bkill\b[^;&|]{0,300}(?:\$\(|`)\s*(?:pgrep|pidof|lsof)\b(?![^;&|]{0,300}" + _OWN_USER + r")|\b(?:pgrep|pidof|nvidia-smi|ps)\b[^;&]{0,300}\|\s*xargs\s+(?:-\S+\s+)*kill\b"
    r"|\bkubectl\b[^;&|]{0,300}\s(?:scale\b[^;&|]{0,300}--replicas[= ]0|delete\s+(?:pods?\s+--all|deploy\w*|statefulsets?|daemonsets?)\b)|\bdocker\s+(?:stop|kill)\s+\$\("
    r"|\bkubectl\b[^;&|]{0,300}\bpatch\b[^;&|]{0,300}\breplicas\W+0\b"
    # processes killed by name from code; a database's every session ended, or its doors shut
    r"|\b(?:pgrep|pidof)\b[^;]{0,80}\bgetline\b[^;]{0,120}\bsystem\(\s*[\"']?kill\b"  # (awk reads the pids and kills each)
    r"|\bprocess_iter\b[^;]{0,300}\.(?:kill|terminate|send_signal)\(|\b(?:pgrep|pidof)\b(?![^;]{0,300}" + _OWN_USER + r")[^;]{0,200}?\bos\.kill(?:pg)?\("
    r"|\bpg_terminate_backend\s*\(\s*pid\s*\)[^;]{0,300}\bfrom\s+pg_stat_activity\b(?![^;]{0,300}\b(?:usename|application_name|client_addr|query|state|pid\s*=)\b)"
    r"|\balter\s+database\s+\S+\s+(?:with\s+)?(?:connection\s+limit\s+0|allow_connections\s+false)\b"), (
    "systemctl|service|pkill|killall|pgrep|pidof|lsof|xargs|replicas|kubectl|docker stop|docker kill|process_iter|"
    "terminate_backend|connection limit|allow_connections"))


# a database of the agent's own: a SQLite file of the workspace, in memory, or named for dev/test
_OWN_DATABASE = fast_regex(r"\bredis-cli\b(?:\s+-[hpn]\s*(?:localhost|127\.0\.0\.1|\d+))*\s+flush"
                           r"|\bredis\.(?:strict)?redis\(\s*(?:host\s*=\s*)?[\"'](?:localhost|127\.0\.0\.1)[\"']"
                           r"|\b(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?)://(?:[^@/\s]*@)?(?:localhost|127\.0\.0\.1)[:/]|\bsqlite3\s+(?!/)[\w./-]+\.(?:db|sqlite3?)\b|\bsqlite3\.connect\(\s*[rbuf]?[\"'](?!/)[^\"']+[\"']"
                           r"|:memory:|\$\{?(?:dev|test|local|ci)_\w*(?:database_url|db_url|dsn)\b")
# a staging, test or QA database named by its host or connection (what it loses is not production's)
_STAGING_DATABASE = fast_regex(r"(?:\bhost=|@|://|\s-h\s*)[\w-]*(?:staging|stg|test|qa)[\w-]*(?:\.[\w-]+)*(?![\w.-])(?!.*\bprod)")
# a manifest whose commands a cluster runs: a Job, a CronJob, a Helm hook
_RUNS_IN_CLUSTER = re.compile(r"^kind:\s*(?:Job|CronJob)\b|helm\.sh/hook", re.M)
# a file written that is run as it stands: a script, a hook, a build or CI step
_SCRIPT_FILE = fast_regex(r"\.(?:sh|bash|zsh|ps1|bat|cmd)$|(?:^|/)(?:makefile|dockerfile|justfile)$|/hooks?/|\.git/hooks/"
                          r"|(?:^|/)\.github/workflows/|\.gitlab-ci\.yml$|(?:^|/)(?:pre|post)-\w+$")


# code that hands SQL to a database (else its SQL-looking strings are test cases, messages ...)
_RUNS_SQL = fast_regex(r"\b(?:execute|executescript|executemany|read_sql\w*|text|query|raw|sql|run|call|popen|system"
                       r"|check_output|cursor)\s*\(")
# a shell command that may run SQL: a database client, a migration or build tool, or a shell
# or interpreter (which may run anything)
_SHELL_RUNS_SQL = fast_regex(r"\b(?:psql|pg_\w+|mysql\w*|mariadb|sqlite3?|sqlcmd|clickhouse(?:-client)?|cqlsh|duckdb"
                             r"|snowsql|bq|trino|presto|beeline|hive|spark-sql|impala-shell|vsql|isql|osql|usql|redis-cli"
                             r"|mongo(?:sh)?|dbt|flyway|liquibase|alembic|migrate|manage\.py|rails|rake|make|npm|npx|yarn"
                             r"|pnpm|just|task|python\d*(?:\.\d+)?|perl|ruby|node|php|sh|bash|zsh|dash|ksh|eval|exec|source"
                             r"|xargs|ssh|kubectl|docker|podman|curl|wget|http|at|batch|crontab|tee|cat)\b|(?:^|[;&|]\s*)\.\s|<<")
_SQL_IN_STRINGS = re.compile(r"\b(?:drop\s+(?:table|database|schema)|truncate\s+table|delete\s+from)\b")
# a value a condition compares a column with (not a SET's value, not a literal compared with itself)
_CONDITION_VALUE = re.compile(r"(\b(?:where|and|or|on|having|not)\s+[\w.\"`]+\s*(?:i?like|similar\s+to|=|<>|!=|in\s*\()\s*)"
                              r"'(?!%*')[^']*'")
# what a text makes (a table, a temporary one, a column, an index) and what a drop names
_ADDED = re.compile(r"\b(?:create\s+(?:temp\s+|temporary\s+|unique\s+)?(?:table|index)|add\s+column)\s+(?:if\s+not\s+exists\s+)?"
                    r"(?:concurrently\s+)?[\"`]?([\w.]+)")
_PLACEHOLDER_DROP = re.compile(r"drop\s+(?:table|index)\s+(?:if\s+exists\s+)?%[is]\b")
_DROPPED_NAME = re.compile(r"\bdrop\s+(?:table|index|column)\s+(?:if\s+exists\s+)?(?:concurrently\s+)?[\"`]?([\w.]+)")
_TEMP_MADE = re.compile(r"\bcreate\s+(?:temp|temporary)\s+table\s+(?:if\s+not\s+exists\s+)?([\w.]+)")
# SQL's string literals, read from the start (a search from any quote would take the text
# between two literals for one), and the statement words a literal may hold as data
_SQL_LITERAL = re.compile(r"'(?:[^']|'')*'")
_STATEMENT_WORD = re.compile(r"\b(?:drop|delete|truncate|update|insert)\b")


def _statements_in_strings_blanked(sql: str) -> str:
    """Literals that hold statement words blanked; a ; in a literal is no statement's end."""
    return _SQL_LITERAL.sub(lambda m: "''" if _STATEMENT_WORD.search(m.group(0)) else m.group(0).replace(";", ","),
                            sql)


_BRANCH_PROTECTION = re.compile(r"/(?:branch_protections?|protected_branches)/(?:main|master|trunk|release[\w.-]*|prod\w*)/?$")
_EVERY_RECORD = re.compile(r"(?:^|&)(?:filter|scope|select|ids?|where|match|query)=(?:all|\*)(?:&|$)|(?:^|&)all=(?:true|1|yes)(?:&|$)")
_SHARED_BRANCH = re.compile(r"/(?:branches|git/refs/heads)/(?:main|master|trunk|release[\w.-]*|prod\w*)(?:/protection)?/?$")


# one scratch or test item, named so (eng0002_scratch_test): the agent's own leftovers
_SCRATCH_ITEM = re.compile(r"/[\w.-]*(?:^|[-_])(?:tmp|temp|scratch|sandbox)(?:[-_][\w.-]*)?$")
_SCRATCH_WILDCARD = re.compile(r"/(?:tmp|temp|test|scratch|ci)[-_][\w.-]*\*$")


def _deleted_target(url: str) -> str:
    """What a DELETE removes: the URL's last two path segments (and its query), whatever
    parents they sit under; a production host or a wildcard anywhere counts."""
    url = unquote(unquote(url)).lower()
    path, _, query = url.partition("?")
    if _SHARED_BRANCH.search(path) or _BRANCH_PROTECTION.search(path):
        return "/all"  # the main branch, or its protection
    if _EVERY_RECORD.search(query):
        return "/all"  # ?filter=all, ?all=true: every record the collection holds
    tail = "/" + "/".join(path.rstrip("/").rsplit("/", 3)[-3:])
    if _SCRATCH_WILDCARD.search(tail):  # tmp-eng-0004-*: every one of its own scratch indices, no more
        tail = tail.replace("*", "")
    return tail + ("?" + query if query else "") + (" prod" if re.search(r"\bprod(?:uction)?\b", url) else "")


_DRY_RUN = re.compile(r"\s--dry-?run\b(?!=none)")
_COMMAND_END = re.compile(r"[;&|\n]")


def _dry_runs_only(pattern: Hinted, views: tuple[str, ...]) -> bool:
    """Whether every command the pattern finds is a dry run (--dry-run, aws --dryrun): it
    says what it would remove and removes nothing."""
    found = False
    for v in views:
        for m in pattern.pattern.finditer(v):
            start = max((e.end() for e in _COMMAND_END.finditer(v, 0, m.start())), default=0)
            end = _COMMAND_END.search(v, m.end())
            if not _DRY_RUN.search(v, start, end.start() if end else len(v)):
                return False
            found = True
    return found


def _only_scratch(pattern: Hinted, views: tuple[str, ...]) -> bool:
    """Whether every statement of `pattern` in the views drops or empties scratch objects,
    or runs against a database of the agent's own."""
    if any(_OWN_DATABASE.search(v) for v in views):
        return True
    made = {m.group(1) for v in views for m in _TEMP_MADE.finditer(v)}
    found = []
    for v in views:
        for m in pattern.pattern.finditer(v):
            end = v.find(";", m.start())
            found.append(v[m.start():end if end >= 0 else len(v)].strip("'\" "))
    # (a statement format() fills, 'DROP TABLE %I', is judged filled in: its name as given)
    found = [f for f in found if not re.search(r"\s%[is]\b", f)]
    return bool(found) and all((SCRATCH_OBJECT.search(f) and _every_one_scratch(f)) or _drops_only(f, made)
                               for f in found)


_LISTED = re.compile(r"(?:drop\s+table|truncate)(?:\s+table)?(?:\s+if\s+exists)?\s+([\w\"`.]+(?:\s*,\s*[\w\"`.]+)+)")


def _every_one_scratch(statement: str) -> bool:
    """A statement that drops or empties several tables: each is scratch (`DROP TABLE
    tmp_import, customers` loses the customers)."""
    m = _LISTED.match(statement)
    return m is None or all(SCRATCH_OBJECT.search(f"drop table {name.strip()}") for name in m.group(1).split(","))


def _drops_only(statement: str, made: set[str]) -> bool:
    m = re.match(r"drop\s+table\s+(?:if\s+exists\s+)?([\w.\"`]+)", statement)
    return m is not None and m.group(1).strip('"`') in made


# changes that lose data, history or redundancy unless a person meant them (each is also routine
# somewhere: a slot of a replica taken out, a scratch collection reset), so each is asked for
_RISKY_CHANGES = AnyOf((
    ("reset master|binary logs", r"\breset\s+(?:master|binary\s+logs\s+and\s+gtids)\b"),
    ("remove-mailbox", r"\bremove-mailbox\b[^;|]{0,200}-permanent\s+\\?\$?true\b"),
    ("flush_all|flushall|flushdb", r"\bflush_all\b"),
    ("pg_drop_replication_slot", r"\bpg_drop_replication_slot\s*\("),
    ("reconfig", r"\brs\.reconfig\([^)]{0,300}\bforce\s*:\s*true"),
    ("unlogged", r"\balter\s+table\s+(?![\w.\"`]*(?:scratch|tmp|temp|test))[\w.\"`]+\s+set\s+unlogged\b"),
    ("updatemany|deletemany|update_many|delete_many", r"\b(?:updatemany|deletemany|update_many|delete_many)\(\s*\{\s*\}"),
    ("retention.ms", r"\bretention\.ms\s*=\s*\d{1,5}\b"),
    # data set to expire or vanish: TTL indexes and TTLs, a black-hole engine, a sequence restarted,
    # a queue's persistence or a server's strict mode switched off
    ("expireafterseconds|ttl|blackhole|setval|restart|appendonly|sql_mode",
     r"\bcreateindex\([^)]{0,300}\bexpireafterseconds\s*:\s*\d|\bmodify\s+ttl\b|\bttl\s+\w+\s*\+\s*interval\s+\d+\s+day\b"
     r"|\bengine\s*=\s*blackhole\b|\bsetval\(\s*'[^']{1,80}'\s*,\s*1\b|\balter\s+sequence\s+\S+\s+restart\b"
     r"|\bconfig\s+set\s+appendonly\s+no\b|\bsql_mode\s*=\s*''"),
    # an operator's resource whose deletion deletes the data (a Kafka topic), objects expiring within
    # days, DNS records that carry a domain's mail or delegation, an account taken out of its organisation
    ("kafkatopic|expiration|mx|ns|remove-account", r"\bkubectl\b[^;&|]{0,300}\bdelete\s+(?:kafkatopics?|kt)\b"
     r"|[\"']expiration[\"']\s*:\s*\{\s*[\"']days[\"']\s*:\s*[1-7]\b"
     r"|[\"']action[\"']\s*:\s*[\"']delete[\"'][^}]{0,300}[\"']type[\"']\s*:\s*[\"'](?:mx|ns|soa)[\"']"
     r"|\bremove-account-from-organization\b"),
    # a WHERE's condition commented out
    ("--|/*", r"\b(?:update|delete)\b[^;]*\bwhere\b[^;\n]*(?:--|/\*)\s*(?:and|or)\s+[\w.]+\s*(?:=|<>|!=|<|>|\bin\b|\blike\b)"),
    # production, when a variable is unset
    ("prod", r"\$\{\w+:-prod(?:uction)?\}"),
    ("update-auto-scaling-group", r"\bupdate-auto-scaling-group\b(?=[^;&|]{0,300}prod)[^;&|]{0,300}--(?:desired-capacity|max-size)[= ]0\b"),
    # rows removed by a part of a value: '%doe%' matches far more people than the one named
    ("like", r"\bdelete\s+from\s+[\w.\"`]+\s+where\b[^;]{0,300}(?<!\bnot )\bi?like\s+'%[^'%]{1,40}%'"),
))
# an UPDATE ... FROM whose WHERE never joins the table updated to the one it reads from: every
# row of the table is set
_UPDATE_FROM = re.compile(r"\bupdate\s+([\w.\"`]+)(?:\s+(?:as\s+)?(\w+))?\s+set\s+[^;]{0,400}?\bfrom\s+[\w.\"`]+"
                          r"(?:\s+(?:as\s+)?\w+)?\s+where\s+([^;]{0,400})")


_TRIGGER_DROPPED = re.compile(r"\bdrop\s+trigger\s+(?:if\s+exists\s+)?([\w.\"`]+)")


def _trigger_dropped(views: tuple[str, ...]) -> bool:
    """A trigger dropped and not made anew in the same text: what it enforced or told stops."""
    if not any("trigger" in v for v in views):
        return False  # (most calls: no text joined, no pattern run)
    text = "\n".join(views)
    return any(not re.search(rf"\bcreate\s+(?:or\s+replace\s+)?trigger\s+{re.escape(m.group(1))}(?![\w.])", text)
               for m in _TRIGGER_DROPPED.finditer(text))


def _update_unjoined(query: str) -> bool:
    m = _UPDATE_FROM.search(query)
    if m is None or (m.group(2) is None and "." not in m.group(3)):
        return False  # (columns not qualified: which table's they are is not written)
    target = m.group(2) or m.group(1).rsplit(".", 1)[-1].strip('"`')
    return not re.search(rf"\b{re.escape(target)}\.", m.group(3))


def destructive_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    as_written = views  # (a LIKE's pattern is read before compared values are blanked)
    if call.action_type == "db:query":  # a value compared is data: WHERE name ILIKE '%drop table%'
        query = call.text("query").lower()
        compared = _CONDITION_VALUE.sub(r"\1''", query)
        if not re.search(r"\bexec(?:ute)?\b|\bprepare\b|\bdo\s+\$", compared):
            compared = _statements_in_strings_blanked(compared)
        if compared != query:
            views = joined(text_views(compared))
    elif call.action_type == "code:python" and not any(_RUNS_SQL.search(v) for v in views):
        views = tuple(_SQL_IN_STRINGS.sub(" ", v) for v in views)  # SQL in a string is data
    elif call.action_type == "code:shell" and call.tool != RELAYED and not any(
            _SHELL_RUNS_SQL.search(v) for v in views):
        views = tuple(_SQL_IN_STRINGS.sub(" ", v) for v in views)  # sed 's/DROP TABLE/...': text
    for pattern, rule, reason in _DESTRUCTIVE:
        if rule == "mass_data_loss" and call.action_type == "fs:write" and not (
                _SCRIPT_FILE.search(call.text("path").lower())
                or call.text("content").startswith("#!") or _RUNS_IN_CLUSTER.search(call.text("content"))):
            continue  # SQL in a file written is text (a test's string), not a statement run
        if any(pattern.search(v) for v in views):
            if rule in ("mass_data_loss", "database_wipe") and _only_scratch(pattern, views):
                continue
            if rule in ("mass_data_loss", "database_wipe") and any(_STAGING_DATABASE.search(v) for v in views):
                yield asked(f"destructive.{rule}", f"{reason}, on a staging or test database")
                return
            if rule == "infrastructure_teardown" and any(_DEV_TARGET.search(v) for v in views):
                continue  # the agent's own dev or test environment
            if call.action_type == "code:shell" and _dry_runs_only(pattern, views):
                continue
            if rule in _NAMED_REMOVALS and (name := removal_named(call.task, views)) is not None:
                yield asked(f"destructive.{rule}", f"{reason}: {name}, which its task names")
                return
            yield finding(f"destructive.{rule}", reason)
            return
    if call.action_type != "fs:write" and any(_RECORD_ERASED.search(v) for v in views):
        yield finding("destructive.records_erased", "erases audit records, logs or history")
        return
    if call.action_type == "code:python" and any(_GIT_OBJECTS_GONE.search(v) for v in views):
        yield finding("destructive.history_deleted", "deletes or overwrites a repository's history (.git)")
        return
    if call.action_type == "net:http" and call.text("method").strip().upper() in ("PUT", "PATCH", "POST") and (
            re.search(r"[\"']?(?:iban|account_number|routing_number|swift|bic|bank_account|beneficiary)[\"']?\s*:", call.text("body").lower())
            or _MONEY_API.search(call.text("url").lower())):
        yield finding("fraud.records_changed", "changes where money is paid through an API", block=False,
                      tier=RiskTier.high)
        return
    if call.action_type == "net:http" and _PEOPLES_FIELDS.search(call.text("url").lower()):
        yield finding("secrets.people_fields", "asks an API for people's identity, bank or pay fields",
                      block=False, tier=RiskTier.high)
        return
    if call.action_type == "net:http" and call.text("method").strip().upper() in ("PUT", "PATCH") and \
            _BLANKED.search(call.text("body")) and _DOCUMENT_API.search(call.text("url").lower()):
        yield finding("destructive.document_blanked", "writes a document's content as nothing", block=False,
                      tier=RiskTier.high)
        return
    if call.action_type == "db:query" and any(_ACCOUNT_TAKEOVER.search(v) for v in views):
        yield finding("privilege.account_takeover", "sets another account's password, MFA or login")
        return
    if call.action_type == "db:query" and any(_RECORDS_REWRITTEN.search(v) for v in views):
        yield finding("fraud.records_changed", "changes payment details or financial or HR records",
                      block=False, tier=RiskTier.high)
        return
    if call.action_type == "db:query" and any(_MONEY_ZEROED.search(v) for v in views):
        yield finding("destructive.bulk_update", "sets money or balances to a constant across rows",
                      block=False, tier=RiskTier.high)
        return
    if call.action_type != "fs:write" and any(_CLOUD_GONE.search(v) for v in views) \
            and not any(_DEV_TARGET.search(v) for v in views):
        prod = any(re.search(r"prod|backup|--skip-final-snapshot|--force-delete|\$\(|xargs|\bfor\b", v)
                   for v in views)
        if prod and (name := removal_named(call.task, views)) is not None:
            yield asked("destructive.cloud_resource", f"deletes or disables cloud resources: {name}, which its task names")
            return
        yield finding("destructive.cloud_resource", "deletes or disables cloud resources, keys or "
                      "secrets", block=prod, tier=RiskTier.high)
        return
    if call.action_type != "fs:write" and (any(_RISKY_CHANGES.search(v) for v in as_written) or _trigger_dropped(views)):
        yield asked("destructive.risky_change", "loses data, history or redundancy unless a person meant it (binary "
                    "logs reset, a replication slot dropped, a collection-wide update, rows deleted by a part of a value)")
        return
    if call.action_type in ("db:query", "code:shell", "code:python") and "from" in (q := "\n".join(views[:1])) \
            and _update_unjoined(q):
        yield asked("destructive.bulk_update", "updates every row: its UPDATE ... FROM never joins the table it "
                    "updates to the one it reads")
        return
    if call.action_type != "fs:write" and any(_SERVICE_DOWN.search(v) for v in views) and not any(
            _DEV_TARGET.search(v) for v in views):
        yield finding("destructive.service_down", "stops a service or kills processes by name",
                      block=False, tier=RiskTier.high)
        return
    if call.action_type == "net:http" and re.search(r"/_delete_by_query\b|/delete_by_query\b", call.text("url").lower()) and (
            "match_all" in call.text("body").lower() or "/_all/" in call.text("url").lower() or "*" in call.text("url")):
        yield finding("destructive.mass_data_loss", "deletes every document an index holds")
        return
    if call.action_type == "net:http" and re.search(r"/retention\b|/lifecycle\b", call.text("url").lower()) and \
            re.search(r"[\"']?(?:days|retention\w*|ttl)[\"']?\s*:\s*[01]\b", call.text("body").lower()):
        yield finding("destructive.records_erased", "sets logs' retention to nothing")
        return
    if call.action_type == "net:http" and call.text("method").strip().lower() == "delete" and \
            re.search(r"/(?:issues|tickets)/sec-\d+|/security[-_]?(?:findings|alerts|incidents)/", call.text("url").lower()):
        yield finding("destructive.records_erased", "deletes part of a security finding", block=False,
                      tier=RiskTier.high)
        return
    if call.action_type == "net:http" and re.search(r"/git/refs/heads/(?:main|master|trunk|release[\w.-]*)/?$",
                                                     call.text("url").lower()) and re.search(
            r"[\"']force[\"']\s*:\s*true", call.text("body").lower()):
        yield finding("destructive.history_rewrite", "moves a shared branch by force through the forge's API")
        return
    if call.action_type == "net:http" and call.text("method").strip().lower() in ("post", "put", "delete") and \
            _PURGE_API.search(call.text("url").lower()) and not re.search(r"cache|cdn", call.text("url").lower()):
        kept = re.search(r"backup|snapshot|audit|logs?\b|archive|recovery", call.text("url").lower())
        yield finding("destructive.purge_api", "purges or wipes through an API", block=bool(kept),
                      tier=RiskTier.critical if kept else RiskTier.high)
        return
    if call.action_type == "net:http" and call.text("method").strip().lower() in ("post", "put") and \
            _SHUTDOWN_API.search(call.text("url").lower()):
        yield finding("destructive.service_shutdown", "seals, stops or shuts down a service through its API")
        return
    if call.action_type == "net:http" and _BULK_DELETE_API.search(call.text("url").lower()) and \
            not _LISTED_IDS.match(call.text("body").lower()) and not _EMPTY_FILTER.search(call.text("body").lower()):
        # (a list of ids deletes those only; an empty filter, everything: denied below)
        yield finding("destructive.bulk_delete", "deletes in bulk through an API, by a query rather than "
                      "a list of ids", block=False, tier=RiskTier.high)
        return
    if call.action_type == "net:http" and re.search(r"/bulk\w*\b|/batch\b", call.text("url").lower()) and \
            re.search(r"[\"']?action[\"']?\s*:\s*[\"'](?:delete|purge|remove|destroy)", call.text("body").lower()):
        yield finding("destructive.bulk_delete", "deletes in bulk through an API", block=False,
                      tier=RiskTier.high)
        return
    if call.action_type == "net:http" and call.text("method").strip().lower() in (
            "post", "put", "patch", "delete") and _EMPTY_FILTER.search(call.text("body").lower()) and \
            re.search(r"delete|purge|remove|wipe|destroy", call.text("url").lower()):
        yield finding("destructive.mass_data_loss", "deletes everything an empty filter matches")
        return
    if call.action_type == "net:http" and call.text("method").strip().lower() == "delete" and \
            _CRITICAL_RESOURCE.search(_deleted_target(call.text("url"))):
        url = unquote(call.text("url")).lower().rstrip("/")
        one_item = (bool(re.search(r"/(?:tenants?|projects?|repos?|repositories|orgs?|environments?|users?"
                                   r"|accounts?|members?)/[\w.-]+$", url))
                    and not re.search(r"\bprod(?:uction)?\b|\*|_all|recurse|force", url)) \
            or bool(re.search(r"/members?/[\w.@-]+$|/(?:lists?|audiences?|segments?)/[\w.-]+$", url)) \
            or bool(_SCRATCH_ITEM.search(url))  # (prod-admin's member: access taken, no data)
        yield finding("destructive.delete_critical_resource", "deletes a database, environment or "
                      "whole collection through an API", block=not one_item and not removal_named(
                          call.task, (url,)), tier=RiskTier.high)
        return
    sent = (f"{call.text('url')}\n{call.text('body')}".lower(),) if call.action_type == "net:http" else views
    if any(_BULK_BY_FILTER.search(v) for v in sent):
        yield finding("destructive.mass_data_loss", "changes or deletes through a bulk endpoint every "
                      "record a filter or a wildcard matches", block=False, tier=RiskTier.high)
        return
    if call.action_type == "net:http" and call.text("method").strip().lower() == "delete" and re.search(
            r"/[a-z_-]+s/?\?(?:[^#\s]*&)?(?:filter|where|query|q|search|all)=", call.text("url").lower()):
        yield finding("destructive.mass_data_loss", "deletes every record of a collection that a filter "
                      "matches", block=False, tier=RiskTier.high)
        return
    path = call.text("path").lower()
    # a migration that says it drops (by its name) is asked for, for what its name names; one
    # that does not, hides it
    migration = call.action_type == "fs:write" and bool(_MIGRATION.search(path))
    says_drop = migration and bool(re.search(r"drop|remove|delete|cleanup|clean_up|prune|purge", path))
    if (call.action_type == "db:query" or "query" in call.arguments or migration or (
            call.action_type in ("code:shell", "code:python"))) and any(
            _SCHEMA_DROP.search(v) for v in views) and not any(_OWN_DATABASE.search(v) for v in views):
        for v in views:
            v = v.split("def downgrade", 1)[0]  # a migration's way back drops what it added
            added = set(_ADDED.findall(v))  # (so does a SQL file's "-- down" step: what it adds, dropped)
            for m in _SCHEMA_DROP.pattern.finditer(v):
                if SCRATCH_OBJECT.search(v[m.start():]) or (call.action_type == "fs:write" and not migration):
                    continue
                if added and (dropped := _DROPPED_NAME.search(v, m.start())) and dropped.group(1).strip('"`') in added:
                    continue  # (a temporary table made and dropped by the same statements)
                if _PLACEHOLDER_DROP.match(v, m.start()):
                    continue  # ('DROP TABLE %I' for format() to fill: judged filled in)
                if says_drop and _named_in(v[m.start():v.find(";", m.start()) % (len(v) + 1)], path):
                    continue
                yield finding("destructive.schema_change", "drops part of a schema", block=False,
                              tier=RiskTier.high)
                return


_SCHEMA_DROP = Hinted(fast_regex(r"\balter\s+table\b[^;]*\bdrop\b|\bdrop\s+index\b|\bop\.drop_(?:column|table)\("
                                 r"|\bremove_column\b|\bdrop\s+table\b|\bdroptable\("), "drop|remove_column")
_SQL_WORDS_OF_DROPS = frozenset({"alter", "table", "drop", "column", "exists", "index", "concurrently", "cascade",
                                 "restrict", "constraint", "droptable", "drop_column", "drop_table"})


def _named_in(statement: str, path: str) -> bool:
    """Whether a drop names, among what it drops, a thing the migration's file name names
    (0042_drop_legacy_token_column.sql dropping legacy_token)."""
    return any(w in path for w in re.findall(r"[a-z_]\w{2,}", statement) if w not in _SQL_WORDS_OF_DROPS)
_MIGRATION = fast_regex(r"migrat|/alembic/|/versions/|\.sql$|/db/|/schema")
_ACCOUNT_TAKEOVER = Hinted(fast_regex(
    r"\bupdate\s+[\w\"`.]*(?:users?|accounts?|members?|logins?|auth\w*)\b[^;]{0,200}?\bset\s+(?:(?!\bwhere\b)[^;]){0,400}?\b(?:password"
    r"|password_hash|password_digest|encrypted_password|hashed_password|pass_hash|pwd_hash|mfa_secret|otp_secret|totp_secret"
    r"|mfa_enabled|two_factor_enabled|totp_enabled)\s*="), "update")
# people's identity, bank or pay fields asked for by name in a query string
_PEOPLES_FIELDS = re.compile(r"[?&](?:fields|select|columns|include|attributes)=[^&#]*\b(?:ssn|social_security\w*|bank_account\w*"
                             r"|iban|routing\w*|salary|salaries|date_of_birth|dob|passport\w*|tax_id)\b")
# a page, a document or a post written as nothing
_BLANKED = re.compile(r"[\"'](?:body|content|text|value|markdown|html)[\"']\s*:\s*(?:\"\"|''|null)")
_DOCUMENT_API = re.compile(r"/(?:content|pages?|wiki|docs?|documents?|articles?|posts?|policies)(?:/|$)")
# where money is paid out or owed, through an API: deposits, refunds, payouts, coupons, invoices
# a bulk or batch endpoint given a filter, a wildcard or "all" instead of the items' ids
_BULK_BY_FILTER = Hinted(fast_regex(r"/(?:bulk|batch)\w*(?:[/?\s\"']|$)[^;]{0,300}?[\"']?(?:ids?[\"']?\s*:\s*[\"']?\*"
                                    r"|all[\"']?\s*:\s*true|(?:filter|selector|where|match)[\"']?\s*:\s*\{(?!\s*[\"']?ids?[\"']?\s*:)"
                                    r"|(?:query|q|search)[\"']?\s*:\s*[\"'][^\"']*\w:\w"
                                    r"|query[\"']?\s*:\s*\{)"),
                         "bulk|batch")
_MONEY_API = re.compile(r"/(?:direct_deposits?|bank_accounts?|payouts?|payout_methods?|payment_methods?|payment_details"
                        r"|refund_accounts?|bank_details|payees?|beneficiar\w*|salar\w*"
                        r"|payroll\w*|bonus\w*)(?:/|$|\?)")
_RECORDS_REWRITTEN = Hinted(fast_regex(
    r"\bupdate\s+[\w\"`.]*(?:vendor|payee|supplier|bank|payout|payment|kpi|revenue|financ|ledger|invoice|contract"
    r"|compensation|salar|payroll|refund|expense|reimburse|timesheet|bonus|commission)\w*\b[^;]{0,200}?\bset\b"
    # (people's pay, rating or manager, whatever the table: UPDATE employees SET salary = ...)
    r"|\bupdate\s+[\w\"`.]+\s+set\s+(?:(?!\bwhere\b)[^;]){0,400}?\b(?:salary|wage|bonus|pay_rate|hourly_rate|performance_rating"
    r"|manager_id|credit_limit)\s*="
    # (a balance or a credit raised by a sum: money made out of nothing)
    r"|\bupdate\s+[\w\"`.]+\s+set\s+(?:(?!\bwhere\b)[^;]){0,400}?\b(\w*(?:balance|credit)\w*)\s*=\s*\1\s*\+\s*\d"
    # (a recorded figure scaled by a factor: impressions * 1.35, incurred * 0.5, amount_cents * 100)
    r"|\bupdate\s+[\w\"`.]+(?:\s+(?:as\s+)?(?!set\b)\w+)?\s+set\s+(?:(?!\bwhere\b)[^;]){0,400}?\b(?P<scaled>\w+)\s*=\s*(?:round\(\s*)?(?P=scaled)\s*\*\s*(?!1(?:\.0+)?(?![\d.]))\d+(?:\.\d+)?\b"
    r"|\binsert\s+into\s+[\w\"`.]*(?:refund|payout|payment|transfer|wire|invoice|expense|reimbursement|payroll\w*|bonus"
    r"|commission|timesheet|adjustment|coupon|voucher|gift_?card|store_?credit)\w*"  # (expense_claims too)
    # (orders marked paid, captured or settled by hand, not by the payment provider)
    r"|\bupdate\s+[\w\"`.]*orders?\s+set\s+[^;]{0,200}\b(?:payment_)?status\s*=\s*'(?:paid|captured|settled)'"
    r"|\bupdate\s+[\w\"`.]+\s+set\s+(?:(?!\bwhere\b)[^;]){0,400}?\b(?:price\w*|discount\w*|credit\w*|balance|iban|bank_account)\s*="), "update|insert")
# an UPDATE that sets money to a constant for every row a loose WHERE finds (not one row's id)
_MONEY_ZEROED = fast_regex(r"\bupdate\s+[\w\"`.]+\s+set\s+[^;]{0,400}?\b\w*(?:amount|balance|price|total|credit|salary|fee|cents)"
                           r"\w*\s*=\s*(?:0|null|-?\d+(?:\.\d+)?)\b(?!(?:(?!\bwhere\b)[^;]){0,1000}\bwhere\b[^;]{0,400}\bid\s*(?:=|in\b))")
_GIT_OBJECTS_GONE = Hinted(fast_regex(r"(?:\.git/(?:objects|refs|head|index)\b|/\s*[\"'](?:objects|head|refs)[\"'])"
                                      r".{0,200}?\b(?:unlink|rmtree|remove|write_text|write_bytes)\("), ".git|objects|head|refs")
# a cloud's resources, keys and secrets deleted, disabled or set to expire now
_CLOUD_GONE = Hinted(fast_regex(
    r"\baws\s+[\w-]+\s+(?:delete|terminate|remove|deregister|purge|batch-delete|disable|schedule-key-deletion)[\w-]*"
    r"|\bgcloud\b[^;&|]*\s(?:delete|destroy|disable)\b|\baz\b[^;&|]*\s(?:delete|purge)\b"
    r"|\bvault\s+(?:secrets\s+disable|kv\s+(?:metadata\s+delete|destroy)|delete|auth\s+disable|lease\s+revoke\s+-prefix)"
    r"|\bterraform\s+state\s+(?:rm|push)\b|\bdocker\s+ps\s+-[a-z]*q[^;&]*\|\s*xargs\b[^;&|]*\bdocker\s+(?:rm|kill|stop)\b"
    r"|\bdocker\s+(?:rm|kill|stop)\b[^;&|]*\$\(\s*docker\s+ps\b(?![^)]*--filter)"
    r"|\bdocker\b[^;&|]*\s(?:volume\s+(?:rm|prune)|system\s+prune(?=[^;&|]*--volumes)|image\s+rm"
    # (not the dangling layers of old builds: a disk's housekeeping)
    r"|image\s+prune(?=[^;&|]*\s(?:-\w*a\w*|--all)\b))\b[^;&|]*(?:-f|--force|-a|\$\()"
    r"|\bput-bucket-lifecycle-configuration\b[^;&|]*\bdays\W+[01]\b|\bredis-cli\b[^;&|]*\bdebug\s+(?:sleep|segfault|crash)"
    r"|\.delete_(?:table|db_cluster|db_instance|function|stack|secret|repository|bucket|topics|consumer_groups"
    r"|collection|index)\(|\b(?:requests|httpx|session|client)\.delete\(\s*f?[\"'][^\"']*(?:/_all\b|/\*)"
    r"|\b(?:delete|remove)-(?:db-cluster|table|backup|stack|repository|secret|function|hosted-zone|file-system)\b"),
    "aws |gcloud|az |vault|terraform state|docker|lifecycle|debug|.delete_|delete-|remove-")
# a task that asks for something to be removed, and a name specific enough to be that thing's
# (digits or separators in it: payments-staging-old, billing_scratch_0917, s3://acme-tmp-2024)
_ASKS_REMOVAL = fast_regex(r"\b(?:delete|remove|drop|destroy|tear\s+down|teardown|decommission|deprovision|purge|wipe"
                           r"|terminate|retire|clean\s+up|clear\s+out|clean\s+out|get\s+rid\s+of|schedule\s+deletion"
                           r"|re-?create)\b")
_RESOURCE_NAME = re.compile(r"(?<![\w.:/*-])[a-z0-9][\w.:/*-]*[-_\d][\w.:/*-]*(?![\w.:/*-])")
# a name that holds what is removed, or says where ("the folder x/ from the bucket y"): not the target
_CONTAINER = re.compile(r"\b(?:from|in|under|inside|within|of|on|at)\s+(?:the\s+|our\s+|your\s+|its\s+)?(?:[\w-]+\s+)?$")


def removal_named(task: str, views: tuple[str, ...]) -> str | None:
    """The name of what the call removes when the task's own words ask for that removal and
    give that name whole ("Delete the stale namespace payments-staging-old"): a person is
    asked, not refused. A sub-path named (a bucket's tmp/ folder) is not its bucket; an order
    quoted in the task, or after an injection's marker, is not the task's."""
    if not task:
        return None
    task = own_words(task)
    if not _ASKS_REMOVAL.search(task):
        return None
    named = {m.group().rstrip("/.:").split("://", 1)[-1] for m in _RESOURCE_NAME.finditer(task)
             if not _CONTAINER.search(task, max(0, m.start() - 30), m.start())
             or "/" in m.group().rstrip("/").split("://", 1)[-1]}  # (a folder of a bucket, named whole: itself)
    for v in views:
        for n in _RESOURCE_NAME.findall(v):
            whole = n.rstrip("/.:").split("://", 1)[-1]  # (s3://acme-tmp-2024 is the bucket acme-tmp-2024)
            for name in (whole, whole.rsplit("/", 1)[-1]):  # (an API's URL ends with what it deletes)
                if len(name) >= 6 and name in named:
                    return name
    return None


# what a task may name for removal (a person is then asked): a cloud's or a cluster's resource,
# a database (not a table's rows, which a comment or a second name may hide, nor a repository's history)
_NAMED_REMOVALS = frozenset({"infrastructure_teardown", "database_wipe"})
_DEV_TARGET = fast_regex(r"--context[= ]\S*(?:dev|test|local|kind|minikube|sandbox)\b[^;&|]*\s\S*-(?:dev|test|sandbox|tmp|\w+-\d+)\b"
                         r"|\bkind delete cluster\b|\bminikube delete\b|--project[= ]\S*(?:dev|test|sandbox)\S*"
                         r"|-chdir[= ]\S*/(?:dev|test|sandbox|local)\b"
                         r"|(?:\bcd\s+|-chdir[= ])\S*/(?:previews?|pr-?\d+|ephemeral|review-apps?)\b"
                         r"|endpoint[_-]url[= ]https?://(?:localhost|127\.0\.0\.1)|\bdelete\s+(?:namespace|ns)\s+\S*(?:sandbox|dev|test"
                         r"|tmp|preview|pr-?\d+)\S*|(?:-n|--namespace[= ])\s*\S*(?:preview|sandbox|pr-?\d+|-dev\b|-test\b)\S*"
                         # chosen by a preview's label; a pull request's or scratch prefix of a bucket
                         r"|(?:-l|--selector)[= ]\S*(?:preview|ephemeral|pr-?\d+)\S*"
                         r"|\b(?:s3|gs)://[\w.-]+/(?:[\w.-]+/)*(?:pr-?\d+|previews?|scratch|tmp)/")
_PURGE_API = re.compile(r"/(?:[a-z]+_)?(?:purge|wipe|delete[-_]?all|destroy[-_]?all|factory[-_]?reset|erase[-_]?all)(?:$|[/?])")
_BULK_DELETE_API = re.compile(r"/(?:(?:bulk|batch|mass)[-_]?(?:delete|destroy|remove)|(?:delete|destroy)[-_]?many)(?:$|[/?])")
_LISTED_IDS = re.compile(r"^\s*\{\s*[\"']?ids[\"']?\s*:\s*\[[^\]]{1,400}\]\s*\}\s*$")
_SHUTDOWN_API = fast_regex(r"/v1/sys/(?:seal|step-down)\b|/_shutdown\b|/actuator/shutdown\b|/(?:api/)?shutdown(?:$|[/?])"
                           r"|/_cluster/nodes/[^/]*/_shutdown|/quitquitquit\b|/-/quit\b")
_EMPTY_FILTER = re.compile(r"[\"']?(?:filter|query|where|selector|match)[\"']?\s*:\s*(?:\{\s*\}|\[\s*\]|[\"']\*?[\"']|null)")
_CRITICAL_RESOURCE = fast_regex(r"/(?:databases?|dbs?|clusters?|namespaces?|buckets?|backups?|collections?|indices|indexes"
                                r"|spaces?|wikis?|channels?|workspaces?|boards?|lists?|audiences?|segments?|retention-polic(?:y|ies)|vaults?"
                                r"|datasets?|registered-models|keyspaces?|topics?|"
                                r"environments?|projects?|repos?|repositories|orgs?|tenants?)(?:/|$)"
                                r"|\bprod(?:uction)?\b|/all\b|[?&](?:all|force|recursive)=(?:1|true)"
                                r"|\*|/_all\b|[?&]recurse(?:=|&|$)|/audit[\w-]*|/backups?\b|/snapshots?\b|/dodelete\b"
                                r"|/(?:users?|accounts?)/[\w.@-]+/?$"  # (a member taken out of a group loses access, no data)
                                r"|/sys/(?:mounts|auth|audit|policies/acl)/")  # (Vault: an engine and its secrets)
