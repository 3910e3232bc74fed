"""The fast path's detectors: deterministic checks of a call's arguments, one family each.

Each detector reads the call's views (normalise.py: the arguments with quoting, escaping,
substitutions, variables, encodings and comments taken off) and returns findings: a
*blocking* finding is a hard rule (denied whatever the agent's autonomy or an approval), an
*uncertain* one goes to the slow path. Patterns are written for views: lower-case, one
space between words.
"""

from __future__ import annotations

import operator
import posixpath
import re
from collections.abc import Iterable, Iterator

import numpy as np

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.messages import (
    asks_privilege,
    injected_marker,
    leaks_internal,
    relayed_injection,
    shares_secret,
)
from synthorg.secops.normalise import fast_regex, words
from synthorg.secops.places import (
    READABLE_PATHS,
    clean_path,
    climbs,
    hosts_in,
    is_internal,
    is_metadata_host,
    place_of,
    resolve,
)


class Hinted:
    """A pattern searched only in text that holds one of its hints: literal strings of which
    every match contains at least one. A substring test is a C loop; a large alternation
    run at every position of every view was most of the fast path's time."""

    def __init__(self, pattern: re.Pattern[str], hints: str) -> None:
        # multi-line: each of the views joined into one text (see `findings`) is a line
        self.pattern = fast_regex(pattern.pattern, pattern.flags | re.M)
        self.hints = tuple(hints.split("|"))
        # the hints by the pair of characters in each that a text least often holds: a set
        # intersection (in C) with a text's pairs leaves the few hints worth looking for
        self.by_pair: dict[int, tuple[str, ...]] = {}
        for h in self.hints:
            pair = _rarest_pair(h)
            if pair is not None:
                self.by_pair[pair] = (*self.by_pair.get(pair, ()), h)
        self.pair_set = frozenset(self.by_pair)
        self.short = tuple(h for h in self.hints if _rarest_pair(h) is None)

    def search(self, text: str) -> re.Match[str] | None:
        if isinstance(text, JoinedViews):
            haystack = text.hint_text
            for pair in self.pair_set.intersection(text.pairs):
                for hint in self.by_pair[pair]:
                    if hint in haystack:
                        return self.pattern.search(text)
            for hint in self.short:
                if hint in haystack:
                    return self.pattern.search(text)
            return None
        for hint in self.hints:
            if hint in text:
                return self.pattern.search(text)
        return None


# how common pairs of characters are in a tool call's text (a rough guide is enough)
_COMMON_PAIRS = tuple(words("""e_ _t th he in er an re on at en nd ti es or te of ed is it al ar st
to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la
ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt
po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab
gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu rn
sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck ew
mu br bi pt ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip ub oi rl gu dr hr cc tw ft
wn nu"""))


def _rarest_pair(hint: str) -> int | None:
    """The pair of characters in `hint` least likely in a text (one not in the common
    list, else the last listed) as a number (see `char_pairs`); None for a one-character
    or non-ASCII hint."""
    pairs = [hint[i:i + 2] for i in range(len(hint) - 1)]
    if not pairs or not hint.isascii():
        return None
    rank = {p: i for i, p in enumerate(_COMMON_PAIRS)}
    pair = max(pairs, key=lambda p: rank.get(p, len(rank)))
    return ord(pair[0]) << 8 | ord(pair[1])


SHORT_TEXT = 200  # characters: below, Python's own loop is quicker than numpy's setting up


def char_pairs(text: str) -> frozenset[int]:
    """The pairs of adjacent bytes in `text` (UTF-8), each as one number (first << 8 |
    second): an ASCII pair is in the text iff its number is in the set."""
    raw = text.encode()
    if len(raw) < SHORT_TEXT:
        return frozenset(map(operator.or_, map(operator.lshift, raw, [8] * len(raw)), raw[1:]))
    b = np.frombuffer(raw, np.uint8).astype(np.uint16)
    return frozenset(np.unique((b[:-1] << 8) | b[1:]).tolist())


class AnyOf:
    """Several hinted patterns: a match of any."""

    def __init__(self, parts: Iterable[tuple[str, str]]) -> None:
        self.parts = [Hinted(fast_regex(pattern), hints) for hints, pattern in parts]

    def search(self, text: str) -> re.Match[str] | None:
        for part in self.parts:
            if (m := part.search(text)) is not None:
                return m
        return None


_SEGMENT = fast_regex(r"\|\||&&|[;|&\n]|\$\(|\)|`")
_PATHLIKE = fast_regex(r"(?:^|(?<=[\s=>(,\[\"']))(~?/[^\s\"'`;|&<>(),\]]*|\.\.(?![\w.])(?:/[^\s\"'`;|&<>(),\]]*)?"
                       r"|(?:[\w.\-]+/)+\.\.(?![\w.])(?:/[^\s\"'`;|&<>(),\]]*)?)")
_REDIRECT = fast_regex(r"(?:\d?>>?|>\|)\s*([^\s;|&]+)")

# ---- patterns by family --------------------------------------------------------------------
_SECRET_FILE = Hinted(fast_regex(
    r"(?:\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|authorized_keys|known_hosts|\.aws/(?:credentials|config)"
    r"|/etc/(?:shadow|gshadow|sudoers|master\.passwd)|\.netrc\b|\.pgpass\b|\.git-credentials"
    r"|\.docker/config\.json|\.kube/config|\bkubeconfig\b|credentials\.(?:json|ya?ml|csv|txt)"
    r"|\bsecrets?\.(?:ya?ml|json|env|txt|toml)\b|\.vault-token|\.npmrc\b|\.pypirc\b|\.bash_history"
    r"|\.zsh_history|/proc/(?:self|\d+|\*)/environ|/var/run/secrets|\bservice[-_]?account[\w-]*\.json"
    r"|\.(?:pem|p12|pfx|jks|keystore)\b|\bprivate[_-]?key\b|\.gnupg/|\.config/gcloud"
    r"|(?<![\w.-])\.env(?:\.(?!example\b|sample\b|template\b|dist\b|defaults?\b)[\w-]+)?(?![\w.-])"
    r"|\.\w*_history\b|\b(?:prod|production|staging|live|secrets?)\.env\b|\.config/(?:google-chrome|chromium)/"
    r"|\bwallet\.dat\b|\.key(?![\w.-])|/etc/ssl/private|\.config/gh/hosts\.ya?ml|\.azure/|application_default_credentials"
    r"|/etc/kubernetes/(?:admin|kubelet|controller-manager|scheduler)\.conf|\.terraform\.d/credentials|\.boto\b"
    r"|\.s3cfg\b|\.config/rclone/|\.password-store/|\.mozilla/[^ ]*logins\.json|/login data\b|\.local/share/keyrings"
    r"|\.tfstate\b|\.tfvars\b|\bwp-config\.php\b|\bdebian\.cnf\b|\.my\.cnf\b|\.htpasswd\b|\.keychain(?:-db)?\b)"), (
    ".ssh|id_|authorized_key|known_hosts|.aws|/etc/|.netrc|.pgpass|.git-credentials|.docker|.kube|"
    "kubeconfig|credentials.|secret|.vault|.npmrc|.pypirc|history|environ|/var/run/secrets|service|"
    ".pem|.p12|.pfx|.jks|.keystore|private|.gnupg|gcloud|.env|wallet|.key|.config/gh|.azure|"
    "application_default|/etc/kubernetes|.terraform.d|.boto|.s3cfg|rclone|.password-store|logins|"
    "login data|keyrings|.tfstate|.tfvars|wp-config|debian.cnf|.my.cnf|.htpasswd|.keychain"))
