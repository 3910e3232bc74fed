"""Where a call reaches: the paths it names (inside the agent's workspace or not) and the
hosts it talks to (inside the company or not)."""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import posixpath
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import unquote

from synthorg.secops.normalise import fast_regex, words

# outside the workspace but harmless to name: scratch space, the null device, system facts
HARMLESS_PATHS = ("/tmp", "/var/tmp", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin",
                  "/dev/urandom", "/dev/random", "/etc/os-release", "/etc/hostname",
                  "/etc/timezone", "/etc/localtime", "/proc/cpuinfo", "/proc/meminfo",
                  "/proc/loadavg", "/proc/uptime", "/usr/share/doc", "/usr/share/dict", "/dev/zero",
                  "/root/.cache")  # (tools' downloads; a token kept there is a credential file all the same)
# outside the workspace, harmless to read but not to write: programs and their libraries
READABLE_PATHS = ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin", "/usr/lib", "/lib",
                  "/lib64", "/usr/include", "/usr/share", "/usr/local/lib", "/sys/fs/cgroup",
                  # the machine's own description: its name resolution, OS and hardware
                  "/etc/resolv.conf", "/etc/hosts", "/etc/hostname", "/etc/os-release", "/etc/debian_version",
                  "/etc/timezone", "/etc/localtime", "/proc/cpuinfo", "/proc/meminfo", "/proc/loadavg",
                  "/proc/version", "/proc/uptime", "/proc/sys/kernel", "/proc/sys/fs", "/proc/sys/vm")
# the top-level folders a system has (a lone "/word" elsewhere is no path anyone reaches)
KNOWN_TOP = frozenset({"/etc", "/root", "/home", "/proc", "/sys", "/dev", "/boot", "/var", "/usr",
                        "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/opt", "/srv", "/mnt", "/media",
                        "/run", "/snap", "/tmp", "/workspace", "/data", "/app", "/backup", "/backups",
                        "/secrets", "/private", "/shared", "/export", "/nfs", "/volumes", "/config"})


def on_file_system(word: str) -> bool:
    """Whether a word that is a value (an array's, a loop's) names a place a file system has:
    ~/.ssh, ../x, /etc/..., not a web route like /healthz or /v1/status."""
    word = word.strip("\"'()")
    if word.startswith(("~", "..", "$")) or not word.startswith("/"):
        return True
    return "/" + word[1:].split("/", 1)[0] in KNOWN_TOP


# outside the workspace and sensitive: system configuration, other users, the kernel, binaries
SENSITIVE_ROOTS = ("/etc", "/root", "/home", "/proc", "/sys", "/dev", "/boot", "/var", "/usr",
                   "/bin", "/sbin", "/lib", "/lib64", "/opt", "/srv", "/mnt", "/media", "/run",
                   "/snap", "/")
_PRIVATE = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12",
                                                    "192.168.0.0/16", "fc00::/7"))
INTERNAL_SUFFIXES = (".internal", ".local", ".corp", ".lan", ".intranet", ".home.arpa",
                     ".cluster.local", ".svc")

_URL_HOST = fast_regex(r"\b(?:https?|ftps?|wss?|sftp|scp|ssh|git|s3|gs)://(?:[^@/\s]*@)?"
                       r"(\[[0-9a-f:]+\]|[a-z0-9][a-z0-9.\-_]*)")
_USER_HOST = fast_regex(r"(?<![\w.@/-])[a-z0-9._\-]+@([a-z0-9][a-z0-9.\-]*\.[a-z]{2,}|"
                        r"\d{1,3}(?:\.\d{1,3}){3})(?=[:\s\"'>,;)]|$)")
# a mail address; its group is the domain
MAIL_ADDRESS = fast_regex(r"(?<![\w.+-])[\w.+-]+@([\w-]+(?:\.[\w-]+)+)")  # (a match starts where its name does: linear, not quadratic, on a long run)
# a URL on the agent's own machine
LOCAL_URL = re.compile(r"\w+://(?:[^@/]*@)?(?:localhost|127\.0\.0\.1|\[::1\])(?:[:/]|$)")
_DEV_TCP = fast_regex(r"/dev/(?:tcp|udp)/([^/\s]+)/")
# (the look-behind follows the first digit: a search then skips to digits)
_BARE_IP = fast_regex(r"(\d(?<![\w.]\d)\d{0,2}(?:\.\d{1,3}){3})(?![\w.])")
_CONNECTED_HOST = fast_regex(r"\b(?:https?connection|create_connection|smtp(?:_ssl)?|ftp(?:_tls)?|transport|connect"
                             r"|imap4(?:_ssl)?|pop3(?:_ssl)?|telnet)\(\s*\(?\s*[\"']([a-z0-9\-]+(?:\.[a-z0-9\-]+)+"
                             r"|[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7})[\"']")  # (or an IPv6 address)
