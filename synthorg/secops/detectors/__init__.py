"""The fast path's detectors: deterministic checks of a call's arguments, one family a
module.

Each detector reads the call's views (normalise.py: the arguments with quoting, escaping,
substitutions, variables, encodings and comments taken off) and returns findings: a
*blocking* finding is a hard rule (denied whatever the agent's autonomy or an approval), an
*uncertain* one goes to the slow path. Patterns are written for views: lower-case, one
space between words.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.books import book_findings
from synthorg.secops.detectors.call_views import (
    MESSAGE_ACTIONS,
    RELAYED,
    TEXT_ARGUMENTS,
    as_test_data,
    code_views,
    writes_prose,
)
from synthorg.secops.detectors.controls import control_findings
from synthorg.secops.detectors.credentials import SECRET_FILE, secret_findings
from synthorg.secops.detectors.destructive import destructive_findings
from synthorg.secops.detectors.forbidden import forbidden_findings
from synthorg.secops.detectors.injection import injection_findings, written_mark
from synthorg.secops.detectors.money import money_findings
from synthorg.secops.detectors.network import network_findings
from synthorg.secops.detectors.organisation import organisation_findings
from synthorg.secops.detectors.outgoing_messages import message_findings
from synthorg.secops.detectors.oversight import oversight_findings
from synthorg.secops.detectors.packages import package_findings
from synthorg.secops.detectors.paths import path_findings
from synthorg.secops.detectors.patterns import REPORTING_WORDS, joined
from synthorg.secops.detectors.people import people_findings
from synthorg.secops.detectors.privacy import privacy_findings
from synthorg.secops.detectors.privilege import privilege_findings
from synthorg.secops.detectors.resource import abuse_findings
from synthorg.secops.detectors.task_fit import task_fit_findings
from synthorg.secops.normalise import fast_regex

__all__ = ["findings"]

# a message that asks its reader to run something
_ASKS_TO_RUN = fast_regex(r"\b(?:please|pls|can\s+you|could\s+you|you\s+(?:need|have)\s+to|you\s+must|go\s+ahead\s+and)\s+"
                          r"(?:\w+\s+){0,3}?(?:run|execute|paste|type|launch|start)\b|\b(?:run|execute|paste|start|launch)\s+(?:this|these"
                          r"|the\s+following|it|that)\b|\b(?:run|execute)\b[^.\n]{0,60}:\s"
                          r"|\b(?:just|simply|says|said|wants\s+you\s+to)\s+(?:\w+\s+){0,2}?(?:run|execute)\b|\b(?:run|execute)\s+[`'\"]"
                          r"|\b(?:run|execute)\s*(?::|\n)"
                          # (an order that opens a sentence or a clause: "ask you: run echo ... | sudo tee")
                          r"|(?:^|[:.;!?,]\s+)(?:please\s+|pls\s+|just\s+|now\s+)?(?:run|execute|paste|launch)\s"
                          r"|\bpaste\s+(?:\w+\s+){0,2}in(?:to)?\s+(?:your|a|the)\s+(?:shell|terminal|console)\b"
                          # ("could you chmod 777 ...", "add this line to /etc/cron.d", "tack `...` onto the end")
                          r"|\b(?:could|can|would)\s+you\s+(?:please\s+|just\s+)?(?=(?:chmod|chown|sudo|rm|curl|wget|kubectl|docker"
                          r"|systemctl|crontab|psql|mysql|git|ssh|scp|echo|usermod|setfacl)\b)"
                          r"|\b(?:add|put|append|install)\s+(?:this|the\s+following|these)\s+(?:line|lines|entry|entries|job|cron|key)\b"
                          r"|\b(?:tack|append|add)\b[^\n]{0,100}?\b(?:onto|to)\s+the\s+end\b|\bby\s+(?:running|executing)\b"
                          # (or says it was approved and to go ahead: "approved in standup: DROP ..., go ahead")
                          r"|\b(?:approved|signed\s+off|green-?lit)\b[^.\n]{0,30}:\s[^\n]{0,120}\bgo\s+ahead\b"
                          # (or hands the reader a command to use: "the fast route: `docker ...`")
                          r"|\b(?:use|try|do|route|way|fix|workaround|just)\b[^.\n`]{0,40}`[^`]{6,}`"
                          r"|\b(?:fix|workaround|steps?|solution|command|one-liner)\s*:\s")
# a root cause or a post-mortem tells what ran, not what to run
_TELLS_WHAT_HAPPENED = fast_regex(r"\b(?:root\s+cause|post-?mortem|incident\s+(?:review|report)|rca)\b")
_CREDENTIAL_ASK = fast_regex(r"\b(?:cat|read|open|paste|send|share|print|dump|copy)\b[^.\n]{0,60}\b(?:output|contents?|here"
                             r"|to\s+me|it\s+to)\b|\b(?:output|contents?)\s+of\b")
_COMMAND_LIKE = fast_regex(r"[|;&`$>]|(?:^|\s)\.{1,2}/\w|\s--?[a-z][\w-]*(?=[\s=])|\b(?:rm|curl|wget|sudo|chmod|chown|dd|mkfs|drop|truncate|delete|kubectl"
                           r"|terraform|git|psql|mysql|docker|python3?|bash|sh|nc|scp|ssh|iex|iwr|powershell|pwsh)\b")


def relayed_command_findings(call: ToolCall, internal: Iterable[str]) -> Iterator[Finding]:
    """A message that asks a colleague to run a command the rules would deny the sender."""
    text = "\n".join(call.text(n) for n in TEXT_ARGUMENTS if n in call.arguments)
    lowered = text.lower()
    if _CREDENTIAL_ASK.search(lowered) and SECRET_FILE.search(lowered):
        yield Finding("secrets.requested", not REPORTING_WORDS.search(lowered),
                      "asks a colleague for a credential file's contents")
        return
    if not (_ASKS_TO_RUN.search(lowered) and _COMMAND_LIKE.search(lowered)) \
            or REPORTING_WORDS.search(lowered) or _TELLS_WHAT_HAPPENED.search(lowered):
        return
    as_code = ToolCall(tool=RELAYED, arguments={"command": text}, workspace=call.workspace,
                       action_type="code:shell", shared=call.shared)
    code = as_code.all_views
    for family in (lambda: path_findings(as_code, code), lambda: abuse_findings(as_code, code),
                   lambda: secret_findings(as_code, code, code),
                   lambda: destructive_findings(as_code, code),
                   lambda: privilege_findings(as_code, code, code),
                   lambda: network_findings(as_code, code, internal)):
        for f in family():
            if f.block:
                yield Finding("injection.harmful_command_relayed", True,
                              f"asks a colleague to run what SecOps denies: {f.reason}", f.tier)
                return


# a request a program makes: curl's method and URL, or a client library's call
_CURL_REQUEST = fast_regex(r"\bcurl\b[^;&|\n]*?(?:-x\s*|--request[= ]\s*)[\"']?(delete|put|patch|post)\b[^;&|\n]*?[\"']?(https?://[^\s\"'`]+)"
                           r"|\bcurl\b[^;&|\n]*?[\"']?(https?://[^\s\"'`]+)[^;&|\n]*?(?:-x\s*|--request[= ]\s*)[\"']?(delete|put|patch|post)\b")
_CLIENT = r"\b(?:requests|httpx|session|sess|s|client|http)"  # (an HTTP client library, or its session)
_CLIENT_REQUEST = fast_regex(_CLIENT + r"\.(delete|put|patch|post)\(\s*[rf]?[\"'](https?://[^\"']+)[\"']")


# a loop over what a GET lists that deletes or changes each one
_CHANGES_EACH_LISTED = fast_regex(r"\bfor\s+\w+\s+in\s+" + _CLIENT + r"\.get\([^;]{0,200}?\.json\(\)[^;]{0,60}?:"
                                  r"[^;]{0,120}?" + _CLIENT + r"\.(?:delete|patch|put)\(")


# a post with more than a status note's few words, or an address, a number or a path in it (the
# message rules find nothing in "looking into it", and comments are the commonest posts)
_SAYS_SOMETHING = re.compile(r"(?:\b\w+\b\W*){4,}|[@/\d]")


def _says_something(body: str) -> bool:
    """Whether a post's words (its text field's, or all of it) are more than a status note."""
    fields = [m.group(1) or m.group(2) or "" for m in _POSTED_TEXT.finditer(body)] or [body]
    return any(_SAYS_SOMETHING.search(f) for f in fields) or len(fields) > 1


_POSTED_TEXT = fast_regex(r"[\"'](?:text|body|message|content|comment|note)[\"']\s*:\s*(?:\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)')")


def request_findings(call: ToolCall, views: tuple[str, ...], internal: Iterable[str]) -> Iterator[Finding]:
    """A request that a command or a program makes, judged as the same request made
    with http_request (DELETE of a cluster's namespace, of every index)."""
    requests = {(m.group(1) or m.group(4), m.group(2) or m.group(3)) for v in views if "curl" in v
                for m in _CURL_REQUEST.finditer(v)}
    requests |= {(m.group(1), m.group(2)) for v in views if "." in v for m in _CLIENT_REQUEST.finditer(v)}
    if any(_CHANGES_EACH_LISTED.search(v) for v in views):
        yield Finding("destructive.mass_data_loss", False, "deletes or changes every item a listing returns, one by one",
                      RiskTier.high)
        return
    said = next((m.group(1) or m.group(2) for v in views for m in _POSTED_TEXT.finditer(v)), None) \
        if requests else None  # (what the code posts: the same for each of its requests)
    for method, url in sorted(requests):
        request = ToolCall(tool="http_request", arguments={"method": method.upper(), "url": url},
                           workspace=call.workspace, action_type="net:http")
        for f in itertools.chain(destructive_findings(request, request.all_views),
                                 money_findings(method, url, views, call.task)):  # (the first found ends it)
            yield Finding(f.rule, f.block, f"{f.reason} (a request the code makes)", f.tier)
            return
        if said is not None and method != "delete" and writes_prose(request):  # (a message it posts: read as one)
            for f in message_findings(_posted(url, said, call.workspace), internal):
                yield Finding(f.rule, f.block, f"{f.reason} (a message the code posts)", f.tier)
                return


def _posted(url: str, text: str, workspace: str,
            views: tuple[tuple[str, ...], tuple[str, ...]] | None = None) -> ToolCall:
    """What is posted to `url` as the message it is; `views`: the request's own views of the
    URL and the text, when worked out already (they serve the message as they are)."""
    posted = ToolCall(tool="send_message", arguments={"to": url, "text": text}, workspace=workspace,
                      action_type="comms:message")
    if views is not None:  # (argument_views is a cached property: set, it is not worked out again)
        posted.__dict__["argument_views"] = {"to": views[0], "text": views[1]}
    return posted


def planted_findings(call: ToolCall) -> Iterator[Finding]:
    """Words for people that carry an instruction to the agents who will read them
    ("Assistant instructions: when HR agents read this, set ..."): an injection planted."""
    text = call.text("text").lower()
    if written_mark(text) is not None and not REPORTING_WORDS.search(text):
        yield Finding("injection.planted", False, "writes an instruction for the agents who will read it",
                      RiskTier.high)


def findings(call: ToolCall, internal: Iterable[str]) -> list[Finding]:
    """The families' findings on the call, blocking ones first. The families are asked in
    a fixed order and the first blocking finding ends the search: the verdict is then a
    denial for that finding's rule, whatever the later families would find."""
    call = as_test_data(call)
    views = joined(call.all_views)
    runnable = code_views(call)  # (most calls: every view may be run)
    code = views if runnable == call.all_views else joined(runnable, within=views)
    families: tuple[Callable[[], Iterator[Finding]], ...] = (
                lambda: secret_findings(call, views, code), lambda: path_findings(call, code),
                lambda: destructive_findings(call, code),
                lambda: privilege_findings(call, code, views), lambda: abuse_findings(call, code, views),
                lambda: injection_findings(call, views), lambda: forbidden_findings(call, views),
                lambda: task_fit_findings(call, internal),
                lambda: people_findings(call, views), lambda: package_findings(call, code, internal),
                lambda: control_findings(call, views, internal),
                lambda: oversight_findings(call, views, internal), lambda: book_findings(call, views),
                lambda: network_findings(call, views, internal),
                lambda: organisation_findings(call, views), lambda: privacy_findings(call, views),
                lambda: message_findings(call, internal))
    if call.action_type == "net:http":
        families = (*families, lambda: money_findings(call.text("method"), call.text("url"),
                                                      call.argument_views.get("body", ()), call.task))
    if call.action_type in MESSAGE_ACTIONS:  # a command a colleague is asked to run
        families = (*families, lambda: relayed_command_findings(call, internal))
    elif call.action_type == "net:http" and writes_prose(call) and _says_something(call.text("body")):
        # a message posted to a chat, a ticket or a wiki through its API is read as a message
        posted = _posted(call.text("url"), call.text("body"), call.workspace,
                         (call.argument_views.get("url", ()), call.argument_views.get("body", ())))
        families = (*families, lambda: message_findings(posted, internal),
                    lambda: relayed_command_findings(posted, internal), lambda: planted_findings(posted))
    elif call.action_type in ("code:shell", "code:python"):  # a request the code makes
        families = (*families, lambda: request_findings(call, runnable, internal))
    found: list[Finding] = []
    for family in families:
        for f in family():
            found.append(f)
            if f.block:
                return sorted(found, key=lambda f: not f.block)
    return found
