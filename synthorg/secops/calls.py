"""A tool call as SecOps sees it, and what it finds in one."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import unquote

from synthorg.domain.enums import RiskTier
from synthorg.secops.normalise import views

DEFAULT_WORKSPACE = "/workspace"


@dataclass(frozen=True)
class ToolCall:
    tool: str
    arguments: Mapping[str, object]
    task: str = ""  # the text of the task the call is made for: where injections hide
    workspace: str = DEFAULT_WORKSPACE
    action_type: str = ""  # the tool's category:action ("" when the catalog does not know it)
    # under a shared workspace root, the folders of the caller's colleagues (their agent ids):
    # a path into one of them is outside the caller's own work
    colleagues: frozenset[str] = frozenset()
    # the caller's own agent id when known: a folder so named outside the workspace (a shared
    # mount's checkpoints/eng-0004/, a cluster's /user/eng-0004/) is its own
    owner: str = ""
    # the company's shared folders outside the workspace (policies.security.shared_folders)
    shared: tuple[str, ...] = ()

    def shared_folder(self, path: str) -> bool:
        """Whether the absolute `path` lies in one of the company's shared folders."""
        return any(path == f or path.startswith(f + "/") for f in self.shared)

    def own_folder(self, path: str) -> bool:
        """Whether the absolute `path` lies in a folder named for the caller."""
        return bool(self.owner) and f"/{self.owner}/" in path + "/"

    def colleague_path(self, path: str) -> bool:
        """Whether the absolute `path` reaches into a colleague's folder of the workspace (a
        glob over the folders reaches every one)."""
        if not self.colleagues or not path.startswith(self.workspace.rstrip("/") + "/"):
            return False
        first = path[len(self.workspace.rstrip("/")) + 1:].split("/", 1)[0]
        return first in self.colleagues or (first.startswith(("*", "?", "[")) and bool(first))

    def text(self, name: str) -> str:
        value = self.arguments.get(name, "")
        text = value if isinstance(value, str) else json.dumps(value)
        return _as_served(text) if name == "url" and "%" in text else text

    @cached_property
    def texts(self) -> dict[str, str]:
        return {name: self.text(name) for name in self.arguments}

    @cached_property
    def argument_views(self) -> dict[str, tuple[str, ...]]:
        return {name: views(text) for name, text in self.texts.items()}

    @cached_property
    def all_views(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for vs in self.argument_views.values():
            seen.update(dict.fromkeys(vs))
        return tuple(seen)

    def key(self) -> str:
        """The call as a cache key: what the verdict depends on."""
        return json.dumps([self.tool, self.action_type, self.texts, self.task, self.workspace,
                           sorted(self.colleagues), self.owner, self.shared], sort_keys=True)


@dataclass(frozen=True)
class Finding:
    rule: str  # family.what, e.g. "destructive.recursive_delete_outside_workspace"
    block: bool  # a hard rule: denied whatever the autonomy or approval; else uncertain
    reason: str
    tier: RiskTier = field(default=RiskTier.critical)


def _as_served(url: str) -> str:
    """A URL's path as the server reads it, percent-encoding undone (`_delete_%62y_query` is
    `_delete_by_query`); the query string, whose encoding separates values, as written."""
    path, mark, query = url.partition("?")
    return unquote(path) + mark + query