# a name looked up with data in front of it: f'{chunk}.x.exfil.example'
_LOOKED_UP_HOST = fast_regex(r"\b(?:gethostbyname(?:_ex)?|getaddrinfo|resolve|query)\(\s*f[\"'][^\"']*\}\.(?:[a-z0-9\-]+\.)*?"
                             r"((?:[a-z0-9\-]+\.)[a-z]{2,})[\"']")
_NET_CMD_HOST = fast_regex(
    r"\b(?:nc|ncat|netcat|socat|telnet|ssh|scp|sftp|rsync|ftp|lftp|dig|nslookup|host|ping|"
    r"curl|wget)\b[^|;&]*?\s(?:\S*[)`]\.|\$\{?\w+\}?\.|(?:%|\{\}|_)\.)?(?:[a-z0-9._\-]+@)?((?:[a-z0-9\-]+\.)+[a-z]{2,}|"
    r"\d{1,3}(?:\.\d{1,3}){3})\b(?!\.?\w*\()")  # (r.stderr.strip() is a call, not a host)
# socat's addresses: TCP:host:port, OPENSSL-CONNECT:host:port (a pattern of its own: as one more
# alternative above it doubled the time of every search)
_SOCAT_HOST = fast_regex(r"\b(?:tcp|udp|ssl|openssl|sctp)[46]?(?:-connect)?:((?:[a-z0-9\-]+\.)+[a-z]{2,}|\d{1,3}(?:\.\d{1,3}){3}):\d")


# where a command starts (host and ping are words too: a Python tuple (host, port) is none)
_COMMAND_START = re.compile(r"(?:^|[;&|`]|\$\(|\b(?:do|then|else|sudo|xargs|exec|nohup|time|watch|env))\s*$")
_DOTS_ONLY = re.compile(r"(?<![^/])\.{3,}(?![^/])")


def clean_path(path: str) -> str:
    """A path as the file system will see it once a server or a shell has decoded it:
    percent-encoding undone (twice-encoded too), look-alike Unicode folded (fullwidth dots),
    Windows separators turned, and `....` segments (left as `..` by filters that strip `../`
    once) read as `..`."""
    for _ in range(3):
        if "%" not in path:
            break
        path = unquote(path)
    if not path.isascii():
        path = unicodedata.normalize("NFKC", path)
    path = path.replace("\\", "/")
    return _DOTS_ONLY.sub("..", path) if "..." in path else path


def climbs(path: str) -> bool:
    """Whether the (cleaned) path has a `..` segment."""
    return ".." in clean_path(path).split("/")


def resolve(path: str, workspace: str) -> str:
    """An absolute, normalised path (relative ones are inside the workspace)."""
    path = clean_path(path.strip().strip("\"'"))
    if path.startswith("~"):
        path = "/root" + path[1:]
    if not path.startswith("/"):
        path = posixpath.join(workspace, path)
    return posixpath.normpath(path)


def inside(path: str, root: str) -> bool:
    root = posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


_HARMLESS_PREFIXES = tuple(p + "/" for p in HARMLESS_PATHS)
# outside the workspace, harmless to read: the public certificates the machine trusts
_TRUSTED_CERTIFICATES = ("/etc/ssl/certs/", "/etc/pki/ca-trust/", "/usr/share/ca-certificates/")
# outside the workspace, harmless to read: the name of the pod's namespace (not the token beside it)
_HARMLESS_FILES = frozenset(f"{r}/secrets/kubernetes.io/serviceaccount/namespace" for r in ("/run", "/var/run"))
# the machine's own configuration, logs, programs and kernel views: what a reader learns may
# help an attack (its settings, who signed in), so a person is asked; data stores, homes,
# sockets, devices and backups (/srv, /home, /root, /run, /dev, /var/lib...) stay refused
_SYSTEM_ROOTS = ("/etc/", "/var/log/", "/usr/", "/opt/", "/proc/", "/sys/", "/boot/", "/lib/systemd/")


