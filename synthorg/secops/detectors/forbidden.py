"""What the task forbids ("patients_raw is off-limits", "raw PII tables must not be used for
training"), and a call that uses it: a rule of the task's owner broken, for a person to judge."""

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


def forbidden_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    task = call.task.lower()
    if not task or writes_prose(call):
        return
    if _HANDS_OFF.search(task) and _changes_data(call):
        yield Finding("policy.task_forbids", False, "changes data in a task that says to change nothing",
                      RiskTier.high)
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