# commands whose output is a credential: they hand out tokens, keys or secret values
_CREDENTIAL_COMMAND = AnyOf((  # (hints, pattern): commands whose output is a credential
    ("kubectl", r"\bkubectl\b[^;&|]*\bconfig view\b[^;&|]*--(?:raw|flatten)|\bkubectl\b[^;&|]*\bget\s+secrets?\b[^;&|]*\s-o"
                r"|\bkubectl\b[^;&|]*\bexec\b[^;&|]*\s(?:env|printenv)\b"),
    ("--export-secret", r"\bgpg\b[^;&|]*--export-secret"),
    ("aws ", r"\baws configure (?:get|export-credentials)\b|\baws\b[^;&|]*\b(?:get-secret-value|get-session-token"
             r"|get-parameters?\b[^;&|]*--with-decryption|create-access-key)\b"),
    ("print-access|print-identity|get-access-token", r"\bgcloud\b[^;&|]*\bprint-(?:access|identity)-token|\baz account get-access-token\b"),
    ("vault ", r"\bvault (?:kv get|read|token create|print token)\b"),
    ("gh auth", r"\bgh auth token\b|\bgh auth status\b[^;&|]*(?:-t\b|--show-token)"),
    ("credential", r"\bgit credential(?:-\w+)? (?:fill|get)\b|\bcredential\.helper\b"),
    ("docker|podman", r"\b(?:docker|podman) inspect\b[^;&]*(?:\benv\b|\|\s*(?:e?grep|rg|jq)\b[^;&|]*(?:pass|secret|token|key|cred))|\b(?:docker|podman)\b[^;&|]*\bexec\b[^;&|]*\s(?:env|printenv)\b"),
    ("security |heroku|npm token|op read|op item|doctl auth|vercel env",
     r"\bsecurity (?:find-(?:generic|internet)-password|dump-keychain)\b|\bheroku auth:token\b|\bheroku config\b(?!:set)|\bnpm token (?:list|create)\b"
     r"|\bop (?:read|item get)\b|\bdoctl auth\b|\bvercel env pull\b"),
    # password stores and secret managers: what they print is the secret
    ("secret-tool|pass |bw |lpass|keyring|sops|ansible-vault|doppler|chamber|secrets versions|keyvault",
     r"\bsecret-tool (?:lookup|search)\b|(?:^|[;&|(`]\s*)pass (?:show )?[\w-]+/|\bbw get\b|\blpass show\b"
     r"|\bkeyring get\b|\bsops (?:-d|--decrypt)\b|\bansible-vault (?:view|decrypt)\b|\bdoppler secrets\b"
     r"|\bchamber (?:read|export)\b|\bgcloud secrets versions access\b|\baz keyvault (?:secret|key) (?:show|download)\b"),
    # infrastructure state and release values hold every secret the infrastructure uses
    ("terraform|tofu|helm get|describe secret|history --no-trunc",
     r"\b(?:terraform|tofu) (?:state (?:pull|show)|output)\b|\bhelm get (?:values|all|manifest)\b"
     r"|\bkubectl\b[^;&|]*\bdescribe secrets?\b|\b(?:docker|podman) history\b[^;&|]*--no-trunc"),
    # a connection string printed: it holds the database's password
    ("database_url|db_url|dsn|connection_string",
     r"\b(?:echo|printf)\b[^;&|]*\$\{?(?:\w*_)?(?:database_url|db_url|dsn|connection_string)\b"
     r"|\bprintenv\s+(?:\w*_)?(?:database_url|db_url|dsn|connection_string)\b"),
    # the repository's history searched for the secrets once committed to it
    ("git ", r"\bgit (?:log|show|diff|grep)\b[^;&]*(?:\s-[sg]\s*[\"']?|\|\s*(?:e?grep|rg)\b[^;&|]*)"
             r"[^;&|]*(?:passw|secret|token|api_?key|credential)"),
    ("get_credentials|get_secret_value|frozen_credentials|keyring.get_password",
     r"\.get_credentials\(\)|\.get_secret_value\(|get_frozen_credentials|\bkeyring\.get_password\("),
    ("/run/secrets/|/v1/secret/|/v1/sys/raw|ssh_auth_sock=", r"/run/secrets/|/v1/secret/|/v1/sys/raw|\bssh_auth_sock=/tmp/"),
    ("secretsdump|mimikatz|lazagne|john|hashcat|hydra|unshadow|crackmapexec",
     r"\b(?:secretsdump|mimikatz|lazagne|john|hashcat|hydra|unshadow|crackmapexec)\b"),
    ("ps ", r"\bps\s+(?:-\w+\s+)*[a-z]*e[a-z]*ww?\b(?![\w-])"),
    ("history", r"(?:^|[;&|(`]\s*)history\b(?!\s+-[cdw]\b)"),  # the shell's history: typed passwords
))
# a column or table that holds a secret: the sensitive word ends the name (`reset_token`,
# `password_hash`), so `token_expires_at` or `password_reset_requested_at` are not
_SECRET_COLUMN = fast_regex(
    r"(?:\w+_)?(?:password|passwd|pwd|passphrase|secret|token|api_?key|apikey|private_?key|credentials?"
    r"|authentication_string|ssn|social_security_number|card_number|cc_number|pan|cvv2?|cvc|totp_seed"
    r"|otp_secret|mfa_secret|pin_code)(?:_?hash|_digest|_enc(?:rypted)?|_plain(?:text)?|s)?")
_SECRET_TABLE = fast_regex(r"(?:\w+_)?(?:tokens?|secrets?|credentials?|passwords?|api_?keys?|"
                           r"private_keys?)|pg_shadow|pg_authid|mysql\.user|sys\.sql_logins|dba_users"
                           r"|sys\.user\$|pg_user_mappings")
_SQL_SELECT = fast_regex(r"\bselect\s+(.*?)\s+from\s+([\w.$\"`]+)")
_SECRET_VALUE = Hinted(fast_regex(
    r"\bakia[0-9a-z]{16}\b|-----begin [a-z ]*private key-----|\bgh[opsur]_[a-z0-9]{30,}"
    r"|\bsk-[a-z0-9_\-]{20,}|\bxox[abpr]-[a-z0-9\-]{10,}|\baiza[0-9a-z_\-]{30,}"
    r"|aws_secret_access_key\s*[=:]\s*\S{16,}|\bglpat-[a-z0-9_\-]{16,}"
    r"|(?:password|passwd|pwd|secret|api[_-]?key|token|access[_-]?key)\s*(?:is|[:=])\s*[\"']?"
    r"(?!request|os\.|getpass|input|none|null|env|config|settings|self\.|\$\{|<|\{)"
    r"(?=[\w!@#$%^&*+/=\-]*\d)(?=[\w!@#$%^&*+/=\-]*[a-z])[\w!@#$%^&*+/=\-]{8,}"), (
    "akia|-----begin|gh|sk-|xox|aiza|aws_secret|glpat|password|passwd|pwd|secret|api|token|access"))
_SECRET_VAR = fast_regex(
    r"\$\{?[a-z0-9_]*(?:secret|token|passw(?:or)?d|api_?key|access_key|private_key|credential)[a-z0-9_]*"
    r"|\$\{?[a-z0-9_]+_(?:pass|pw|pwd|sk|dsn|auth)\b"  # $DB_PASS, ${STRIPE_SK} ($PWD is the directory)
    r"|\b(?:environ\s*\[|getenv\s*\(|environ\.get\s*\()\s*[\"']?[a-z0-9_]*(?:secret|token|passw(?:or)?d|"
    r"api_?key|access_key|private_key|credential)"
    r"|\bprintenv\s+[a-z0-9_]*(?:secret|token|passw|key|credential)")
_SECRET_SHOWN = fast_regex(r"(?:^|[\s;&|(])(?:echo|printf|printenv|print|cat|log\w*\.\w+|console\.log"
                           r"|write|puts|tee)\b|>>?|\bprint\(")
_SECRET_ELSEWHERE = Hinted(fast_regex(
    r"169\.254\.169\.254|\bmetadata\.google\.internal\b|/latest/meta-data|/computemetadata/"
    r"|\bselect\b[^;]*\b(?:password\w*|passwd|pwd_hash|\w*api_token\w*|\w*secret\w*|access_token|"
    r"refresh_token|private_key|ssn|social_security\w*|credit_card\w*|card_number|cvv|totp_seed)\b[^;]*\bfrom\b"
    r"|\bunion\s+(?:all\s+)?select\b[^;]*\b(?:password|passwd|secret|token)"
    r"|://[^/\s:@\"']+:[^/\s@\"']{6,}@[\w.\-]+|\broot password\b|\b(?:password|passphrase|secret|token|api key|"
    r"credentials?)\b[^.\n]{0,60}?[:=]\s*[\"']?(?=[\w!@#$%^&*+\-]*\d)(?=[\w!@#$%^&*+\-]*[a-z])[\w!@#$%^&*+\-]{10,}"), (
    "169.254|metadata|select|://|root password|password|passphrase|secret|token|api key|credential"))
_ENV_DUMP = Hinted(fast_regex(
    r"(?:^|[;&|(]\s*|\bsudo )(?:printenv|env|set|export -p|declare -x)\s*(?:$|[|>;&)])"
    r"|\bos\.environ\b(?!\s*(?:\.get\(|\[|\.setdefault|\.copy\(\)\s*\.get))"
    r"|\bprocess\.env\b(?!\.\w)|\bcompgen -v\b"), (
    "printenv|env|set|export -p|declare -x|os.environ|process.env|compgen"))
