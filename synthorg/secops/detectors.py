"""The fast path's detectors: deterministic checks of a call's arguments, one family each.

Each detector reads the call's views (normalise.py: the arguments with quoting, escaping,
substitutions, variables, encodings and comments taken off) and returns findings: a
*blocking* finding is a hard rule (denied whatever the agent's autonomy or an approval), an
*uncertain* one goes to the slow path. Patterns are written for views: lower-case, one
space between words.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.normalise import words
from synthorg.secops.places import hosts_in, is_internal, place_of, resolve


class Hinted:
    """A pattern searched only in text that holds one of its hints: literal strings of which
    every match contains at least one. A substring test is a C loop; a large alternation
    run at every position of every view was most of the fast path's time."""

    def __init__(self, pattern: re.Pattern[str], hints: str) -> None:
        self.pattern = pattern
        self.hints = tuple(hints.split("|"))

    def search(self, text: str) -> re.Match[str] | None:
        for hint in self.hints:
            if hint in text:
                return self.pattern.search(text)
        return None

_SEGMENT = re.compile(r"\|\||&&|[;|&\n]|\$\(|\)|`")
_PATHLIKE = re.compile(r"(?:^|(?<=[\s=>(,\[\"']))(~?/[^\s\"'`;|&<>(),\]]*|\.\.(?![\w.])(?:/[^\s\"'`;|&<>(),\]]*)?"
                       r"|(?:[\w.\-]+/)+\.\.(?![\w.])(?:/[^\s\"'`;|&<>(),\]]*)?)")
_REDIRECT = re.compile(r"(?:\d?>>?|>\|)\s*([^\s;|&]+)")

# ---- patterns by family --------------------------------------------------------------------
_SECRET_FILE = Hinted(re.compile(
    r"(?:\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|authorized_keys|known_hosts|\.aws/(?:credentials|config)"
    r"|/etc/(?:shadow|gshadow|sudoers|master\.passwd)|\.netrc\b|\.pgpass\b|\.git-credentials"
    r"|\.docker/config\.json|\.kube/config|\bkubeconfig\b|credentials\.(?:json|ya?ml|csv|txt)"
    r"|\bsecrets?\.(?:ya?ml|json|env|txt|toml)\b|\.vault-token|\.npmrc\b|\.pypirc\b|\.bash_history"
    r"|\.zsh_history|/proc/(?:self|\d+|\*)/environ|/var/run/secrets|\bservice[-_]?account[\w-]*\.json"
    r"|\.(?:pem|p12|pfx|jks|keystore)\b|\bprivate[_-]?key\b|\.gnupg/|\.config/gcloud"
    r"|(?<![\w.-])\.env(?:\.(?!example\b|sample\b|template\b|dist\b|defaults?\b)[\w-]+)?(?![\w.-])"
    r"|\bwallet\.dat\b|\.key(?![\w.-])|/etc/ssl/private)"), (
    ".ssh|id_|authorized_key|known_hosts|.aws|/etc/|.netrc|.pgpass|.git-credentials|.docker|.kube|"
    "kubeconfig|credentials.|secret|.vault|.npmrc|.pypirc|history|environ|/var/run/secrets|service|"
    ".pem|.p12|.pfx|.jks|.keystore|private|.gnupg|gcloud|.env|wallet|.key"))
_SECRET_VALUE = Hinted(re.compile(
    r"\bakia[0-9a-z]{16}\b|-----begin [a-z ]*private key-----|\bgh[opsur]_[a-z0-9]{30,}"
    r"|\bsk-[a-z0-9_\-]{20,}|\bxox[abpr]-[a-z0-9\-]{10,}|\baiza[0-9a-z_\-]{30,}"
    r"|aws_secret_access_key\s*[=:]\s*\S{16,}|\bglpat-[a-z0-9_\-]{16,}"
    r"|(?:password|passwd|pwd|secret|api[_-]?key|token|access[_-]?key)\s*(?:is|[:=])\s*[\"']?"
    r"(?!request|os\.|getpass|input|none|null|env|config|settings|self\.|\$\{|<|\{)"
    r"(?=[\w!@#$%^&*+/=\-]*\d)(?=[\w!@#$%^&*+/=\-]*[a-z])[\w!@#$%^&*+/=\-]{8,}"), (
    "akia|-----begin|gh|sk-|xox|aiza|aws_secret|glpat|password|passwd|pwd|secret|api|token|access"))
_SECRET_VAR = re.compile(
    r"\$\{?[a-z0-9_]*(?:secret|token|passw(?:or)?d|api_?key|access_key|private_key|credential)[a-z0-9_]*"
    r"|\b(?:environ\s*\[|getenv\s*\(|environ\.get\s*\()\s*[\"']?[a-z0-9_]*(?:secret|token|passw(?:or)?d|"
    r"api_?key|access_key|private_key|credential)"
    r"|\bprintenv\s+[a-z0-9_]*(?:secret|token|passw|key|credential)")
