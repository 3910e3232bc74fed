"""Action types (`category:action`) and their risk tiers.

A tool's base action type comes from its catalog entry (`action_type`, else its name and
annotations); a call refines it from its arguments (`git status` is vcs:read, `git push`
vcs:push). Risk tiers come from a YAML mapping (risk_tiers.yaml, overridable per company);
an action type the mapping does not know is high risk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import yaml

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import ToolCall
from synthorg.secops.detectors.sql import READ_ONLY_ROLE, SCRATCH_OBJECT
from synthorg.secops.normalise import words
from synthorg.secops.places import hosts_in, is_internal

TIERS_FILE = Path(__file__).with_name("risk_tiers.yaml")


@cache
def default_tiers() -> dict[str, RiskTier]:
    raw = yaml.safe_load(TIERS_FILE.read_text())
    return {k: RiskTier[v] for k, v in raw.items()}


def tier_of(action_type: str, tiers: Mapping[str, RiskTier]) -> RiskTier:
    if action_type in tiers:
        return tiers[action_type]
    return tiers.get(action_type.split(":", 1)[0] + ":*", RiskTier.high)


_BY_NAME = (("shell", "code:shell"), ("bash", "code:shell"), ("exec", "code:shell"),
            ("python", "code:python"), ("code", "code:python"), ("read", "fs:read"),
            ("list", "fs:read"), ("write", "fs:write"), ("edit", "fs:write"),
            ("delete", "fs:delete"), ("remove", "fs:delete"), ("http", "net:http"),
            ("fetch", "net:http"), ("request", "net:http"), ("sql", "db:query"),
            ("query", "db:query"), ("database", "db:query"), ("email", "comms:email"),
            ("mail", "comms:email"), ("message", "comms:message"), ("chat", "comms:message"),
            ("deploy", "deploy:release"))


def base_action_type(name: str, declared: str | None, read_only: bool = False,
                     destructive: bool = False) -> str:
    """A catalog tool's action type: declared, else from its name and annotations."""
    if declared:
        return declared
    lowered = name.lower()
    for word, kind in _BY_NAME:
        if word in lowered:
            return kind
    return "tool:read" if read_only else "tool:destructive" if destructive else "tool:write"


_SHELL_READ = frozenset(words("""ls cat head tail grep egrep fgrep rg ag find wc sort
uniq diff cmp stat file du df pwd echo printf which whereis type whoami id date uptime ps
top htop free tree less more cut awk sed jq yq tr basename dirname realpath readlink
md5sum sha1sum sha256sum column true false test [ sleep env hostname uname nproc lscpu
history man help cd pushd popd export set source . time timeout watch zcat zgrep xxd od
hexdump strings nl tac fold fmt comm join paste expand look dig nslookup ping host
traceroute base64 openssl lsof netstat ss xargs nc ncat curlie sha512sum b2sum gpg file
ldd nm objdump printenv seq yes rev shuf tput clear sum cksum getent locale stty tty groups
users w last lsblk ip ifconfig route arp journalctl vmstat iostat mpstat pidstat sar dmesg
ulimit mtr lsmod systemd-analyze nice ionice iotop pgrep pidof id tracepath whois
pdftotext pdfinfo pdfimages ffprobe mediainfo identify nvidia-smi getfacl getcap csvstat
csvlook csvcut csvgrep csvjoin csvsort xmllint zstdcat lz4cat xzcat bzcat pg_isready lpstat
squeue sinfo sacct"""))
_SHELL_KEYWORDS = frozenset(words("""for do done while until if then elif else fi case
esac function { } ! time timeout nohup exec command builtin eval break continue exit return
wait trap shift local readonly"""))
_SHELL_RUN = frozenset(words("""pytest python python3 node deno bun npm npx yarn pnpm
make cmake cargo go mvn gradle ruff mypy black isort flake8 pylint eslint prettier tsc
jest vitest mocha tox nox coverage pre-commit bandit semgrep shellcheck hadolint uvicorn
gunicorn flask django-admin manage.py alembic sphinx-build mkdocs javac java gcc g++ clang
rustc bundle rake rspec php composer dotnet poetry pipenv uv hatch pdm trivy grype syft
gitleaks ssh-keygen sqlite3 psql-lint dd pip pip3 locust ab hey wrk k6 pytest-watch
nodemon tsx ts-node vite next webpack rollup esbuild turbo nx lerna storybook playwright
cypress gh hub glab pyenv nvm rbenv asdf direnv conda mamba just task invoke fab
pre-commit pyright pyre tflint checkov kubeval kubeconform helmfile-lint golangci-lint
staticcheck govulncheck pip-audit npm-audit safety detect-secrets jupyter nbconvert papermill
migrate goose flyway liquibase dbmate sqlfluff terraform-docs actionlint yamllint markdownlint
hugo jekyll dbt great_expectations pytest-xdist perl ruby busybox vim vi nvim ex stress-ng
promtool pip-compile uv-lock jq yq"""))
_SHELL_WRITE = frozenset(words("""mkdir touch cp mv ln tar zip unzip gzip gunzip bzip2 xz
chmod tee patch truncate install rsync fallocate zstd lz4 7z pandoc qpdf"""))
_INSTALL = re.compile(r"^(?:pip|pip3|pipx|npm|yarn|pnpm|apt|apt-get|yum|dnf|apk|brew|gem|cargo|go|"
                      r"conda|uv|poetry)\b.*\b(?:install|add|get|i)\b")
