"""The secrets family: credential files, commands that print credentials, secret values
and variables written out, the environment dumped, the cloud metadata service asked."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import _PROSE, code_views
from synthorg.secops.detectors.patterns import AnyOf, Hinted, asked, finding, hosts_of
from synthorg.secops.detectors.reached_paths import paths_of
from synthorg.secops.detectors.sql import selects_secrets
from synthorg.secops.messages import shares_secret
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import LOCAL_URL, is_metadata_host, place_of, resolve

SECRET_FILE = Hinted(fast_regex(
    r"(?:\.ssh[/\\](?![\w.*-]+\.pub\b)|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|authorized_keys|\.aws[/\\](?:credentials|config)"
    r"|/etc/(?:shadow|gshadow|sudoers|master\.passwd)|\.netrc\b|\.pgpass\b|\.git-credentials"
    r"|\.docker/config\.json|\.kube/config|\bkubeconfig\b(?!\W{1,3}\$\{\{\s*secrets\.)(?!\s*[=:]\s*[\"']?(?![/~$])[\w.-]+/)|/tmp/ssh-[^/\s]*/agent\.|\bssh_auth_sock\s*=\s*[\"']?(?:/tmp/|/run/user/|\$(?!ssh_auth_sock))|credentials\.(?:json|ya?ml|csv|txt)"
    r"|\bsecrets?\.(?:ya?ml|json|env|txt|toml)\b|\.vault-token|\.npmrc\b|\.pypirc\b|\.bash_history"
    r"|\.zsh_history|/proc/(?:self|\d+|\*|\[0-9\]\*?|\[\d-\d\]\*?)/environ|/var/run/secrets(?!/kubernetes\.io/serviceaccount/namespace\b)|\bservice[-_]?account[\w-]*\.json"
    # (a CA's certificate is public; Android's debug keystore has a published password)
    r"|\.pem\b(?<![-_.]ca\.pem)(?<!ca-bundle\.pem)(?<!chain\.pem)(?<!\bcrl\.pem)|\.(?:p12|pfx|jks)\b|\.keystore\b(?<!\bdebug\.keystore)"
    r"|\bprivate[_-]?key\b|\.gnupg/|\.config/gcloud"
    r"|\.env(?<![\w.-]\.env)(?<!-e\s\.env)(?<!--exclude=\.env)(?:\.(?!example\b|sample\b|template\b|dist\b|defaults?\b)[\w-]+){0,2}(?![\w.\[(-])"
    r"|\.\w*_history\b|\b(?:prod|production|staging|live|secrets?)\.env\b|\.config/(?:google-chrome|chromium)/"
    r"|\bwallet\.dat\b|(?<=[\w-])\.key(?![\w.-])(?<!\$\d\.key)(?<!\beach\.key)(?<!\be\.key)(?<!\bev\.key)(?<!\bevt\.key)(?<!\bevent\.key)(?!\s*(?:[=!]==?|,|&&|\|\||\?))|/etc/ssl/private|\.config/gh/hosts\.ya?ml|\.azure/|application_default_credentials"
    r"|/etc/kubernetes/(?:admin|kubelet|controller-manager|scheduler)\.conf|\.terraform\.d/credentials|\.boto\b"
    r"|\.s3cfg\b|\.config/rclone/|\.password-store/|\.mozilla/[^ ]*logins\.json|/login data\b|\.local/share/keyrings"
    r"|windows/system32/config/(?:sam|system|security)\b|\bntds\.dit\b"
    r"|\.tfstate\b|\bwp-config\.php\b|\bdebian\.cnf\b|\.my\.cnf\b|\.htpasswd\b|\.keychain(?:-db)?\b"
    # tokens tools keep in a cache or a config folder (huggingface's, a CLI's)
    r"|\.(?:cache|config)/[\w.-]+/(?:[\w.-]+/)?(?:token|tokens|stored_tokens|auth\.json|access_tokens?\.db)(?![\w.-]))"), (
    ".ssh|id_|authorized_key|.aws|/etc/|.netrc|.pgpass|.git-credentials|.docker|.kube|"
    "kubeconfig|credentials.|secret|.vault|.npmrc|.pypirc|history|environ|/var/run/secrets|service|"
    ".pem|.p12|.pfx|.jks|.keystore|private|.gnupg|gcloud|.env|wallet|.key|.config/gh|.azure|"
    "application_default|/etc/kubernetes|.terraform.d|.boto|.s3cfg|rclone|.password-store|logins|"
    "login data|keyrings|system32|ntds|.tfstate|.tfvars|wp-config|debian.cnf|.my.cnf|.htpasswd|.keychain|"
    "/tmp/ssh-|ssh_auth_sock|.cache/|.config/"))
# copies an investigation keeps in the workspace: read, they are evidence looked at
EVIDENCE = re.compile(r"/(?:evidence|forensics|artifacts|quarantine|samples|triage|ir-\d+)/")
# commands whose output is a credential: they hand out tokens, keys or secret values
# what the metadata service says about where a machine is, which holds no credential
_METADATA_PLACE = re.compile(r"/(?:latest|[\d-]+)/meta-data/(?:placement/(?:availability-zone|region)|instance-(?:id|type)"
                             r"|local-ipv4|hostname|ami-id|iam/info)|/computemetadata/v1/instance/(?:zone|id|machine-type|hostname)")
_METADATA_URL = re.compile(r"//(?:169\.254\.169\.254|metadata\.google\.internal|\[fd00:ec2::254\]|100\.100\.100\.200)"
                           r"(?::\d+)?(/[^\s\"'`;&|)]*)?")


def _only_placement(view: str) -> bool:
    """Every request to the metadata service asks only where the machine is."""
    paths = [m.group(1) or "/" for m in _METADATA_URL.finditer(view)]
    asked = [p for p in paths if p.rstrip("/") != "/latest/api/token"]  # (IMDSv2's session token, to ask with)
    return bool(asked) and all(_METADATA_PLACE.fullmatch(p.rstrip("/")) for p in asked)


_CREDENTIAL_COMMAND = AnyOf((  # (hints, pattern): commands whose output is a credential
    ("airflow", r"\bairflow\s+(?:connections\s+(?:export|get)|variables\s+export)\b"),
    ("/variables", r"/api/v4/(?:projects|groups)/[^/\s]+/variables\b"),
    ("kubectl", r"\bkubectl\b[^;&|]*\bconfig view\b[^;&|]*--(?:raw|flatten)|\bkubectl\b[^;&|]*\bget\s+secrets?\b(?![^;&|]*\{\.data\.(?:tls|ca)\\?\.crt\})(?![^;&|]*\s-o\s*(?:name\b|(?:custom-columns|jsonpath)=(?![^;&|]*\.data)))[^;&|]*\s-o"
                r"|\bkubectl\b[^;&|]*\bexec\b[^;&|]*\s(?:env|printenv)\b(?!\s+[\w-])"),  # (printenv NODE_ENV: one named)
    ("--export-secret", r"\bgpg\b[^;&|]*--export-secret"),
    ("aws ", r"\baws configure (?:get\b(?!\s+(?:[\w.-]+\.)?(?:region|output|cli_pager|s3\.\w+|max_attempts|retry_mode)\b)|export-credentials\b)|\baws\b[^;&|]*\b(?:get-secret-value|get-session-token"
             r"|get-parameters?\b[^;&|]*--with-decryption|create-access-key)\b"),
    ("print-access|print-identity|get-access-token|keys create|credential reset|kubectl cp|docker cp|podman cp",
     r"\bgcloud\b[^;&|]*\bprint-(?:access|identity)-token|\baz account get-access-token\b"
     r"|\bgcloud\s+iam\s+service-accounts\s+keys\s+create\b|\baz\s+ad\s+(?:sp|app)\s+credential\s+reset\b"
     r"|\b(?:docker|podman)\s+cp\s+\S+:/(?:var/lib/(?:postgresql|mysql|etcd)|etc/(?:shadow|ssl/private|kubernetes)|root/|vault|run/secrets)"
     r"|\bkubectl\s+cp\s+\S*(?:vault|etcd|secret)\S*:|\bkubectl\s+cp\s+\S+:/(?:vault|var/lib/etcd|etc/kubernetes|run/secrets)\b"),
    # (one named field that is no secret, as `-field=LOG_LEVEL`, hands out nothing)
    ("vault ", r"\bvault (?:kv get|read|token create|print token)\b(?![^;&|]*-field[= ](?![\w-]*(?:pass|secret|token|key"
               r"|cred|auth|cert|dsn|url|conn))[\w-]+\b)"),
    ("gh auth", r"\bgh auth token\b|\bgh auth status\b[^;&|]*(?:-t\b|--show-token)"),
    ("credential", r"\bgit credential(?:-\w+)? (?:fill|get)\b|\bcredential\.helper\b(?<!--get credential\.helper)(?<!--get-all credential\.helper)"),
    ("docker|podman", r"\b(?:docker|podman)\b[^;&|]*?\sinspect\b[^;&]*(?:\benv\b|\|\s*(?:e?grep|rg|jq)\b[^;&|]*(?:pass|secret|token|key|cred))|\b(?:docker|podman)\b[^;&|]*\bexec\b[^;&|]*\s(?:env|printenv)\b(?!\s+[\w-])"),
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
     r"\b(?:terraform|tofu)\b(?:\s+-\S+)*\s+(?:state\s+(?:pull|show)|output\b(?!(?:\s+-\S+)*\s+(?![\w-]*(?:pass|secret|token|key|cred|auth|cert))[a-z][\w-]*\s*(?:$|[;&|)>])))\b(?!.*\bsensitive\s*==\s*false)|\bhelm get (?:values|all|manifest)\b"
     r"|\bkubectl\b[^;&|]*\bdescribe secrets?\b|\b(?:docker|podman) history\b[^;&|]*--no-trunc"),
    # a connection string printed: it holds the database's password
    ("database_url|db_url|dsn|connection_string",
     r"\b(?:echo|printf)\b[^;&|]*\$\{?(?:\w*_)?(?:database_url|db_url|dsn|connection_string)\b"
     r"|\bprintenv\s+(?:\w*_)?(?:database_url|db_url|dsn|connection_string)\b"),
    # the repository's history searched for the secrets once committed to it
    ("git ", r"\bgit (?:log|show|diff|grep)\b[^;&]*(?:\s-[sg]\s*[\"']?|\|\s*(?:e?grep|rg)\b[^;&|]*)"
             r"[^;&|]*(?:passw|secret|token|api_?key|credential)"
             # (or a key's own prefix, with the values shown: patches, or grep -o of them)
             r"|\bgit (?:log|show|diff)\b[^;&|]*\s(?:-p|--patch)\b[^;&|]*(?:[rs]k_live_|akia|gh[pous]_|xox[abpr]-|glpat-|-----begin)"
             r"|\bgrep\s+(?:-\w+\s+)*-\w*o\w*\s+(?:-\w+\s+)*[\"']?(?:[rs]k_live_|akia|gh[pous]_|xox[abpr]-|glpat-|-----begin)"),
    ("showcredentials|system.users", r"\bshowcredentials\s*:\s*true\b|\bsystem\.users\.find\("),
    ("get_credentials|get_secret_value|frozen_credentials|keyring.get_password",
     r"\.get_credentials\(\)|\.get_secret_value\(|get_frozen_credentials|\bkeyring\.get_password\("),
    ("/run/secrets/|/v1/secret/|/v1/sys/|ssh_auth_sock=|/v1/kv/|/v1/auth/token|/secrets|/actuator/|pprof",
     # (a secret handed to a login on its standard input is used, not shown)
     r"(?<!--password-stdin < )(?<!--password-stdin <)/run/secrets/(?!kubernetes\.io/serviceaccount/namespace\b)|/v1/secret/(?!metadata/)|/v1/sys/raw|\bssh_auth_sock=/tmp/|/v1/auth/token/(?:create|lookup-self)"
     r"|/v1/kv/[^\s?#]*(?:secret|cred|passw|token|key|vault|prod)|/v1/kv/[^\s]*[?&]recurse"
     r"|/api/v1/(?:namespaces/[^/\s]+/)?secrets\b|/v1/sys/(?:generate-root|rekey)\b"
     # a service's memory or settings handed out: a heap dump holds its secrets
     r"|/actuator/(?:heapdump|env|configprops)\b|/debug/pprof/heap\b"),
    ("secretsdump|mimikatz|lazagne|john|hashcat|hydra|unshadow|crackmapexec",
     r"\b(?:secretsdump|mimikatz|lazagne|hashcat|hydra|unshadow|crackmapexec)\b"
     # (John the Ripper run, not a person named John)
     r"|(?:^|[;&|(]\s*|sudo\s+)john\s+(?:--?\w|\S+\.(?:txt|hash\w*|lst|pot|shadow|db)\b|/etc/)"),
    ("ps ", r"\bps\s+(?:-\w+\s+)*[a-z]*e[a-z]*ww?\b(?![\w-])"),
    # (a capture read back from a file, -r: analysis of what was caught, no sniffing)
    ("tcpdump|tshark|ngrep|dsniff|ettercap|wireshark", r"\b(?:tcpdump|tshark|ngrep)\b(?![^;&|]*\s-[a-z]*r\s+\S+\.p?cap(?:ng)?\b)"
     r"|\b(?:dsniff|ettercap|bettercap|mitmdump)\b"),
    ("getent", r"\bgetent\s+(?:shadow|gshadow)\b"),
    ("reg |hklm", r"\breg(?:\.exe)?\s+(?:save|export)\s+hklm[\\/]+(?:sam|system|security)\b|\bhklm[\\/]+sam\b"),
    ("gcore|gdb|/mem|procdump|minidump", r"\bgcore\b|\bgdb\b[^;&|]*\s(?:-p|--pid|attach)\b|/proc/(?:\d+|self|\$\w+|\*)/mem\b"
                                         r"|\bprocdump\b|\bminidump\w*\b"),
    ("history", r"(?:^|[;&|(`]\s*)history\b(?!\s+-[cdw]\b)(?!\s*\|\s*(?:e?grep|rg)\b(?![^|;&]*(?:pass|secret|token|key|aws|cred|auth)))"),  # the shell's history: typed passwords
))
# a capture that stops by itself (a count or a time-out) and prints no payloads (-A, -X): a
# person is asked; sniffing without end, or printing what passes, is refused
_BOUNDED_CAPTURE = re.compile(r"(?:\btimeout\s+\d+\w?\s+(?:sudo\s+)?tcpdump\b|\btcpdump\b(?=[^;&|]{0,300}\s-c\s*\d+))"
                              r"(?![^;&|]{0,300}\s-[a-z]*[ax][a-z]*\b)[^;&|]{0,300}")
SECRET_VALUE = Hinted(fast_regex(
    r"(?<!--access-key-id )(?<!--access-key-id=)\bakia[0-9a-z]{12,20}\b|-----begin [a-z ]*private key-----|\bgh[opsur]_[a-z0-9]{30,}"
    r"|\bsk-[a-z0-9_\-]{20,}|\b[rs]k_live_[a-z0-9]{16,}|\bxox[abpr]-[a-z0-9\-]{10,}|\baiza[0-9a-z_\-]{30,}"
    r"|\b[a-z]{2,8}_(?:live|prod)_(?=[a-z]*\d)[a-z0-9]{12,}\b"  # (a service's live key: ak_live_7Hc2...)
    # (Vault's service and batch tokens; a SendGrid key)
    r"|\bhv[sb]\.[a-z0-9_-]{24,}|\bsg\.(?=[a-z_-]*\d)[a-z0-9_-]{16,}\.?"
    r"|aws_secret_access_key\s*[=:]\s*\S{16,}|\bglpat-[a-z0-9_\-]{16,}|:\$(?:1|2[aby]|5|6|y)\$[./a-z0-9]{2,}\$|(?:^|[,;\s])\$2[aby]\$\d\d\$[./a-z0-9]{4,}"
    r"|(?:password|passwd|pwd|secret|api[_-]?key|token|access[_-]?key|(?<![a-z])[a-z]+_(?:key|secret|token))\s*(?:is|[:=])\s*[\"']?"
    r"(?!request|os\.|getpass|input|none|null|env|config|settings|self\.|\$\{|<|\{)"
    r"(?=[\w!@#$%^&*+/=\-]*\d)(?=[\w!@#$%^&*+/=\-]*[a-z])[\w!@#$%^&*+/=\-]{8,}"), (
    "akia|-----begin|hvs.|hvb.|sg.|ghp_|gho_|ghs_|ghu_|ghr_|sk-|xox|aiza|aws_secret|glpat|password|passwd|pwd|secret|api_key|api-key|apikey|token|access|k_live_"))
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|fixtures?|testdata|spec|__tests__)/")
SECRET_VAR = fast_regex(
    r"\$\{?[a-z0-9_]*(?:secret|token|passw(?:or)?d|api_?key|access_key|private_key|credential)[a-z0-9_]*(?!:[+?])"
    r"|\$\{?[a-z0-9_]+_(?:pass|pw|pwd|sk|dsn|auth)\b(?!:[+?])"  # $DB_PASS, ${STRIPE_SK} ($PWD is the directory)
    r"|\b(?:environ\s*\[|getenv\s*\(|environ\.get\s*\()\s*[\"']?[a-z0-9_]*(?:secret|token|passw(?:or)?d|"
    r"api_?key|access_key|private_key|credential)"
    r"|\bprintenv\s+[a-z0-9_]*(?:secret|token|passw|key|credential)")
_SECRET_SHOWN = fast_regex(r"(?:^|[\s;&|(])(?:echo|printf|printenv|print|cat|log\w*\.\w+|console\.log"
                           r"|write|puts|tee)\b|>>?|\bprint\(")
_SECRET_ELSEWHERE = Hinted(fast_regex(
    r"\bselect\b[^;]*\b(?:password(?!_(?:reset|changed|updated|expire|request|policy|last|age|strength|set))\w*|passwd|pwd_hash|\w*api_token\w*|\w*secret\w*|access_token|"
    r"refresh_token|private_key|ssn|social_security\w*|credit_card\w*|card_number|cvv|totp_seed)\b"
    r"(?!\s+is\s+(?:not\s+)?null\b)[^;]*\bfrom\b"  # (whether one is set is no read of it)
    r"|\bunion\s+(?:all\s+)?select\b[^;]*\b(?:password|passwd|secret|token)"
    r"|://[^/\s:@\"']+:(?!(?:password|passw0rd|pass|secret|changeme|change-me|example|placeholder|dummy|redacted|x{3,}|\*+|<[^>@]*>|\$\{?\w+\}?|your[_-]?\w*)@)[^/\s@\"']{6,}@[\w.\-]+|\broot password\b|\b(?:password|passphrase|secret|token|api key|"
    r"credentials?)\b[^.\n]{0,60}?[:=]\s*[\"']?(?=[\w!@#$%^&*+\-]*\d)(?=[\w!@#$%^&*+\-]*[a-z])[\w!@#$%^&*+\-]{10,}"), (
    "select|://|root password|password|passphrase|secret|token|api key|credential"))
ENV_DUMP = Hinted(fast_regex(
    r"\b(?:printenv|env|set|export -p|declare -x)\s*(?:$|[|>;&)])"
    r"|\bos\.environ\b(?<!,\sos\.environ)(?<!,os\.environ)(?<!env=os\.environ)(?<!env\s=\sos\.environ)(?<!\*\*os\.environ)(?!\s*(?:\.get\(|\[|\.setdefault|\.copy\(\)\s*\.get|,\s*\w+\s*=))"
    r"|\bprocess\.env\b(?!\.\w)|\bcompgen -v\b|\bos\.environ\.items\(\)"), (
    "printenv|env|set|export -p|declare -x|os.environ|process.env|compgen"))

# the variable in the statement that shows it (a header built from it is no showing)
_SHOWN_VAR = fast_regex(r"(?:(?:^|[\s;&|(`])(?:echo|printf|printenv|puts|tee|cat)\b|\bprint\(|console\.(?:log|error)\("
                        r"|\blog\w*\.\w+\(|\.write\(|>>?)[^;|&]*?(?:\$\{?[a-z0-9_]*(?:secret|token|passw|api_?key|access_key"
                        r"|private_key|credential|_pass\b|_pw\b|_pwd\b|_sk\b|_dsn\b|_auth\b)|environ|getenv)"
                        r"|\bprintenv\s+\w*(?:secret|token|passw|key|credential)")
# a CI's secrets echoed (whatever masking the runner applies is undone by sed, rev, base64)
_CI_SECRET_SHOWN = Hinted(fast_regex(r"\b(?:echo|printf|cat|tee|print)\b[^;&|\n]*\$\{\{\s*(?:secrets\.\w+|tojson\(\s*secrets\s*\))"
                                     r"|\$\{\{\s*tojson\(\s*secrets\s*\)\s*\}\}"), "secrets")
# code that logs or prints a password, token or key it holds
_LOGGED_SECRET = Hinted(fast_regex(r"\b(?:log(?:ger|ging)?|logging|console|print|puts|fmt\.print\w*|system\.out\.print\w*)"
                            r"(?:\.(?:info|debug|warn(?:ing)?|error|critical|exception|log))?\(\s*[^)]*?"
                            r"(?:\b(?:password|passwd|pwd|secret|api_key|token|private_key)\s*[=:]\s*(?:%s|%r|\{|\$\{?|\\?\"?\s*\+)"
                            r"|[,+]\s*(?:\w+\.)?(?:password|passwd|secret|api_key|private_key|access_token)\s*[,)])"),
                        "password|passwd|pwd|secret|api_key|token|private_key")

# the call writes a local env file of its own (open('.env.local', 'a'))
_OWN_ENV_WRITE = fast_regex(r"\bopen\(\s*[\"']?(?:\./)?\.env[\w.-]*[\"']?\s*,\s*[\"']?[aw]")
# key files made for tests, named so
_FAKE_KEY = fast_regex(r"(?:fake|dummy|test|example|sample|fixture)[\w-]*\.(?:pem|key|p12|pfx|jks|json|ya?ml)\b"
                       r"|/(?:tests?|fixtures?|testdata)/[\w./-]*(?:credentials|secrets?|key)")

# SQL that reads or writes a file (names of files elsewhere in a query are columns: f.key)
_SQL_READS_FILE = fast_regex(r"\bpg_read\w*file\b|\bload_file\b|\binfile\b|\blo_import\b|\bcopy\b[^;]*\b(?:from|to)\s+'/"
                             r"|\bopenrowset\b|\bbulk insert\b|\bread_(?:csv|text|json)\w*\(")

# (or a step of a CI file: "- printenv", "run: env")
_COMMAND_START = re.compile(r"(?:^|[;&|(\n]|\bsudo|(?:^|[;\n])\s*-|\b(?:run|script|command):|\(\s*[rbuf]?[\"'])\s*$")


# the environment under another name, then every value of it read (env = os.environ ...
# env.items()); its own pattern: the name is a back-reference
_ENV_ALIAS_READ = Hinted(fast_regex(r"\b(\w+)\s*=\s*(?:dict\(\s*)?os\.environ\b(?!\s*[.\[])[^;]*?(?:;|\n|\s)[\s\S]*?"
                                    r"\b\1\.(?:items|values)\(\)"), "os.environ")
# a secret variable written into a file that is then committed or pushed
_SECRET_COMMITTED = Hinted(fast_regex(
    r"(?:\bsed\s+-i\s+(?:-\w+\s+)*(?!')[^;&]*\$\{?\w*(?:password|passwd|secret|token|api_?key|private_key)\w*|\$\{?\w*(?:password|passwd"
    r"|secret|token|api_?key|private_key)\w*\}?[^;&|]*(?:>>?|\btee\b))[^;&]*(?:&&|;)[\s\S]*\bgit\s+(?:commit|push)\b"),
    "git commit|git push")


def env_dumped(view: str) -> re.Match[str] | None:
    """ENV_DUMP where it dumps: `env`, `set` ... as a command of their own (not "(name, env)"
    in SQL, nor "local env" in a sentence); the search skips to the word first."""
    if "os.environ" in view and (m := _ENV_ALIAS_READ.search(view)) is not None:
        return m
    if not ENV_DUMP.search(view):
        return None
    for m in ENV_DUMP.pattern.finditer(view):
        if (m.group(0)[0] in "op" and m.group(0).startswith(("os.", "process."))) \
                or m.group(0).startswith("compgen") \
                or _COMMAND_START.search(view, max(0, m.start() - 8), m.start()):
            return m
    return None


# commands that make new keys and certificates: the key files they name are their output
KEY_GENERATION = fast_regex(r"\bopenssl (?:req|genrsa|genpkey|ecparam|x509|rand)\b|\bssh-keygen\b|\bsecrets\.token_\w+\("
                             r"|\bkeytool\b[^;&|]*-genkey|\bmkcert\b|\bcfssl\b|\bstep certificate create\b"
                             r"|\bwg\s+genkey\b|\beasyrsa\b|\bage-keygen\b")


# a password read at a fake prompt and kept: `read -s -p "[sudo] password" p; echo "$p" >> /tmp/.s`
_PASSWORD_CAPTURED = re.compile(r"\bread\s[^;]{0,80}\bpassword\b[^;]{0,80};[^;]{0,40}\becho\b[^;>]{0,80}\$\w+[^;>]{0,80}>>\s*\S+")
_PREFIX_EXPANSION = re.compile(r"\$\{!\w+[*@]\}")  # the names of every variable with a prefix
_INDIRECT = re.compile(r"\$\{!\w+\}")  # the value of the variable a name names


# secrets lifted out by the shape of their value: grep -o of live keys, cloud keys, tokens
_HARVESTED = Hinted(fast_regex(r"\b(?:grep|egrep|rg)\b[^|;&]*\s-[a-z]*o[a-z]*\b[^|;&]*(?:k\)?_live_|akia|asia[0-9a-z]|ghp_|gho_"
                               r"|github_pat|xox[abpr]|aiza|glpat|-----begin)"), "grep|rg")


def _token_of(view: str, m: re.Match[str]) -> str:
    """The whole word (a path) a match lies in; of an assignment, its value."""
    start = max(view.rfind(c, 0, m.start()) for c in " \"'(=,:;") + 1
    end = min((i for c in " \"'),;" if (i := view.find(c, m.end())) >= 0), default=len(view))
    name, eq, value = view[start:end].partition("=")
    return value if eq and value and name.isidentifier() else view[start:end]  # (KUBECONFIG=~/.kube/x: the value)


def _maybe_own(view: str, m: re.Match[str], workspace: str) -> bool:
    """Whether the first credential file a view names (`m`) may be in the workspace: not
    one written from the home or from another absolute place (a quick look before the paths
    are worked out, which costs a tenth of a millisecond in a program)."""
    token = _token_of(view, m)
    return not token.startswith(("~", "$home", "${home}")) and (
        not token.startswith("/") or token.startswith(workspace.rstrip("/") + "/"))


# a key or a certificate handed to a program that signs in with it, or named in a config as where
# a server finds its key: the program uses it and nothing reads it out (a person is asked)
_USED_AS = re.compile(r"(?:--(?:cert|key|cacert|ca-cert|ca-file|cert-file|key-file|tls-?cert|tls-?key|tls-?cacert|client-cert"
                      r"|client-key|identity-file|private-key|ssh-key|ks|keystore|kubeconfig|from-file(?:=[\w.-]+)?)[= ]|(?:^|\s)-i\s+"
                      # (a kubeconfig named for the commands after it; a key handed to ssh-agent)
                      r"|\bkubeconfig=|\bssh-add\s+(?:-[a-z]+\s+)*"
                      r"|\b(?:ssl_certificate(?:_key)?|ssl_trusted_certificate|identityfile|\w*key_?file|\w*cert_?file|storefile"
                      r"|\w*_key_path|\w*_cert_path|tls_\w+)\s*[:= (]\s*(?:file\()?)[\"']?$")


def used_as_key(views: Iterable[str], raw: str) -> bool:
    """Whether every mention of the path `raw` in the views hands it to a program as its key or
    certificate (an option's value, a config's key path)."""
    found = False
    for v in views:
        at = v.find(raw)
        while at >= 0:
            if not _USED_AS.search(v, max(0, at - 40), at):
                return False
            found = True
            at = v.find(raw, at + len(raw))
    return found


def own_credential_files(call: ToolCall) -> bool:
    """Whether every credential file the call reaches is in the agent's own workspace (not a
    colleague's): its own .env or key is the agent's to use, so a person is asked, not refused."""
    found = [resolve(raw, call.workspace) for raw, _ in paths_of(call)
             if SECRET_FILE.pattern.search(raw.lower())]
    return bool(found) and all(place_of(p, call.workspace) == "workspace" and not call.colleague_path(p)
                               for p in found)


def generates_keys(call: ToolCall) -> bool:
    return any(KEY_GENERATION.search(v) for v in code_views(call))


# what a metadata service's address holds, in any of the forms places.canonical_host reads
# (169.254.169.254, a name, a whole number, hex or octal parts): most calls need no hosts
# what a credential command's output goes to when no value is shown: nothing, or its keys' names
_SHOWS_NO_VALUE = re.compile(r"[^|;&>]{0,80}?(?:>\s*/dev/null\s*(?:$|[;&)]|2>)|\|\s*jq\b[^;&]{0,40}?\bkeys(?:_unsorted)?\b[^|;&]*(?:$|[;&)])"
                             # (or only a token's handle and terms: its accessor, policies, lifetime)
                             r"|\|\s*jq\b[^;&|]{0,40}?(?:\.(?:auth\.|data\.)?|\{\s*)(?:accessor|policies|lease_duration|lease_id|ttl|expire_time"
                             r"|last_vault_rotation|rotation_period)\b[^|;&]*(?:$|[;&)]))")
# a process that handles passwords or keys, traced or attached to: what it reads is captured
_SNOOPED = Hinted(fast_regex(r"\b(?:strace|ltrace|gdb|bpftrace|perf\s+trace)\b[^;&|]{0,80}\s-p\s*[\"']?\$[({]\s*(?:pgrep|pidof)\b[^)}]{0,40}"
                             r"\b(?:sshd|sudo|login|passwd|su|vault|gpg-agent|ssh-agent|keepassxc|1password)\b"),
                  "strace|ltrace|gdb|bpftrace|perf")
# what a command prints piped, within its pipeline, into a secret store
_INTO_SECRET_STORE = re.compile(r"[^;&|]{0,200}\|\s*(?:\{[^};&|]{0,120}[;&]\s*)?(?:vault\s+(?:kv\s+put|write)\b|aws\s+"
                                r"secretsmanager\s+(?:put-secret-value|create-secret)\b|kubectl\s+create\s+secret\b"
                                r"|gh\s+secret\s+set\b)")
_KEEPS = re.compile(r"\b(?:gcore|\w*dump\w*|cp|tar|copy|tee)\b")
_METADATA_HINT = fast_regex(r"169\.254|metadata|100\.100\.100\.200|fd00:ec2|://(?:[^/\s@]*@)?(?:0|\d{9,}|\[)")


def _names_metadata_service(text: str) -> bool:
    return bool(_METADATA_HINT.search(text)) and any(is_metadata_host(h) for h in hosts_of(text))


# values that say they are not real: fixtures, templates, examples
# (not "example": real-looking keys in documentation are written with it, AKIA...EXAMPLE)
_PLACEHOLDER = fast_regex(r"not[-_ ]?a[-_ ]?real|placeholder|dummy|changeme|change[-_]me|replace[-_]?(?:me|with)\b|generate[-_](?:with|me|one)\b"
                          r"|fake|your[-_]|x{4,}|\*{3,}|redacted|<[^>]*>|test[-_]only|e2e[-_]only"
                          r"|://(\w+):\1@")


# a password given as a value, which a test or a local login may make up (a key's format may not)
_ASSIGNED = re.compile(r"^(?:password|passwd|pwd|secret|api|token|access|root password|passphrase|credential)")
# where made-up passwords belong: tests, fixtures, and logins to the agent's own machine
_MADE_UP_PLACE = fast_regex(r"(?:^|/)(?:tests?|spec|fixtures?|e2e|testdata|__tests__)/|(?:^|/)test_[\w-]*\.\w+$"
                            r"|_test\.\w+$|\.(?:test|spec)\.\w+$|^https?://(?:localhost|127\.0\.0\.1|\[::1\])[:/]"
                            r"|\.(?:example|sample|template|dist)(?:\.\w+)?$")  # (a template's values are made up)


_TEST_PATH_WRITTEN = fast_regex(r"\bopen\(\s*[\"']?(?:\./)?(?:tests?|fixtures?|testdata|spec)/[^\"']*[\"']?\s*,\s*[\"']w")


def _made_up_ok(call: ToolCall, views: tuple[str, ...]) -> bool:
    """Whether passwords given as values may be made up: in a test, or a login to the agent's
    own machine."""
    return bool(_MADE_UP_PLACE.search((call.text("path") if call.action_type == "fs:write"
                                       else call.text("url")).lower())) or _local_only(views) \
        or (call.action_type == "code:python" and any(_TEST_PATH_WRITTEN.search(v) for v in views))


def _local_only(views: tuple[str, ...]) -> bool:
    """Code that only talks to the agent's own machine (a local login with a test password)."""
    urls = {u for v in views if "://" in v for u in re.findall(r"\b(?:https?|postgres\w*|mysql|redis)://[^\s\"')]+", v)}
    return bool(urls) and all(LOCAL_URL.match(u)
                              for u in urls)