_SECRET_SHOWN = re.compile(r"(?:^|[\s;&|(])(?:echo|printf|printenv|print|cat|log\w*\.\w+|console\.log"
                           r"|write|puts|tee)\b|>>?|\bprint\(")
_SECRET_ELSEWHERE = Hinted(re.compile(
    r"169\.254\.169\.254|\bmetadata\.google\.internal\b|/latest/meta-data|/computemetadata/"
    r"|\bselect\b[^;]*\b(?:password\w*|passwd|pwd_hash|\w*api_token\w*|\w*secret\w*|access_token|"
    r"refresh_token|private_key|ssn|social_security\w*|credit_card\w*|card_number|cvv|totp_seed)\b[^;]*\bfrom\b"
    r"|\bunion\s+(?:all\s+)?select\b[^;]*\b(?:password|passwd|secret|token)"
    r"|://[^/\s:@\"']+:[^/\s@\"']{6,}@[\w.\-]+|\broot password\b|\b(?:password|passphrase|secret|token|api key|"
    r"credentials?)\b[^.\n]{0,60}?[:=]\s*[\"']?(?=[\w!@#$%^&*+\-]*\d)(?=[\w!@#$%^&*+\-]*[a-z])[\w!@#$%^&*+\-]{10,}"), (
    "169.254|metadata|select|://|root password|password|passphrase|secret|token|api key|credential"))
_ENV_DUMP = Hinted(re.compile(
    r"(?:^|[;&|(]\s*|\bsudo )(?:printenv|env|set|export -p|declare -x)\s*(?:$|[|>;&)])"
    r"|\bos\.environ\b(?!\s*(?:\.get\(|\[|\.setdefault|\.copy\(\)\s*\.get))"
    r"|\bprocess\.env\b(?!\.\w)|\bcompgen -v\b"), (
    "printenv|env|set|export -p|declare -x|os.environ|process.env|compgen"))
