"""Which of a call's views may be run: a message's words and prose written to a file are
data (read for secrets only), not code."""

from __future__ import annotations

import re

from synthorg.secops.calls import ToolCall
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import place_of, resolve

_PROSE = fast_regex(r"\.(?:md|markdown|txt|rst|adoc|html?|csv|log|tmp|ipynb)$|(?:^|/)\.gitignore$"
                    r"|(?:^|/)(?:readme|changelog|license|notes?)\b", re.I)
TEXT_ARGUMENTS = ("text", "subject", "body", "message")
MESSAGE_ACTIONS = ("comms:email", "comms:message")


def code_views(call: ToolCall) -> tuple[str, ...]:
    """The views that may be run: not what a message says, nor prose written to a file
    (those are read for secrets only)."""
    skip = set(TEXT_ARGUMENTS) if call.action_type in MESSAGE_ACTIONS else set()
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