def place_of(path: str, workspace: str) -> str:
    """`workspace`, `harmless` or `sensitive` (absolute `path`, resolved); what a read of a
    sensitive one is: `read_place`."""
    if inside(path, workspace):
        return "workspace"
    if path != "/" and path.count("/") == 1 and path not in KNOWN_TOP and "." not in path:
        return "harmless"
    if path in HARMLESS_PATHS or path.startswith(_HARMLESS_PREFIXES):
        return "harmless"
    return "sensitive"


# the machine's configuration that an administrator changes (a service's config, a pg_hba rule),
# for a person to approve; not what decides who may sign in or what runs as whom
_CHANGED_BY_ADMINS = "/etc/"
_GUARDED_CONFIG = re.compile(r"/etc/(?:passwd|shadow|gshadow|group|sudoers|ssh/|pam\.d|security/|cron|anacrontab|systemd/"
                             r"|init\.d|rc\.local|profile|bash\.bashrc|environment|ld\.so|hosts(?:\.allow|\.deny)?$|resolv\.conf"
                             r"|nsswitch|apt/sources|yum\.repos|pki/|ssl/|kubernetes/pki|docker/daemon|fstab|sysctl|modprobe"
                             # (and the machine's own guards: its logging, auditing and confinement)
                             r"|rsyslog|syslog|audit|apparmor|selinux|edr|falco|secops|fail2ban|nftables|iptables|ufw)")


def admin_changes(path: str) -> bool:
    """Whether a write to `path` (outside the workspace) is an administrator's change of a
    service's configuration, asked for rather than refused."""
    return path.startswith(_CHANGED_BY_ADMINS) and not _GUARDED_CONFIG.match(path)


def read_place(path: str) -> str:
    """For a read outside the workspace (of a `sensitive` path): `harmless` (a trusted
    certificate), `system` (the machine's configuration, logs and programs) or `sensitive`."""
    if path.startswith(_TRUSTED_CERTIFICATES) or path in _HARMLESS_FILES:
        return "harmless"
    return "system" if path.startswith(_SYSTEM_ROOTS) else "sensitive"


def image_registry(ref: str) -> str | None:
    """The registry an image reference names first (`host.tld[:port]/repo:tag`, `localhost/x`);
    None when it names none (Docker Hub)."""
    first = ref.split("/", 1)[0] if "/" in ref else ""
    return first.split(":", 1)[0] if "." in first or ":" in first or first == "localhost" else None


def canonical_host(host: str) -> str:
    """An IPv4 address written as one number, in hex or in octal parts (2852039166,
    0xa9fea9fe, 0251.0376.0251.0376) as the dotted quad a resolver makes of it."""
    host = host.lower().rstrip(".")
    if not host or not (host[0].isdigit()) or not re.fullmatch(r"[0-9a-fx.]+", host):
        return host
    try:
        parts = [int(p, 0) if not re.fullmatch(r"0\d+", p) else int(p, 8)
                 for p in host.split(".")]
    except ValueError:
        return host
    if len(parts) == 1 and 0 < parts[0] < 2**32:
        return str(ipaddress.IPv4Address(parts[0]))
    if len(parts) == 4 and all(0 <= p < 256 for p in parts):
        return ".".join(map(str, parts))
    return host


# cloud storage named by its bucket or account: the host it is reached at
_BUCKET = fast_regex(r"\b(s3|gs)://([a-z0-9][a-z0-9.\-_]*)|--account-name[= ]([a-z0-9]+)"
                     r"|\b(?:upload_file|upload_fileobj)\(\s*[^,()]+,\s*[\"']([a-z0-9][a-z0-9.\-]*)[\"']"
                     r"|\bbucket\s*=\s*[\"']([a-z0-9][a-z0-9.\-]*)[\"']")
STORAGE_SUFFIXES = {"s3": ".s3.amazonaws.com", "gs": ".storage.googleapis.com",
                    "azure": ".blob.core.windows.net", "boto3": ".s3.amazonaws.com"}


def buckets_in(text: str) -> set[str]:
    """Cloud storage a text names (`s3://name`, `--account-name name`, boto3's Bucket),
    as the host it lives at (name.s3.amazonaws.com)."""
    found = set()
    for m in _BUCKET.finditer(text):
        scheme, name = (m.group(1), m.group(2)) if m.group(1) else \
            ("azure", m.group(3)) if m.group(3) else ("boto3", m.group(4) or m.group(5))
        found.add(name.rstrip(".") + STORAGE_SUFFIXES[scheme])
    return found


# an IPv4 address written as one number, given to a command that connects (no port is so long)
_NUMERIC_HOST = fast_regex(r"\b(?:nc|ncat|netcat|telnet|ssh|scp|sftp|rsync|ping)\b[^|;&]*?\s(?:[a-z0-9._\-]+@)?"
                           r"(0x[0-9a-f]{8}|[1-9]\d{7,9})(?![\w.])")