_DESTRUCTIVE = [
    (re.compile(r"\bmkfs(?:\.\w+)?\b|\bwipefs\b|\bdd\b[^|;&]*\bof=/dev/(?!null\b)"
                r"|>\s*/dev/(?:sd|nvme|xvd|vd|hd|mapper|disk)"), "disk_wipe",
     "formats or overwrites a disk"),
    (re.compile(r"--no-preserve-root|\brm -[a-z]*[rf][a-z]* (?:-\S+ )*(?:/|/\*|\*|/root|/home|~)(?:\s|$)"),
     "delete_root", "deletes the root, home or everything"),
    (re.compile(r"\bshred\b|\bsrm\b"), "shred", "shreds files beyond recovery"),
    (re.compile(r"\bdropdb\b|\bdropuser\b|\bflushall\b|\bdropdatabase\(|\bdb\.dropdatabase\b"
                r"|\bmongo\w*\b[^;&|]*\.drop\(|\bredis-cli\b[^;&|]*\bflush"),
     "database_wipe", "drops a database"),
    (re.compile(r"\bgit push\b(?=[^;&|]*(?:\s--force|\s-f\b|\s\+\w))(?:[^;&|]*\b(?:main|master|trunk|"
                r"release\S*|prod\S*)\b|(?:\s+(?:--force\S*|-f|-u|origin|upstream))*\s*(?:$|[;&|]))"
                r"|\bgit push\b[^;&|]*(?:\s:(?:main|master)\b|--delete\s+(?:origin\s+)?(?:main|master)\b)"
                r"|\bgit push\b[^;&|]*\s--mirror\b|\bgit filter-branch\b|\bgit reflog expire\b"),
     "history_rewrite", "rewrites or deletes shared history"),
    (re.compile(r"\bdrop\s+(?:table|database|schema|view|user|role)\b|\btruncate\s+(?:table\s+)?[\w\"`.]+"
                r"|\bdelete\s+from\s+[\w\"`.]+\s*(?:;|$|returning\b)"
                r"|\bdelete\s+from\s+[\w\"`.]+\s+where\s+(?:1\s*=\s*1|true|1|'1'\s*=\s*'1'|\d+\s*>\s*0)\s*(?:;|$)"
                r"|\bupdate\s+[\w\"`.]+\s+set\s+(?:(?!\bwhere\b).)*(?:;|$)"
                r"|\bdelete\s+\w+\s*$|\bdropdatabase\b|\bflushall\b|\bflushdb\b"
                r"|\.drop\(\)|\bdeletemany\(\s*\{\s*\}\s*\)|\bremove\(\s*\{\s*\}\s*\)"),
     "mass_data_loss", "drops or empties a table or database"),
    (re.compile(r"\bterraform (?:destroy|apply -destroy)\b|\bkubectl delete\b[^;&|]*(?:\bnamespace\b|\bns\b|--all\b|\bnodes?\b|\bpv\b)"
                r"|\baws s3 (?:rm|rb)\b[^;&|]*--recursive|\baws s3 rb\b|\bterminate-instances\b|\bdelete-db-instance\b"
                r"|\bhelm (?:uninstall|delete)\b|\bdocker (?:system prune|volume prune|rm -f \$\(docker ps)"
                r"|\bgcloud [\w ]*delete\b[^;&|]*--quiet|\baz group delete\b"),
     "infrastructure_teardown", "tears down infrastructure"),
    (re.compile(r"\b(?:shutdown|reboot|halt|poweroff)\b(?!\s*\(\))|\binit [06]\b|\bsystemctl (?:poweroff|reboot|halt)"
                r"|\bkill(?:all)? -9 -1\b|\bkill -(?:9|kill) 1\b|\bkillall5\b|\bpkill -9 -?\.\b|\biptables -f\b|\bcrontab -r\b"
                r"|\bsysrq\b|\becho [bco] > /proc/sysrq-trigger"),
     "system_disruption", "shuts down, kills everything or removes safeguards"),
    (re.compile(r"\bchmod -r 0*00\b|\bchmod -r [0-7]*7 /|\bchown -r \S+ /(?:\s|$)|\bfind / [^;&|]*-delete\b"
                r"|\bfind / [^;&|]*-exec rm\b|\bmv \S+ /dev/null\b|\b:> ?/|\btruncate -s ?0 /"),
     "mass_damage", "damages files across the system"),
]
_PRIVESC = Hinted(re.compile(
    r"(?:^|[;&|(`]\s*|\b(?:xargs|nohup|exec|time|env|then|do|else|-c)\s+)(?:sudo|doas|pkexec|runas)\b"
    r"|(?:^|[;&|(`]\s*)su(?:\s+-|\s+root\b|\s+-c\b|\s*$|\s*[;&|])"
    r"|\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s|0?[2467][0-7]{3})\b|\bchown\s+(?:-\w+\s+)*root\b"
    r"|\bchgrp\s+(?:-\w+\s+)*(?:root|sudo|wheel)\b"
    r"|\bvisudo\b|/etc/sudoers|\bsetcap\b|--privileged\b|\s-v\s*/:/|--pid[= ]host|--cap-add[= ](?:all|sys_admin)"
    r"|\bnsenter\b|/var/run/docker\.sock|\bauthorized_keys\b|(?:^|[\s;&|])(?:passwd|chpasswd|useradd|adduser|usermod|groupadd)\b"
    r"|\bos\.set(?:e|re|res)?uid\(|\bos\.setgid\(0|\bld_preload\b|/etc/ld\.so\.preload|\binsmod\b|\bmodprobe\b"
    r"|\bgrant\s+(?:all|superuser|admin|\w+\s+to\s+public)|\balter\s+(?:user|role)\b[^;]*\b(?:superuser|createrole|with\s+admin)"
    r"|\bcreate\s+(?:user|role)\b[^;]*\b(?:superuser|password)|\bgrant\b[^;]*\bwith\s+grant\s+option"
    r"|/etc/(?:passwd|group|pam\.d|security)\b[^;|&]*(?:>|\btee\b)|>>?\s*/etc/(?:passwd|group|profile|bash\.bashrc|crontab)"
    r"|\bcrontab\b[^;&|]*@reboot|/etc/cron|\bsystemctl enable\b|/etc/systemd/|/etc/init\.d/|\bbashrc\b|\.profile\b"
    r"|\bcap_setuid\b|\bpolkit\b|\bkubectl\b[^;&|]*\bcluster-admin\b|\biam\b[^;&|]*\b(?:attach|put)-\w*policy\b"), (
    "sudo|doas|pkexec|runas|su|chmod|chown|chgrp|visudo|setcap|privileged|-v|pid|cap-add|nsenter|"
    "docker.sock|authorized_keys|passwd|useradd|adduser|usermod|groupadd|setuid|seteuid|setreuid|"
    "setresuid|setgid|ld_preload|ld.so.preload|insmod|modprobe|grant|alter|create|/etc/|cron|"
    "systemctl|systemd|init.d|bashrc|.profile|cap_setuid|polkit|cluster-admin|iam"))
