"""Which of a call's views may be run: a message's words and prose written to a file are
data (read for secrets only), not code."""

from __future__ import annotations

import re
from dataclasses import replace

from synthorg.secops.calls import ToolCall
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import place_of, resolve

_PROSE = fast_regex(r"\.(?:md|markdown|txt|rst|adoc|html?|csv|log|tmp|ipynb)$|(?:^|/)\.(?:git|docker|npm|helm|gcloud|slug|vercel)ignore$"
                    r"|(?:^|/)(?:readme|changelog|license|notes?)\b", re.I)
TEXT_ARGUMENTS = ("text", "subject", "body", "message")
# a comment, a review or a note posted through an API: prose for people
_POSTS_COMMENT = fast_regex(r"/(?:comments?|reviews?|notes?|replies|messages|posts|dm(?:/[\w.-]+)?|content/\d+|pages(?:/[\w-]+)?"
                            r"|campaigns?/[\w-]+|broadcasts?|newsletters?|announcements?)(?:$|[/?])")
MESSAGE_ACTIONS = ("comms:email", "comms:message")
RELAYED = "relayed_command"  # the tool of a command a message asks a colleague to run


# a test of the project's own: what it lists in strings are the cases it tests
_TEST_FILE = fast_regex(r"(?:^|/)(?:tests?|spec|__tests__|testdata)/(?![\w/.-]*conftest\.py$)[^/]*[\w/.-]*\.(?:py|js|ts|go|rb|java|rs)$"
                        r"|(?:^|/)test_[\w-]*\.py$|_test\.(?:py|go)$|\.(?:test|spec)\.[jt]sx?$")
_COMMENTED = fast_regex(r"\.(?:ya?ml|toml|ini|cfg|conf|properties|env|sh|bash|tf|hcl|example|sample|template|dist)$|(?:^|/)(?:dockerfile|makefile"
                        r"|\.gitignore|\.dockerignore|requirements[\w.-]*\.txt)$")
# a detection rule's file (sigma, falco, yara, suricata, osquery packs): data about attacks
_DETECTION_FILE = fast_regex(r"(?:^|/)(?:sigma|falco|yara|detections?|signatures?|snort|suricata|osquery|semgrep|rules?)"
                             r"(?:/|\.d/)[^/]*[\w/.-]*\.(?:ya?ml|yar|yara|rules?|conf|json|toml)$|\.(?:yar|yara)$")
_SWITCH_LINE = re.compile(r"^.*\b(?:enabled|disabled|action|mode|state|status)\b.*$", re.M | re.I)
_COMMENT_LINE = re.compile(r"^[ \t]*#(?!!).*$", re.M)
_LITERAL = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')


def as_test_data(call: ToolCall) -> ToolCall:
    """A file written, read for what it does: a test's string literals blanked (the paths,
    commands and payloads a test lists are cases it checks), a config file's or a script's
    comment lines dropped (a comment configures and runs nothing)."""
    if call.action_type != "fs:write":
        return call
    path = call.text("path").lower()
    if _TEST_FILE.search(path):
        content = _LITERAL.sub('""', call.text("content"))
    elif _DETECTION_FILE.search(path):  # what a detection rule matches is the attack it looks for;
        content = "\n".join(_SWITCH_LINE.findall(call.text("content")))  # whether it runs is the rule's
    elif _COMMENTED.search(path) and "#" in call.text("content"):
        content = _COMMENT_LINE.sub("", call.text("content"))
    else:
        return call
    return replace(call, arguments={**call.arguments, "content": content})


_JOB_SCRIPT = re.compile(r"[\"'](?:script|scripts|command|commands|cmd|run|shell|exec|steps|entrypoint|args)[\"']\s*:")


def code_views(call: ToolCall) -> tuple[str, ...]:
    """The views that may be run: not what a message says, nor prose written to a file
    (those are read for secrets only)."""
    skip = set(TEXT_ARGUMENTS) if call.action_type in MESSAGE_ACTIONS else set()
    if call.action_type == "fs:write" and _PROSE.search(call.text("path")):
        skip.add("content")
    if call.action_type in ("fs:write", "fs:delete") and place_of(
            resolve(call.text("path"), call.workspace), call.workspace) == "workspace":
        skip.add("path")  # a file of the workspace's own (the path rules judge where it is)
    if call.action_type == "net:http" and not _JOB_SCRIPT.search(call.text("body").lower()):
        skip.add("body")  # (a job's script, posted to a build or job service, runs there)
    seen: dict[str, None] = {}
    for name, vs in call.argument_views.items():
        if name not in skip:
            seen.update(dict.fromkeys(vs))
    return tuple(seen)


def writes_prose(call: ToolCall) -> bool:
    """A message, a note written to a prose file, or a comment posted through an API: words
    for people, which may name an attack to report it."""
    return call.action_type in MESSAGE_ACTIONS or (
        call.action_type == "fs:write" and bool(_PROSE.search(call.text("path")))) or (
        call.action_type == "net:http" and bool(_POSTS_COMMENT.search(call.text("url").lower())))
