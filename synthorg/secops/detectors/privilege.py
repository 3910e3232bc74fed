"""The privilege family: sudo and its kin, setuid bits, sudoers and persistence, container
escapes, cloud and cluster roles, SQL grants (sql.py), and privileges asked for in words."""

from __future__ import annotations

import re
from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import writes_prose
from synthorg.secops.detectors.patterns import REPORTING_WORDS, AnyOf, Hinted, finding, joined, negated
from synthorg.secops.detectors.sql import QUERY_READS, SQL_ACCESS_GIVEN, SQL_PRIVILEGE_PARTS
from synthorg.secops.normalise import fast_regex

# becoming root (or another user) for the command run now
_AS_ROOT_NOW = (  # (hints, pattern)
    ("sudo|doas|pkexec|runas",
     r"(?:^|[;&|(`]\s*|\b(?:xargs|nohup|exec|time|env|then|do|else|-c)\s+)(?:sudo|doas|pkexec|runas)\b"
     # (a probe runs nothing as root: `sudo -n true`, `sudo -l`)
     r"(?!\s+-n\s+true\b|\s+-n?l\b|\s+-ln\b|\s+-n\s+-l\b|\s+--list\b|\s+-nv\b|\s+-vn\b)|\bsudo\s*-[a-z]*[isu]"
     r"|(?:^|[;&|(`]\s*)(?:[a-z_][a-z0-9_]*=\S*\s+)+(?:sudo|doas|pkexec)\b"),  # VAR=... sudo
    ("which|command -v|type -p",  # sudo run by the path a lookup gives: $(which sudo) -u root sh
     r"(?:\$\(|`)\s*(?:which|command -v|type -p)\s+(?:sudo|doas|pkexec|su)\s*(?:\)|`)"),
    ("/sudo|/doas|/pkexec|/su|sh -",
     r"(?:^|[;&|(`]\s*)/[\w./-]*/(?:sudo|doas|pkexec|su)(?:\s|$)|\b(?:ba|da|z|k)?sh\s+-(?:\w+\s+-)*p\b"),
    ("su",  # (a `su` at a line's end has no other text to hint it)
     r"(?:^|[;&|(`]\s*)su(?:\s+-|\s+root\b|\s+-c\b|\s*$|\s*[;&|])"),
    ("passwd|useradd|adduser|usermod|groupadd|gpasswd|newgrp|vipw|sg |net ",
     r"(?:^|[;&|]|(?<!getent)\s)(?:passwd|chpasswd|useradd|adduser|usermod|groupadd)\b|\b(?:gpasswd|newgrp|vipw)\b"
     r"|\bsg\s+(?:root|docker|sudo|wheel)\b|\bnet\s+(?:localgroup|group)\s+\S*admin\S*\s+\S+\s+/add"),
    # tools whose work is to run as another user or with other capabilities
    ("runuser|setpriv|capsh|systemd-run|machinectl|unshare",
     r"\b(?:runuser|setpriv|capsh)\b(?!\s+--print\b)|\bsystemd-run\b[^;&|]*--uid[= ]?(?:0|root)\b|\bmachinectl\b[^;&|]*\b(?:shell|login)\b"
     r"|\bunshare\b[^;&|]*\s-[a-z]*r"),
)
# the Docker engine's API, after its socket, asked for lists (containers, images), its version or
# health: what it runs is read, nothing is started (paths.py reads it the same way)
DOCKER_LISTS_ASKED = (r"\s+(?:-[a-z]+\s+){0,4}[\"']?http://[\w.]+(?::\d+)?/(?:v[\d.]+/)?"
                      r"(?:(?:containers|images|networks|volumes)/json|info|version|_ping)\b")