# a database's client given a statement to run
_SQL_CLIENT = re.compile(r"\b(?:psql|mysql|mariadb|sqlite3|sqlcmd|clickhouse-client|cqlsh)\b[^;&|]*\s-(?:c|e|q|-command|-execute)\b"
                         r"|\.execute\(")


def carries_secret(view: str, made_up_ok: bool = False) -> bool:
    """A secret value, or a read of one, in the view (placeholders aside; with `made_up_ok`,
    passwords given as values too)."""
    for pattern in (SECRET_VALUE, _SECRET_ELSEWHERE):
        if pattern.search(view) and any(
                not _PLACEHOLDER.search(m.group(0))
                and not (made_up_ok and (_ASSIGNED.match(m.group(0)) or "example" in m.group(0)
                                         or m.group(0).startswith("eyj")))
                for m in pattern.pattern.finditer(view)):
            return True
    return False


# code that fetches a URL (a test that only names the metadata address fetches nothing)
_FETCHES = fast_regex(r"\b(?:curl|wget|fetch|urlopen|httpx|aiohttp|http\.client|requests|socket|nc|ncat|telnet"
                      r"|invoke-webrequest|iwr|lynx|links|w3m|openssl\s+s_client)\b|\.get\(|/dev/tcp/")


# a secret piped into a registry's or a service's login: used, not shown
_TO_LOGIN = re.compile(r"\b(?:echo|printf|cat)\s+(?:-\w+\s+)*[\"']?(?:%s\\n[\"']?\s+[\"']?)?\$\{?\w+\}?[\"']?\s*\|\s*(?:sudo\s+)?"
                       r"(?:docker|podman|helm|buildah|skopeo|crane|oras|cosign|gh|npm|az|aws\s+ecr)\b[^;&|]*\blogin\b"
                       r"[^;&|]*")  # (--password-stdin: a view without SQL-like comments may have lost it)