_GIT = {"status": "vcs:read", "diff": "vcs:read", "log": "vcs:read", "show": "vcs:read",
        "branch": "vcs:read", "fetch": "vcs:read", "blame": "vcs:read", "grep": "vcs:read",
        "rev-parse": "vcs:read", "ls-files": "vcs:read", "remote": "vcs:read",
        "describe": "vcs:read", "shortlog": "vcs:read", "config": "vcs:read",
        "push": "vcs:push"}
_ORDER = {t: i for i, t in enumerate(RiskTier)}
_INFRA_READ = frozenset(words("""get describe logs plan status top version list show validate
lint template diff explain list-units list-timers list-unit-files is-active is-enabled is-failed
cat"""))
_INFRA_WRITE = frozenset(words("""apply delete create patch edit replace scale rollout exec run
set label annotate drain cordon uncordon taint expose autoscale"""))


def _shell_segment(words: list[str], internal: tuple[str, ...]) -> str:
    while words and (re.match(r"^\w+=", words[0]) or words[0] in _SHELL_KEYWORDS
                     or re.fullmatch(r"-?\d+[smh]?", words[0])):  # VAR=1 cmd, do cmd, timeout 60 cmd
        words = words[1:]
    if len(words) > 2 and words[0] in ("sh", "bash", "zsh", "dash") and words[1] == "-c":
        words = words[2:]
    if not words:
        return "fs:read"
    verb = words[0].rsplit("/", 1)[-1]
    line = " ".join(words)
    if _INSTALL.match(line):
        return ("pkg:restore" if _RESTORE.match(line)
                else "pkg:pinned" if _pinned(line) else "pkg:install")
    if verb == "crontab":
        return "fs:read" if words[1:2] == ["-l"] else "infra:service"
    if verb in ("psql", "mysql", "sqlite3", "redis-cli", "mongosh", "mongo"):
        sql = re.search(r"\s(?:-c|-e|--command|--execute)\s+(.+)$", line)
        return sql_action(sql.group(1).strip("'\"")) if sql else "db:read"
    if verb in ("scp", "rsync", "ssh", "sftp"):
        outside = [h for h in hosts_in(line) if not is_internal(h, internal)]
        return "net:write_external" if outside else "net:write"
    if verb in ("aws", "gcloud", "az", "terraform", "tofu", "helm", "kubectl", "oc"):
        return _cloud_action(verb, words, line)
    if verb == "kill" and (all(w.startswith("%") or w.isdigit() or w.startswith("-")
                               for w in words[1:]) or _PID_FILE.fullmatch(line)):
        return "proc:own"  # a job or process id of one's own session, or its pid file's
    if verb == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "status")
        if sub == "push" and not re.search(r"\b(?:main|master|trunk|release\S*|prod\S*)\b", line):
            return "vcs:write"  # a branch of one's own
        return _GIT.get(sub, "vcs:write")
    if verb in ("curl", "wget", "http", "httpie"):
        sending = re.search(r"\s-(?:d|f|t|x\s*(?:post|put|patch|delete))\b|--data|--form|--upload"
                            r"|--post|--method", line)
        if not sending:
            return "net:read"
        outside = [h for h in hosts_in(line) if not is_internal(h, internal)]
        return "net:write_external" if outside else "net:write"
    if verb == "docker" or verb == "podman":
        sub = words[1] if len(words) > 1 else ""
        if sub == "run" and "--rm" in words:
            return "code:run"  # a throwaway container: a build or test tool
        return "code:run" if sub in ("build", "ps", "images", "logs", "inspect", "version",
                                     "info", "compose", "buildx") else "infra:container"
    if verb in ("ansible-playbook", "systemctl", "service"):
        rest = [w for w in words[1:] if not w.startswith("-")]
        sub = (rest[1] if verb == "service" and len(rest) > 1 else rest[0]) if rest else ""
        if verb == "kubectl" and sub not in _INFRA_READ:  # past an option's value: -n staging get
            sub = next((w for w in rest[:3] if w in _INFRA_READ or w in _INFRA_WRITE), sub)
        if sub in _INFRA_READ or (
                       sub == "rollout" and len(words) > 2 and words[2] in ("status", "history")):
            return "infra:read"
        return "infra:service" if verb in ("systemctl", "service") else "deploy:release"
    if verb in ("pkill", "killall") and re.search(r"\s-u\s*['\"]?(?:\$\(id -u\)|\$user\b|\$\{user\})", line):
        return "proc:own"  # the agent's own user's processes
    if verb in ("kill", "pkill", "killall"):
        return "proc:kill"
    if verb in ("rm", "rmdir", "unlink", "shred"):
        return "fs:delete"
    if verb == "sed" and any(w.startswith("-i") for w in words[1:]):
        return "fs:write"
    if verb == "find" and re.search(r"-delete\b|-exec\s+rm\b", line):
        return "fs:delete"
    if verb in _SHELL_READ:
        return "fs:read"
    if (verb in _SHELL_RUN or verb.endswith((".py", ".sh")) or ("/" in words[0]
            and not words[0].startswith("/"))):  # the project's own scripts and tools
        return "code:run"
    if verb in _SHELL_WRITE:
        return "fs:write"
    return "code:shell"


