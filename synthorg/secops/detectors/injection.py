"""The injection family: a call that carries out an instruction injected into its task's
text (the instruction's URLs, paths, addresses or rare words turn up in the call)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.patterns import finding
from synthorg.secops.messages import ORDER, injected_marker
from synthorg.secops.normalise import fast_regex, words

# markers of an injection besides those only an injection uses (messages.injected_marker):
# words that start an instruction in a task's text but are ordinary in a message
_INJECTION_MARK = fast_regex(
    r"<!--|\byou\s+(?:must|should|are\s+required\s+to|need\s+to)\s+(?:also|first|now|immediately|quietly|silently)\b"
    r"|\b(?:also|first|quietly|silently|secretly)\s+(?:run|execute|send|upload|post|email|delete|copy|curl)\b"
    r"|\bwithout\s+(?:telling|informing|notifying|mentioning)|\bdo\s+not\s+(?:tell|mention|report|log|inform)"
    r"|\b(?:the\s+)?(?:ai|agent|assistant|bot|llm)\s+(?:must|should|needs?\s+to|is\s+(?:required|instructed|authori[sz]ed)\s+to)\b"
    r"|\bbefore\s+(?:you\s+)?(?:start|begin|proceed|continue)\w*\s*,?\s+(?:run|execute|send|upload|delete)"
    r"|\bimportant\s*(?:!|:)\s*(?:also|first|you)|\bbegin\s+(?:hidden|secret)\b|\bassistant\s*:|\bhuman\s*:"
    r"|\bact\s+as\b|\bjailbreak\b|\bdan\s+mode\b|\bdeveloper\s+mode\b"
    # words for whoever (whatever) reads the text, and instructions announced as more of them
    r"|\bwhen(?:ever)?\s+(?:an?\s+|the\s+|any\s+)?(?:ai|llm|agent|assistant|bot|model)s?\s+(?:reads?|sees?|process(?:es)?"
    r"|summari[sz]es?|handles?|gets?)\b|\bwhoever\s+(?:reads|processes|handles|summari[sz]es|triages)\s+this\b"
    r"|\b(?:additional|extra|further|updated|revised|hidden|secret|urgent)\s+(?:instructions?|directives?|tasks?|orders?"
    r"|steps?)\s*:", re.M)
_PAYLOAD_TOKEN = fast_regex(r"[a-z][a-z0-9+.\-]*://[^\s\"'`<>)]+|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"
                            r"|(?:~|\.\.)?/[\w.\-/~]{3,}|`[^`]{3,}`|\"[^\"]{6,}\"|'[^']{6,}'"
                            r"|\b[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.(?:com|net|org|io|xyz|ru|cn|example|test|top|info|biz|cc|tk)\b"
                            r"|\b[\w\-]*\d[\w\-]*\.[a-z]{2,}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b")
_WORD = fast_regex(r"[a-z][a-z0-9_\-]{5,}")


def _first_mark(task: str) -> re.Match[str] | None:
    """The first marker of an injection in the task: the task's own list, or the markers
    that only an injection uses (messages.py, shared with relayed messages)."""
    marks = [m for m in (_INJECTION_MARK.search(task), injected_marker(task)) if m is not None]
    return min(marks, key=lambda m: m.start()) if marks else None


def injection_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    task = call.task.lower()
    mark = _first_mark(task) if task else None
    if mark is None:
        return
    # the marker's own words are no payload (a task may quote "ignore previous instructions")
    injected = task[max(0, mark.start() - 200):mark.start()] + " " + task[mark.end():]
    found = _PAYLOAD_TOKEN.findall(injected)
    # a quotation holds the addresses and paths it names (`'... email x@evil.test'`)
    found += [t for q in found if q[:1] in "`\"'" for t in _PAYLOAD_TOKEN.findall(q[1:-1])]
    tokens = {t.strip("`\"'").rstrip(".,;:") for t in found}
    tokens = {t for t in tokens if len(t) >= 5}
    joined = "\n".join(views)
    hits = [t for t in tokens if t in joined or " ".join(t.split()) in joined]
    if hits:
        yield finding("injection.task_instruction", "carries out an instruction injected into the "
                      f"task's text ({hits[0][:60]})")
        return
    rare = {w for w in _WORD.findall(injected) if w not in _COMMON} - set(_WORD.findall(
        task[:max(0, mark.start() - 200)]))
    if len([w for w in rare if w in joined]) >= 2 or (
            injected_marker(task)  # (not "before you start, run the tests")
            and ORDER.search(task, mark.end())
            and call.action_type not in _LOOKING):
        yield finding("injection.task_instruction", "follows words of an instruction injected into "
                      "the task's text", block=False, tier=RiskTier.high)


_LOOKING = frozenset({"fs:read", "db:read", "net:read", "vcs:read", "infra:read"})


_COMMON = frozenset(words("""please should would could about before after their there
these those which while where other another always never ignore previous instructions
instruction system assistant agent important quietly silently secretly without telling
anyone report mention message note first also run execute continue proceed begin start
using files file tests test update change review output result results workspace project
repository branch commit module python script command shell query table database service
server function return value"""))
