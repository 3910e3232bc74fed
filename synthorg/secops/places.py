"""Where a call reaches: the paths it names (inside the agent's workspace or not) and the
hosts it talks to (inside the company or not)."""

from __future__ import annotations

import ipaddress
import posixpath
import re
from collections.abc import Iterable

from synthorg.secops.normalise import words

# outside the workspace but harmless to name: scratch space, the null device, system facts
HARMLESS_PATHS = ("/tmp", "/var/tmp", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin",
                  "/dev/urandom", "/dev/random", "/etc/os-release", "/etc/hostname",
                  "/etc/timezone", "/etc/localtime", "/proc/cpuinfo", "/proc/meminfo",
                  "/proc/loadavg", "/proc/uptime", "/usr/share/doc", "/usr/share/dict")
# outside the workspace and sensitive: system configuration, other users, the kernel, binaries
SENSITIVE_ROOTS = ("/etc", "/root", "/home", "/proc", "/sys", "/dev", "/boot", "/var", "/usr",
                   "/bin", "/sbin", "/lib", "/lib64", "/opt", "/srv", "/mnt", "/media", "/run",
                   "/snap", "/")
_PRIVATE = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12",
                                                    "192.168.0.0/16", "fc00::/7"))
INTERNAL_SUFFIXES = (".internal", ".local", ".corp", ".lan", ".intranet", ".home.arpa",
                     ".cluster.local", ".svc")

_URL_HOST = re.compile(r"\b(?:https?|ftps?|wss?|sftp|scp|ssh|git|s3|gs)://(?:[^@/\s]*@)?"
                       r"(\[[0-9a-f:]+\]|[a-z0-9][a-z0-9.\-_]*)", re.I)
_USER_HOST = re.compile(r"(?<![\w.@/-])[a-z0-9._\-]+@([a-z0-9][a-z0-9.\-]*\.[a-z]{2,}|"
                        r"\d{1,3}(?:\.\d{1,3}){3})(?=[:\s\"'>,;)]|$)", re.I)
_DEV_TCP = re.compile(r"/dev/(?:tcp|udp)/([^/\s]+)/", re.I)
_BARE_IP = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?![\w.])")
_NET_CMD_HOST = re.compile(
    r"\b(?:nc|ncat|netcat|socat|telnet|ssh|scp|sftp|rsync|ftp|dig|nslookup|host|ping|"
    r"curl|wget)\b[^|;&]*?\s(?:\S*[)`]\.)?(?:[a-z0-9._\-]+@)?((?:[a-z0-9\-]+\.)+[a-z]{2,}|"
    r"\d{1,3}(?:\.\d{1,3}){3})\b", re.I)


def resolve(path: str, workspace: str) -> str:
    """An absolute, normalised path (relative ones are inside the workspace)."""
    path = path.strip().strip("\"'")
    if path.startswith("~"):
        path = "/root" + path[1:]
    if not path.startswith("/"):
        path = posixpath.join(workspace, path)
    return posixpath.normpath(path)


def inside(path: str, root: str) -> bool:
    root = posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def place_of(path: str, workspace: str) -> str:
    """`workspace`, `harmless` or `sensitive` (absolute `path`, resolved)."""
    if inside(path, workspace):
        return "workspace"
    if any(inside(path, p) for p in HARMLESS_PATHS):
        return "harmless"
    return "sensitive"


def hosts_in(text: str) -> set[str]:
    found = {m.group(1).lower().strip("[]") for m in _URL_HOST.finditer(text)}
    found |= {m.group(1).lower() for m in _USER_HOST.finditer(text)}
    found |= {m.group(1).lower() for m in _DEV_TCP.finditer(text)}
    found |= {m.group(1).lower() for m in _NET_CMD_HOST.finditer(text)}
    found |= {m.group(1) for m in _BARE_IP.finditer(text)}
    return {h.rstrip(".") for h in found if h and h.rsplit(".", 1)[-1] not in _FILE_EXTENSIONS}


_FILE_EXTENSIONS = frozenset(words("""gz tgz bz2 xz zip tar py json txt md log csv sh
yaml yml toml js ts html css bin so whl xml sql db lock cfg ini conf pem key crt rst ipynb
png jpg svg pdf env parquet"""))


def is_internal(host: str, internal_domains: Iterable[str]) -> bool:
    host = host.lower().rstrip(".")
    if host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None:  # the company's private ranges (not documentation or link-local ones)
        return ip.is_loopback or any(ip in net for net in _PRIVATE)
    if re.fullmatch(r"[\d.]+", host):
        return True  # a version number or similar, not a host
    if "." not in host:
        return True  # a single-label name: a service on the company's network
    domains = tuple(d.lower().lstrip(".") for d in internal_domains)
    return (host.endswith(INTERNAL_SUFFIXES)
            or any(host == d or host.endswith("." + d) for d in domains))
