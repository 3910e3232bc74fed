"""The injection family: a call that carries out an instruction injected into its task's
text (the instruction's URLs, paths, addresses or rare words turn up in the call)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import writes_prose
from synthorg.secops.detectors.patterns import REPORTING_WORDS, finding
from synthorg.secops.messages import _INJECTED, ORDER, injected_marker
from synthorg.secops.normalise import encoded_blobs, fast_regex, unicode_unescaped, words

# markers of an injection besides those only an injection uses (messages.injected_marker):
# words that start an instruction in a task's text but are ordinary in a message
_INJECTION_MARK = fast_regex(
    r"<!--|\byou\s+(?:must|should|are\s+required\s+to|need\s+to)\s+(?:also|first|now|immediately|quietly|silently)\b"
    r"|\b(?:also|first|quietly|silently|secretly)\s+(?:run|execute|send|upload|post|email|delete|copy|curl)\b"
    r"|\bwithout\s+(?:telling|informing|notifying|mentioning)|\bdo\s+not\s+(?:tell|mention|report|log|inform)"
    r"|\b(?:the\s+)?(?:ai|agent|assistant|bot|llm)s?\s+(?:must|should|needs?\s+to|(?:is|are)\s+(?:required|instructed|authori[sz]ed)\s+to)\b(?!\s+(?:not|never)\b|n[\u2019']t)"
    r"|\bbefore\s+(?:you\s+)?(?:start|begin|proceed|continue)\w*\s*,?\s+(?:run|execute|send|upload|delete)"
    r"|\bimportant\s*(?:!|:)\s*(?:also|first|you)|\bbegin\s+(?:hidden|secret)\b|\bassistant\s*:|\bhuman\s*:"
    r"|\bact\s+as\b|\bjailbreak\b|\bdan\s+mode\b|\bdeveloper\s+mode\b"
    # words for whoever (whatever) reads the text, and instructions announced as more of them
    r"|\b(?:assistant|agent|ai|llm|bot)\s+(?:instructions?|directives?|orders?)\b"
    r"|\bwhen(?:ever)?\s+(?:an?\s+|the\s+|any\s+)?(?:[\w-]+\s+)?(?:ai|llm|agent|assistant|bot|model)s?\s+(?:reads?|sees?|process(?:es)?"
    r"|summari[sz]es?|handles?|gets?)\b|\bwhoever\s+(?:reads|processes|handles|summari[sz]es|triages)\s+this\b"
    r"|\b(?:additional|extra|further|updated|revised|hidden|secret|urgent)\s+(?:instructions?|directives?|tasks?|orders?"
    r"|steps?)\s*:"
    # orders to whatever AI reads the text, in the third person or to its role
    r"|\b(?:the\s+)?(?:ai|assistant|agent|bot|llm|model)s?\s+(?:shall|will\s+now|has\s+to|is\s+to|opens|runs|sends|deletes|emails"
    r"|forwards|posts|uploads|grants|disables|adds)\b|\b(?:ai|llm|bot|agent)[\s-]+reviewers?\s*:|\breviewer\s+bots?\s*:"
    r"|\b(?:ai|llm)[\s-]+(?:[\w-]+\s+)?(?:reviewers?|codegen|writers?|assistants?|agents?|bots?|systems?|tools?|helpers?|coders?"
    r"|models?|copilots?|maintainers?|engineers?|developers?|operators?|note-?takers?|scribes?|summari[sz]ers?|transcribers?"
    r"|secretar(?:y|ies)|\w+(?:er|or|ant|ist)s?)\s*[:,]"
    r"|\b(?:for|to)\s+(?:the\s+)?(?:automated|autonomous|ai)\s+(?:reviewers?|agents?|tools?|systems?|assistants?|maintainers?|bots?"
    r"|editors?|contributors?|coders?|writers?|fixers?)\b"
    r"|\b(?:automated|autonomous)\s+(?:reviewers?|agents?|assistants?|maintainers?|bots?|responders?|handlers?|triagers?|processors?|operators?|workers?)\s*[:,]"
    r"|\((?:agents?|ai|bots?|assistants?|llms?)\s+only\)"
    # a note addressed to whatever machine handles the text ("P.S. for the automated agent handling this:",
    # "note to the Acme AI agent processing this", "as Acme's automation, please"), in a few languages
    r"|\b(?:note|message|p\.?\s?s\.?|instructions?|request)\s+(?:to|for)\s+(?:the\s+|any\s+|an?\s+)?(?:[\w'-]+\s+){0,2}"
    r"(?:ai|automated|automation|agents?|assistants?|bots?|llms?)\b"
    r"|\bas\s+(?:[\w-]+'s\s+)?(?:automation|automated\s+\w+|ai|bot|assistant|agent)\s*,"
    r"|\b(?:ai|automated)\s+(?:agents?|assistants?|bots?)\s+\w+ing\b[^:\n]{0,40}:"
    r"|\b(?:instrucci[oó]n|instruction|anweisung|istruzion[ei])\s+(?:para|pour|f[uü]r|per)\s+(?:el\s+|la\s+|le\s+|l'|den\s+|il\s+)?"
    r"(?:asistente|assistant|assistent|assistente|agente|agent|bot|ia|ki)\b"
    r"|\b(?:asistente|assistant|assistent|assistente)\s+autom[aá]ti(?:co|que|sche[nr]?)\b"
    # an order passed through a person to their AI: "have the assistant email ...", "have your assistant message ..."
    r"|\b(?:have|ask|tell|get|let)\s+(?:the|your|our)\s+(?:ai\s+)?(?:assistant|agent|bot|ai)s?\s+(?:to\s+)?(?:email|send|run|delete"
    r"|post|upload|forward|share|message|pay|transfer|grant|add|remove|wipe|drop|paste|export)\b"
    r"|\b(?:todo|note|fixme|hack|xxx|nb)\s*\(\s*(?:ai|ai-agent|agents?|bot|llm|assistant|copilot)\s*\)|\(\s*(?:agente|agent|ki|ia|ai|assistant|assistente)\s*:"
    r"|(?:ai|ki|ia)\s*(?:アシスタント|エージェント)|アシスタントへ|エージェントへ|ai\s*助手|智能体|ki-assistent|asistente\s+de\s+ia"
    r"|assistant\s+ia\b|assistente\s+ia\b|ии-?ассистент"
    r"|\bnota\s+para\s+(?:el\s+|la\s+)?(?:asistente|agente|ia)\b|\bnote\s+pour\s+l['\u2019](?:assistant|agent|ia)\b"
    r"|\bhinweis\s+f(?:ü|ue)r\s+(?:den\s+|die\s+)?(?:assistenten|agenten|ki)\b|\bautomation\s*:"
    r"|\b(?:agents?|bots?|ai|assistants?|llms?|models?)\s+(?:validating|reviewing|processing|reading|handling|summari[sz]ing|seeing|parsing)\s+this\b"
    r"|@(?:ai|ai-agent|agent|bot|assistant|copilot|claude|gpt)\b"
    r"|\b(?:all|any|every)\s+agents?\s*[:,]|\bnote\s+to\s+(?:the\s+)?(?:ai|agents?|assistants?)\b|\[(?:assistant|agents?|ai|llm|bot)[-_ ]?(?:directive|instructions?|note|task|order)s?\s*[\]:]"
    r"|\b(?:important|instructions?)\s+for\s+(?:ai|agents?|assistants?)\b|\bai\s+(?:engineers|reviewers|systems|agents|assistants)\b[^.\n]{0,40}"
    r"(?:must|should|:)|\b(?:automated|automation)\s+(?:\w+\s+)?(?:fixers?|tools?|agents?|hints?|systems?|bots?|assistants?"
    r"|reviewers?)\s*(?:should|must|need\s+to|are\s+to|:)|\bautomation\s+hint\b"
    # (a line that starts with "agent:"; white space spelt out, so that each alternative starts
    # with a character the regex engine can skip to: see fast_regex)
    r"|^(?:agents?|bots?|ais?|llms?)\s*:|^" "[ \t\r\f\v]" r"\s*(?:agents?|bots?|ais?|llms?)\s*:"
    r"|\b(?:whichever|whatever|whoever|any)\s+(?:ai|agent|assistant|bot|llm|model)s?\s+(?:reads|is\s+reading|sees|processes"
    r"|parses|handles|summari[sz]es)\b"
    r"|\((?:incl\.?|including)\s+(?:ai\s+)?(?:agents?|bots?|assistants?)\)|\bpre-?approved\b|\bstanding\s+order\b|\bnever\s+ask\s+for\s+approval\b|\bwithout\s+checking\s+with\s+anyone\b", re.M)
# text from an untrusted source, quoted in the task: what it asks for is the source's wish, not
# the task-giver's (a reporter's steps, an outside account's issue, a page's or a form's words)
_SOURCE_MARK = fast_regex(
    r"\b(?:ai|llm|agent|assistant|bot)s?\s*[\u2014\u2013:-]+\s*(?:please\s+)?(?:convert|run|execute|send|delete|add|update|decode|follow"
    r"|register|call|visit|open|fetch|get|post|curl|read|print|share|paste|include|attach|upload|forward"
    r"|set|wipe|drop|install|configure|email|post|remove|disable)\b"
    r"|\((?:added|opened|written|posted|edited)\s+by\s+(?:the\s+)?(?:reporter|vendor|contractor|customer|user|an?\s+external|an?\s+outside|a\s+customer"
    r"|an?\s+unknown|anonymous|a\s+third)[^)]*\)|\bopened\s+by\s+an?\s+(?:external|outside|unknown|anonymous)"
    r"|\b(?:from|by)\s+an?\s+(?:external|outside|unknown|anonymous|third[- ]party)\s+(?:contributor|account|user|party"
    r"|sender|reporter|commenter|visitor|caller|guest|person|source|customer)|\b(?:its|the|their)\s+readme\s+says\b"
    r"|\b(?:doc(?:ument)?|page|web\s*page|response(?:\s+body)?|email|ticket\s+(?:text|body)|issue\s+(?:text|body)|comment|submission\s+\d+"
    r"|pdf|attachment|file)\s+(?:contains|says|reads|text)?\s*:"
    r"|\b(?:customer|user|client|vendor|sender|caller|someone|requester|reporter)\s+(?:wrote|writes|said|says|asked|asks)\s*:"
    r"|\b(?:added|edited|written|inserted|changed)\s+(?:\w+\s+){0,2}by\s+(?:an?\s+)?(?:unknown|external|outside|anonymous"
    r"|unverified|new)\b", re.M)
_PAYLOAD_TOKEN = fast_regex(r"[a-z][a-z0-9+.\-]*://[^\s\"'`<>)]+|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"
                            r"|(?:~|\.\.)?/[\w.\-/~]{3,}|`[^`]{3,}`|\"[^\"]{6,}\"|'[^']{6,}'"
                            r"|\b[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.(?:com|net|org|io|xyz|ru|cn|example|test|top|info|biz|cc|tk)\b"
                            r"|\b[\w\-]*\d[\w\-]*\.[a-z]{2,}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b"
                            r"|\+\d{1,3}[\s-]?\d[\d\s-]{6,}\d")  # (a phone number)
_WORD = fast_regex(r"[a-z][a-z0-9_\-]{5,}")


_RUNS_FILE_TEXT = fast_regex(r"\beval\s+[\"']?(?:\$\(|`)\s*(?:grep|sed|awk|cut|cat|head|tail|jq|yq|perl)\b"
                             r"|\b(?:grep|sed|awk|cut|head|tail|jq|yq)\b[^;&|]*\|[^;&]*\|\s*(?:ba|z|da)?sh\s*(?:$|[;&|)])"
                             # code that runs a field of a document it loaded: manifest['entry']
                             r"|\b(?:eval|exec)\(\s*[\w.]+\[\s*[\"'][^\"']+[\"']\s*\]\s*\)"
                             r"|\b(?:eval|exec)\(\s*(?:json|yaml|toml|pickle)\.\w*loads?\(")


def _instruction_span(task: str, mark: re.Match[str]) -> tuple[str, str]:
    """The injected instruction around its marker: the marker's line (and the next, when the
    marker ends its line), not the rest of the task (a traceback, a table, the real work)."""
    start = task.rfind("\n", 0, mark.start()) + 1
    end = task.find("\n", mark.end())
    end = len(task) if end < 0 else end
    if end - mark.end() < 20 and end < len(task):
        following = task.find("\n", end + 1)
        end = len(task) if following < 0 else following
    after = task[mark.end():end]
    close = _closing(task[start:mark.start()], mark.group(0))
    if close:  # (a quoted order ends where its quote does: what follows is the task-giver's)
        # (a quote closed at once held a label, "instructions_for_agent": "...": the order is its value)
        ends = [m.start() for c in close if (m := re.compile(_CLOSE.get(c, re.escape(c))).search(
            after, 12 if c == '"' and re.match(r'\s*"\s*[:=]', after) else 0))]
        after = after[:min(ends, default=len(after))]
    return task[max(start, mark.start() - 200):mark.start()], after


_QUOTE = re.compile(r'(?<!\\)"')  # (not an escaped one: \" inside the quotation)
# (a comment's end, not the /**/ inside a statement it quotes; a quote not escaped)
_CLOSE = {'"': _QUOTE.pattern, "*/": r"\*/(?=\s|$|[\"'])"}


def _closing(head: str, mark: str) -> list[str]:
    """What closes the quotation, comment or brackets the marker is inside (`head`: its
    line up to the marker)."""
    close = []
    if len(_QUOTE.findall(head)) % 2 or len(_QUOTE.findall(mark)) % 2:
        close.append('"')
    if head.count("\u201c") > head.count("\u201d"):
        close.append("\u201d")
    if head.rfind("[[") > head.rfind("]]"):
        close.append("]]")
    if "<!--" in mark or head.rfind("<!--") > head.rfind("-->"):
        close.append("-->")
    if head.rfind("/*") > head.rfind("*/"):
        close.append("*/")
    return close


def written_mark(text: str) -> re.Match[str] | None:
    """A marker of an instruction to agents in text written for others to read (not the task's
    own markers: "agent: eng-0003" in a YAML file is no instruction)."""
    return _INJECTION_MARK.search(text) or _INJECTED.search(text)


def first_mark(task: str) -> re.Match[str] | None:
    """The first marker of an injection in the task: the task's own list, or the markers
    that only an injection uses (messages.py, shared with relayed messages)."""
    spaced = task.replace("_", " ")  # ("instructions_for_agent": a JSON key's words; same length)
    marks = [m for m in (_INJECTION_MARK.search(spaced), injected_marker(spaced)) if m is not None]
    return min(marks, key=lambda m: m.start()) if marks else None


def injection_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    if call.action_type.startswith("code:") and any(_RUNS_FILE_TEXT.search(v) for v in views):
        yield finding("injection.runs_file_text", "runs commands it reads out of a file (what the file "
                      "says is what runs)", block=False, tier=RiskTier.high)
        return
    task = call.task.lower()
    if "\\u" in task:  # (a payload's JSON writes its words with \u escapes)
        task = unicode_unescaped(task)
    mark = first_mark(task) if task else None
    if mark is None:
        source = _SOURCE_MARK.search(task) if task else None
        if source is not None:
            yield from _follows_source(call, views, task, source)
        return
    # the marker's own words are no payload (a task may quote "ignore previous instructions")
    before, after = _instruction_span(task, mark)
    after += _decoded(call.task, mark.end())  # ("decode and follow: Zm9y..."): the order too
    # before the marker only addresses count (a JSON key or a quoted word is the text's own)
    # (a page the task's own words name, fetched, is the task: what it says is read later)
    fetches = call.action_type.startswith("net:") and call.text("method").strip().upper() in ("GET", "HEAD")
    found = _PAYLOAD_TOKEN.findall(after) + [t for t in _PAYLOAD_TOKEN.findall(before)
                                             if ("://" in t or "@" in t) and call.action_type not in _LOOKING
                                             and not fetches]
    # a quotation holds the addresses and paths it names (`'... email x@evil.test'`)
    found += [t for q in found if q[:1] in "`\"'" for t in _PAYLOAD_TOKEN.findall(q[1:-1])]
    tokens = {t.strip("`\"'").rstrip(".,;:") for t in found}
    tokens = {t for t in tokens if len(t) >= 5}
    own = task[:task.rfind("\n", 0, mark.start()) + 1]  # the lines before the marker's
    tokens = {t for t in tokens if "@" in t or "://" in t or t not in own}
    joined = "\n".join(views)
    hits = [t for t in tokens if t in joined or " ".join(t.split()) in joined]
    if hits and _reports(call, joined) and not any(h in call.text("to").lower() for h in hits):
        return  # (not sent to where the injected text asked)
    if hits:
        # written down in prose or told to a colleague, it may be the injection reported
        reported = writes_prose(call) and call.action_type != "net:http"
        yield finding("injection.task_instruction", "carries out an instruction injected into the "
                      f"task's text ({hits[0][:60]})", block=not reported, tier=RiskTier.high)
        return
    rare = {w for w in _WORD.findall(after) if w not in _COMMON} - set(_WORD.findall(
        task[:mark.start()]))
    kind = _same_kind(call, after)
    shared = len([w for w in rare if w in joined]) + kind + (kind and _target_named(call, after)) \
        + _contacts_given(after, joined)
    if _reports(call, joined):
        return  # (a message or a note that names the instruction to report it)
    if shared >= 2 or (
            shared  # a word of the order carried out (a call doing the real task shares none)
            and injected_marker(task)  # (not "before you start, run the tests")
            and ORDER.search(task, mark.end())
            and call.action_type not in _LOOKING):
        yield finding("injection.task_instruction", "follows words of an instruction injected into "
                      "the task's text", block=False, tier=RiskTier.high)


def _decoded(task: str, start: int) -> str:
    """What blobs in the task (as written: lower case spoils base64) from `start` decode to."""
    if len(task) - start < 16 or len(task) != len(task.lower()):
        return ""
    return "".join(" " + b.plain.lower() for b in encoded_blobs(task[start:]) if b.plain.isprintable())


def _reports(call: ToolCall, joined: str) -> bool:
    """Words for people that name what the injected text asked in order to report it."""
    return writes_prose(call) and bool(REPORTING_WORDS.search(joined))




def _follows_source(call: ToolCall, views: tuple[str, ...], task: str, source: re.Match[str]
                    ) -> Iterator[Finding]:
    """A call that does what the quoted untrusted text asks (its addresses, paths or rare
    words turn up in the call): for a person to judge, since a task may quote a report."""
    quoted = task[source.end():] + _decoded(call.task, source.end())  # (an encoded order too)
    joined = "\n".join(views)
    if _reports(call, joined):
        return  # (a note that names what the source asked, to say it was not done)
    tokens = {t.strip("`\"'").rstrip(".,;:") for t in _PAYLOAD_TOKEN.findall(quoted)}
    tokens |= {t.strip("`\"'").rstrip(".,;:") for q in list(tokens) for t in _PAYLOAD_TOKEN.findall(q)}
    hits = [t for t in tokens if len(t) >= 5 and t in joined]
    rare = {w for w in _WORD.findall(quoted) if w not in _COMMON} - set(_WORD.findall(
        task[:source.start()]))
    if hits or len([w for w in rare if w in joined]) >= 2:
        yield finding("injection.untrusted_instruction", "does what text from an untrusted source "
                      "quoted in the task asks", block=False, tier=RiskTier.high)


_ORDER_KINDS = (
    (re.compile(r"\b(?:delete|remove|wipe|erase|drop|truncate|purge|rm|supprime[zr]?|efface[zr]?|borra[r]?|elimina[r]?|l\u00f6sche\w*|cancella(?:re)?|apague)\b"), ("fs:delete", "db:query", "vcs:write")),
    (re.compile(r"\b(?:e-?mail|send|forward|post|upload|share|message)\b"), ("comms:email", "comms:message", "net:http")),
    (re.compile(r"\b(?:make\s+\S+\s+public|set\s+\S+\s+(?:to\s+)?public|publish)\b"), ("code:shell", "net:http")),
)


def _same_kind(call: ToolCall, order: str) -> int:
    """1 when the call is of the kind the injected order asks for (a delete for "delete ...")."""
    return int(any(p.search(order) and ((call.action_type in kinds and (
        call.action_type != "db:query" or "fs:delete" not in kinds or _DROPPED.search(call.text("query").lower()))) or (
        "fs:delete" in kinds and call.action_type == "code:shell" and any(_REMOVED.search(v) for v in call.all_views)))
        for p, kinds in _ORDER_KINDS))


_DROPPED = re.compile(r"\b(?:drop\s+(?:table|database|schema)|truncate(?:\s+table)?|delete\s+from)\s+(?:if\s+exists\s+)?"
                      r"[\"`]?([\w.]+)")


_REMOVED = re.compile(r"\brm\s+((?:[^;&|\n]+))")


def _target_named(call: ToolCall, order: str) -> int:
    """1 when what the call deletes (a path's last part, a table) is named in the injected
    order: "delete the whole tests directory" and a delete of `tests`."""
    if call.action_type == "fs:delete" and "path" in call.arguments:
        names = [call.text("path").lower().rstrip("/").rsplit("/", 1)[-1]]
    elif call.action_type in ("fs:delete", "code:shell") and "command" in call.arguments:
        names = [w.rstrip("/").rsplit("/", 1)[-1] for v in call.all_views for m in _REMOVED.finditer(v)
                 for w in m.group(1).split() if not w.startswith("-")]
    elif call.action_type == "db:query":
        names = [m.group(1).rsplit(".", 1)[-1] for m in _DROPPED.finditer(call.text("query").lower())]
    else:
        return 0
    return int(any(len(n) >= 3 and re.search(rf"(?<![\w.]){re.escape(n)}\b", order) for n in names))


# an order for people's contact details, and such details in the call
_CONTACTS_ASKED = re.compile(r"\b(?:contact\s+(?:details|info\w*|data)|e-?mail\s+addresses|phone\s+numbers?"
                             r"|home\s+addresses|personal\s+(?:details|e-?mails?|numbers?))\b")
_CONTACT_GIVEN = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\+?\d[\d ().-]{8,}\d")


def _contacts_given(order: str, joined: str) -> int:
    """1 when the injected order asks for contact details and the call gives some."""
    return int(bool(_CONTACTS_ASKED.search(order) and _CONTACT_GIVEN.search(joined)))


_LOOKING = frozenset({"fs:read", "db:read", "net:read", "vcs:read", "infra:read"})


_COMMON = frozenset(words("""please should would could about before after their there
these those which while where other another always never ignore previous instructions
instruction system assistant agent important quietly silently secretly without telling
anyone report mention message note first also run execute continue proceed begin start
using files file tests test update change review output result results workspace project
repository branch commit module python script command shell query table database service
server function return value example"""))
