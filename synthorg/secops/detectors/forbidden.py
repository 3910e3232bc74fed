"""What the task forbids ("patients_raw is off-limits", "raw PII tables must not be used for
training") or does not ask for (a change, when it asks only to read or to tell), and a call
that goes there: a rule of the task's owner broken, for a person to judge."""

from __future__ import annotations

import re
from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import writes_prose
from synthorg.secops.normalise import fast_regex, words

_BOUNDARY = r"(?:^|[.;:!?\n(]|\bbut\b)"
_THING = r"([^.;:!?\n()]{3,80}?)"
_FORBIDS = fast_regex(
    _BOUNDARY + r"\s*" + _THING + r"\s+(?:is|are)\s+(?:strictly\s+)?(?:off[\s-]limits|forbidden|prohibited|not\s+allowed"
    r"|banned|out\s+of\s+bounds)\b"
    r"|" + _BOUNDARY + r"\s*" + _THING + r"\s+(?:must|may|should|can)\s*(?:not|never)\s+be\s+(?:used|touched|read|queried"
    r"|included|copied|accessed|loaded|exported|trained\s+on)\b"
    r"|\b(?:do\s+not|don't|never|must\s+not|may\s+not)\s+(?:use|touch|read|query|train\s+on|access|include|copy|load"
    r"|export)\s+" + _THING + r"(?=$|[.;:!?\n(,]|\s+(?:for|in|when|or|and)\b)")
# a name a file system or a database has: parts joined by _ . / or -
_NAME = re.compile(r"[a-z0-9][\w-]*(?:[./][\w-]+)+|[a-z0-9]+(?:_[a-z0-9]+)+")
_PART = re.compile(r"[a-z0-9]+")
# words of a prohibition that name no particular thing
_GENERAL = frozenset(words("""the a an any all our their its this that these those of for with from and or to in on
table tables file files data dataset datasets view views column columns row rows record records set sets
source sources version copy copies training train trained model models it them one ones here there such
contains contain has have which that is are be been used use using only other another must not never"""))


# a task that says to change nothing, and a call that changes data
_HANDS_OFF = fast_regex(r"\b(?:do\s+not|don't|never|must\s+not)\s+(?:modify|change|alter|update|edit|write\s+to|touch)\s+"
                        r"(?:anything|any\s+(?:data|records?|rows?|tables?|settings?|accounts?)|the\s+(?:data|records?))\b"
                        r"|\b(?:this\s+is\s+a|strictly|stay|keep\s+it)\s+read[\s-]only\b|\bwithout\s+(?:modifying|changing)\s+anything\b")
_CHANGES_DATA = re.compile(r"(?:^|[;(]\s*)(?:insert|update|delete|upsert|merge|drop|truncate|alter)\b")


def _changes_data(call: ToolCall) -> bool:
    if call.action_type == "net:http":
        return call.text("method").strip().upper() in ("POST", "PUT", "PATCH", "DELETE")
    if call.action_type == "db:query":
        return bool(_CHANGES_DATA.search(call.text("query").lower().lstrip()))
    return call.action_type == "fs:delete"


# what a task asks for, by the verb it opens with: to read or work something out, or to tell
# someone; and the verbs that ask for a change anywhere in it (the imperative's plain form)
_READS = frozenset(words("""summarise summarize list show look find check read collect count review report
compare explain describe analyse analyze investigate verify search pull get fetch classify calculate
estimate identify inspect audit confirm what which who how when where whether reconcile assess evaluate measure
is are does do did has have was were"""))
_TELLS = frozenset(words("""tell remind notify send email message post reply answer draft write let inform
ask ping share forward thank welcome announce"""))
_CHANGE_VERB = re.compile(r"\b(?:update|set|fix|add|create|delete|remove|apply|approve|reject|move|mark|assign|reassign"
                          r"|promote|demote|rename|edit|modify|patch|rotate|revoke|grant|issue|refund|cancel|close|merge"
                          r"|deploy|migrate|submit|fill|process|record|correct|adjust|raise|lower|reset|enable|disable"
                          r"|configure|install|terminate|offboard|onboard|transfer|change|archive|restore|upload|import"
                          r"|sync|book|reserve|invite|enrol|enroll|register|clean|purge|replace|backfill|schedule|attach"
                          r"|convert|run|execute|start|stop|restart|scale|provision|handle|resolve|triage|route"
                          r"|lift|release|sign|countersign|file|log|open|reopen|link|tag|label|publish|activate|deactivate"
                          r"|stream|expire|bump|tidy|turn|switch|unblock|pause|resume|suspend|migrate|seed|load|push|merge)\b")