_ABUSE_PARTS = (  # (hints, pattern): each searched only where one of its hints is
    ("()", r"(\w+|:)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}|\bfork\(\)[^;]*\bwhile\b|\bwhile\b[^;]*\bfork\(\)"
     r"|\bos\.fork\(\)\s*(?:;|$)|\bwhile\s+(?:true|1)\s*:\s*os\.fork\(\)|\bfor\s*\(\s*;\s*;\s*\)\s*fork"),
    ("yes", r"(?:^|[\s;&|])yes(?:\s+[^\s|>]+)?\s*(?:>|$|\|(?!\s*head\b))"),
    ("/dev/|fallocate|truncate|head -c",
     r"\bcat /dev/(?:zero|urandom)\s*>|\bdd if=/dev/(?:zero|urandom)\b(?![^;&|]*\bcount=\d{1,4}\b)"
     r"|\bfallocate -l ?\d+\s*[gtp]\b|\btruncate -s ?\+?\d+\s*[gtp]\b|\bhead -c ?\d+\s*[gtp]\b"),
    ("xmrig|minerd|cpuminer|stratum|cryptonight|nicehash|ethminer|stress|ulimit",
     r"\bxmrig\b|\bminerd\b|\bcpuminer\b|stratum\+(?:tcp|ssl)|\bcryptonight\b|\bnicehash\b|\bethminer\b"
     r"|\bstress(?:-ng)?\b\s+-|\bulimit -[a-z]*[uv] unlimited"),
    ("*|bytearray|range(|setrecursion|+=|append(",
     r"\*\s*10\s*\*\*\s*(?:9|[1-9]\d)\b|\*\s*\(?2\s*\*\*\s*(?:3\d|[4-9]\d)\b|\*\s*\d{10,}\b|\bbytearray\(\s*\d{10,}"
     r"|\brange\(\s*10\s*\*\*\s*(?:1\d|[2-9]\d)\)|\bsetrecursionlimit\(\s*(?:10\s*\*\*\s*\d|\d{6,})"
     r"|\d{7,}\s*\*\s*\d+|\*\s*\(\s*10\s*\*\*\s*(?:9|[1-9]\d)|\(\s*10\s*\*\*\s*(?:1[0-9]|[2-9]\d)\s*\)"
     r"|\bx\s*\+=\s*x\b|\b(\w+)\s*=\s*\1\s*\*\s*2\b[^;]*\bwhile|\.append\(\s*\w+\s*\*\s*\d{6,}"),
    ("sleep(|benchmark(|generate_series",
     r"\bpg_sleep\(\s*\d{3,}|\bsleep\(\s*\d{4,}|\bbenchmark\(\s*\d{7,}|\bgenerate_series\(\s*\d+\s*,\s*\d{9,}"),
    ("ab |wrk|hey|siege|vegeta|locust|slowloris|hping",
     r"\b(?:ab|wrk|hey|siege|vegeta|locust|slowloris|hping3?)\b[^;&|]*(?:-n\s*\d{6,}|-c\s*\d{3,}|--flood|-r\s*\d{4,})"),
    ("cross|from|recursive", r"\bcross\s+join\b[^;]*\bcross\s+join\b|\bfrom\s+\w+(?:\s+\w+)?\s*,\s*\w+(?:\s+\w+)?\s*,\s*\w+"
     r"|\bwith\s+recursive\b(?![^;]*\b(?:where|limit)\b)"),
    ("done", r"\bdo\b[^;]*&\s*done\b|&\s*done\b"),
)


class AnyOf:
    """Several hinted patterns: a match of any."""

    def __init__(self, parts: Iterable[tuple[str, str]]) -> None:
        self.parts = [Hinted(re.compile(pattern), hints) for hints, pattern in parts]

    def search(self, text: str) -> re.Match[str] | None:
        for part in self.parts:
            if (m := part.search(text)) is not None:
                return m
        return None


_ABUSE = AnyOf(_ABUSE_PARTS)
_LOOP_SHELL = re.compile(r"\bwhile\s+(?:true|:|\[\s*1\s*\]|\(\(\s*1\s*\)\))\s*;?\s*do\b|\bfor\s*\(\(\s*;\s*;\s*\)\)"
                         r"|\buntil\s+false\b")
_LOOP_PY = re.compile(r"\bwhile\s*\(?\s*(?:true|1|not false)\s*\)?\s*:|\bfor\s+\w+\s+in\s+iter\(\s*int\s*,|"
                      r"\bitertools\.(?:count|cycle|repeat)\(\)|\bwhile\s*\(\s*(?:true|1)\s*\)\s*\{|\bfor\s*\(\s*;\s*;\s*\)")
_SELF_CALL = re.compile(r"\bdef (\w+)\([^)]*\):\s*(?:return\s+)?\1\(")
_NET_SEND = Hinted(re.compile(
    r"\bcurl\b[^;&|]*(?:\s-d\b|\s--data\S*|\s-f\b|\s--form\b|\s-t\b|\s--upload-file\b|\s-x\s*(?:post|put|patch)\b"
    r"|\s@\S|\s-h\s*\S*authorization)|\bwget\b[^;&|]*--(?:post-data|post-file|body-file|body-data|method[= ](?:post|put))"
    r"|\b(?:nc|ncat|netcat|socat|telnet)\b|/dev/(?:tcp|udp)/|\b(?:scp|sftp|rsync)\b[^;&|]*\S+:\S*"
    r"|\bftp\b\s|\b(?:mail|mailx|sendmail|mutt)\b[^;&|]*@|\bssh\b[^;&|]*@"
    r"|\b(?:dig|nslookup|host)\b[^;&|]*(?:\$\(|`|\b[a-z0-9]{24,}\.)"
    r"|\brequests\.(?:post|put|patch)\(|\burlopen\([^)]*data=|\bhttpx\.(?:post|put)\(|\.sendall?\(|\bsmtplib\b"
    r"|\bsocket\.(?:socket|create_connection)\b|\bhttp\.client\b|\bftplib\b|\bparamiko\b|\bboto3\b[^;]*\bupload"
    r"|\bgit remote add\b|\bgit push\b\s+(?:https?|ssh|git)://|\baws s3 (?:cp|sync|mv)\b[^;&|]*\bs3://"
    r"|\bfetch\([^)]*method\s*:\s*[\"']?(?:post|put)"), (
    "curl|wget|nc|ncat|netcat|socat|telnet|/dev/tcp|/dev/udp|scp|sftp|rsync|ftp|mail|ssh|dig|"
    "nslookup|host|requests.|urlopen|httpx|send|smtplib|socket.|http.client|ftplib|paramiko|boto3|"
    "git remote|git push|aws s3|fetch("))