# privileges that last: setuid bits, sudoers, keys, persistence, container escapes, roles
_LASTING = (
    ("add-localgroupmember|localgroup",  # Windows: a member added to the local Administrators
     r"\badd-localgroupmember\b[^;&|]*\badministrators\b"),
    ("sysadminctl",  # macOS: an administrator account made
     r"\bsysadminctl\s+-adduser\b[^;&|]*\s-admin\b"),
    ("helm|--set|install",
     r"--set(?:-string)?[= ]\s*['\"]?[\w.\[\]-]*(?:privileged=true|hostpid=true|hostnetwork=true|hostipc=true"
     r"|hostpath\.path=/(?=[\s'\"]|$))|\binstall\b[^;&|]*\s-m\s*0?[2467][0-7]{3}\b"),
    ("sacctmgr|pod-security",
     r"\bsacctmgr\b[^;&|]*\badminlevel\s*=\s*(?:admin\w*|operator)\b"
     r"|\bpod-security\.kubernetes\.io/enforce\s*=\s*privileged\b"),
    ("users create|add-role|createsuperuser",
     r"\bairflow\s+users\s+(?:create|add-role)\b[^;&|]*\s(?:-r|--role)\s+admin\b"
     r"|\bmanage\.py\s+createsuperuser\b(?![^;&|]*--username[= ]\S*(?:test|dev|local))"),
    ("chmod|chown|chgrp|-perm|getcap",
     r"\bchmod\b[`\s]+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s|0?[2467][0-7]{3})\b|\bchown\s+(?:-\w+\s+)*root\b"
     r"|\bchgrp\s+(?:-\w+\s+)*(?:root|sudo|wheel)\b|-perm\s+[-/]?(?:[ug]=s|[246]000|\+s)\b|\bgetcap\s+-r\b"),
    ("visudo|sudoers|setcap|nsenter|docker.sock|authorized_keys|cap_setuid|polkit|ld_preload|ld.so.preload|"
     "insmod|modprobe|/etc/|.ssh/rc|bashrc|.profile|:2375|:2376|:10250|:2379",
     r"\bvisudo\b(?!\s+-c\b)|/etc/sudoers|\bsetcap\b|\bnsenter\b"
     # (the Docker socket looked at, or asked for lists or its version, gives nothing)
     r"|(?<!\bls -l )(?<!\bls -la )(?<!\bls -al )(?<!\bstat )(?<!\[ -s )(?<!test -s )/var/run/docker\.sock"
     r"(?!" + DOCKER_LISTS_ASKED + r")|\bauthorized_keys?\b|\bcap_setuid\b"
     r"|\bpolkit\b|\bld_preload\b(?!=(?:/usr)?/lib(?:64)?/[\w./-]+\.so[\w.]*\s)|/etc/ld\.so\.preload|\binsmod\b|\bmodprobe\b"
     r"|/etc/(?:passwd|group|pam\.d|security)\b[^;|&]*(?:>|\btee\b)|>>?\s*/etc/(?:passwd|group|profile|bash\.bashrc|crontab)"
     r"|/etc/cron|/etc/systemd/|/etc/init\.d/|/etc/profile\.d/|/etc/environment\b|\.ssh/rc\b|\bbashrc\b|\.profile\b"
     r"|:(?:2375|2376|10250|2379)/(?!(?:healthz|livez|readyz|metrics|version)\b)"),
    # a back door in code: what a web request carries, run as code
    ("eval(|exec(", r"\b(?:eval|exec)\(\s*(?:flask\.)?(?:request|req|self\.request)\.(?:get|post|args|form|json|data|values|body"
     r"|query_params|get_json|cookies|headers)\b"),
    # a Vault policy over every path with the power to change any: root in all but name
    ("capabilities", r"\bpath\s+[\\\"']+\*[\\\"']+\s*\{[^}]*\bcapabilities\b[^}]*[\"'](?:sudo|root|\*)[\"']"),
    ("setuid|seteuid|setreuid|setresuid|setgid(0|chown(|chmod(|s_isuid|s_isgid|privileged",
     r"\bos\.set(?:e|re|res)?uid\(|\bos\.setgid\(0|\bctypes\b[^;]*\bsetuid\(|\bl?chown\(\s*[^,()]+,\s*0\s*,"
     r"|\bchmod\([^()]*,\s*0o?[2467][0-7]{3}\b|\bstat\.s_is[ug]id\b|\bsecurity\.privileged[= ]\s*true\b"),
    ("cron|systemctl|launchctl|update-rc|chkconfig",
     r"\bcrontab\b[^;&|]*@reboot|\bsystemctl enable\b|\b(?:launchctl load|update-rc\.d|chkconfig \S+ on)\b"),
    ("privileged|/:/|pid=host|pid host|cap-add|-u 0|-u root|-u=0|-u0|-uroot|-u=root|--user|security-opt|=host| host|device|"
     "--mount|hostpid|hostnetwork|hostipc|hostpath",
     r"--privileged\b|\s-v\s*/:/|--pid[= ]host|--cap-add[= ](?:all|sys_admin|sys_ptrace|sys_module|sys_rawio)"
     r"|\b(?:docker|podman)\s+exec\b(?:\s+--?[a-z][\w-]*(?:=\S+)?)*\s(?:-u|--user)[= ]?(?:0|root)\b|--user[= ](?:0|root)\b"
     r"|--security-opt[= ](?:apparmor|seccomp)[=:]unconfined|--(?:userns|ipc|uts|net|network)[= ]host\b(?=[^;&|]*--privileged)"
     r"|--(?:userns|ipc|uts)[= ]host|--device[= ]/dev/(?:sd|nvme|mem|kmem)"
     r"|--mount\s+type=bind,\s*(?:source|src)=/(?:,|\s|$)|\bprivileged:\s*true|\bhost(?:pid|network|ipc):\s*true"
     r"|\bhostpath:\s*\{?\s*path:\s*/(?:\s|$|,|\})"),
    ("cluster-admin|iam|role assignment|--as|sts |rolebinding|kubectl|systemctl|system:masters|vault",
     r"\bkubectl\b(?![^;&|]{0,300}\b(?:get|describe|auth\s+can-i)\b)[^;&|]{0,300}\bcluster-admin\b|\bkubectl\b[^;&|]{0,300}\bcreate (?:cluster)?rolebinding\b(?![^;&|]{0,300}--(?:cluster)?role[= ](?:[\w-]*-)?(?:view|viewer|reader|read[\w-]*)\b)"
     r"|\bkubectl\b[^;&|]{0,300}\b(?:run|patch|create)\b[^;&|]{0,300}(?:--privileged|[\"']?(?:privileged|hostpid|hostnetwork)[\"']?\s*:\s*true)"
     r"|\bsystemctl (?:link|edit|set-environment)\b|\biam\b[^;&|]{0,300}\b(?:attach|put)-[\w-]*policy\b"
     r"|\biam\b[^;&|]{0,300}\b(?:create-access-key|add-user-to-group|create-login-profile|update-assume-role-policy)\b"
     # (a key rotated: the new one piped straight into the secret store, never shown)
     r"(?![^;&|]{0,200}\|\s*(?:\{[^};&|]{0,120}[;&]\s*)?vault\s+(?:kv\s+put|write)\b)"
     r"|\badd-iam-policy-binding\b[^;&|]{0,300}roles/(?:owner|editor|[\w.]*admin)|\baz role assignment create\b(?![^;&|]{0,300}(?:reader|viewer))"
     r"|--as(?<=\s--as)[= ]system:|--as-group[= ]system:masters|\bsts assume-role\b[^;&|]{0,300}admin"
     # a role widened to every verb or resource, the cluster's admin group, Vault's root policy
     r"|\bkubectl\b[^;&|]{0,300}\b(?:patch|edit|apply|replace)\b[^;&|]{0,300}\b(?:cluster)?roles?\b[^;&|]{0,300}[\"']\*[\"']"
     r"|\bsystem:masters\b|\bvault\s+write\b[^;&|]{0,300}\b(?:token_)?policies=[\w,]*\broot\b"),
    # the kernel's hooks a container escape or a rootkit goes through
    ("release_agent|notify_on_release|core_pattern|/proc/sys/|sysctl|kexec|node/",
     r"\brelease_agent\b|\bnotify_on_release\b|/proc/sys/kernel/(?:core_pattern|modprobe)|>\s*/proc/sys/"
     r"|\bsysctl\b[^;&|]{0,300}(?:\s-w\b|\s[a-z_]+\.[\w.]+=)|\bkexec\b|\bkubectl\b[^;&|]{0,300}\bdebug\b[^;&|]{0,300}\bnode/"),
    # hooks run on every commit from outside the workspace; a web route that runs what it is sent
    ("hookspath|request.",
     r"\bcore\.hookspath\s+[\"']?(?:/(?!workspace\b)|~)"
     r"|\b(?:os\.popen|os\.system|subprocess\.\w+|eval|exec)\(\s*(?:flask\.)?request\.(?:args|form|values|json|data|get_json)"),
    # security checks switched off in the project's own config: tests of auth skipped, scans
    # excluding everything, a secret scanner's allowlist matching every path
    ("--ignore|--deselect|not secur|not auth|not perm|sonar.exclusions|.*|skip|scan",
     r"--(?:ignore|deselect)[= ]\S*(?:secur|auth|perm|acl|csrf|xss|inject|crypt)|-k\s+[\"']?not\s+(?:secur|auth|perm)"
     r"|\bsonar\.exclusions\s*=\s*\*\*/\*|\bpaths\s*=\s*\[\s*(?:'{3}|[\"'])?\.\*(?:'{3}|[\"'])?\s*\]"
     r"|\bskip[-_]?(?:security|secrets?[-_]?scan|sast|checks?)\s*[:=]\s*true|\bsecurity[-_]?scan\w*\s*[:=]\s*(?:false|off|disabled)"),
    ("admin|superuser|root|bypass|pass|pw|secret|token",
     r"\bif\s+\w*(?:pass|pw|pwd|secret|token)\w*\s*==\s*[\"'][^\"']{6,}[\"']\s*:\s*(?:;\s*)?return\s+true\b"  # a master password
     r"|\bif\b[^:\n]{0,120}==\s*[\"'][^\"']{6,}[\"']\s*:\s*(?:;\s*)?return\s+(?:\w+\.)*(?:admin|superuser|root)\w*\b"
     r"|\b(?:is_admin|is_superuser|authenticated)\s*=\s*true\b[^;\n]{0,40}#\s*(?:bypass|backdoor|debug)"),
    ("administratoraccess|poweruseraccess|iamfullaccess|roles/owner|roles/editor|attach_|put_user_policy|put_role_policy|"
     "create_access_key|add_user_to_group|vault policy|:2375|:2376|serviceaccount",
     r"\b(?:administratoraccess|poweruseraccess|iamfullaccess)\b|\broles/(?:owner|editor|iam\.\w*admin\w*)\b"
     r"|\.(?:attach_(?:user|role|group)_policy|put_(?:user|role)_policy|add_user_to_group)\((?=[^)]*(?:admin|poweruser|fullaccess|\*))"
     r"|\bvault\s+policy\s+write\b(?=[^;&]*(?:\bsudo\b|path\s+\\?[\"']\*))|tcp://[^\s/]*:237[56]\b"
     r"|(?:\bsudo\b|path\s+\\?[\"']\*)[^;&]*\|\s*vault\s+policy\s+write\b"
     r"|\bserviceaccount(?:name)?\W+(?:value\W+)?[\w:-]*(?:admin|cluster-?role|controller|system:)"),
    # accounts made, given sudo or a known password; SSH opened to passwords or root
    ("useradd|usermod|adduser|chpasswd|passwordauthentication|permitrootlogin",
     r"\b(?:useradd|adduser)\b[^;&|]*\s-(?:g|-groups?)\s*\S*\b(?:sudo|wheel|admin|root|docker)\b"
     r"|\busermod\b[^;&|]*\s-a?g\s*\S*\b(?:sudo|wheel|admin|root|docker)\b|\bchpasswd\b"
     r"|\bpasswordauthentication\s+yes\b|\bpermitrootlogin\s+yes\b"),
    # cloud roles that hold every power, or the power to become another identity
    ("roles/|actions|action|clusterrolebinding|cluster-admin",
     r"\broles/(?:iam\.(?:serviceaccounttokencreator|serviceaccountuser|serviceaccountkeyadmin|workloadidentityuser)"
     r"|resourcemanager\.\w*admin)\b"
     r"|\bactions?\b[\"']?\s*[=:]\s*\[?\s*[\"']\*[\"']|[\"']action[\"']\s*:\s*\[?\s*[\"'](?:\*|iam:\*)[\"']"
     r"|\bclusterrolebinding\b.{0,400}?\bname:\s*cluster-admin\b"),
    ("linpeas|linenum|lse.sh|exploit|pspy|pwnkit|dirty|peass|beroot|gtfobins",
     r"\b(?:linpeas|linenum|lse\.sh|linux-exploit-suggester|pspy\d*|pwnkit|dirtycow|dirtypipe|peass|beroot|gtfobins)\b"),
)
_PRIVESC = AnyOf((*_AS_ROOT_NOW, *_LASTING, *SQL_PRIVILEGE_PARTS))
# credentials that carry a cluster's or Vault's power: a certificate request approved, a token
# for years, a root token generated
_GRANTING_COMMAND = Hinted(fast_regex(r"\bkubectl\s+certificate\s+approve\b|\bkubectl\b[^;&|]*\bcreate\s+token\b[^;&|]*--duration[= ]\d{4,}h"
                                      r"|\bvault\s+operator\s+generate-root\b"), "certificate|create token|generate-root")