_CLOUD_READ = re.compile(
    r"^aws\s+\S+\s+(?:describe|list|get|lookup|simulate|validate|scan|query|tail|filter|head|wait|estimate|test)[\w-]*"
    r"|^aws\s+(?:s3\s+ls|sts\s+get-caller-identity|logs\s+tail)\b|^aws\b[^|;&]*\s--dry-run\b"
    r"|^(?:gcloud|az)\b[^|;&]*\s(?:list|describe|show|get|get-credentials|browse|tail|read|logs)\b"
    r"|^(?:terraform|tofu)\b(?:\s+-chdir=\S+)?\s+(?:plan|validate|fmt|show|output|init|version|providers|graph"
    r"|state\s+(?:list|show)|workspace\s+(?:list|show))\b"
    r"|^helm\s+(?:history|list|ls|status|template|lint|show|get\s+(?:notes|metadata)|diff|search|repo\s+list|version)\b"
    r"|^(?:kubectl|oc)\b[^|;&]*\s(?:get|describe|logs|top|explain|version|api-resources|diff|events|auth\s+can-i"
    r"|port-forward|rollout\s+(?:status|history))\b|^(?:kubectl|oc)\b[^|;&]*\s--dry-run\b")
_NOT_PROD = re.compile(r"\b(?:dev|development|staging|stage|test|testing|qa|sandbox|preview|previews|pr-?\d+|local"
                       r"|localstack|scratch|tmp)\b|-(?:dev|staging|test|sandbox|preview)\b|localhost|127\.0\.0\.1")


def _cloud_action(verb: str, words: list[str], line: str) -> str:
    """A cloud or cluster command: a read, a change to a non-production environment (staging,
    dev, previews: medium), or a release (high)."""
    if verb == "aws" and " ".join(words[1:3]).startswith(("s3 cp", "s3 sync")):
        return "net:write"
    if _CLOUD_READ.match(line):
        return "infra:read"
    if _NOT_PROD.search(line) and not re.search(r"\bprod(?:uction)?\b", line):
        return "deploy:staging"
    return "deploy:release"


READ_ACTIONS = frozenset({"fs:read", "infra:read", "db:read", "net:read", "vcs:read"})


def _worst(kinds: list[str], tiers: Mapping[str, RiskTier]) -> str:
    """The riskiest kind; of equal risk, a change before a read (the call changes something)."""
    return max(kinds, key=lambda k: (_ORDER[tier_of(k, tiers)], k not in READ_ACTIONS)) if kinds else "code:run"


# a package named with its exact version (the default index): what is installed is known
_PINNED_WORD = re.compile(r"[\w./\[\],-]+(?:==|@)v?\d[\w.+-]*|@[\w-]+/[\w.-]+@v?\d[\w.+-]*")
_PID_FILE = re.compile(r"kill(?:\s+-\S+)*\s+[\"']?\$\(cat [\w./-]*\.pid\)[\"']?")


