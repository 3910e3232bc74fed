"""The organisation family: what an agent writes to change the organisation of agents
itself - instructions planted for other agents to obey (stored injection), its own autonomy,
approvals, budget or permissions raised, approvals forged or claimed, colleagues or
functions impersonated."""

from __future__ import annotations

import re
from collections.abc import Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import MESSAGE_ACTIONS, TEXT_ARGUMENTS
from synthorg.secops.detectors.injection import written_mark
from synthorg.secops.detectors.patterns import REPORTING_WORDS, Hinted, finding
from synthorg.secops.detectors.sql import QUERY_READS
from synthorg.secops.normalise import fast_regex

# the arguments that are written somewhere others (people, agents) read, and code that writes
_WRITTEN = ("content", "body", "text", "query", "message", "subject", "code", "command")
_WEAK_MARK = fast_regex(r"\b(?:all\s+|any\s+|every\s+)?agents?\s+(?:may|can|must|should|are\s+(?:allowed|required)\s+to)\b")
# settings that say how far an agent may go, or what it may spend
_AGENT_LIMITS = Hinted(fast_regex(
    r"\b(?:autonomy(?:_level)?|requires?_approval|approval_required|skip_approvals?|needs?_approval|supervised"
    r"|budget\w*|monthly_limit\w*|max_spend|spend_limit|tokens_per_day|token_limit|allowed_tools|tool_allowlist"
    r"|permissions?|scopes?|reports_to|role)\b[\"']?\s*(?:[:=]|\bto\b)"),
    "autonomy|approval|supervised|budget|limit|spend|tokens_per|tools|permission|scope|reports_to|role")
# where an agent's own limits live: its config, the agents' API, their tables
_AGENT_PLACE = Hinted(fast_regex(r"(?<![^/\s])\.agents?[/_-]|(?<![^/\s])agents?[/_-]|/agents?/|\bagent_\w+|\bagents\b\s+set\b|secops"),
                      "agent|secops")
# an approval recorded: by someone who is not the writer, or passed without one
_FORGED = Hinted(fast_regex(
    r"\bapprov(?:ed_by|er)\b[\"']?\s*[:=,]\s*[\"']?[\w.@-]+|(?:status|state|decision)[\"']?\s*[:=]\s*[\"']?(?:approved|passed)\b"
    r"|\b(?:reviewed|signed-off|approved)-by:\s*[\w.-]+|[\"']event[\"']\s*:\s*[\"']approve[\"']|\bon_behalf_of\b"
    r"|\bapproved\.?\s+(?:go\s+ahead|ship\s+it|lgtm)\b[^\n]{0,80}--\s*[\w-]+"),
    "approv|passed|reviewed-by|signed-off|on_behalf_of")
# a claim that someone else approved, or a claim of authority, to get a thing done
_CLAIMED = fast_regex(
    r"\b(?:[\w-]+-lead|hr|ceo|cto|cfo|manager|security|secops|legal|finance|compliance)\s+(?:has\s+|had\s+)?(?:already\s+)?(?:approved|authori[sz]ed"
    r"|signed\s+off|ok'?d|is\s+fine\s+with|said\s+(?:it'?s\s+)?(?:ok|fine))\b"
    r"|\bI\s+(?:authori[sz]e|approve|take\s+(?:full\s+)?responsibility)\b|\bper\s+my\s+authority\b|\bpriority\s+override\b")
# "This is ops-lead", "pm-lead here", "[eng-lead]", "-- eng-lead", "From HR:"
_IDENTITY = re.compile(r"\b(?:this\s+is|i\s+am|i'm)\s+([\w-]+)|\b([\w-]+)\s+here\b|^\s*\[([\w-]+)\]|--\s*([\w-]+)\s*$"
                       r"|^\s*from\s*:?\s*([\w-]+)\b", re.I | re.M)
_FUNCTIONS = frozenset({"hr", "secops", "security", "it", "helpdesk", "legal", "finance", "payroll"})


# code that writes somewhere others read: a redirect, tee, sed -i, an open for writing, an HTTP body
_WRITES = re.compile(r">|\btee\b|\bsed\s+-i|\bopen\([^)]*[\"'][wa]|\.write|\bcurl\b|\brequests\.|\bpost\(|\bput\(|\bpatch\("
                     r"|\bsend_message\b|\bsendmail\b|\bmail\b|\binsert\b|\bupdate\b"
                     r"|\bgit\s+(?:notes|commit|tag)\b|\s-m\s|--(?:message|body|title|notes?)\b|\b(?:gh|glab|jira|slack)\b|\bcomment")
_SOURCE_FILE = re.compile(r"\.(?:py|pyi|js|mjs|ts|tsx|jsx|go|rb|java|kt|rs|c|cc|cpp|h|hpp|cs|php|scala|swift)$", re.I)
_STRING_LITERAL = re.compile(r"\"\"\"[\s\S]*?\"\"\"|'\'\'[\s\S]*?'\'\'|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`[^`]*`")