# a job put into the user's own crontab: it runs later, unattended, as the agent (what it runs
# is judged where the script is written; at boot it is a lasting foothold, above)
_USER_CRONTAB = Hinted(fast_regex(r"\|\s*crontab\s+-?\s*(?:$|[;&|)])|\bcrontab\s+(?!-[lre]\b)[\w./~-]+\s*(?:$|[;&|)])"), "crontab")
_PRIVESC_BUT_SUDO = _PRIVESC.parts[1:]  # (the same patterns: each hint is looked for once)
# sudo for one command (a service restarted, a log read, a package installed, a query run as
# postgres): root or another user for that command, so a person is asked, not refused. What
# hands over a root shell is refused: a shell or an interpreter, a program that opens one (an
# editor, a pager, find -exec, env, xargs), a container run or entered, -i/-s/-E
_SUDO = re.compile(r"(?:^|[;&|(`]\s*|\b(?:then|do|else)\s+)sudo\b((?:\s+-[a-zA-Z]+(?:\s+(?![-/])\S+)?)*)\s+(\S+)(\s+\S+)?")
_OPENS_A_SHELL = re.compile(r"(?:\S*/)?(?:(?:ba|da|z|k|c|tc|fi)?sh|su|sudo|doas|login|python\d?[\d.]*|perl|ruby|irb|node|php|lua"
                            r"|tclsh|wish|expect|vi|vim|nvim|nano|emacs|ed|less|more|man|find|awk|gawk|mawk|env|xargs|script"
                            r"|nice|nohup|timeout|stdbuf|strace|gdb|busybox|exec|eval|source|\.|bash\S*|-\S*)")