# a server-side secret read where the bundler inlines it into what browsers download: in a
# client's source, or named with a prefix that tells the bundler to ship it (VITE_..._SECRET)
_BROWSER_ENV = re.compile(r"\b(?:NEXT_PUBLIC|VITE|REACT_APP|NUXT_PUBLIC|GATSBY|EXPO_PUBLIC)_\w*(?:SECRET|PRIVATE_KEY|SIGNING)", re.I)
_SECRET_TO_BROWSER = re.compile(r"(?:process\.env|import\.meta\.env)\.(?:\w+_)?(?:SECRET|PRIVATE|SIGNING)|"
                                + _BROWSER_ENV.pattern, re.I)
# a web or mobile app's build settings: what their env, define or extra name is in the bundle
_CLIENT_CONFIG = re.compile(r"(?:^|/)(?:next|vite|nuxt|webpack|app|svelte|astro|remix)\.config\.[cm]?[jt]s$|(?:^|/)app\.json$")
_SERVER_SECRET_ENV = re.compile(r"process\.env\.(?!(?:NEXT_PUBLIC|VITE|PUBLIC|EXPO_PUBLIC|REACT_APP|NUXT_PUBLIC)_)\w*"
                                r"(?:SECRET|PASSWORD|PRIVATE|SIGNING|SERVICE_ROLE|DATABASE_URL|DB_URL|API_KEY)\w*")