def _pinned(line: str) -> bool:
    words = line.split()
    start = next((i + 1 for i, w in enumerate(words) if w in ("install", "add", "get", "i")), 0)
    names = [w.strip("'\"") for w in words[start:] if not w.startswith("-")]
    return bool(names) and not re.search(r"://|--index|--extra-index|--registry|\s-i\s", line) \
        and all(_PINNED_WORD.fullmatch(n) for n in names)


_SEGMENTS = re.compile(r"\|\||&&|[;|&\n]")
_RESTORE = re.compile(r"^(?:pip3?\s+install\s+(?:-\w+\s+)*(?:-r\s+\S+|-e\s+\S+|\.\S*)(?:\s+-\S+)*\s*$"
                      r"|(?:npm|pnpm)\s+(?:ci|install|i)(?:\s+--?[\w-]+)*\s*$|yarn(?:\s+install)?(?:\s+--[\w-]+)*\s*$"
                      r"|(?:poetry|pipenv|bundle|composer|uv|pdm)\s+(?:install|sync)\b(?:\s+--?[\w-]+)*\s*$"
                      r"|go\s+mod\s+download\s*$|cargo\s+fetch\s*$)")  # the project's own declared deps
_SQL_CLIENT_ARG = re.compile(r"\b(?:psql|mysql|sqlite3|mariadb|clickhouse-client|cqlsh)\b[^|;&\n]{0,200}?\s(?:-c|-e|--command|--execute|--query)"
                             r"[\s=]+(['\"])(.{1,4000}?)\1", re.S)
_LOCAL_DATABASE = re.compile(r"(?:@|-h\s*|--host[= ])(?:localhost|127\.0\.0\.1)\b")
_QUOTED_ARG = re.compile(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"")
_WRAPPED = re.compile(r"^\s*(?:\S*/)?(?:ba|z|da)?sh\s+-c\s+(['\"])(.*)\1\s*$", re.S)
_PY_C = re.compile(r"^\s*python[0-9.]*\s+-c\s+(['\"])(.*)\1\s*$", re.S)
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1([^\n]*)\n.*?\n\s*\2\s*(?=\n|$)", re.S)
_LOOP_HEADER = re.compile(r"^\s*(?:for|select)\s+\w+\s+in\b[^;]*$|^\s*for\s*\(\(")
_PY_SHELL = re.compile(r"\b(?:os\.system|os\.popen|subprocess\.\w+|pty\.spawn|commands\.\w+)\s*\(")
_PY_SYSTEM = re.compile(r"\b(?:socket|requests|urllib|http\.client|ctypes|smtplib|ftplib|"
                        r"paramiko|httpx|aiohttp)\b")
_PY_RAW = re.compile(r"\bctypes\.(?:cdll|windll|pythonapi|memmove|memset|string_at|cast|util)\b|\bctypes\.CDLL\b|\bsocket\.(?:socket|create_connection)\b|\bparamiko\b|\bftplib\b")
_SQL_VERB = re.compile(r"^\s*(\w+)")
# read access given to a read-only role, or access taken back: nothing gained
_READ_GRANT = re.compile(r"grant\s+(?:select|usage)(?:\s*,\s*(?:select|usage))*\s+on\b[^;]*\bto\s+" + READ_ONLY_ROLE
                         + r"\s*$|revoke\b")
# schema changes that only add: a new table, index or view, a new column, a comment
_ADDITIVE = re.compile(r"create\s+(?:(?:unique\s+)?index|(?:temp(?:orary)?\s+)?table|(?:or\s+replace\s+)?view"
                       r"|materialized\s+view|sequence|type)\b|alter\s+table\s+[\w.\"]+\s+add\s+(?:column\b"
                       r"|constraint\b|\w+\s+\w+)(?![^;]*\bdrop\b)|comment\s+on\b|reindex\b|refresh\b")