# (-i, -s: a shell; -E: the caller's environment; -e: sudoedit, an editor as root. Views are lower-case)
_ROOT_SHELL_FLAGS = re.compile(r"-[a-z]*[ise]", re.I)


def _only_bounded_sudo(code: tuple[str, ...]) -> bool:
    """Whether every sudo of the call runs one command that opens no shell."""
    runs = [m for v in code for m in _SUDO.finditer(v)]
    return bool(runs) and all(
        not _OPENS_A_SHELL.fullmatch(m.group(2)) and not _ROOT_SHELL_FLAGS.search(m.group(1) or "")
        and not (m.group(2) in ("docker", "podman", "crictl", "kubectl") and m.group(3)
                 and m.group(3).strip() in ("run", "exec", "debug"))
        for m in runs) and not any(p.search(v) for p in _PRIVESC_BUT_SUDO for v in code)
# a file written is not run now: only what would make privileges last counts in it
_PRIVESC_WRITTEN = AnyOf(_LASTING)


_PRIV_GRANT = Hinted(fast_regex(
    r"\b(?:role|roles|is_admin|is_superuser|is_staff|superuser|permissions?|privileges?|access_level|"
    r"group|groups|scopes?)\b[\"']?\s*[=:]\s*\[?\s*[\"']?(?:\w*admin\w*|super\w*|root|\w*owner|org-admin|true|1|all|\*)(?![\w-])"
    # security switched off: MFA, SSO, audit, rate limits, fraud checks, sharing rules
    r"|(?:mfa|2fa|require_(?:sso|mfa|2fa)|mfa_enabled|sso_required|audit_log\w*|enforce_\w+)[\"']?\s*[=:]\s*[\"']?(?:false|disabled|off|0)\b"
    r"|\b(?:auth\w*_disabled|disable_auth\w*|skip_auth\w*|no_auth)\b[\"']?\s*[=:]\s*[\"']?(?:true|1|yes|on)\b|bypass_token\b\s*[=:]"
    r"|\b(?:roles?|groups?|scopes?|permissions?)\b[\"']?\s*[=:]\s*\[[^\]]*[\"'][\w-]*(?:admin|owner|root|superuser)[\w-]*[\"']"
    r"|allow_public_sharing[\"']?\s*[=:]\s*true|ip_allowlist[\"']?\s*[=:]\s*\[\s*\]"
    r"|\bset\s+enabled\s*=\s*false\b[^;]*\b(?:audit|rate_limit|fraud|security|mfa|2fa|sso|waf)"
    r"|\"role\"\s*:\s*\"[\w-]*(?:admin|owner|root|super)"
    r"|\b(?:add|put|make)\s+me\b.{0,40}\b(?:sudo\w*|admins?|root|owners?|wheel)\b"
    r"|\b(?:give|grant)\s+me\b.{0,40}\b(?:sudo|admin|root|owner|superuser)"
    r"|\b(?:disable|turn\s+off|switch\s+off|bypass|skip|remove|stop)\s+(?:the\s+)?(?:2fa|mfa|two-factor|sso|audit\w*|"
    r"logging|monitoring|firewall|antivirus|edr|secops|interceptor|guardrails?|waf|dlp|security\s+(?:checks?|scan\w*"
    r"|review|interceptor|controls?))\b"
    r"|\binsert\s+into\s+[\w.\"`]*(?:approvers?|admins?|administrators|superusers|signator(?:y|ies))\b"
    r"|/roles?/(?:assign|grant|add)|/(?:admins|administrators|sudoers)(?:/|$)|/(?:groups?|roles?|teams?)/admins?(?:/|$)|\baccess_level\W+(?:40|50)\b"), (
    "role|admin|superuser|staff|permission|privilege|access_level|group|me |2fa|mfa|factor|sso|audit|"
    "logging|monitoring|firewall|antivirus|edr|security|sudoers|access_level|secops|interceptor|guardrail|"
    "waf|dlp|mfa|2fa|sso|audit_log|enforce_|allow_public_sharing|ip_allowlist|enabled|auth|bypass_token"))