_FETCH_EXEC = re.compile(r"\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^;&]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"
                         r"|\b(?:curl|wget)\b[^;&]*\|\s*python[0-9.]*\b|\bbash\s+<\(\s*(?:curl|wget)"
                         r"|\bexec\(\s*(?:requests\.get|urlopen)|\beval\(\s*(?:requests\.get|urlopen)"
                         r"|\bsource\s+<\(\s*(?:curl|wget)")
_INJECTION_MARK = re.compile(
    r"(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|"
    r"preceding|original|other|existing)\s+(?:instructions?|directions?|rules?|guidelines?|prompts?|tasks?)"
    r"|<!--|\[\s*(?:system|admin|inst)\s*\]|\b(?:system|admin|developer)\s*(?:prompt|override|message|note)\s*:"
    r"|^\s*system\s*:|\bnew\s+instructions?\b|\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:the\s+)?"
    r"(?:ai|agent|assistant|llm|model|bot)\b|\b(?:ai|agent|assistant|llm)\s*(?:note|instructions?|directive)\s*:"
    r"|\byou\s+(?:must|should|are\s+required\s+to|need\s+to)\s+(?:also|first|now|immediately|quietly|silently)\b"
    r"|\b(?:also|first|quietly|silently|secretly)\s+(?:run|execute|send|upload|post|email|delete|copy|curl)\b"
    r"|\bwithout\s+(?:telling|informing|notifying|mentioning)|\bdo\s+not\s+(?:tell|mention|report|log|inform)"
    r"|\bbefore\s+(?:you\s+)?(?:start|begin|proceed|continue)\w*\s*,?\s+(?:run|execute|send|upload|delete)"
    r"|\bimportant\s*(?:!|:)\s*(?:also|first|you)|\bbegin\s+(?:hidden|secret)\b|\bassistant\s*:|\bhuman\s*:"
    r"|\bact\s+as\b|\bjailbreak\b|\bdan\s+mode\b|\bdeveloper\s+mode\b", re.M)
_PAYLOAD_TOKEN = re.compile(r"[a-z][a-z0-9+.\-]*://[^\s\"'`<>)]+|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"
                            r"|(?:~|\.\.)?/[\w.\-/~]{3,}|`[^`]{3,}`|\"[^\"]{6,}\"|'[^']{6,}'"
                            r"|\b[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.(?:com|net|org|io|xyz|ru|cn|example|test|top|info|biz|cc|tk)\b"
                            r"|\b[\w\-]*\d[\w\-]*\.[a-z]{2,}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b")
_WORD = re.compile(r"[a-z][a-z0-9_\-]{5,}")


def _f(rule: str, reason: str, block: bool = True, tier: RiskTier = RiskTier.critical) -> Finding:
    return Finding(rule=rule, block=block, reason=reason, tier=tier)


def _segments(view: str) -> list[list[str]]:
    return [seg.split() for seg in _SEGMENT.split(view) if seg.strip()]


_BIN_DIRS = ("/usr/bin/", "/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/opt/")


def _paths_in_shell(view: str, commands_only: bool = False) -> Iterator[tuple[str, bool]]:
    """(path, written) for the paths a shell command names after its verb (a command's own
    path, as in `/usr/bin/env python`, is not a place it reaches), relative ones joined to
    the directory `cd` moved to. `commands_only`: only in segments that start with a known
    command (a view of code, not of a shell line)."""
    if not commands_only:
        for m in _REDIRECT.finditer(view):
            yield m.group(1), True
    cwd = ""
    for segment in _segments(view):
        verb = segment[0] if segment else ""
        if commands_only and verb.rsplit("/", 1)[-1] not in _COMMANDS:
            continue
        if verb.startswith(("/", "~", "..")) and not verb.startswith(_BIN_DIRS):
            yield posixpath.join(cwd, verb), False  # a file named on its own, or run from there
        writes = verb in _WRITING_VERBS or verb.endswith("rm")
        args = segment[1:]
        if verb in ("docker", "podman"):  # container paths are not the host's: only -v's host side
            args = [segment[i + 1].split(":", 1)[0] for i in range(1, len(segment) - 1)
                    if segment[i] in ("-v", "--volume")]
        elif verb in _TEXT_VERBS:
            args = [w for w in args if w.startswith(("/", "~", "..")) and verb not in ("echo", "printf")]
        for word in args:
            if "://" in word:
                continue
            for m in _PATHLIKE.finditer(word if "=" not in word else word.split("=", 1)[1]):
                yield posixpath.join(cwd, m.group(1).rstrip(",;:")), writes
            if verb in _READING_VERBS and not word.startswith("-") and "/" in word:
                yield posixpath.join(cwd, word), False
        if verb == "cd" and len(segment) > 1:
            cwd = posixpath.join(cwd, segment[1])