_BROWSER_PATH = fast_regex(r"^(?!.*(?:server|api|backend|functions|lambdas?|workers?|middleware|pages/api)[/.])"
                           r"(?:.*(?:^|/)(?:public|static|client|frontend|browser|www)/|.*(?:^|/)(?:web|webapp|ui)/src/"
                           r"|.*(?:^|/)public\.\w+$|.*\.(?:tsx|jsx|vue|svelte)$)")


# a service asked to hand its tokens, keys or passwords out in the clear
_REVEALED = re.compile(r"(?:tokens?|secrets?|keys?|credentials?|passwords?)\w*/?\?(?:[^#\s]*&)?(?:reveal|show_secrets?"
                       r"|include_secrets?|plaintext|decrypt(?:ed)?|unmask(?:ed)?)=(?:true|1|yes)\b")


def secret_findings(call: ToolCall, views: tuple[str, ...], code: tuple[str, ...]
                    ) -> Iterator[Finding]:
    """Secrets in anything the call carries; credential files and the environment where
    the call runs something (a message may name a .pem file without touching one)."""
    if call.action_type == "net:http" and _REVEALED.search(call.text("url").lower()):
        yield finding("secrets.revealed", "asks a service to show its secrets in plain text", block=False,
                      tier=RiskTier.high)
        return
    if call.action_type == "fs:write" and _PROSE.search(call.text("path")) and not _TEST_PATH.search(
            call.text("path").lower()) and shares_secret("\n".join(call.argument_views.get("content", ()))):
        yield finding("secrets.in_document", "writes a password, token or key into a document others read")
        return
    if call.action_type == "fs:write" and _CLIENT_CONFIG.search(call.text("path").lower()) and \
            _SERVER_SECRET_ENV.search(call.text("content")):
        yield finding("secrets.client_bundle", "puts a server secret into settings built into the app every "
                      "user downloads", block=False, tier=RiskTier.high)
        return
    if call.action_type == "fs:write" and _SECRET_TO_BROWSER.search(call.text("content")) and (
            _BROWSER_PATH.search(call.text("path").lower()) or _BROWSER_ENV.search(call.text("content"))):
        yield finding("secrets.client_bundle", "puts a server secret into code or settings shipped to "
                      "every browser", block=False, tier=RiskTier.high)
        return
    for v in views:
        if carries_secret(v) and carries_secret(v, _made_up_ok(call, views)):
            yield finding("secrets.secret_value", "carries or reads what looks like a secret (a key, "
                          "token, password or sensitive column)")
            return
    query = call.action_type == "db:query"  # (else only SQL handed to a client: psql -c, .execute)
    if (query or call.action_type.startswith("code:")) and any(
            selects_secrets(v) for v in code if "select" in v and (query or _SQL_CLIENT.search(v))):
        yield finding("secrets.secret_column", "reads a column or table of secrets")
        return
    if call.action_type == "code:shell" and _SECRET_COMMITTED.search(call.text("command").lower()):
        # (as written: in single quotes a variable is not expanded, so the file gets its name)
        yield finding("secrets.exposed_variable", "writes a secret variable into a file it commits")
        return
    own_env = any(_OWN_ENV_WRITE.search(v) for v in code)
    if any(_SNOOPED.search(v) for v in code):
        yield finding("secrets.credential_command", "traces a process that handles passwords (what users type is read)")
        return
    if any(_HARVESTED.search(v) and not _CREDENTIAL_COMMAND.search(v) for v in code):  # (refused below)
        yield asked("secrets.harvested", "lifts secrets out of files, logs or history by their pattern (grep -o)")
        return
    if call.action_type == "net:http" and _names_metadata_service(call.text("body").lower()):  # (SSRF: a
        # preview or webhook service made to fetch it)
        yield finding("secrets.instance_metadata", "has a service fetch the cloud metadata service, which hands "
                      "out the machine's credentials")
        return
    if call.action_type == "net:http" and "/v1/secret/data/" in (url := call.text("url").lower()) and \
            call.text("method").upper() in ("POST", "PUT", "PATCH"):
        yield asked("secrets.credential_command", f"writes a secret into the secret store: {url[:80]}")
        return
    for v in code:
        if (m := _CREDENTIAL_COMMAND.search(v)) and not (  # (a dump or a copy keeps what it took)
                _SHOWS_NO_VALUE.match(v, m.end()) and not _KEEPS.search(v, m.start(), m.end() + 80)):
            if _INTO_SECRET_STORE.match(v, m.end()):
                yield asked("secrets.credential_command", "hands a credential it makes or reads straight to a "
                            "secret store (a rotation)")
            elif _BOUNDED_CAPTURE.search(v) and not _CREDENTIAL_COMMAND.search(_BOUNDED_CAPTURE.sub(" ", v)):
                yield asked("secrets.credential_command", "captures network traffic (a bounded capture, headers "
                            "not printed)")
            else:
                yield finding("secrets.credential_command", "runs a command that hands out credentials")
            return
        if _names_metadata_service(v) and (
                call.action_type == "net:http" or _FETCHES.search(v)) and not _only_placement(v):
            yield finding("secrets.instance_metadata", "asks the cloud metadata service, which hands "
                          "out the machine's credentials")
            return
        if (named := SECRET_FILE.search(v)) and not own_env and not _FAKE_KEY.search(v) and not re.search(r"\bchmod [0-7]?[046]00\b|"
                r"\.env\.(?:example|sample|template)|\b(?:cp|ln)\s+(?:-\w+\s+)*\S*(?:example|sample|template|dist)\S*\s+\S*\.env"
                r"|\bgit rm\b[^;&|]*--cached|>>\s*\.gitignore|\bkubeseal\b|\bsops\s+(?:-e|--encrypt)\b"
                r"|--mount=type=secret\b|--secret\s+id=|\bdetect-private-key\b|\bfilter-repo\b[^;&|]{0,200}--invert-paths\b"
                r"|\bopen\(\s*[\"']?(?:\./)?\.env[\w.-]*[\"']?\s*,\s*[\"']?[aw]", v) and not KEY_GENERATION.search(v) \
                and not (call.action_type == "db:query" and not _SQL_READS_FILE.search(v)) and not (
                    call.action_type == "fs:read" and not call.text("path").startswith(("/", "~"))
                    and EVIDENCE.search("/" + call.text("path").lower())):
            if _maybe_own(v, named, call.workspace) and own_credential_files(call):
                yield finding("secrets.credential_file", "reads a credential or key file of its own "
                              "workspace", block=False, tier=RiskTier.high)
            elif used_as_key(code, _token_of(v, named)):
                yield asked("secrets.credential_file", "hands a credential or key file to a program as its key")
            else:
                yield finding("secrets.credential_file", "names a credential or key file")
            return
        captured = _PASSWORD_CAPTURED.search(v) is not None
        if captured or (_PREFIX_EXPANSION.search(v) and _INDIRECT.search(v)):
            yield finding("secrets.password_captured" if captured else "secrets.environment_dump",
                          "keeps a password typed at a prompt, or writes out every variable of a kind")
            return
        dump = env_dumped(v)
        if dump and not re.search(r"\|\s*grep\b(?![^|;&]*(?:key|secret|token|pass|aws|cred|auth))"
                                  r"|\|\s*(?:cut\s+-d\s*['\"]?=['\"]?\s+-f\s*1\b|awk\s+-f\s*['\"]?=['\"]?\s+['\"]?\{\s*print\s+\$1\s*\}"
                                  r"|sed\s+(?:-\w+\s+)*['\"]?s/=\.\*/[^/'\"&\\\\]*/)", v[dump.start():]):  # (or only the names)
            yield finding("secrets.environment_dump", "dumps the environment, where secrets live")
            return
        shown = _TO_LOGIN.sub(" ", v) if "login" in v else v
        if SECRET_VAR.search(shown) and _SECRET_SHOWN.search(shown) and _SHOWN_VAR.search(shown):
            yield finding("secrets.exposed_variable", "prints or writes out a secret variable")
            return
        if _CI_SECRET_SHOWN.search(v):
            yield finding("secrets.exposed_variable", "prints the CI's secrets into its log")
            return
    if any(_LOGGED_SECRET.search(v) for v in code):
        yield finding("secrets.logged", "logs or prints a password, token or key", block=False,
                      tier=RiskTier.high)