# an API for administrators (users, flags, keys, a database's series): what it changes is theirs to change
_ADMINS_API = fast_regex(r"/(?:admin|superadmin|sysadmin)(?:/|$|\?)")
# APIs that bind roles: Kubernetes RBAC, cloud IAM policies
_ROLE_API = fast_regex(r"/rbac\.authorization\.k8s\.io/v1/(?:cluster)?rolebindings|:setiampolicy\b|/v1/auth/token/create\b"
                       r"|/v1/sys/polic(?:y|ies)/"
                       r"|/users?/[^/?]+/(?:roles|groups|permissions|scopes)\b|/(?:role_?)?assignments\b|/iam/[\w/]*(?:attach|put)\w*policy|/members?(?:/|$)[^?]*\?[^ ]*role=")


_SECURITY_FLAG_URL = fast_regex(r"(?:require[-_]?)?(?:mfa|2fa|two[-_]factor|sso|audit[-_]?log\w*|rate[-_]?limit\w*|fraud\w*|waf"
                                r"|captcha|security[-_]\w+|password[-_]policy|encryption)(?:[/?]|$)")
_CONTROL_OFF = re.compile(r"/(?:branch_protections?|protected_branches|branches/[^/]+/protection)\b.*\b(?:required_approvals?\W+0\b"
                          r"|enable_status_check\W+false|enforce_admins\W+false|required_status_checks\W+null|required_approving_review_count\W+0\b"
                          r"|enable_force_push\W+true|allow_force_pushes\W+true)"
                          r"|/(?:policies|policy|roles?|groups?)/[\w-]+\b.*\b(?:require_approvals?|approval_required|requires_approval)\W+false"
                          r"|/silences\b.*[\"']value[\"']\s*:\s*[\"']\.[*+][\"']", re.S)  # (a body's lines too)