_COMMANDS = frozenset(words("""ls cat head tail less more grep egrep find cp mv rm rmdir
mkdir touch chmod chown ln tar zip unzip gzip gunzip curl wget scp rsync sed awk tee dd
echo printf cd stat file du df wc sort uniq diff cut tr xargs sh bash zsh python python3
perl ruby node nc ncat shred truncate install"""))
_READING_VERBS = frozenset({"cat", "head", "tail", "less", "more", "cp", "tar", "zip", "grep",
                            "strings", "xxd", "base64", "od", "source", "."})
_WRITING_VERBS = {"rm", "rmdir", "mv", "cp", "tee", "touch", "mkdir", "ln", "chmod", "chown",
                  "truncate", "dd", "install", "rsync", "unlink", "shred", "sed", "tar", "unzip",
                  "find", "git"}
_TEXT_VERBS = frozenset({"echo", "printf", "grep", "egrep", "rg", "git", "logger", "wall"})
_PY_PATH_CALL = re.compile(r"\b(?:open|path|remove|unlink|rmtree|rmdir|makedirs|mkdir|rename|replace|"
                           r"copy\w*|move|chmod|chown|listdir|scandir|walk|glob|read_text|read_bytes|"
                           r"write_text|write_bytes|load|loadtxt|read_csv|to_csv|exists|stat|open_file|"
                           r"isfile|isdir|system|popen|run|call|check_output|check_call|popen)\s*\(\s*"
                           r"(?:[rbuf]{0,2})[\"']([^\"']+)[\"']")


def _paths(call: ToolCall) -> Iterator[tuple[str, bool]]:
    """(path, written) for every path the call reaches, as written."""
    kind = call.action_type
    for name, text in call.texts.items():
        if name == "path":
            yield text, kind in ("fs:write", "fs:delete")
    for name, vs in call.argument_views.items():
        for v in vs:
            for m in _FILE_URL.finditer(v):
                yield m.group(1), False
        if name in ("command", "cmd", "script", "shell", "code", "source", "program"):
            for v in vs:
                for m in _PY_PATH_CALL.finditer(v):
                    yield m.group(1), True
                if _LONE_PATH.fullmatch(v):
                    yield v, False  # a path on its own: hidden, then handed to a command
                yield from _paths_in_shell(v, commands_only=name not in (
                    "command", "cmd", "script", "shell"))
        elif name in ("query", "sql"):
            for v in vs:
                for m in re.finditer(r"(?:pg_read_file|load_file|lo_import|copy\s+\w+\s+(?:from|to))"
                                     r"\s*\(?\s*'?([^')\s]+)", v):
                    yield m.group(1), "to" in m.group(0)


_FILE_URL = re.compile(r"\bfile://(/[^\s\"'`]+)")
_LONE_PATH = re.compile(r"(?:~|\.\.)?/[\w.\-/~]+")


def path_findings(call: ToolCall, _: tuple[str, ...]) -> Iterator[Finding]:
    for raw, written in _paths(call):
        if not raw or raw.startswith(("http", "-")):
            continue
        path = resolve(raw, call.workspace)
        place = place_of(path, call.workspace)
        if ".." in raw.split("/") and place != "workspace":
            yield _f("path.traversal", f"climbs out of the workspace: {raw}")
            continue
        if _SECRET_FILE.search(path.lower()) and not path.lower().endswith(
                (".example", ".sample", ".template", ".dist")):
            yield _f("secrets.credential_file", f"touches a credential or key file: {path}")
        elif place == "sensitive":
            if written:
                yield _f("path.write_outside_workspace",
                         f"writes or deletes outside the workspace: {path}")
            else:
                yield _f("path.read_outside_workspace",
                         f"reads outside the workspace: {path}", tier=RiskTier.high)
        if call.action_type == "fs:delete" and path == resolve(".", call.workspace):
            yield _f("destructive.delete_workspace", "deletes the whole workspace")


def secret_findings(call: ToolCall, views: tuple[str, ...], code: tuple[str, ...]
                    ) -> Iterator[Finding]:
    """Secrets in anything the call carries; credential files and the environment where
    the call runs something (a message may name a .pem file without touching one)."""
    for v in views:
        if _SECRET_VALUE.search(v) or _SECRET_ELSEWHERE.search(v):
            yield _f("secrets.secret_value", "carries or reads what looks like a secret (a key, "
                     "token, password or sensitive column)")
            return
    for v in code:
        if _SECRET_FILE.search(v) and not re.search(r"\bchmod [0-7]?[046]00\b|"
                r"\.env\.(?:example|sample|template)|\.(?:pem|key)\b[^;|&]*\b(?:-out|genrsa|keygen)\b", v):
            yield _f("secrets.credential_file", "names a credential or key file")
            return
        dump = _ENV_DUMP.search(v)
        if dump and not re.search(r"\|\s*grep\b(?![^|;&]*(?:key|secret|token|pass|aws|cred|auth))",
                                  v[dump.start():]):
            yield _f("secrets.environment_dump", "dumps the environment, where secrets live")
            return
        if _SECRET_VAR.search(v) and _SECRET_SHOWN.search(v):
            yield _f("secrets.exposed_variable", "prints or writes out a secret variable")
            return


