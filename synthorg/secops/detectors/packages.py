"""Packages installed: versions known to have shipped malware, names one typing slip away from
a popular package's (typosquats), and where packages and images come from pointed at a host
that is neither the company's nor a public registry."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import hosts_in, image_registry, is_internal

_INSTALL = fast_regex(r"\b(?:npm|yarn|pnpm|bun)\s+(?:i|install|add)\b([^;&|\n]*)"
                      r"|\b(?:pip3?|uv\s+pip|poetry|pipenv)\s+(?:install|add)\b([^;&|\n]*)")
# versions that shipped malware (published advisories)
_COMPROMISED = frozenset({
    "event-stream@3.3.6", "flatmap-stream@0.1.1", "ua-parser-js@0.7.29", "ua-parser-js@0.8.0",
    "ua-parser-js@1.0.0", "colors@1.4.44-liberty-2", "colors@1.4.1", "faker@6.6.6", "node-ipc@10.1.1",
    "node-ipc@10.1.2", "node-ipc@10.1.3", "coa@2.0.3", "coa@2.1.1", "rc@1.2.9", "rc@1.3.9",
    "eslint-scope@3.7.2", "getcookies@1.0.0", "ctx@0.2.6", "ctx@0.2.2"})
# names that typosquats imitate, and names they resemble but are packages of their own
_POPULAR = frozenset({
    "react", "react-dom", "react-router", "react-router-dom", "lodash", "express", "axios", "cross-env",
    "webpack", "vite", "typescript", "eslint", "prettier", "jest", "moment", "chalk", "commander", "dotenv",
    "next", "vue", "request", "jquery", "underscore", "mongoose", "nodemon", "babel-cli", "electron",
    "requests", "numpy", "pandas", "django", "flask", "urllib3", "setuptools", "boto3", "colorama",
    "python-dateutil", "pyyaml", "cryptography", "beautifulsoup4", "matplotlib", "scipy", "pytest",
    "tensorflow", "torch", "pillow", "selenium", "jinja2", "sqlalchemy", "psycopg2", "openai"})
_KNOWN_NEAR = frozenset({"react-native", "preact", "vitest", "vue-router", "nuxt", "next-auth", "torchvision",
                         "pytest-cov", "request-promise", "express-session", "jest-cli", "eslint-config"})


# where a project's packages or a service's image come from: an index, a registry, a source,
# a replaced module, a dependency's tarball or git URL, an image set or built on
_SOURCE = fast_regex(
    r"\b(?:extra-)?index-url\s*[= ]\s*[\"']?(\S+)|\bregistry\s*[= ]\s*[\"']?(https?://\S+)|\bnpm\s+config\s+set\s+registry\s+(\S+)"
    r"|(?:^|;)\s*source\s+[\"'](\S+?)[\"']|(?:^|;)\s*replace\s+\S+\s*=>\s*(\S+)|[\"'](?:git\+)?(https?://[^\"'\s]+?(?:\.git|\.tgz|\.tar\.gz))[\"']"
    r"|[\"']resolved[\"']\s*:\s*[\"'](https?://[^\"']+)|\bset\s+image\s+\S+\s+[\w-]+=(\S+)"
    r"|(?:^|;)\s*from\s+(?:--platform=\S+\s+)?(\S+)|(?:^|;)\s*-?\s*image:\s*[\"']?(\S+?)[\"']?\s*(?:;|$)"
    r"|\bgo\s+(?:run|install|get)\s+(\S+?)@|\bhelm\s+repo\s+add\s+\S+\s+(\S+)", re.M)  # (a view's lines are joined by " ; ")
# public registries and package hosts (a company's own are its internal domains)
_PUBLIC_SOURCES = ("npmjs.org", "npmjs.com", "yarnpkg.com", "pypi.org", "pythonhosted.org", "rubygems.org",
                   "golang.org", "go.dev", "gopkg.in", "googlesource.com", "github.com", "githubusercontent.com",
                   "gitlab.com", "bitbucket.org", "docker.io", "docker.com", "ghcr.io", "gcr.io", "pkg.dev", "quay.io",
                   "k8s.io", "mcr.microsoft.com", "azurecr.io", "amazonaws.com", "public.ecr.aws", "maven.org",
                   "apache.org", "crates.io", "nuget.org", "jsdelivr.net", "unpkg.com", "conda.anaconda.org",
                   "anaconda.org", "pytorch.org", "nvcr.io", "registry.terraform.io", "hashicorp.com")


def _registry_host(value: str) -> str | None:
    """The host a source value names: a URL's, or an image's registry (`host.tld/repo:tag`)."""
    value = value.strip("\"',;")
    if "://" in value:
        hosts = sorted(hosts_in(value + " "))
        return hosts[0] if hosts else None
    return image_registry(value)


def _outside_source(views: tuple[str, ...], internal: Iterable[str]) -> str | None:
    for v in views:
        for m in _SOURCE.finditer(v):
            host = _registry_host(next(g for g in m.groups() if g))
            if host and not is_internal(host, internal) and not host.endswith(_PUBLIC_SOURCES) \
                    and host not in ("localhost", "127.0.0.1") and not host.replace(".", "").isdigit():
                return host
    return None


# a package's install hook that fetches or evaluates code: it runs on every machine that installs it
_INSTALL_HOOK = fast_regex(r"[\"'](?:pre|post)?install[\"']\s*:\s*[\"'][^\n]*?(?:\bcurl\b|\bwget\b|https?://|\beval\b|child_process|node\s+-e)")


def package_findings(call: ToolCall, views: tuple[str, ...], internal: Iterable[str] = ()) -> Iterator[Finding]:
    if call.action_type == "fs:write" and call.text("path").endswith("package.json") and any(
            _INSTALL_HOOK.search(v) for v in views):
        yield Finding("supply_chain.install_hook", False, "adds an install hook that fetches or runs code on every "
                      "machine that installs the package", RiskTier.high)
        return
    if call.action_type in ("code:shell", "fs:write") and (host := _outside_source(views, internal)):
        yield Finding("supply_chain.outside_source", False, f"takes packages or images from {host}, neither "
                      "the company's nor a public registry", RiskTier.high)
        return
    if call.action_type != "code:shell":
        return
    for v in views:
        for m in _INSTALL.finditer(v) if "install" in v or " add" in v or " i " in v else ():
            for word in (m.group(1) or m.group(2) or "").split():
                word = word.strip("'\"")
                if word.startswith("-") or "/" in word.lstrip("@").split("@", 1)[-1] or "://" in word:
                    continue
                name, version = _name_version(word)
                if f"{name}@{version}" in _COMPROMISED:
                    yield Finding("supply_chain.compromised_version", True,
                                  f"installs {name}@{version}, a version that shipped malware", RiskTier.high)
                    return
                near = _imitated(name)
                if near is not None:
                    yield Finding("supply_chain.typosquat", False, f"installs {name}, one slip away from "
                                  f"{near}", RiskTier.high)
                    return


def _name_version(word: str) -> tuple[str, str]:
    """npm's name@version (@scope/name@version) or pip's name==version."""
    if "==" in word:
        name, _, version = word.partition("==")
        return name.lower(), version
    name, at, version = word.rpartition("@") if word.count("@") > word.startswith("@") else (word, "", "")
    return (name if at else word).lower(), version


def _imitated(name: str) -> str | None:
    """The popular package `name` imitates: one letter added, dropped, changed or swapped, or a
    hyphen removed (None when `name` is popular itself, or well known)."""
    name = re.split(r"[<>=!~\[]", name, maxsplit=1)[0]
    if not name or name in _POPULAR or name in _KNOWN_NEAR or name.startswith("@"):
        return None
    for popular in _POPULAR:
        if len(popular) >= 4 and (name.replace("-", "") == popular.replace("-", "") or _one_slip(name, popular)):
            return popular
    return None


def _one_slip(a: str, b: str) -> bool:
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))