def hosts_in(text: str) -> set[str]:
    text = text.lower()  # (patterns without re.I: a case-blind search cannot skip ahead)
    urls = {canonical_host(m.group(1).strip("[]")) for m in _URL_HOST.finditer(text)
            if m.group(0).split(":", 1)[0] not in ("s3", "gs")} if "://" in text else set()
    if "s3://" in text or "gs://" in text or "account-name" in text or "bucket" in text \
            or "upload_file" in text:
        urls |= buckets_in(text)
    found = {m.group(1) for m in _USER_HOST.finditer(text)} if "@" in text else set()
    if "/dev/" in text:
        found |= {m.group(1) for m in _DEV_TCP.finditer(text)}
    if "socat" in text:
        found |= {m.group(1) for m in _SOCAT_HOST.finditer(text)}
    found |= {m.group(1) for m in _NET_CMD_HOST.finditer(text)
              if not (text.startswith(("host", "ping"), m.start())
                      and not _COMMAND_START.search(text[max(0, m.start() - 12):m.start()]))}
    found |= {m.group(1) for m in _BARE_IP.finditer(text)}
    found |= {canonical_host(m.group(1)) for m in _NUMERIC_HOST.finditer(text)}  # nc 3325256727
    if "(" in text:
        found |= {m.group(1) for m in _CONNECTED_HOST.finditer(text)}
        if "{" in text:
            found |= {m.group(1) for m in _LOOKED_UP_HOST.finditer(text)}
    # a URL's host is a host even when it ends like a file (transfer.sh, a .zip domain)
    return urls | {h.rstrip(".") for h in found
                   if h and h.rsplit(".", 1)[-1] not in _FILE_EXTENSIONS}


def is_metadata_host(host: str) -> bool:
    """A cloud instance-metadata service, where a machine's credentials are handed out."""
    host = canonical_host(host)
    if ":" in host:
        try:  # ::ffff:a9fe:a9fe is 169.254.169.254
            mapped = ipaddress.ip_address(host.strip("[]")).ipv4_mapped  # type: ignore[union-attr]
        except (ValueError, AttributeError):
            mapped = None
        host = str(mapped) if mapped is not None else host
    return (host.startswith("169.254.") or host in ("metadata.google.internal", "metadata",
            "fd00:ec2::254", "100.100.100.200") or host.endswith(".metadata.google.internal"))


def _company_bucket(name: str, internal_domains: Iterable[str]) -> bool:
    """A bucket is the company's when its name carries the company's name (acme-artifacts
    for acme.example); with no company domains configured, any bucket is given the benefit."""
    labels = {d.lower().lstrip(".").split(".")[0] for d in internal_domains} - {"internal", "local", "corp"}
    return not labels or any(label in name for label in labels)


_FILE_EXTENSIONS = frozenset(words("""gz tgz bz2 xz zip tar py json txt md log csv sh
yaml yml toml js ts html css bin so whl xml sql db lock cfg ini conf pem key crt rst ipynb
png jpg svg pdf env parquet"""))


def is_internal(host: str, internal_domains: Iterable[str]) -> bool:
    """Whether `host` is the company's: its own network, domains or buckets."""
    return _is_internal(host, tuple(internal_domains))


@functools.lru_cache(maxsize=4096)  # a call asks of the same few hosts several times
def _is_internal(host: str, internal_domains: tuple[str, ...]) -> bool:
    host = host.lower().rstrip(".")
    storage = next((host[:-len(s)] for s in STORAGE_SUFFIXES.values() if host.endswith(s)), None)
    if storage is not None:
        return _company_bucket(storage, internal_domains)
    if host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.endswith(".localhost"):
        return True
    ip = None
    if host[:1].isdigit() or ":" in host:  # (a failed parse raises twice over: costly)
        with contextlib.suppress(ValueError):
            ip = ipaddress.ip_address(host)
    if ip is not None:  # the company's private ranges (not documentation or link-local ones)
        return ip.is_loopback or any(ip in net for net in _PRIVATE)
    if re.fullmatch(r"[\d.]+", host):
        return True  # a version number or similar, not a host
    if "." not in host:
        return True  # a single-label name: a service on the company's network
    domains = tuple(d.lower().lstrip(".") for d in internal_domains)
    return (host.endswith(INTERNAL_SUFFIXES)
            or any(host == d or host.endswith("." + d) for d in domains))