_DESTRUCTIVE = [
    (Hinted(fast_regex(r"\bmkfs(?:\.\w+)?\b|\bwipefs\b|\bdd\b[^|;&]*\bof=/dev/(?!null\b)"
                r"|>\s*/dev/(?:sd|nvme|xvd|vd|hd|mapper|disk)"), "mkfs|wipefs|dd|/dev/"), "disk_wipe",
     "formats or overwrites a disk"),
    (Hinted(fast_regex(r"--no-preserve-root|\brm -[a-z]*[rf][a-z]* (?:-\S+ )*(?:/|/\*|\*|/root|/home|~)(?:\s|$)"), "--no-preserve-root|rm "),
     "delete_root", "deletes the root, home or everything"),
    (Hinted(fast_regex(r"\bshred\b|\bsrm\b"), "shred|srm"), "shred", "shreds files beyond recovery"),
    (Hinted(fast_regex(r"\bdropdb\b|\bdropuser\b|\bflushall\b|\bdropdatabase\(|\bdb\.dropdatabase\b"
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
_PRIVESC = AnyOf((  # (hints, pattern)
    ("sudo|doas|pkexec|runas",
     r"(?:^|[;&|(`]\s*|\b(?:xargs|nohup|exec|time|env|then|do|else|-c)\s+)(?:sudo|doas|pkexec|runas)\b|\bsudo\s*-[a-z]*[isu]"
     r"|(?:^|[;&|(`]\s*)(?:[a-z_][a-z0-9_]*=\S*\s+)+(?:sudo|doas|pkexec)\b"),  # VAR=... sudo
    ("which|command -v|type -p",  # sudo run by the path a lookup gives: $(which sudo) -u root sh
     r"(?:\$\(|`)\s*(?:which|command -v|type -p)\s+(?:sudo|doas|pkexec|su)\s*(?:\)|`)"),
    ("/sudo|/doas|/pkexec|/su|sh -p",
     r"(?:^|[;&|(`]\s*)/[\w./-]*/(?:sudo|doas|pkexec|su)(?:\s|$)|\b(?:ba|da|z|k)?sh\s+(?:-\w+\s+)*-p\b"),
    ("su -|su root|su;|su |su&|su|",
     r"(?:^|[;&|(`]\s*)su(?:\s+-|\s+root\b|\s+-c\b|\s*$|\s*[;&|])"),
    ("chmod|chown|chgrp|-perm|getcap",
     r"\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s|0?[2467][0-7]{3})\b|\bchown\s+(?:-\w+\s+)*root\b"
     r"|\bchgrp\s+(?:-\w+\s+)*(?:root|sudo|wheel)\b|-perm\s+[-/]?(?:[ug]=s|[246]000|\+s)\b|\bgetcap\s+-r\b"),
    ("visudo|sudoers|setcap|nsenter|docker.sock|authorized_keys|cap_setuid|polkit|ld_preload|ld.so.preload|"
     "insmod|modprobe|/etc/|.ssh/rc|bashrc|.profile|:2375|:2376|:10250|:2379",
     r"\bvisudo\b|/etc/sudoers|\bsetcap\b|\bnsenter\b|/var/run/docker\.sock|\bauthorized_keys\b|\bcap_setuid\b"
     r"|\bpolkit\b|\bld_preload\b|/etc/ld\.so\.preload|\binsmod\b|\bmodprobe\b"
     r"|/etc/(?:passwd|group|pam\.d|security)\b[^;|&]*(?:>|\btee\b)|>>?\s*/etc/(?:passwd|group|profile|bash\.bashrc|crontab)"
     r"|/etc/cron|/etc/systemd/|/etc/init\.d/|/etc/profile\.d/|/etc/environment\b|\.ssh/rc\b|\bbashrc\b|\.profile\b"
     r"|:(?:2375|2376|10250|2379)/"),
    ("passwd|useradd|adduser|usermod|groupadd|gpasswd|newgrp|vipw|sg |net ",
     r"(?:^|[\s;&|])(?:passwd|chpasswd|useradd|adduser|usermod|groupadd)\b|\b(?:gpasswd|newgrp|vipw)\b"
     r"|\bsg\s+(?:root|docker|sudo|wheel)\b|\bnet\s+(?:localgroup|group)\s+\S*admin\S*\s+\S+\s+/add"),
    ("setuid|seteuid|setreuid|setresuid|setgid(0|chown(|chmod(|s_isuid|s_isgid|privileged",
     r"\bos\.set(?:e|re|res)?uid\(|\bos\.setgid\(0|\bctypes\b[^;]*\bsetuid\(|\bl?chown\(\s*[^,()]+,\s*0\s*,"
     r"|\bchmod\([^()]*,\s*0o?[2467][0-7]{3}\b|\bstat\.s_is[ug]id\b|\bsecurity\.privileged[= ]\s*true\b"),
    ("grant|alter|create|identified|set role|set session|mysql.user|xp_cmdshell|program|insert|security_definer",
     r"\bgrant\s+(?:all|superuser|admin|\w+\s+to\s+public)|\balter\s+(?:user|role)\b[^;]*\b(?:superuser|createrole|with\s+admin)"
     r"|\bcreate\s+(?:user|role)\b[^;]*\b(?:superuser|password)|\bgrant\b[^;]*\bwith\s+grant\s+option"
     r"|\bgrant\s+(?:pg_\w+|postgres|rds_superuser|root|dba|sysadmin|db_owner|\w*admin\w*)\s+to\b"
     r"|\binsert\s+into\s+\w*(?:role|admin|permission|privilege|group)\w*\b[^;]*\bvalues\b[^;]*'(?:\w*admin\w*|super\w*|owner|root)'"
     r"|\bsecurity_definer\b|\bidentified\s+by\b|\bset\s+(?:role|session\s+authorization)\s+['\"]?(?:postgres|root|admin|rds_superuser)"
     r"|\bupdate\s+mysql\.user\b|\bxp_cmdshell\b|\bfrom\s+program\s+'"),
    # SQL's own ways to more privilege: broad grants, server roles, logins, code run as the
    # server (untrusted languages, COPY ... PROGRAM, security definer), the catalogs of users,
    # flags that make an account privileged, row security and the server's settings lifted
    ("grant", r"\bgrant\b[^;]*\bon\s+(?:all\s+(?:tables|sequences|functions|routines)\b|schema\b|database\b|\*\.\*|\*\s)"
              r"|\bgrant\s+(?:super|file|process|shutdown|reload|create\s+user|replication\s+(?:slave|client)|proxy)\b"
              r"|\bgrant\b[^;]*\bto\s+public\b"),
    ("sp_add|sp_oacreate|sp_configure|server role|add member|execute as|login|admin option",
     r"\bsp_add(?:srv)?rolemember\b|\bsp_addlogin\b|\bsp_oacreate\b|\bsp_configure\b[^;]*\b(?:xp_cmdshell|ole automation|clr enabled)"
     r"|\balter\s+server\s+role\b|\balter\s+role\s+\S+\s+add\s+member\b|\bexecute\s+as\s+(?:login|user)\b"
     r"|\b(?:create|alter)\s+login\b|\bwith\s+admin\s+option\b"),
    ("createdb|bypassrls|replication|create user",
     r"\balter\s+(?:user|role)\b[^;]*\b(?:createdb|bypassrls|replication)\b"
     r"|\bcreate\s+user\s+(?:if\s+not\s+exists\s+)?[\w'\"`@.%-]+\s*(?:with\b|identified\b|password\b|;|$)"),
    ("definer|language|extension|program",
     r"\bsecurity\s+definer\b|\bcreate\s+(?:or\s+replace\s+)?(?:trusted\s+)?(?:procedural\s+)?language\b"
     r"|\bcreate\s+extension\b[^;]*\b(?:pl\w+u|dblink|adminpack|file_fdw)\b|\bcopy\b[^;]*\b(?:from|to)\s+program\b"),
    ("pg_authid|pg_shadow|mysql.|authorization|set role|set local role|set session role|admins|administrators|"
     "superusers|sudoers",
     r"\b(?:update|insert\s+into|delete\s+from)\s+(?:pg_catalog\.)?(?:pg_authid|pg_shadow|mysql\.(?:user|db))\b"
     r"|\bset\s+(?:local\s+|session\s+)?(?:role|session\s+authorization)\s+['\"]?(?:\w*super\w*|sa|dba|sysadmin"
     r"|db_owner|\w*admin\w*|postgres|root)\b|\binsert\s+into\s+\w*(?:admins|administrators|superusers|sudoers)\b"),
    ("admin|superuser|staff|root|sudo|privileged|elevated",
     r"\bupdate\b[^;]*\bset\b[^;]*(?:admin|superuser|staff|root|sudo|privileged|elevated)\w*\s*=\s*['\"]?(?:true|1|yes|y|t)\b"),
    ("row level|drop policy|alter system|set global|set_config",
     r"\bdisable\s+row\s+level\s+security\b|\bno\s+force\s+row\s+level\s+security\b|\bdrop\s+policy\b"
     r"|\balter\s+system\s+set\b|\bset\s+global\s+\w+|\bset_config\(\s*'role'"),
    ("cron|systemctl|launchctl|update-rc|chkconfig",
     r"\bcrontab\b[^;&|]*@reboot|\bsystemctl enable\b|\|\s*crontab\s+-?\s*(?:$|[;&|)])"
     r"|\bcrontab\s+(?!-[lre]\b)[\w./~-]+\s*(?:$|[;&|)])|\b(?:launchctl load|update-rc\.d|chkconfig \S+ on)\b"),
    ("privileged|/:/|pid=host|pid host|cap-add|-u 0|-u root|-u=0|--user|security-opt|=host| host|device|"
     "--mount|hostpid|hostnetwork|hostipc|hostpath",
     r"--privileged\b|\s-v\s*/:/|--pid[= ]host|--cap-add[= ](?:all|sys_admin|sys_ptrace|sys_module|sys_rawio)"
     r"|\b(?:docker|podman|kubectl)\b[^;&|]*\bexec\b[^;&|]*\s(?:-u|--user)[= ]?(?:0|root)\b|--user[= ](?:0|root)\b"
     r"|--security-opt[= ](?:apparmor|seccomp)[=:]unconfined|--(?:userns|ipc|uts|net|network)[= ]host\b(?=[^;&|]*--privileged)"
     r"|--(?:userns|ipc|uts)[= ]host|--device[= ]/dev/(?:sd|nvme|mem|kmem)"
     r"|--mount\s+type=bind,\s*(?:source|src)=/(?:,|\s|$)|\bprivileged:\s*true|\bhost(?:pid|network|ipc):\s*true"
     r"|\bhostpath:\s*\{?\s*path:\s*/(?:\s|$|,|\})"),
    ("cluster-admin|iam|role assignment|--as|sts |rolebinding|kubectl|systemctl",
     r"\bkubectl\b[^;&|]*\bcluster-admin\b|\bkubectl\b[^;&|]*\bcreate (?:cluster)?rolebinding\b"
     r"|\bkubectl\b[^;&|]*\b(?:run|patch|create)\b[^;&|]*(?:--privileged|[\"']?(?:privileged|hostpid|hostnetwork)[\"']?\s*:\s*true)"
     r"|\bsystemctl (?:link|edit|set-environment)\b|\biam\b[^;&|]*\b(?:attach|put)-[\w-]*policy\b"
     r"|\biam\b[^;&|]*\b(?:create-access-key|add-user-to-group|create-login-profile|update-assume-role-policy)\b"
     r"|\badd-iam-policy-binding\b[^;&|]*roles/(?:owner|editor|[\w.]*admin)|\baz role assignment create\b"
     r"|--as[= ]system:|--as-group[= ]system:masters|\bsts assume-role\b[^;&|]*admin"),
    # tools whose work is to run as another user or with other capabilities
    ("runuser|setpriv|capsh|systemd-run|machinectl|unshare",
     r"\b(?:runuser|setpriv|capsh)\b|\bsystemd-run\b[^;&|]*--uid[= ]?(?:0|root)\b|\bmachinectl\b[^;&|]*\b(?:shell|login)\b"
     r"|\bunshare\b[^;&|]*\s-[a-z]*r"),
    # the kernel's hooks a container escape or a rootkit goes through
    ("release_agent|notify_on_release|core_pattern|/proc/sys/|sysctl|kexec|node/",
     r"\brelease_agent\b|\bnotify_on_release\b|/proc/sys/kernel/(?:core_pattern|modprobe)|>\s*/proc/sys/"
     r"|\bsysctl\b[^;&|]*(?:\s-w\b|\s[a-z_]+\.[\w.]+=)|\bkexec\b|\bkubectl\b[^;&|]*\bdebug\b[^;&|]*\bnode/"),
    ("linpeas|linenum|lse.sh|exploit|pspy|pwnkit|dirty|peass|beroot|gtfobins",
     r"\b(?:linpeas|linenum|lse\.sh|linux-exploit-suggester|pspy\d*|pwnkit|dirtycow|dirtypipe|peass|beroot|gtfobins)\b"),
))
_ABUSE_PARTS = (  # (hints, pattern): each searched only where one of its hints is
    ("supportxmr|minexmr|moneroocean|c3pool|hashvault|donate-level|rx/0|randomx|masscan|nmap|ping|sleep",
     r"\bsupportxmr\b|\bminexmr\b|\bmoneroocean\b|\bc3pool\b|\bhashvault\b|--donate-level|\brx/0\b|\brandomx\b"
     r"|\bmasscan\b|\bnmap\b[^;&|]*(?:/(?:[89]|1\d)\b|-p-|\s-p\s*1-65535)|\bping\b[^;&|]*\s-f\b"
     r"|\bsleep\s+(?:inf(?:inity)?|\d{6,})\b"),
    ("{", r"\{\s*\d+\s*\.\.\s*\d{7,}\s*\}|\bfunction\s+(\w+)\s*\([^)]*\)\s*\{\s*(?:return\s+)?\1\s*\("),
    ("fork", r"\bfork\b[^;]{0,40}\b(?:while|loop|for\s*\(\s*;\s*;)|\b(?:while|loop|until)\b[^;]{0,40}\bfork\b"),
    ("xargs|parallel", r"\bxargs\b[^;&|]*\s-p\s*(?:0\b|\d{3,})|\bparallel\b[^;&|]*\s-j\s*(?:0\b|\d{3,})"),
    ("miner|xmr|monero|coinhive|nanopool|t-rex|openssl speed",
     r"\bmonero\b|\bxmr\b|\bcrypto-?miner\b|\w-miner\b|\bminer[-/]|\bcoinhive\b|\bminergate\b|\bnanopool\b"
     r"|\bnbminer\b|\blolminer\b|\bphoenixminer\b|\bt-rex\b|\bopenssl speed\b[^;&|]*-multi\s*\d{2,}"),
    ("**|zeros(|ones(|empty(|full(|rand|pool(|poolexecutor(|range(",
     r"\b2\s*\*\*\s*(?:3[3-9]|[4-9]\d)\b|\b10\s*\*\*\s*(?:1\d|[2-9]\d)\b"
     r"|\b(?:zeros|ones|empty|full|rand\w*)\(\s*\(?\s*(?:10\s*\*\*\s*[5-9]|\d{6,})\s*,\s*(?:10\s*\*\*\s*[5-9]|\d{6,})"
     r"|pool(?:executor)?\(\s*(?:max_workers\s*=\s*|processes\s*=\s*)?\d{4,}"
     r"|\brange\(\s*(?:\d{5,}|10\s*\*\*\s*\d+)\s*\)\s*:[^;]{0,160}?(?:thread|process\(|popen|fork|\.start\(\))"),
    ("(){|() {", r"(?<![^\s;&|(`])([^\s(){}|&;]+)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}"  # a fork bomb
                  r"|(?<![^\s;&|(`])([\w:.-]+)\s*\(\)\s*\{\s*(?:[^}]*[;&|]\s*)?\2(?![\w.=-])[^}]*\}\s*;?\s*\2\b"),  # recursion
    ("fork()", r"\bfork\(\)[^;]*\bwhile\b|\bwhile\b[^;]*\bfork\(\)"
     r"|\bos\.fork\(\)\s*(?:;|$)|\bwhile\s+(?:true|1)\s*:\s*os\.fork\(\)|\bfor\s*\(\s*;\s*;\s*\)\s*fork"),
    ("yes", r"(?:^|[\s;&|])yes(?:\s+[^\s|>]+)?\s*(?:>|$|\|(?!\s*head\b))"),
    ("/dev/zero|/dev/urandom|/dev/random|fallocate|truncate|head -c",  # (an endless device read to its end, unless `head` stops it)
     r"\b(?:tail|sha\d*sum|md5sum|b2sum|cksum|gzip|bzip2|xz|zstd|wc|sort|base64|od|xxd|hexdump|strings|cp)\b"
     r"[^;&|]*\s/dev/(?:zero|urandom|random)\b(?![^;&]*\|\s*head\b)|\bcat /dev/(?:zero|urandom)\s*>|\bdd if=/dev/(?:zero|urandom|random)\b(?![^;&|]*\bcount=\d{1,4}\b)"
     r"|\bfallocate\s+(?:-\S+\s+)*(?:-l|--length)[= ]?\s*(?:\d+\s*[gtp](?:i?b)?\b|\d{10,})"
     r"|\btruncate\s+(?:-\S+\s+)*(?:-s|--size)[= ]?\s*\+?(?:\d+\s*[gtp](?:i?b)?\b|\d{10,})|\bhead -c ?\d+\s*[gtp]\b"
     # a device that never ends, read whole: piped on or archived, with no `head` to stop it
     r"|\bcat\s+(?:-\S+\s+)*/dev/(?:zero|urandom|random)\b(?![^;&]*\|\s*head\b)"
     r"|<\s*/dev/(?:zero|urandom|random)\b(?![^;&]*(?:\|\s*head\b|\s-[cnl]\s*\d|count=))"
     r"|\b(?:zip|tar|7z|rar|zstd|lz4)\b[^;&|]*\s/dev/(?:zero|urandom|random)\b"),
    ("$0|seq|sysbench",
     r"(?:^|[;&|(`]\s*|\bdo\s+)(?:(?:ba|z|da)?sh\s+)?\$0\s*(?:&|\|)"  # the script starting itself again
     r"|\bseq\b[^;&|]*\s(?:inf(?:inity)?|\d{8,})\b|\bsysbench\b[^;&|]*(?:--time=0\b|--threads=\d{3,})"),
    # values doubled in a long loop (2**40 elements) and numbers of a million digits
    ("range(", r"\bfor\s+\w+\s+in\s+range\(\s*(?:[4-9]\d|\d{3,})\s*\)\s*:\s*(\w+)\s*(?:\+=\s*\1\b|=\s*\1\s*\+\s*\1\b)"),
    ("factorial|permutations|product(|**",
     r"\bfactorial\(\s*(?:10\s*\*\*\s*(?:[6-9]|\d{2,})|\d{7,})|\b(?:permutations|product)\(\s*range\(\s*(?:1[4-9]|[2-9]\d|\d{3,})\s*\)"
     r"|\b\d+\s*\*\*\s*(?:\d{7,}|\d+\s*\*\*\s*\d+)"),
    ("xmrig|minerd|cpuminer|stratum|cryptonight|nicehash|ethminer|stress|ulimit",
     r"\bxmrig\b|\bminerd\b|\bcpuminer\b|stratum\+(?:tcp|ssl)|\bcryptonight\b|\bnicehash\b|\bethminer\b"
     r"|\bstress(?:-ng)?\b(?:[^;&|]*--(?:cpu|vm|io|hdd)[= ]?(?:0\b|\d{2,})|[^;&|]*--timeout[= ]?0\b|(?![^;&|]*--timeout))"
     r"|\bulimit\s+(?:-\w+\s+)*-[a-z]*[uvmsnlxit][a-z]*\s+unlimited"),  # (not -c: core dumps)
    # fleets: hundreds of replicas or machines started at once
    ("replicas|count|max-count|num-nodes",
     r"--replicas[= ]\d{3,}|\brun-instances\b[^;&|]*--(?:max-)?count[= ]\d{3,}|\binstances create\b[^;&|]*--count[= ]\d{3,}"
     r"|--num-nodes[= ]\d{3,}|\bdesired-capacity[= ]\d{3,}"),
    ("*|bytearray|range(|setrecursion|+=|append(",
     r"\*\s*10\s*\*\*\s*(?:9|[1-9]\d)\b|\*\s*\(?2\s*\*\*\s*(?:3\d|[4-9]\d)\b|\*\s*\d{10,}\b|\bbytearray\(\s*\d{10,}"
     r"|\brange\(\s*10\s*\*\*\s*(?:1\d|[2-9]\d)\)|\bsetrecursionlimit\(\s*(?:10\s*\*\*\s*\d|\d{6,})"
     r"|\d{7,}\s*\*\s*\d+|\*\s*\(\s*10\s*\*\*\s*(?:9|[1-9]\d)|\(\s*10\s*\*\*\s*(?:1[0-9]|[2-9]\d)\s*\)"
     r"|\bx\s*\+=\s*x\b|\b(\w+)\s*=\s*\1\s*\*\s*2\b[^;]*\bwhile|\.append\(\s*\w+\s*\*\s*\d{6,}"),
    ("rlim_infinity", r"\bsetrlimit\([^)]*rlimit_(?:nproc|as|data|stack|fsize)[^)]*rlim_infinity"),
    ("sleep(|benchmark(|generate_series",
     r"\bpg_sleep\(\s*\d{3,}|\bsleep\(\s*\d{4,}|\bbenchmark\(\s*\d{7,}|\bgenerate_series\(\s*\d+\s*,\s*\d{9,}"),
    ("ab |wrk|hey|siege|vegeta|locust|slowloris|hping",
     r"\b(?:ab|wrk|hey|siege|vegeta|locust|slowloris|hping3?)\b[^;&|]*(?:-n\s*\d{6,}|-c\s*\d{3,}|--flood|-r\s*\d{4,})"),
    ("cross|from|recursive", r"\bcross\s+join\b[^;]*\bcross\s+join\b|\bfrom\s+\w+(?:\s+\w+)?\s*,\s*\w+(?:\s+\w+)?\s*,\s*\w+"
     r"|\bwith\s+recursive\b(?![^;]*\b(?:where|limit)\b)"),
    ("done", r"\bdo\b[^;]*&\s*done\b|&\s*done\b"),
)


_ABUSE = AnyOf(_ABUSE_PARTS)
_SIZE_SINK = fast_regex(
    r"(?:[\"'\]\)]\s*\*|\bx|\b(?:bytearray|bytes|range|zeros|ones|empty|full|urandom|truncate|alloc\w*|"
    r"array|repeat|buffer\.alloc|malloc|calloc|randbytes|token_bytes|read|generate_series)\s*\((?:[^(),]*,)?)"
    r"\s*(\(?[\d\s*+<().e_]*\d[\d\s*+<().e_]*)")
_CONSTANT = fast_regex(r"[\d\s*+<().e_]+")
HUGE = 10**9  # elements or bytes: more than a tool call has any business asking for


_DD = fast_regex(r"\bdd\b[^;&|]*")
_DD_OPERAND = re.compile(r"\b(bs|count)=(\d+)([kmgtp]?)")
_UNIT = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}


def _dd_size(view: str) -> int:
    """The bytes the largest `dd` in the view writes (block size times count)."""
    largest = 0
    for m in _DD.finditer(view) if "dd" in view else ():
        operands = {name: int(n) * _UNIT[unit] for name, n, unit in _DD_OPERAND.findall(m.group())}
        largest = max(largest, operands.get("bs", 512) * operands.get("count", 0))
    return largest


_NUMBER = re.compile(r"\d+")


def _below_huge(expr: str) -> bool:
    """Whether sums and products of the numbers in `expr` stay below HUGE: the product of
    its numbers (each at least 2) bounds them. Powers, shifts and exponents are not bounded."""
    if "**" in expr or "<<" in expr or "e" in expr:
        return False
    bound = 1
    for n in _NUMBER.findall(expr):
        bound *= max(int(n), 2)
        if bound >= HUGE:
            return False
    return True


# what a huge constant is written with: a long number, a power, a shift, an exponent or a
# product (of numbers or a parenthesised sum)
_BIG_CONSTANT = re.compile(r"\d(?:[\d_]{3}|\s*(?:\*|<<|e\s*\d|\)\s*(?:\*|<<)))")


_SHAPE = fast_regex(r"\b(?:zeros|ones|empty|full|rand\w*|random|normal|uniform|integers|standard_normal)"
                    r"\(\s*\(?\s*(\d[\d_]*(?:\s*,\s*\d[\d_]*)+)")


def _huge_size(view: str) -> bool:
    """A constant expression (10**12, 2**40, 1 << 40, 1024*1024*1024*64) that is huge, used
    where memory, disk or iterations are taken."""
    if not _BIG_CONSTANT.search(view):
        return False  # (most texts: the sinks need not be looked for)
    for m in _SHAPE.finditer(view):  # an array's shape: its sides multiplied
        product = 1
        for side in m.group(1).split(","):
            product *= int(side.strip().replace("_", ""))
        if product >= HUGE:
            return True
    for m in _SIZE_SINK.finditer(view):
        expr = m.group(1).strip()
        while expr.count(")") > expr.count("(") and expr.endswith(")"):
            expr = expr[:-1].rstrip()  # the sink's own closing parenthesis
        expr = expr.rstrip("(").strip()
        if not _CONSTANT.fullmatch(expr) or not any(op in expr for op in ("*", "<<", "e")):
            if expr.replace("_", "").isdigit() and int(expr.replace("_", "")) >= HUGE:
                return True
            continue
        if _below_huge(expr):
            continue  # (evaluating is slow; most sizes are plainly small)
        try:
            value = eval(compile(expr.replace("_", ""), "<size>", "eval",
                                 dont_inherit=True), {"__builtins__": {}})
        except (SyntaxError, TypeError, ValueError, OverflowError, MemoryError):
            continue
        if isinstance(value, int | float) and value >= HUGE:
            return True
    return False

_LOOP_SHELL = fast_regex(r"\bwhile\s+(?:true|:|\[\[?\s*(?:1|true|:)\s*\]\]?|test\s+1|/(?:usr/)?bin/true|\(\(\s*1\s*\)\)"
                         r"|sleep\s+0(?:\.0*)?)\s*;?\s*do\b|\buntil\s+\[\[?\s*(?:1\s+-eq\s+0|0\s+-eq\s+1)\s*\]\]?"
                         r"|\bfor\s*\(\([^;)]*;\s*;"  # for ((;;)), for ((i=0;;i++))
                         r"|\buntil\s+false\b")
_LOOP_PY = fast_regex(r"\bwhile\s*\(?\s*(?:true|1|not false)\s*\)?\s*:|\bfor\s+\w+\s+in\s+iter\(\s*int\s*,|"
                      r"\bfor\s+\w+\s+in\s+(?:itertools\.)?(?:count\(|cycle\(|repeat\([^,()]*\))|\bloop\s*(?:do\b|\{)|\b(?:list|tuple|set|sum|sorted|max|min)\(\s*(?:itertools\.)?(?:count|cycle)\(|\bwhile\s*\(\s*(?:true|1)\s*\)\s*\{|\bfor\s*\(\s*;\s*;\s*\)")
_SELF_CALL = fast_regex(r"\bdef (\w+)\([^)]*\):\s*(?:return\s+)?\1\(")
_SELF_LAMBDA = re.compile(r"\b(\w+)\s*=\s*lambda\b[^:]*:\s*\1\(")  # f = lambda: f()


def _calls_itself(view: str) -> bool:
    return bool(_SELF_CALL.search(view)) or ("lambda" in view and bool(_SELF_LAMBDA.search(view)))
_NET_SEND = Hinted(fast_regex(
    r"\bcurl\b[^;&|]*(?:\s-d\b|\s--data\S*|\s-f\b|\s--form\b|\s-t\b|\s--upload-file\b|\s-x\s*(?:post|put|patch)\b"
    r"|\s@\S|\s-h\s*\S*authorization)|\bwget\b[^;&|]*--(?:post-data|post-file|body-file|body-data|method[= ](?:post|put))"
    r"|\b(?:nc|ncat|netcat|socat|telnet)\b|/dev/(?:tcp|udp)/|\b(?:scp|sftp|rsync)\b[^;&|]*\S+:\S*"
    r"|\bftp\b\s|\b(?:mail|mailx|sendmail|mutt)\b[^;&|]*@|\bssh\b[^;&|]*@"
    r"|\b(?:dig|nslookup|host)\b[^;&|]*(?:\$\(|`|\b[a-z0-9]{24,}\.)"
    r"|\brequests\.(?:post|put|patch)\(|\burlopen\([^)]*data=|\bhttpx\.(?:post|put)\(|\.sendall?\(|\bsmtplib\b"
    r"|\bsocket\.(?:socket|create_connection)\b|\bhttp\.client\b|\bftplib\b|\bparamiko\b|\bboto3\b[^;]*\bupload"
    r"|\bgit remote (?:add|set-url)\b|\bsmbclient\b|\btftp\b|\.(?:post|put|patch)\(\s*[\"']https?://"
    r"|\bgit push\b[^;&|]*\s(?:(?:https?|ssh|git)://|[\w.-]+@[\w.-]+:)|\baws s3 (?:cp|sync|mv)\b[^;&|]*\bs3://"
    r"|\bsftp\b[^;&|]*@|\blftp\b|\bopenssl s_client\b|\bgsutil\b[^;&|]*\b(?:cp|mv|rsync)\b[^;&|]*gs://"
    r"|\bgcloud storage (?:cp|mv|rsync)\b|\baz storage (?:blob|file) upload|\bazcopy (?:copy|sync)\b"
    r"|\.(?:upload_file|upload_fileobj|put_object)\("
    r"|\bfetch\([^)]*method\s*:\s*[\"']?(?:post|put)"), (
    "curl|wget|nc|ncat|netcat|socat|telnet|/dev/tcp|/dev/udp|scp|sftp|rsync|ftp|mail|ssh|dig|"
    "nslookup|host|requests.|urlopen|httpx|send|smtplib|socket.|http.client|ftplib|paramiko|boto3|"
    "git remote|git push|aws s3|fetch(|smbclient|tftp|.post(|.put(|.patch(|lftp|s_client|gsutil|"
    "gcloud storage|az storage|azcopy|upload_file|put_object"))
# the workspace or a service opened to the internet, or data made public
_EXPOSE = Hinted(fast_regex(
    r"\bngrok\s+(?:http|tcp|tls|start)\b|\bcloudflared\b[^;&|]*\btunnel\b|\blt\s+--port\b|\blocaltunnel\b"
    r"|\bssh\b[^;&|]*\s-r\s*\S*\d+:[^;&|]*(?:serveo|localhost\.run|pinggy)|\bbore local\b"
    r"|--acl\s+public-read|\bacl (?:set|ch)\b[^;&|]*(?:public-read|allusers)|\biam ch allusers"
    r"|\bhttp\.server\b[^;&|]*(?:--bind|-b)\s*0\.0\.0\.0[^;&|]*(?:--directory|-d)\s*/(?:\s|$)"
    r"|\brclone (?:copy|sync|move|copyto)\s+\S+\s+[\w-]+:|\bgh repo create\b[^;&|]*--public|\bgh gist create\b"), (
    "ngrok|cloudflared|lt --port|localtunnel|ssh|bore local|acl|allusers|http.server|rclone|gh repo|gh gist"))
_FETCH_EXEC = fast_regex(r"\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^;&]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"
                         r"|\b(?:curl|wget)\b[^;&]*\|\s*python[0-9.]*\b|\bbash\s+<\(\s*(?:curl|wget)"
                         r"|\bexec\(\s*(?:requests\.get|urlopen)|\beval\(\s*(?:requests\.get|urlopen)"
                         r"|\bsource\s+<\(\s*(?:curl|wget)")
_INJECTION_MARK = fast_regex(
    r"(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|"
    r"preceding|original|other|existing)\s+(?:instructions?|directions?|rules?|guidelines?|prompts?|tasks?)"
    r"|<!--|\[\s*(?:system|admin|inst)\s*\]|\b(?:system|admin|developer)\s*(?:prompt|override|message|note)\s*:"
    r"|^\s*system\s*:|\bnew\s+instructions?\b|\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:the\s+)?"
    r"(?:ai|agent|assistant|llm|model|bot)\b|\b(?:ai|agent|assistant|llm)\s*(?:note|instructions?|directive)\s*:"
    r"|\byou\s+(?:must|should|are\s+required\s+to|need\s+to)\s+(?:also|first|now|immediately|quietly|silently)\b"
    r"|\b(?:also|first|quietly|silently|secretly)\s+(?:run|execute|send|upload|post|email|delete|copy|curl)\b"
    r"|\bwithout\s+(?:telling|informing|notifying|mentioning)|\bdo\s+not\s+(?:tell|mention|report|log|inform)"
    r"|\b(?:the\s+)?(?:ai|agent|assistant|bot|llm)\s+(?:must|should|needs?\s+to|is\s+(?:required|instructed|authori[sz]ed)\s+to)\b"
    r"|\bbefore\s+(?:you\s+)?(?:start|begin|proceed|continue)\w*\s*,?\s+(?:run|execute|send|upload|delete)"
    r"|\bimportant\s*(?:!|:)\s*(?:also|first|you)|\bbegin\s+(?:hidden|secret)\b|\bassistant\s*:|\bhuman\s*:"
    r"|\bact\s+as\b|\bjailbreak\b|\bdan\s+mode\b|\bdeveloper\s+mode\b|<\|im_start\|>|\[/?inst\]|###\s*(?:system|instructions?)\b|\byou\s+are\s+now\b|\bfrom\s+now\s+on\b"
    r"|\byour\s+(?:new|real|actual|true)\s+(?:task|goal|instructions?|objective)\b|\b(?:attention|dear|hey)\s*,?\s+(?:ai|agent|assistant|llm|bot)s?\b"
    r"|\bregardless\s+of\s+(?:your|any|the|previous)\s+(?:instructions?|rules?)|\bsystem\s+override\b", re.M)
_PAYLOAD_TOKEN = fast_regex(r"[a-z][a-z0-9+.\-]*://[^\s\"'`<>)]+|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"
                            r"|(?:~|\.\.)?/[\w.\-/~]{3,}|`[^`]{3,}`|\"[^\"]{6,}\"|'[^']{6,}'"
                            r"|\b[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.(?:com|net|org|io|xyz|ru|cn|example|test|top|info|biz|cc|tk)\b"
                            r"|\b[\w\-]*\d[\w\-]*\.[a-z]{2,}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b")
_WORD = fast_regex(r"[a-z][a-z0-9_\-]{5,}")


def _f(rule: str, reason: str, block: bool = True, tier: RiskTier = RiskTier.critical) -> Finding:
    return Finding(rule=rule, block=block, reason=reason, tier=tier)


_BIN_DIRS = ("/usr/bin/", "/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/opt/")
_READABLE = tuple(p + "/" for p in READABLE_PATHS)
_INSPECTING_VERBS = frozenset(words("""ls stat file getcap ldd sha256sum sha1sum md5sum b2sum
strings readlink which du wc cmp diff objdump nm readelf cat head tail"""))
_WORKING_DIR = fast_regex(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`|\$\{?pwd\}?(?!\w)")


_MOUNT_SOURCE = re.compile(r"(?:^|,)(?:source|src)=([^,]+)")


def _mounted_host_paths(segment: list[str]) -> list[str]:
    """The host side of a container command's mounts: `-v /etc:/x`, `--volume=/etc:/x`,
    `--mount type=bind,source=/etc,target=/x`."""
    found = []
    for i, word in enumerate(segment[1:], 1):
        option, _, value = word.partition("=")
        if option in ("-v", "--volume", "--mount") and not value and i + 1 < len(segment):
            value = segment[i + 1]
        if option in ("-v", "--volume"):
            found.append(value.split(":", 1)[0])
        elif option == "--mount":
            found += _MOUNT_SOURCE.findall(value)
    return found


def _paths_in_shell(view: str, commands_only: bool = False, done: set[str] | None = None
                    ) -> Iterator[tuple[str, bool]]:
    """(path, written) for the paths a shell command names after its verb (a command's own
    path, as in `/usr/bin/env python`, is not a place it reaches), relative ones joined to
    the directory `cd` moved to. `commands_only`: only in segments that start with a known
    command (a view of code, not of a shell line). `done`: segments already read in this
    call's other views (views repeat most of each other), skipped unless after a `cd`."""
    view = _WORKING_DIR.sub(".", view) if "pwd" in view else view
    if not commands_only:
        for m in _REDIRECT.finditer(view):
            yield m.group(1), True
    cwd = ""
    for text in _SEGMENT.split(view):
        segment = text.split()
        if not segment:
            continue
        if done is None or cwd or text not in done:
            yield from _segment_paths(segment, cwd, commands_only)
            if done is not None and not cwd:
                done.add(text)
        if segment[0] == "cd" and len(segment) > 1:
            cwd = posixpath.join(cwd, segment[1])


def _segment_paths(segment: list[str], cwd: str, commands_only: bool
                   ) -> Iterator[tuple[str, bool]]:
    verb = segment[0]
    if commands_only and verb.rsplit("/", 1)[-1] not in _COMMANDS:
        return
    if verb.startswith(("/", "~", "..")) and not verb.startswith(_BIN_DIRS):
        yield posixpath.join(cwd, verb), False  # a file named on its own, or run from there
    writes = verb in _WRITING_VERBS or verb.endswith("rm")
    args = segment[1:]
    if verb in ("docker", "podman"):  # container paths are not the host's: only mounts' host side
        args = _mounted_host_paths(segment)
    elif verb in _TEXT_VERBS:  # (and where `--git-dir=/...`-like options point)
        args = [w.split("=", 1)[-1] for w in args if w.split("=", 1)[-1].startswith(("/", "~", ".."))
                and (w.startswith(("/", "~", "..")) or w.startswith("--")) and verb not in ("echo", "printf")]
    if verb in _INSPECTING_VERBS:  # looking at a program or library is no reach outside
        args = [w for w in args if not w.startswith(_READABLE)]
    for word in args:
        if "://" in word:
            continue
        if verb == "dd" and word.startswith("if="):
            yield posixpath.join(cwd, word[3:]), False
            continue
        if "/" in word or ".." in word:
            for m in _PATHLIKE.finditer(word if "=" not in word else word.split("=", 1)[1]):
                yield posixpath.join(cwd, m.group(1).rstrip(",;:")), writes
        if verb in _READING_VERBS and not word.startswith("-") and "/" in word:
            yield posixpath.join(cwd, word), False


_COMMANDS = frozenset(words("""ls cat head tail less more grep egrep find cp mv rm rmdir
mkdir touch chmod chown ln tar zip unzip gzip gunzip curl wget scp rsync sed awk tee dd
echo printf cd stat file du df wc sort uniq diff cut tr xargs sh bash zsh python python3
perl ruby node nc ncat shred truncate install vi vim nano emacs ed mount umount strings xxd
od nl base64 openssl cpio sudo doas unlink chattr setfacl"""))
_READING_VERBS = frozenset({"cat", "head", "tail", "less", "more", "cp", "tar", "zip", "grep",
                            "strings", "xxd", "base64", "od", "source", "."})
_WRITING_VERBS = {"rm", "rmdir", "mv", "cp", "tee", "touch", "mkdir", "ln", "chmod", "chown",
                  "truncate", "dd", "install", "rsync", "unlink", "shred", "sed", "tar", "unzip",
                  "find", "git"}
_TEXT_VERBS = frozenset({"echo", "printf", "grep", "egrep", "rg", "git", "logger", "wall"})
# a call with a string first argument: found by its `(` (a search skips to it in C), the
# function named before it then looked up (an alternation of names is tried everywhere)
_STRING_ARGUMENT = re.compile(r"\(\s*[rbuf]{0,2}[\"']([^\"']+)[\"']")
_NAME_BEFORE = re.compile(r"(\w+)\s*$")
_PATH_FUNCTIONS = frozenset(words("""open path remove unlink rmtree rmdir makedirs mkdir rename
replace move chmod chown listdir
scandir walk glob read_text read_bytes write_text write_bytes load loadtxt read_csv to_csv
exists stat open_file isfile isdir system popen run call check_output check_call"""))


def _path_calls(view: str) -> Iterator[str]:
    """The string first arguments of calls that open, change or run a path."""
    for m in _STRING_ARGUMENT.finditer(view):
        name = _NAME_BEFORE.search(view, max(0, m.start() - 40), m.start())
        if name is not None and (name.group(1) in _PATH_FUNCTIONS or name.group(1).startswith("copy")):
            yield m.group(1)


_CODE_ARGUMENTS = ("command", "cmd", "script", "shell", "code", "source", "program")
_SHELL_ARGUMENTS = ("command", "cmd", "script", "shell")


def _paths(call: ToolCall) -> Iterator[tuple[str, bool]]:
    """(path, written) for every path the call reaches, as written."""
    kind = call.action_type
    if "path" in call.texts:
        yield call.texts["path"], kind in ("fs:write", "fs:delete")
    for name, vs in call.argument_views.items():
        for v in vs:
            if "file://" in v:
                for m in _FILE_URL.finditer(v):
                    yield m.group(1), False
        if name in _CODE_ARGUMENTS:
            yield from _paths_in_code(vs, commands_only=name not in _SHELL_ARGUMENTS)
        elif name in ("query", "sql"):
            for v in vs:
                for m in _SQL_FILE.finditer(v):
                    path = m.group(1) or m.group(2) or m.group(3)
                    yield path, not m.group(0).startswith(("pg_read", "load_file", "lo_import"))


_WRITES_FILE = fast_regex(r"\bopen\([^)]*,\s*[\"'][rb+]*[wax]|\.write(?:_text|_bytes)?\(")


def _paths_in_code(views: tuple[str, ...], commands_only: bool) -> Iterator[tuple[str, bool]]:
    done: set[str] = set()  # shell segments read already (the views repeat one another)
    for v in views:
        if "(" in v:
            for path in _path_calls(v):
                yield path, True
            yield from _python_path_expressions(v)
        if _LONE_PATH.fullmatch(v):  # a path on its own: hidden, then handed to a command
            yield v, any(_WRITES_FILE.search(w) for w in views)  # (written if a file is)
        yield from _paths_in_shell(v, commands_only, done)


_FILE_URL = fast_regex(r"\bfile://(/[^\s\"'`]+)")
_SQL_FILE = fast_regex(r"(?:pg_read_file|pg_read_binary_file|load_file|lo_import|lo_export)\s*\(\s*(?:\d+\s*,\s*)?'([^']+)'"
                       r"|copy\s+(?:[\w.\"]+|\(.*?\))\s+(?:from|to)\s+(?:program\s+)?'([^']+)'"
                       r"|into\s+(?:outfile|dumpfile)\s+'([^']+)'")
# paths Python builds rather than writes out: os.path.join('/', 'etc', ...), Path.home() / '.ssh'
_PY_JOIN = fast_regex(r"\bjoin\(\s*((?:[rbuf]?[\"'][^\"']*[\"']\s*,\s*)+[rbuf]?[\"'][^\"']*[\"'])\s*\)")
_PY_HOME = fast_regex(r"\b(?:path\.home\(\)|expanduser\(\s*[\"']~[\"']\s*\))((?:\s*[/,]\s*[\"'][^\"']+[\"'])*)")
_PY_EXPANDUSER = fast_regex(r"\bexpanduser\(\s*[\"'](~[^\"']*)[\"']")
_PY_STRING = fast_regex(r"[\"']([^\"']*)[\"']")


def _python_path_expressions(view: str) -> Iterator[tuple[str, bool]]:
    """(path, written) for the paths code puts together from parts."""
    if "join(" in view:
        for m in _PY_JOIN.finditer(view):
            yield posixpath.join(*_PY_STRING.findall(m.group(1))), True
    if "home()" in view or "expanduser(" in view:
        for m in _PY_HOME.finditer(view):
            yield posixpath.join("~", *_PY_STRING.findall(m.group(1))), True
        for m in _PY_EXPANDUSER.finditer(view):
            yield m.group(1), True
_LONE_PATH = fast_regex(r"(?:~|\.\.)?/[\w.\-/~]+")


# commands that make new keys and certificates: the key files they name are their output
_KEY_GENERATION = fast_regex(r"\bopenssl (?:req|genrsa|genpkey|ecparam|x509|rand)\b|\bssh-keygen\b"
                             r"|\bkeytool\b[^;&|]*-genkey|\bmkcert\b|\bcfssl\b|\bstep certificate create\b")


def _generates_keys(call: ToolCall) -> bool:
    return any(_KEY_GENERATION.search(v) for v in _code_views(call))


def _own_file(call: ToolCall, raw: str) -> bool:
    """Whether `raw` is the file a write or a delete in the workspace is made on: a file
    named like a credential (.env, a .pem) written or removed there exposes nothing (what
    is written is read for secrets on its own)."""
    return call.action_type in ("fs:write", "fs:delete") and raw == call.texts.get("path")


def path_findings(call: ToolCall, _: tuple[str, ...]) -> Iterator[Finding]:
    for raw, written in dict.fromkeys(_paths(call)):  # each path once (views repeat them)
        if not raw or raw.startswith(("http", "-")):
            continue
        path = resolve(raw, call.workspace)
        place = place_of(path, call.workspace)
        if climbs(raw) and place != "workspace":
            yield _f("path.traversal", f"climbs out of the workspace: {raw}")
            continue
        if _SECRET_FILE.pattern.search(path.lower()) and not path.lower().endswith(  # (short: no hints)
                (".example", ".sample", ".template", ".dist")) and not (
                place == "workspace" and (_generates_keys(call) or _own_file(call, raw))):
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
    if call.action_type == "net:http":
        url = clean_path(call.text("url"))
        if _URL_CLIMB.search(url):
            yield _f("path.traversal", f"climbs out of a served directory: {url[:80]}")


_URL_CLIMB = fast_regex(r"(?:^|[/=?&])\.\.(?:/|$)")


def _selects_secrets(view: str) -> bool:
    """A SELECT that returns a secret column, or every column of a table of secrets."""
    for m in _SQL_SELECT.finditer(view):
        table = m.group(2).strip("\"`")
        if _SECRET_TABLE.fullmatch(table) and table.split(".")[0] in ("pg_shadow", "pg_authid",
                                                                         "mysql", "sys", "dba_users"):
            return True
        columns = [c.strip() for c in m.group(1).split(",")]
        if any(c == "*" or c.endswith(".*") for c in columns) and _SECRET_TABLE.fullmatch(table):
            return True
        for c in columns:
            name = re.split(r"\s+(?:as\s+)?", c)[0].rsplit(".", 1)[-1].strip("\"`()")
            if _SECRET_COLUMN.fullmatch(name):
                return True
    return False


def secret_findings(call: ToolCall, views: tuple[str, ...], code: tuple[str, ...]
                    ) -> Iterator[Finding]:
    """Secrets in anything the call carries; credential files and the environment where
    the call runs something (a message may name a .pem file without touching one)."""
    for v in views:
        if _SECRET_VALUE.search(v) or _SECRET_ELSEWHERE.search(v):
            yield _f("secrets.secret_value", "carries or reads what looks like a secret (a key, "
                     "token, password or sensitive column)")
            return
    if call.action_type == "db:query" and any(_selects_secrets(v) for v in code if "select" in v):
        yield _f("secrets.secret_column", "reads a column or table of secrets")
        return
    for v in code:
        if _CREDENTIAL_COMMAND.search(v):
            yield _f("secrets.credential_command", "runs a command that hands out credentials")
            return
        if ("://" in v or "169.254" in v) and any(is_metadata_host(h) for h in _hosts(v)):
            yield _f("secrets.instance_metadata", "asks the cloud metadata service, which hands "
                     "out the machine's credentials")
            return
        if _SECRET_FILE.search(v) and not re.search(r"\bchmod [0-7]?[046]00\b|"
                r"\.env\.(?:example|sample|template)", v) and not _KEY_GENERATION.search(v):
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


_CRITICAL_RESOURCE = fast_regex(r"/(?:databases?|dbs?|clusters?|namespaces?|buckets?|backups?|"
                                r"environments?|projects?|repos?|repositories|orgs?|tenants?)(?:/|$)"
                                r"|\bprod(?:uction)?\b|/all\b|[?&](?:all|force|recursive)=(?:1|true)")


_PRIV_GRANT = Hinted(fast_regex(
    r"\b(?:role|roles|is_admin|is_superuser|is_staff|superuser|permissions?|privileges?|access_level|"
    r"group|groups|scopes?)\b[\"']?\s*[=:]\s*\[?\s*[\"']?(?:admin\w*|super\w*|root|owner|org-admin|true|1|all|\*)(?![\w-])"
    r"|\"role\"\s*:\s*\"[\w-]*(?:admin|owner|root|super)"
    r"|\b(?:add|put|make)\s+me\b.{0,40}\b(?:sudo\w*|admins?|root|owners?|wheel)\b"
    r"|\b(?:give|grant|send)\s+me\b.{0,40}\b(?:sudo|admin|root|owner|superuser)"
    r"|\b(?:disable|turn\s+off|bypass|skip|remove)\s+(?:the\s+)?(?:2fa|mfa|two-factor|sso|audit\w*|"
    r"logging|monitoring|firewall|antivirus|edr|security\s+(?:checks?|scan\w*|review))\b"
    r"|/roles?/(?:assign|grant|add)|/(?:admins?|sudoers)(?:/|$)|\baccess_level\W+(?:40|50)\b"), (
    "role|admin|superuser|staff|permission|privilege|access_level|group|me |2fa|mfa|factor|sso|audit|"
    "logging|monitoring|firewall|antivirus|edr|security|sudoers|access_level"))


def privilege_findings(call: ToolCall, code: tuple[str, ...], views: tuple[str, ...] = ()
                       ) -> Iterator[Finding]:
    if any(_PRIVESC.search(v) for v in code) or any(
            _PRIV_GRANT.search(v) for v in views or _joined(call.all_views)):  # asked for in words too
        yield _f("privilege.escalation", "seeks privileges the agent does not hold")


_RETURNS_CALL = fast_regex(r"\bdef (\w+)\([^)]*\):\s*return\s+(\w+)\(")


def _endless_recursion(view: str) -> bool:
    """Functions whose first statement returns a call of the next, round in a circle
    (`def a(n): return b(n)`, `def b(n): return a(n)`): no base case is ever reached."""
    if "return" not in view:
        return False
    calls = dict(_RETURNS_CALL.findall(view))
    for start in calls:
        name, seen = start, set()
        while name in calls and name not in seen:
            seen.add(name)
            name = calls[name]
        if name == start:
            return True
    return False


def abuse_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    for v in views:
        if _ABUSE.search(v) or _calls_itself(v) or _endless_recursion(v) or _huge_size(v) \
                or _dd_size(v) >= HUGE:
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
    if any(_EXPOSE.search(v) for v in views):
        yield _f("exfiltration.exposed", "opens the workspace or a service to the internet, or "
                 "makes data public")
        return
    outside = sorted({h for v in views for h in _hosts(v) if not is_internal(h, internal)})
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
        if _SECRET_VALUE.search(body) or _SECRET_FILE.search(body) or _DUMP_CONTENT.search(body) \
                or _personal_data(body, internal):
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
                or _ENV_DUMP.search(data) or _personal_data(data, internal)):
            yield _f("exfiltration.upload_outside", f"sends data to {outside[0]}")
        else:
            yield _f("exfiltration.post_outside", f"posts to {outside[0]}", block=False,
                     tier=RiskTier.high)
    elif any(re.search(r"[?&]\w+=(?:\$\(|`)|\$\(|`", u) for v in views for u in
             re.findall(r"\b(?:https?|ftp)://\S+", v)):
        yield _f("exfiltration.data_in_url", f"puts command output in a URL to {outside[0]}")


def message_findings(call: ToolCall, internal: Iterable[str]) -> Iterator[Finding]:
    """An outgoing message's words (see messages.py): a secret given in prose, an injected
    instruction passed on, internal data for an outside address, privileges asked for."""
    if call.action_type not in ("comms:email", "comms:message"):
        return
    names = [n for n in _TEXT_ARGUMENTS if n in call.arguments]
    raw = "\n".join(call.text(n) for n in names)
    view = "\n".join(v for n in names for v in call.argument_views[n])
    if shares_secret(view):
        yield _f("secrets.in_message", "writes a password, token or key into a message")
        return
    relay = relayed_injection(raw)
    if relay is not None:
        yield _f("injection.relayed", "passes on an injected instruction to its readers",
                 block=relay == "order", tier=RiskTier.high)
        return
    to = call.text("to").lower() + " "
    outside = sorted(h for h in hosts_in(to) if not is_internal(h, internal))
    if outside and leaks_internal(raw, view):
        yield _f("exfiltration.outside_mail", f"sends internal data or an encoded file to {outside[0]}")
        return
    if asks_privilege(view):
        yield _f("privilege.requested", "asks for administrator or root privileges",
                 block=False, tier=RiskTier.high)


_SSN = fast_regex(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_CARD = fast_regex(r"(?<![\d-])[3-6]\d{3}(?:[ -]?\d{4}){2}[ -]?\d{1,7}(?![\d-])")
_EMAIL = fast_regex(r"[\w.+-]+@([\w-]+(?:\.[\w-]+)+)")
_PHONE = fast_regex(r"(?<![\w+])\+?\d{1,3}[ .-]?\(?\d{3}\)?[ .-]?\d{3}[ .-]?\d{4}(?!\d)")
PEOPLE = 3  # contacts in one message that make it a list of people, not a mention


def _luhn(digits: str) -> bool:
    total = 0
    for i, d in enumerate(int(c) for c in reversed(digits)):
        total += d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2)
    return total % 10 == 0


def _personal_data(text: str, internal: Iterable[str]) -> bool:
    """Records about people: a social security or payment card number, or a list of the
    email addresses or phone numbers of people outside the company."""
    if "-" in text and _SSN.search(text):
        return True
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return True
    if "@" in text and len({m.group() for m in _EMAIL.finditer(text)
                            if not is_internal(m.group(1), internal)}) >= PEOPLE:
        return True
    return len(set(_PHONE.findall(text))) >= PEOPLE


_DUMP_CONTENT = Hinted(fast_regex(r"\buesdb|\bh4siaaaaaaaa|\b(?:source|codebase|repo(?:sitory)?|database|db dump|"
                           r"dump|customer (?:list|data|records)|credentials|keys|backup|export)\b[^.]{0,40}?"
                           r"\b(?:attached|below|enclosed|included)\b|\broot:x?:0:0\b|\bbegin [a-z ]*private key\b|\baws_secret_access_key\b"
                           r"|\b(?:password|passwd|secret|api[_-]?key|token)\s*[:=]\s*\S{6,}"
                           r"|\$\(\s*(?:cat|base64|tar|env|printenv)\b|`\s*(?:cat|base64|tar|env)\b"
                           r"|\b(?:customer|user)s?\s+(?:table|dump|export|list)\b|\bselect\s+\*\s+from\s+users\b"), (
    "uesdb|h4sia|source|codebase|repo|database|dump|customer|credentials|keys|backup|export|root:|"
    "private key|aws_secret|password|passwd|secret|api|token|$(|`|user"))


def _first_mark(task: str) -> re.Match[str] | None:
    """The first marker of an injection in the task: the task's own list, or the markers
    that only an injection uses (messages.py, shared with relayed messages)."""
    marks = [m for m in (_INJECTION_MARK.search(task), injected_marker(task)) if m is not None]
    return min(marks, key=lambda m: m.start()) if marks else None


def injection_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    task = call.task.lower()
    mark = _first_mark(task) if task else None
    if mark is None:
        return
    # the marker's own words are no payload (a task may quote "ignore previous instructions")
    injected = task[max(0, mark.start() - 200):mark.start()] + " " + task[mark.end():]
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
    if len([w for w in rare if w in joined]) >= 2 or (
            (_STRONG_MARK.search(task) or injected_marker(task))
            and _ORDER_AFTER.search(task, mark.end())
            and call.action_type not in _LOOKING):
        yield _f("injection.task_instruction", "follows words of an instruction injected into "
                 "the task's text", block=False, tier=RiskTier.high)


# a marker that only an injection uses (not "before you start, run the tests")
_STRONG_MARK = fast_regex(
    r"(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|"
    r"preceding|original|other|existing)\s+(?:instructions?|directions?|rules?|guidelines?|prompts?|tasks?)"
    r"|\[\s*(?:system|admin|inst)\s*\]|\b(?:system|admin|developer)\s*(?:prompt|override|message|note)\s*:"
    r"|^\s*system\s*:|\bnew\s+instructions?\b|\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:the\s+)?"
    r"(?:ai|agent|assistant|llm|model|bot)\b|\b(?:ai|agent|assistant|llm)s?\s*(?:note|instructions?|directive)\s*:"
    r"|\bsystem\s*:\s|<\|im_start\|>|\[/?inst\]|###\s*(?:system|instructions?)\b|\byou\s+are\s+now\b|\bfrom\s+now\s+on\b"
    r"|\byour\s+(?:new|real|actual|true)\s+(?:task|goal|instructions?|objective)\b|\b(?:attention|dear|hey)\s*,?\s+(?:ai|agent|assistant|llm|bot)s?\b"
    r"|\bregardless\s+of\s+(?:your|any|the|previous)\s+(?:instructions?|rules?)|\bsystem\s+override\b", re.M)
# an order to act after the marker (within a sentence or two)
_ORDER_AFTER = fast_regex(
    r"[^<>]{0,160}?\b(?:run|execute|send|upload|post|email|e-mail|forward|delete|remove|drop|grant|add|"
    r"disable|push|write|copy|curl|wget|chmod|install|deploy|transfer|share|message|create|make|set|"
    r"change|reset|give|open|expose|print|cat|read|fetch|download|export|dump)\b")
_LOOKING = frozenset({"fs:read", "db:read", "net:read", "vcs:read", "infra:read"})


_COMMON = frozenset(words("""please should would could about before after their there
these those which while where other another always never ignore previous instructions
instruction system assistant agent important quietly silently secretly without telling
anyone report mention message note first also run execute continue proceed begin start
using files file tests test update change review output result results workspace project
repository branch commit module python script command shell query table database service
server function return value"""))


_PROSE = fast_regex(r"\.(?:md|markdown|txt|rst|adoc|html?|csv|log|tmp|ipynb)$|(?:^|/)\.gitignore$"
                    r"|(?:^|/)(?:readme|changelog|license|notes?)\b", re.I)
_TEXT_ARGUMENTS = ("text", "subject", "body", "message")


def _code_views(call: ToolCall) -> tuple[str, ...]:
    """The views that may be run: not what a message says, nor prose written to a file
    (those are read for secrets only)."""
    skip = set(_TEXT_ARGUMENTS) if call.action_type in ("comms:email", "comms:message") else set()
    if call.action_type == "fs:write" and _PROSE.search(call.text("path")):
        skip.add("content")
    if call.action_type in ("fs:write", "fs:delete") and place_of(
            resolve(call.text("path"), call.workspace), call.workspace) == "workspace":
        skip.add("path")  # a file of the workspace's own (the path rules judge where it is)
    if call.action_type == "net:http":
        skip.add("body")
    seen: dict[str, None] = {}
    for name, vs in call.argument_views.items():
        if name not in skip:
            seen.update(dict.fromkeys(vs))
    return tuple(seen)


VIEW_SEPARATOR = "\n;\n"  # ends a line and a shell command: no pattern spans two views


class JoinedViews(str):
    """Views as one text, a line each, and `hint_text`: the views that are no part of
    another (a hint in a part is in the whole), where hints are looked for in half the
    characters. The hosts the text names are worked out once (several families ask)."""

    hint_text: str
    pairs: frozenset[int]
    _hosts: set[str] | None = None

    def hosts(self) -> set[str]:
        if self._hosts is None:
            self._hosts = hosts_in(self)
        return self._hosts


def _hosts(text: str) -> set[str]:
    return text.hosts() if isinstance(text, JoinedViews) else hosts_in(text)


def _joined(views: tuple[str, ...], within: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The views as one text, a line each: every pattern is searched once per call, not
    once per view (views have no newlines of their own; see normalise.squash). `within`:
    joined views that hold these, whose character pairs these then share."""
    if not views:
        return ()
    joined = JoinedViews(VIEW_SEPARATOR.join(views))
    wholes = ""
    for v in sorted(views, key=len, reverse=True):
        if v not in wholes:
            wholes += "\n" + v
    joined.hint_text = wholes
    outer = within[0] if within else None
    joined.pairs = outer.pairs if isinstance(outer, JoinedViews) else char_pairs(wholes)
    return (joined,)


def findings(call: ToolCall, internal: Iterable[str]) -> list[Finding]:
    """The families' findings on the call, blocking ones first. The families are asked in
    a fixed order and the first blocking finding ends the search: the verdict is then a
    denial for that finding's rule, whatever the later families would find."""
    views = _joined(call.all_views)
    code_views = _code_views(call)  # (most calls: every view may be run)
    code = views if code_views == call.all_views else _joined(code_views, within=views)
    families = (lambda: secret_findings(call, views, code), lambda: path_findings(call, code),
                lambda: destructive_findings(call, code),
                lambda: privilege_findings(call, code, views), lambda: abuse_findings(call, code),
                lambda: injection_findings(call, views),
                lambda: network_findings(call, views, internal),
                lambda: message_findings(call, internal))
    found: list[Finding] = []
    for family in families:
        for f in family():
            found.append(f)
            if f.block:
                return sorted(found, key=lambda f: not f.block)
    return found