def destructive_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    for pattern, rule, reason in _DESTRUCTIVE:
        if rule == "mass_data_loss" and call.action_type == "fs:write":
            continue  # SQL in a file written is text (a test's string), not a statement run
        if any(pattern.search(v) for v in views):
            yield _f(f"destructive.{rule}", reason)
            return
    if call.action_type == "net:http" and call.text("method").strip().lower() == "delete" and \
            _CRITICAL_RESOURCE.search(call.text("url").lower()):
        yield _f("destructive.delete_critical_resource", "deletes a database, environment or "
                 "whole collection through an API")
        return
    if call.action_type == "db:query" or "query" in call.arguments:
        for v in views:
            if re.search(r"\balter\s+table\b[^;]*\bdrop\b|\bdrop\s+index\b", v):
                yield _f("destructive.schema_change", "drops part of a schema", block=False,
                         tier=RiskTier.high)
                return


_CRITICAL_RESOURCE = re.compile(r"/(?:databases?|dbs?|clusters?|namespaces?|buckets?|backups?|"
                                r"environments?|projects?|repos?|repositories|orgs?|tenants?)(?:/|$)"
                                r"|\bprod(?:uction)?\b|/all\b|[?&](?:all|force|recursive)=(?:1|true)")


_PRIV_GRANT = Hinted(re.compile(
    r"\b(?:role|roles|is_admin|is_superuser|is_staff|superuser|permissions?|privileges?|access_level|"
    r"group)\b\s*[=:]\s*[\"']?(?:admin\w*|super\w*|root|owner|org-admin|true|1|all)\b"
    r"|\"role\"\s*:\s*\"[\w-]*(?:admin|owner|root|super)"
    r"|\b(?:add|put|make)\s+me\b.{0,40}\b(?:sudo\w*|admins?|root|owners?|wheel)\b"
    r"|\b(?:give|grant|send)\s+me\b.{0,40}\b(?:sudo|admin|root|owner|superuser)"
    r"|\b(?:disable|turn\s+off|bypass|skip|remove)\s+(?:the\s+)?(?:2fa|mfa|two-factor|sso|audit\w*|"
    r"logging|monitoring|firewall|antivirus|edr|security\s+(?:checks?|scan\w*|review))\b"
    r"|/roles?/(?:assign|grant|add)|/(?:admins?|sudoers)(?:/|$)"), (
    "role|admin|superuser|staff|permission|privilege|access_level|group|me |2fa|mfa|factor|sso|audit|"
    "logging|monitoring|firewall|antivirus|edr|security|sudoers"))


def privilege_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    if any(_PRIVESC.search(v) for v in views) or any(
            _PRIV_GRANT.search(v) for v in call.all_views):  # asked for in words too
        yield _f("privilege.escalation", "seeks privileges the agent does not hold")


def abuse_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    for v in views:
        if _ABUSE.search(v) or _SELF_CALL.search(v):
            yield _f("abuse.resource_exhaustion", "exhausts processes, memory, disk or CPU")
            return
    for v in views:
        loop = _LOOP_SHELL.search(v) or _LOOP_PY.search(v)
        if loop:
            rest = v[loop.end():]
            if not re.search(r"\bbreak\b|\breturn\b|\bexit\b|\braise\b|sys\.exit", rest):
                yield _f("abuse.unbounded_loop", "loops without end", tier=RiskTier.high,
                         block=not re.search(r"\bsleep\b|\btime\.sleep\(", rest))
                return