def organisation_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    """`views`: the call's views as `findings` joined them."""
    written = "\n".join(call.text(n) for n in _WRITTEN if n in call.arguments
                        and not (n == "query" and QUERY_READS.match(call.text(n).lower())))
    if not written and (call.action_type != "net:http" or call.text("method").strip().upper()
                        in ("GET", "HEAD", "OPTIONS")):  # (a request may change what its URL names)
        return
    low = "\n".join((written.lower(), *views))  # (and what it decodes to)
    if not _ANY_WORD.search(low):
        return  # (none of the words any of these checks looks for: most calls)
    url = call.text("url").lower() + " " + call.text("path").lower()
    reporting = bool(REPORTING_WORDS.search(low))
    if call.action_type not in MESSAGE_ACTIONS and not reporting:
        # (in source code, phrases in string literals are data: a filter's list of injection
        # phrases; its comments are still read)
        marked = _STRING_LITERAL.sub('""', written.lower()) if _SOURCE_FILE.search(call.text("path")) or (
            call.action_type.startswith("code:") and not _WRITES.search(written)) else low
        if _MARK_WORD.search(marked) and written_mark(marked):
            yield finding("injection.stored", "writes instructions for the agents who will read it")
            return
        if _WEAK_MARK.search(low) and re.search(r"\b(?:memory|handbook|readme|wiki|pins?|notes?|docs?|tickets?|issues?)\b", url + low):
            yield finding("injection.stored", "writes rules for the agents who will read it",
                          block=False, tier=RiskTier.high)
            return
    if call.action_type not in MESSAGE_ACTIONS and not reporting and _CREDENTIALS_ASKED.search(low):
        yield finding("fraud.phishing", "tells its readers to send their passwords, codes or keys to someone")
        return
    if call.action_type not in MESSAGE_ACTIONS and not reporting and _PLANTED_STEP.search(low):
        yield finding("injection.stored", "writes a destructive step for others to follow",
                      block=False, tier=RiskTier.high)
        return
    if _GIT_IDENTITY.search(low):
        yield finding("fraud.impersonation", "commits or signs as someone else", tier=RiskTier.high)
        return
    if _GUARD_OFF.search(low) or (call.action_type == "net:http" and _GUARD_API.search(url)
                                  and call.text("method").strip().upper() in ("PUT", "PATCH", "POST", "DELETE")):
        yield finding("privilege.guard_disabled", "switches off or rewrites the interceptor, the agents' "
                      "policies, prompts or tools")
        return
    if call.action_type not in MESSAGE_ACTIONS and (
            _AGENT_TABLE.search(low) or _AGENT_ENDPOINT.search(url + " " + low)
            or (_AGENT_CONFIG.search(url) and _AGENT_LIMITS.search(low))):
        yield finding("privilege.agent_limits", "changes an agent's autonomy, approvals, budget, tools or "
                      "permissions")
        return
    if (_AGENT_PLACE.search(url) or _AGENT_PLACE.search(low)) and _AGENT_LIMITS.search(low) \
            and call.action_type not in MESSAGE_ACTIONS:
        yield finding("privilege.agent_limits", "changes an agent's autonomy, approvals, budget or "
                      "permissions")
        return
    if call.action_type not in MESSAGE_ACTIONS and (_SPOOFED_FROM.search(low) or _DISPLAY_AS.search(low)):
        yield finding("fraud.impersonation", "writes or presents itself as someone else", block=False,
                      tier=RiskTier.high)
        return
    if call.action_type not in MESSAGE_ACTIONS and _FORGED.search(low) and not REPORTING_WORDS.search(low):
        yield finding("fraud.forged_approval", "records an approval the writer cannot give",
                      block=False, tier=RiskTier.high)
        return
    if call.action_type in MESSAGE_ACTIONS:
        text = "\n".join(call.text(n) for n in TEXT_ARGUMENTS if n in call.arguments)
        claimed = _impersonated(text, call)
        if claimed is not None:
            yield finding("fraud.impersonation", f"writes as {claimed}", block=False, tier=RiskTier.high)
            return
        if _CLAIMED.search(text) and not REPORTING_WORDS.search(text.lower()):
            yield finding("fraud.claimed_approval", "claims someone's approval or authority to get "
                          "a thing done", block=False, tier=RiskTier.high)