def shell_action(command: str, tiers: Mapping[str, RiskTier], internal: tuple[str, ...]) -> str:
    wrapped = _WRAPPED.match(command)
    if wrapped:  # `bash -c '...'` is what it runs
        return shell_action(wrapped.group(2), tiers, internal)
    inline = _PY_C.match(command)
    if inline:
        return python_action(inline.group(2), tiers, internal)
    command = _HEREDOC.sub(r" \3", command)  # a here-document's body is data
    # (a database client's quoted statements, read before quoted arguments become one word)
    statements = [sql_action(m.group(2)) for m in _SQL_CLIENT_ARG.finditer(command.lower())
                  if not _LOCAL_DATABASE.search(m.group())]  # (one's own local database: the tests')
    statements += [_mongo_action(m.group(2)) for m in _MONGO_EVAL.finditer(command.lower())]
    command = _QUOTED_ARG.sub("''", command)  # a quoted argument is one word (its | ; & are text)
    kinds = [_shell_segment(seg.split(), internal)
             for seg in _SEGMENTS.split(command.lower())
             if seg.strip() and not _LOOP_HEADER.match(seg)]
    return _worst(kinds + statements, tiers)


def python_action(code: str, tiers: Mapping[str, RiskTier], internal: tuple[str, ...]) -> str:
    if _PY_SHELL.search(code):
        literals = re.findall(r"[\"']([^\"'\n]*)[\"']", code)
        return _worst([shell_action(" ".join(literals), tiers, internal), "code:run"], tiers)
    if not _PY_SYSTEM.search(code):
        return "code:run"
    outside = [h for h in hosts_in(code) if not is_internal(h, internal)]
    # the company's own services by HTTP, or a host name asked for, are ordinary work
    local = bool(hosts_in(code)) and not outside  # a raw socket to the agent's own machine
    return "code:system" if outside or (_PY_RAW.search(code) and not local) else "code:run"


# a mongo shell's --eval script, and what its methods change
_MONGO_EVAL = re.compile(r"\bmongo(?:sh)?\b[^;&|]{0,300}?--eval\s+(['\"])(.{0,4000}?)\1")
_MONGO_WRITE = re.compile(r"\.(?:insert\w*|update\w*|replace\w*|delete\w*|remove|bulkwrite|findoneand\w+|createindex\w*"
                          r"|save)\s*\(")
_MONGO_ADMIN = re.compile(r"\.(?:drop\w*|renamecollection|reconfig|stepdown|shutdownserver|createuser|grantroles\w*"
                          r"|updateuser)\s*\(")


def _mongo_action(script: str) -> str:
    return "db:admin" if _MONGO_ADMIN.search(script) else "db:write" if _MONGO_WRITE.search(script) else "db:read"


def sql_action(query: str) -> str:
    kinds = []
    for statement in re.sub(r"'[^']*'", "''", query.lower()).split(";"):  # (a ; in a string)
        stripped = re.sub(r"--[^\n]*|/\*.*?\*/", " ", statement, flags=re.S).strip()
        m = _SQL_VERB.match(stripped)
        if not m:
            continue
        verb = m.group(1)
        kinds.append("db:read" if verb in ("select", "with", "explain", "show", "describe",
                                           "desc", "values", "table", "analyze")
                     else "db:read" if verb in ("attach", "detach", "pragma")  # (the file: path rules)
                     else "db:write" if verb in ("insert", "update", "delete", "upsert", "merge",
                                                 "replace", "copy", "begin", "commit",
                                                 "rollback", "set", "vacuum")
                     else "db:create" if _ADDITIVE.match(stripped)
                     else "db:write" if SCRATCH_OBJECT.match(stripped) or _READ_GRANT.match(stripped)
                     else "db:schema" if verb in ("create", "alter", "comment", "reindex",
                                                  "refresh", "cluster")
                     else "db:admin")
    order = ("db:admin", "db:schema", "db:create", "db:write", "db:read")
    return next((k for k in order if k in kinds), "db:read")


def call_action(call: ToolCall, tiers: Mapping[str, RiskTier], internal: tuple[str, ...]
                ) -> str:
    """The call's action type: its tool's, refined by what the arguments do."""
    kind = call.action_type or "unknown"
    if kind == "code:shell":
        return shell_action(call.text("command") or " ".join(call.texts.values()), tiers,
                            internal)
    if kind == "code:python":
        return python_action(call.text("code"), tiers, internal)
    if kind == "net:http":
        method = call.text("method").strip().upper() or "GET"
        if method in ("GET", "HEAD", "OPTIONS"):
            return "net:read"
        outside = [h for h in hosts_in(call.text("url")) if not is_internal(h, internal)]
        return "net:write_external" if outside else "net:write"
    if kind == "db:query":
        return sql_action(call.text("query"))
    if kind in ("comms:email", "comms:message"):
        outside = [h for h in hosts_in(call.text("to") + " ") if not is_internal(h, internal)]
        return "comms:external" if outside else "comms:internal"
    return kind