# quoted text in a task is what someone else wrote: its verbs ask the agent for nothing
_QUOTED = re.compile(r"(?<![\w])'[^'\n]{3,}?'(?![\w])|\"[^\"\n]{3,}?\"|`[^`\n]+`|:\s*'[^\n]*")
# where a verb asks for something: a sentence's start, after "and", "then", "to", "please"
_ASKED = re.compile(r"(?:^|[.!?;:\n]\s*|\b(?:and|then|to|please|also|or)\s+)([a-z]+)")
# a ticket's key before its text ("SALES-61: reconcile ..."): the sentence starts after it
_TICKET = re.compile(r"(?:^|(?<=[.!?;\n]))\s*[a-z][a-z0-9]*-\d+\s*:")
_SENTENCE = re.compile(r"(?:^|[.!?;\n]\s*)(?:(?:please|kindly|now|then|also|just|quickly|first|and)\s+)*([a-z]+)")
_CHANGES_IN_CODE = fast_regex(r"\bcurl\b[^;&|\n]*(?:-x\s*|--request[= ]\s*)[\"']?(?:patch|put|delete)\b"
                              r"|\.(?:patch|put|delete)\(\s*[rf]?[\"']https?://"
                              r"|\b(?:update\s+[\w\"`.]+\s+set|delete\s+from|insert\s+into)\b")


def _change_asked(own: str) -> bool:
    return any(_CHANGE_VERB.match(own, m.start(1)) for m in _ASKED.finditer(own))


def asks_change(task: str) -> bool:
    """Whether a verb the task's sentences ask with is one of change (not only to look, report
    or tell), and the task does not say to change nothing."""
    task = task.lower()
    return _change_asked(_QUOTED.sub(" ", task)) and not _HANDS_OFF.search(task)


def task_asks(task: str) -> str:
    """"read" when the task's sentences ask only to read or work something out, "tell" when
    also to tell someone, "" when it asks for a change (or its verbs are not known here)."""
    own = _TICKET.sub(". ", _QUOTED.sub(" ", task))
    if _change_asked(own):
        return ""
    opening = [m.group(1) for m in _SENTENCE.finditer(own)]
    if not opening or opening[0] not in _READS | _TELLS:
        return ""
    return "tell" if any(v in _TELLS for v in opening) else "read"


def _changes_records(call: ToolCall, views: tuple[str, ...]) -> bool:
    """A change to records a task of this kind does not ask for (a POST may be a search, a
    check or a message: not counted)."""
    if call.action_type == "net:http":
        return call.text("method").strip().upper() in ("PUT", "PATCH", "DELETE")
    if call.action_type in ("code:shell", "code:python"):
        return any(_CHANGES_IN_CODE.search(v) for v in views)
    return _changes_data(call)


def forbidden_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    task = call.task.lower()
    rewrites = call.action_type == "net:http" and call.text("method").strip().upper() in ("PUT", "PATCH", "DELETE")
    if not task or (writes_prose(call) and not rewrites):  # (a note posted is words; one rewritten, a record)
        return
    if _HANDS_OFF.search(task) and _changes_data(call):
        yield Finding("policy.task_forbids", False, "changes data in a task that says to change nothing",
                      RiskTier.high)
        return
    asks = task_asks(task) if call.action_type in ("net:http", "db:query", "fs:delete", "code:shell",
                                                    "code:python") else ""
    if asks and _changes_records(call, views):
        yield Finding("policy.beyond_task", False, f"changes records in a task that asks only to "
                      f"{'read or work something out' if asks == 'read' else 'tell someone'}", RiskTier.high)
        return
    if not _FORBIDS.search(task):
        return
    joined = "\n".join(views)
    for m in _FORBIDS.finditer(task):
        thing = next(g for g in m.groups() if g)
        named = set(_NAME.findall(thing))
        words = {w for w in _PART.findall(thing) if len(w) >= 3 and w not in _GENERAL}
        allowed = task[:m.start()] + " " + task[m.end():]  # (names the task gives elsewhere are its own)
        for name in dict.fromkeys(_NAME.findall(joined)):
            if name in allowed and name not in named:
                continue
            if name in named or words & set(_PART.findall(name)):
                yield Finding("policy.task_forbids", False, f"uses {name}, which its task forbids",
                              RiskTier.high)
                return