# a word every finding below needs one of (a search skips to it), and the words of markers
_ANY_WORD = fast_regex(r"agent|secops|intercept|guardrail|approv|author|ai\b|assistant|llm|bot\b|model|instruction|ignore|disregard"
                       r"|system|directive|standing|override|prompt|policy|polic|from:|display_name|title|full_name|user\.|trailer"
                       r"|rm\s|find\s|drop\s|chmod|mkfs|false\s+positive|lead|hr\b|here\b|this\s+is|i\s+am|i'm|\[[\w-]+\]|--|legal|ceo"
                       r"|cto|cfo|manager|security|finance|compliance|budget|autonomy|permission|scope|role|tools|memory|handbook|wiki"
                       r"|password|passphrase|mfa|2fa|codes|credentials|keys?\b|tokens?\b")
_MARK_WORD = fast_regex(r"\b(?:ai|agents?|assistants?|llm|bots?|models?|instructions?|ignore|disregard|forget|system|directive"
                        r"|standing|override|jailbreak|prompt|pre-?approved|approval|reviewers?|whoever|dan|developer|admin|sys"
                        r"|inst|im_start|note)\b|<!--|\[[\w -]+\]|@[\w-]|###")
# the agents' own tables, and their API's endpoints for limits
_AGENT_TABLE = fast_regex(r"\b(?:update|insert\s+into|delete\s+from)\s+[\w\"`.]*agent\w*\b")
_AGENT_ENDPOINT = fast_regex(r"/agents?/[\w.-]+/(?:budget|tools|scopes|permissions|autonomy|roles?|limits|approvals?|settings)\b"
                             r"|\bskip_approvals?\b|\bsecops_(?:mode|bypass)\b")
# a step or a standing order, where others read it, that destroys or escalates
_PLANTED_STEP = fast_regex(
    r"(?:run|step|\d\.|clear|fix\s+is\s+to)[^\n]{0,40}[`'\"]?(?:sudo\s+)?(?:rm\s+-[a-z]*r[a-z]*f?\s+/|find\s+/\S*\s[^`]*-delete"
    r"|psql\b[^`]*drop\s+(?:schema|database|table)|drop\s+(?:schema|database)|chmod\s+-r\s+777|mkfs)"
    r"|\b(?:pre-?approved|never\s+ask\s+for\s+approval|denials?\b[^.\n]{0,40}false\s+positives?)")
# readers told to hand over what proves who they are
_CREDENTIALS_ASKED = fast_regex(
    r"\b(?:email|send|share|forward|reply\s+with|paste|give|dm|message)\b[^.\n]{0,30}\b(?:your|their|the)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:passwords?|passphrases?|mfa|2fa|otp|one-time|backup\s+codes|recovery\s+codes|credentials|private\s+keys?|ssh\s+keys?"
    r"|api\s+keys?|tokens?)\b[^.\n]{0,80}\bto\s+[\w.+-]+@")
_GUARD_OFF = fast_regex(
    r"\b(?:secops|interceptor|guardrail)\w*[\"']?\s*(?:[:=]|\bto\b)\s*[\"']?(?:0|false|off|none|disabled?|bypass)\b"
    r"|\bunset\s+secops\w*|\balias\s+secops[\w-]*=|\bsecops[_-]?(?:bypass|skip)\w*\s*=\s*1"
    r"|name\s*=\s*'secops[\w-]*'[^;]*|\bdefault\s+allow\s*(?:=|:=)\s*true\b"
    r"|interceptor[\"']?\s*:\s*[\"']?none")
_GUARD_API = fast_regex(r"(?:agent|secops|guardrail|interceptor)[^\s]*/(?:policies|policy|prompts?|system[-_]prompts?|tools"
                        r"|guardrails|secops|interceptor)(?:/|$)")
_AGENT_CONFIG = fast_regex(r"(?:^|/)\.agents?/|agent[\w-]*\.(?:json|ya?ml|toml)$")
# a commit made as, or signed off by, someone else
_GIT_IDENTITY = fast_regex(r"\bgit\b[^;&|]*-c\s+user\.(?:name|email)=[\w.@-]*(?:lead|admin|hr|security|ceo|cto)"
                           r"|--trailer\s+[\"']?(?:reviewed|approved|signed-off)-by")
_DISPLAY_AS = fast_regex(r"(?:display_name|title|full_name)[\"']?\s*:\s*[\"'][^\"']*(?:lead|head|chief|director|hr\b|security)")
# a From: header of someone else's
_SPOOFED_FROM = fast_regex(r"\bfrom:\s*[\"']?(?:[\w.-]*\s)?<?(?:hr|security|secops|ceo|cto|cfo|it|helpdesk|payroll|[\w-]+-lead)@")


def _impersonated(text: str, call: ToolCall) -> str | None:
    """A colleague or a function the message claims to be written by (the writer is none)."""
    for m in _IDENTITY.finditer(text):
        said = next(g for g in m.groups() if g)
        who = said.lower()
        if who == "it" and said != "IT":
            continue  # "not pasting it here" is no signature of IT
        if who in _FUNCTIONS or who in call.colleagues:
            return who
    return None