_ADMIN_API = fast_regex(r"/scripttext\b|/computer/[^/]*/script\b|/manage/script\b|/script(?:console)?/?$"
                        r"|/teams?/(?:owners|[\w-]*admins?|administrators)/(?:members|memberships)/"
                        r"|groupname=[\w-]*admin|/(?:groups?|roles?)/[\w%-]*(?:admin|approver|signator)[\w%-]*/(?:members|users|assignments)\b"
                        r"|/(?:admins|administrators)/(?:members|users)\b")


# source and test files name roles as data (`user.role = 'admin'` in a test)
_SOURCE_FILE = fast_regex(r"\.(?:py|pyi|js|jsx|ts|tsx|go|rb|java|kt|rs|php|cs|scala|swift)$|(?:^|/)(?:tests?|spec|fixtures)/")


_CHAINED = re.compile(r"\s*(?:;|&&|\|\|)\s*")
_ONE_CLOUD_READ = re.compile(
    r"\s*(?:gcloud|az|aws)\b[^;&|`$<>]*\s(?:get-iam-policy|describe|list|show|get-[\w-]+)\b[^;&|`$<>]*$"
    # (a read as someone else, --as, is a privilege used; asking what they may do is not)
    r"|\s*(?:kubectl|oc)\b(?:(?!--as)[^;&|`$<>])*\s(?:get|describe)\b(?:(?!--as)[^;&|`$<>])*$"
    r"|\s*(?:kubectl|oc)\b[^;&|`$<>]*\sauth\s+can-i\b[^;&|`$<>]*$", re.I)