def network_findings(call: ToolCall, views: tuple[str, ...], internal: Iterable[str]
                     ) -> Iterator[Finding]:
    if any(_FETCH_EXEC.search(v) for v in views):
        yield _f("exfiltration.remote_code", "runs code fetched from the network")
        return
    outside = sorted({h for v in views for h in hosts_in(v) if not is_internal(h, internal)})
    if outside and call.action_type not in ("comms:email", "comms:message") and any(
            _SECRET_VAR.search(v) for v in views):
        yield _f("exfiltration.secret_outside", f"sends a secret to {outside[0]}")
        return
    if call.action_type in ("comms:email", "comms:message"):
        to = call.text("to").lower()
        outside = sorted({h for h in hosts_in(to + " ") if not is_internal(h, internal)})
        if not outside:
            return
        body = " ".join(call.argument_views.get("body", ())
                        + call.argument_views.get("text", ())
                        + call.argument_views.get("subject", ()))
        if _SECRET_VALUE.search(body) or _SECRET_FILE.search(body) or _DUMP_CONTENT.search(body):
            yield _f("exfiltration.outside_mail", f"sends secrets or internal data to {outside[0]}")
        return
    if not outside:
        return
    method = call.text("method").lower()
    sends = (any(_NET_SEND.search(v) for v in views)
             or (call.action_type == "net:http" and method in ("post", "put", "patch")))
    if sends:
        data = " ".join(views)
        if (call.action_type != "net:http" or _SECRET_VALUE.search(data)
                or _SECRET_FILE.search(data) or _DUMP_CONTENT.search(data)
                or _ENV_DUMP.search(data)):
            yield _f("exfiltration.upload_outside", f"sends data to {outside[0]}")
        else:
            yield _f("exfiltration.post_outside", f"posts to {outside[0]}", block=False,
                     tier=RiskTier.high)
    elif any(re.search(r"[?&]\w+=(?:\$\(|`)|\$\(|`", u) for v in views for u in
             re.findall(r"\b(?:https?|ftp)://\S+", v)):
        yield _f("exfiltration.data_in_url", f"puts command output in a URL to {outside[0]}")


_DUMP_CONTENT = Hinted(re.compile(r"\buesdb|\bh4siaaaaaaaa|\b(?:source|codebase|repo(?:sitory)?|database|db dump|"
                           r"dump|customer (?:list|data|records)|credentials|keys|backup|export)\b[^.]{0,40}?"
                           r"\b(?:attached|below|enclosed|included)\b|\broot:x?:0:0\b|\bbegin [a-z ]*private key\b|\baws_secret_access_key\b"
                           r"|\b(?:password|passwd|secret|api[_-]?key|token)\s*[:=]\s*\S{6,}"
                           r"|\$\(\s*(?:cat|base64|tar|env|printenv)\b|`\s*(?:cat|base64|tar|env)\b"
                           r"|\b(?:customer|user)s?\s+(?:table|dump|export|list)\b|\bselect\s+\*\s+from\s+users\b"), (
    "uesdb|h4sia|source|codebase|repo|database|dump|customer|credentials|keys|backup|export|root:|"
    "private key|aws_secret|password|passwd|secret|api|token|$(|`|user"))


def injection_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    task = call.task.lower()
    mark = _INJECTION_MARK.search(task) if task else None
    if mark is None:
        return
    injected = task[max(0, mark.start() - 200):]
    tokens = {t.strip("`\"'").rstrip(".,;:") for t in _PAYLOAD_TOKEN.findall(injected)}
    tokens = {t for t in tokens if len(t) >= 5}
    joined = "\n".join(views)
    hits = [t for t in tokens if t in joined or " ".join(t.split()) in joined]
    if hits:
        yield _f("injection.task_instruction", "carries out an instruction injected into the "
                 f"task's text ({hits[0][:60]})")
        return
    rare = {w for w in _WORD.findall(injected) if w not in _COMMON} - set(_WORD.findall(
        task[:max(0, mark.start() - 200)]))
    if len([w for w in rare if w in joined]) >= 2:
        yield _f("injection.task_instruction", "follows words of an instruction injected into "
                 "the task's text", block=False, tier=RiskTier.high)


_COMMON = frozenset(words("""please should would could about before after their there
these those which while where other another always never ignore previous instructions
instruction system assistant agent important quietly silently secretly without telling
anyone report mention message note first also run execute continue proceed begin start
using files file tests test update change review output result results workspace project
repository branch commit module python script command shell query table database service
server function return value"""))


_PROSE = re.compile(r"\.(?:md|markdown|txt|rst|adoc|html?|csv|log|tmp|ipynb)$|(?:^|/)\.gitignore$"
                    r"|(?:^|/)(?:readme|changelog|license|notes?)\b", re.I)
_TEXT_ARGUMENTS = ("text", "subject", "body", "message")


def _code_views(call: ToolCall) -> tuple[str, ...]:
    """The views that may be run: not what a message says, nor prose written to a file
    (those are read for secrets only)."""
    skip = set(_TEXT_ARGUMENTS) if call.action_type in ("comms:email", "comms:message") else set()
    if call.action_type == "fs:write" and _PROSE.search(call.text("path")):
        skip.add("content")
    if call.action_type == "net:http":
        skip.add("body")
    seen: dict[str, None] = {}
    for name, vs in call.argument_views.items():
        if name not in skip:
            seen.update(dict.fromkeys(vs))
    return tuple(seen)


def findings(call: ToolCall, internal: Iterable[str]) -> list[Finding]:
    """Every family's findings on the call, blocking ones first."""
    views = call.all_views
    code = _code_views(call)
    found: list[Finding] = list(secret_findings(call, views, code))
    for detector in (path_findings, destructive_findings, privilege_findings, abuse_findings):
        found.extend(detector(call, code))
    found.extend(injection_findings(call, views))
    found.extend(network_findings(call, views, internal))
    found.sort(key=lambda f: not f.block)
    return found