# a security control's setting turned off: alerting, auditing, a SIEM's feed, detection, MFA
_CONTROLS_OFF = re.compile(r"\b(?:alert\w*|monitoring|siem\w*|audit\w*|pagerduty|opsgenie|detection\w*|edr|waf|mfa|2fa"
                           r"|guardduty|falco|intrusion\w*|logging)\b[\w.-]*[\"']?\s*[:=]\s*[\"']?(?:false|off|disabled|no|0)\b")


_CONTROL_WORD = fast_regex(r"alert|monitoring|siem|audit|pagerduty|opsgenie|detection|edr|waf|mfa|2fa|guardduty|falco"
                           r"|intrusion|logging")


def privilege_findings(call: ToolCall, code: tuple[str, ...], views: tuple[str, ...] = ()
                       ) -> Iterator[Finding]:
    if call.action_type in ("fs:write", "net:http") and _CONTROL_WORD.search(sent_text := (
            call.text("content") + call.text("body")).lower()) and len(_CONTROLS_OFF.findall(sent_text)) >= 2:
        yield finding("privilege.guard_disabled", "switches off alerting, auditing or other security controls",
                      block=False, tier=RiskTier.high)
        return
    if call.action_type == "fs:write":
        yield from _written_privilege(call, code, views)
        return
    if call.action_type in ("fs:read", "fs:delete"):
        return  # a path read or deleted runs nothing (the path rules judge where it is)
    if (command := call.text("command").strip()) and all(
            _ONE_CLOUD_READ.match(c) for c in _CHAINED.split(command)):
        return  # cloud or cluster reads: who holds a role is looked at, not given
    method = call.text("method").strip().lower()
    url, sent = call.text("url").lower(), call.text("body").lower()  # (a request's; empty for other calls)
    if call.action_type == "net:http" and (
            (method == "delete" and re.search(r"/(?:mfa|2fa|totp|webauthn|security[-_]keys?)(?:[/?]|$)", url))
            or (method in ("post", "put", "patch") and _CONTROL_OFF.search(url + " " + sent))):
        yield finding("privilege.security_disabled", "removes a review, MFA or alerting control through an API")
        return
    if call.action_type == "net:http" and method in ("post", "put", "patch"):
        if _SECURITY_FLAG_URL.search(url) and re.search(
                r"[\"']?(?:enabled|on|active|value)[\"']?\s*:\s*(?:false|0|\"?off\"?|\"false\")", sent):
            yield finding("privilege.security_disabled", "switches a security control off through an API")
            return
        if re.search(r"/(?:users?|accounts?|members?)/[\w.@-]+/?(?:\?|$)", url) and (
                re.search(r"[?&](?:admin|is_admin|site_admin|superuser)=(?:true|1)\b", url) or re.search(
                    r"[\"'](?:admin|is_admin|site_admin|superuser|is_superuser|is_staff)[\"']\s*:\s*true",
                    sent)):
            yield finding("privilege.escalation", "makes a user an administrator through an API")
            return
        if re.search(r"/(?:merge_requests|pulls)/\d+/merge\b", url) and re.search(
                r"skip_ci\W+true|bypass\w*\W+true", sent):
            yield finding("privilege.checks_bypassed", "merges with the required checks skipped",
                          block=False, tier=RiskTier.high)
            return
        if _ADMIN_API.search(url):
            yield finding("privilege.escalation", "runs code on a server's script console or adds a "
                          "member to an administrators' group through an API")
            return
        body = call.argument_views.get("body", ())
        if (_ROLE_API.search(url)
                and re.search(r"admin|owner|root|approver|\*", sent)) \
                or any(_PRIVESC_WRITTEN.search(v) for v in body):
            yield finding("privilege.escalation", "grants an administrator role or a privileged "
                          "workload through an API")
            return
        if method in ("post", "put", "patch", "delete") and _ADMINS_API.search(url):
            yield finding("privilege.admin_api", "changes something through an administrators' API",
                          block=False, tier=RiskTier.high)
            return
    reads = (call.action_type == "db:query" and bool(QUERY_READS.match(call.text("query").lower()))) or (
        call.action_type == "net:http" and method in ("", "get", "head", "options"))
    reported = writes_prose(call) and bool(REPORTING_WORDS.search("\n".join(views or call.all_views)))
    if any(_ADMIN_MERGE.search(v) for v in code):
        yield finding("privilege.checks_bypassed", "merges as an administrator past the branch's "
                      "required reviews and checks", block=False, tier=RiskTier.high)
        return
    if method == "delete" and re.search(r"/members?/[\w.@-]+/?$", url):
        return  # a member taken out of a group: access removed, none granted
    seeks = any(_PRIVESC.search(v) for v in code)
    if seeks and _only_bounded_sudo(code):
        yield finding("privilege.sudo_asked", "runs one command as root or another user (sudo)", block=False,
                      tier=RiskTier.high)
        return
    if not seeks and call.action_type in ("db:query", "code:shell", "code:python") and any(
            SQL_ACCESS_GIVEN.search(v) for v in code):
        yield finding("privilege.access_given", "makes a database account or gives a role a schema's tables",
                      block=False, tier=RiskTier.high)
        return
    if not seeks and any(_GRANTING_COMMAND.search(v) for v in code):
        yield finding("privilege.credentials_issued", "issues a cluster certificate, a long-lived token or a root token",
                      block=False, tier=RiskTier.high)
        return
    if not seeks and any(_USER_CRONTAB.search(v) for v in code):
        yield finding("privilege.scheduled_job", "puts a job into the user's crontab (it runs later, unattended)",
                      block=False, tier=RiskTier.high)
        return
    if seeks or (not reads and not reported and any(
            not negated(v, m) for v in views or joined(call.all_views)
            for m in _PRIV_GRANT.finditer(v))):  # asked for in words too ("do not disable the WAF": no)
        yield finding("privilege.escalation", "seeks privileges the agent does not hold")


_ADMIN_MERGE = Hinted(fast_regex(r"\bgh\s+pr\s+merge\b[^;&|]*\s--admin\b"), "--admin")


_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|spec|__tests__|e2e)/|(?:^|/)test_[\w.]+$|[._-](?:test|spec)\.\w+$")
_FAKE_PRIVILEGED = re.compile(r"(?:^|/)(?:s?bin|\.local/bin)/(?:sudo|su|doas|pkexec|passwd|login|ssh|ssh-add|gpg)$")


# a secret header, cookie or parameter that lets its bearer past the checks: a backdoor in code
_BACKDOOR = Hinted(fast_regex(
    r"\b(?:headers?|cookies?|query|args|params|searchparams)(?:\.get\(|\[)\s*[\"'][\w-]+[\"']\s*[\])]\)?\s*===?\s*[\"'][^\"']{4,}[\"']"
    r"\s*\)?\s*(?::|\{|\bthen\b)[^;{}]{0,40}?(?:[;{]\s*)?[^;{}]{0,80}?(?:\breturn\s+true\b|\b(?:is_?)?admin\w*\s*=\s*true\b"
    r"|[\"'](?:x-)?(?:user-)?role[\"']\s*,\s*[\"']admin[\"']|\brole\s*=\s*[\"']admin[\"'])"), "header|cookie|query|args|params")


def _written_privilege(call: ToolCall, code: tuple[str, ...], views: tuple[str, ...]
                       ) -> Iterator[Finding]:
    """A file written: lasting privileges in it are denied; roles granted in a config file
    are for a person to judge (in source and tests they are data); a hard-coded way past the
    checks is for a person to judge too."""
    if any(_BACKDOOR.search(v) for v in views) and not _TEST_PATH.search(call.text("path").lower()):
        yield finding("privilege.backdoor", "writes code that lets whoever sends a fixed header, cookie or "
                      "parameter past the access checks", block=False, tier=RiskTier.high)
    elif _FAKE_PRIVILEGED.search(call.text("path").lower()):
        yield finding("privilege.escalation", "writes a command named like sudo or su into a bin folder "
                      "(one found first on the PATH catches the passwords typed into it)")
    elif any(_PRIVESC_WRITTEN.search(v) for v in code):
        yield finding("privilege.escalation", "writes a file that grants lasting privileges")
    elif not _SOURCE_FILE.search(call.text("path").lower()) and any(_PRIV_GRANT.search(v) for v in views):
        yield finding("privilege.escalation", "writes a file that grants privileges", block=False,
                      tier=RiskTier.high)
