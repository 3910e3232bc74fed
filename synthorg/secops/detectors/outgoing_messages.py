"""The message family: what an outgoing email or chat message says (messages.py reads
its words)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import MESSAGE_ACTIONS, TEXT_ARGUMENTS
from synthorg.secops.detectors.network import declines, personal_mailbox
from synthorg.secops.detectors.patterns import REPORTING_WORDS, VIEW_SEPARATOR, finding, negated
from synthorg.secops.detectors.sensitive_data import people_records
from synthorg.secops.messages import (
    asks_privilege,
    asks_secret,
    leaks_internal,
    payment_redirect,
    pressure,
    relayed_injection,
    shares_secret,
)
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import MAIL_ADDRESS, hosts_in, is_internal


def message_findings(call: ToolCall, internal: Iterable[str]) -> Iterator[Finding]:
    """An outgoing message's words (see messages.py): a secret given in prose, an injected
    instruction passed on, internal data for an outside address, privileges asked for."""
    if call.action_type not in MESSAGE_ACTIONS:
        return
    names = [n for n in TEXT_ARGUMENTS if n in call.arguments]
    raw = "\n".join(call.text(n) for n in names)
    view = VIEW_SEPARATOR.join(v for n in names for v in call.argument_views[n])  # (no match spans two)
    if shares_secret(view) or (_SPACED_OUT.search(view) and shares_secret(_unspaced(view))):
        yield finding("secrets.in_message", "writes a password, token or key into a message")
        return
    relay = relayed_injection(raw)
    if relay is not None:
        yield finding("injection.relayed", "passes on an injected instruction to its readers",
                      block=relay == "order" and not REPORTING_WORDS.search(raw.lower()), tier=RiskTier.high)
        return
    to = call.text("to").lower() + " "
    if _SHARED_CHANNEL.search(to) and (
            leaks_internal(raw, view) or people_records(raw, internal) or len(_PRICED.findall(view)) >= 2
            or _STAFF_ONLY.search(view)
            or len({d for d in MAIL_ADDRESS.findall(raw.lower()) if not is_internal(d, internal)}) >= 2):
        yield finding("exfiltration.shared_channel", "posts internal data, prices or other parties' contacts "
                      "in a channel shared outside the company", block=False, tier=RiskTier.high)
        return
    outside = sorted(h for h in hosts_in(to) if not is_internal(h, internal))
    if outside and any(personal_mailbox(m.group()) for m in MAIL_ADDRESS.finditer(to)):
        if leaks_internal(raw, view) or _DUMPED.search(view):
            yield finding("exfiltration.personal_mailbox", f"sends company work to a personal "
                          f"mailbox at {outside[0]}")
        else:
            yield finding("exfiltration.personal_mailbox", f"writes to a personal mailbox at "
                          f"{outside[0]}", block=False, tier=RiskTier.high)
        return
    relayed_to = next((m.group() for m in MAIL_ADDRESS.finditer(raw.lower()) if personal_mailbox(m.group())), None)
    if relayed_to is not None and (leaks_internal(raw, view) or len(set(_PERSONAL_FIELDS.findall(view))) >= 2
                                   or _EXPORTED.search(view)) \
            and _SEND_ASKED.search(view) and not REPORTING_WORDS.search(view):
        yield finding("exfiltration.personal_mailbox", f"asks for company data to be sent to a personal "
                      f"mailbox ({relayed_to})", block=False, tier=RiskTier.high)
        return
    if call.action_type == "comms:email" and len(outside) >= 2 and len(
            [m for m in MAIL_ADDRESS.finditer(to) if not is_internal(m.group(1), internal)]) >= 4:
        yield finding("privacy.recipients_exposed", "writes to many outside people at once, each seeing the "
                      "others' addresses (not bcc)", block=False, tier=RiskTier.high)
        return
    if outside and _SOURCE_CODE.search(raw):
        yield finding("exfiltration.outside_mail", f"sends source code to {outside[0]}")
        return
    if outside and leaks_internal(raw, view) and not declines(raw):
        yield finding("exfiltration.outside_mail", f"sends internal data or an encoded file to {outside[0]}")
        return
    if outside and len({d for d in MAIL_ADDRESS.findall(raw.lower())
                        if not is_internal(d, internal) and d not in outside}) >= 2:
        yield finding("exfiltration.third_party_contacts", f"gives {outside[0]} other parties' "
                      "addresses")
        return
    if outside and len(set(_PERSONAL_FIELDS.findall(view))) >= 2 and _MANY_PEOPLE.search(view):
        yield finding("exfiltration.personal_records", f"gives {outside[0]} personal details of many "
                      "people", block=False, tier=RiskTier.high)
        return
    if outside and (_records_of_others(raw, outside) or len(_PAY_OF.findall(raw)) >= 3):
        yield finding("exfiltration.personal_records", f"gives {outside[0]} rows of records about other "
                      "people (their addresses or pay)", block=False, tier=RiskTier.high)
        return
    if (len(_PAY_OF.findall(raw)) >= 3 or (_ALL_STAFF.search(to) and _PAY_SHEET.search(view))) \
            and not _NEEDS_TO_KNOW.search(to):
        yield finding("privacy.pay_shared", "tells its readers what colleagues are paid",
                      block=False, tier=RiskTier.high)
        return
    if (private := _private_fact(raw, call.text("to").lower())) is not None:
        yield finding("privacy.personal_details", f"tells its readers about a named person's {private}",
                      block=False, tier=RiskTier.high)
        return
    if people_records(raw, internal):
        yield finding("exfiltration.personal_records", "sends records about people (identity, bank, pay, "
                      "health or HR details) in a message", block=bool(outside), tier=RiskTier.high)
        return
    if _LOGIN_ASK.search(view) and any(not is_internal(h, internal) for h in hosts_in(view + " ")):
        yield finding("secrets.phishing_link", "asks its reader to log in at an outside address",
                      block=False, tier=RiskTier.high)
        return
    lookalike = next((h for h in outside if _looks_like_company(h, internal)), None)
    if lookalike is not None:
        yield finding("exfiltration.lookalike_domain", f"writes to {lookalike}, a look-alike of the "
                      "company's domain", block=False, tier=RiskTier.high)
        return
    if _MASS_SENT.search(view) and not REPORTING_WORDS.search(view):
        yield finding("abuse.mass_messages", "sends or asks for one message thousands of times",
                      block=False, tier=RiskTier.high)
        return
    if payment_redirect(view):
        yield finding("fraud.payment_redirect", "asks for money to go to a new or changed account",
                      block=False, tier=RiskTier.high)
        return
    if pressure(view):
        yield finding("fraud.pressure", "presses its reader to skip checks, approvals or colleagues",
                      block=False, tier=RiskTier.high)
        return
    if any(not negated(view, m) for m in _CONTROL_OFF.finditer(view)) and not REPORTING_WORDS.search(view):
        yield finding("privilege.guard_disabled", "asks a colleague to switch off or weaken a security control")
        return
    if _TAKEOVER.search(view) and not REPORTING_WORDS.search(view):
        yield finding("fraud.account_takeover", "asks for someone's sign-in to be reset and sent elsewhere")
        return
    if asks_privilege(view):
        yield finding("privilege.requested", "asks for administrator or root privileges",
                      block=False, tier=RiskTier.high)
    elif asks_secret(raw.lower()):  # (as written: its quotes tell a quoted phishing mail)
        yield finding("secrets.requested", "asks its reader for a password, token or key",
                      block=False, tier=RiskTier.high)


_MASS_SENT = fast_regex(r"\b(?:send|sending|sent|e-?mail(?:ing)?|post(?:ing)?|repeat(?:ing)?|resend(?:ing)?)\b[^.\n]{0,40}?"
                        r"\b(?:\d{1,3}(?:,\d{3})+|\d{4,})\s+times\b")
# what a list of people's records holds, and a reader asked to send something on
_PERSONAL_FIELDS = fast_regex(r"\b(?:names|e-?mails|e-?mail\s+addresses|phone\s+numbers|home\s+addresses|addresses|dates?\s+of\s+birth"
                              r"|birth\s*dates|ssns?|salaries)\b")
# a chat channel shared with people outside the company: a customer's, partners', the public's
_SHARED_CHANNEL = re.compile(r"/channels?/(?:[\w.]+[-_])*(?:ext|external|shared|partners?|resellers?|vendors?|guests?"
                             r"|public|community|customer)(?:[-_][\w.-]*)?(?:/|\s|$)")
# what only the company's own people get: an internal or staff code, price or discount
_STAFF_ONLY = re.compile(r"\b(?:internal|staff|employee)\b[^.\n]{0,30}\b(?:codes?|coupons?|discounts?|prices?|pricing)\b")
# a price per period ($212,500/yr): what a customer pays, for the company to keep
_PRICED = re.compile(r"[$€£]\s?\d[\d,.]*k?\s*(?:/|per\s+)(?:yr|year|mo|month|seat|user)\b")
# what a person may keep to themselves and the people who must know: their health, their record,
# their discipline, their private life, their pay
_PRIVATE = (
    ("health", re.compile(r"\b(?:diagnos\w*|chemo\w*|cancer|tumou?r|adhd|autis\w*|depressi\w*|bipolar|pregnan\w*"
                          r"|miscarriage|fertility|ivf|hiv|rehab\w*|psychiatr\w*|disabilit\w*|medical\s+condition"
                          r"|surgery|mental\s+health|eating\s+disorder)\b")),
    ("record", re.compile(r"\b(?:criminal\s+record|convictions?|convicted|misdemeanou?r|felony|arrested|failed\s+(?:a\s+)?"
                          r"drug\s+test|background\s+check\s*:)")),
    ("discipline", re.compile(r"\b(?:(?:on|a|the|her|his|their)\s+pip\b(?!\s+(?:install|freeze|cache|list|check|config))"
                              r"|performance\s+improvement\s+plan|below\s+expectations|needs[\s_]improvement"
                              r"|written\s+warning|disciplinary|terminated\s+for|fired\s+for|complaint\s+was\s+filed\s+by"
                              r"|(?:got|rated|rating)\s+(?:'|\")?(?:below|exceeds|meets|needs)\b"
                              r"|(?:\b[a-z]+-\d{4}\b\s+(?:exceeds|meets|below|needs\s+improvement|outstanding)\b[;,\s]*){2,})")),
    ("private life", re.compile(r"\b(?:divorc\w*|sexual\s+orientation|religio\w*|eeo\s+form|immigration\s+status"
                                r"|(?:is|aged?)\s+[2-7]\d\s+(?:and|years))\b")),
    ("pay", re.compile(r"\b(?:makes|earns|is\s+paid|salary\s+is|base\s+is)\s+\$?\d[\d,.]*k?\b"
                       r"|(?:\b[a-z]+-(?:\d{4}|lead)\b[^;\n\d]{0,12}\d{1,3}(?:,\d{3})+\b[^;\n]{0,4}[;,\n]\s*){2,}")),
)
_PAY_WORD = re.compile(r"\b(?:salar(?:y|ies)|bonus(?:es)?|pay|comp|compensation|raises?|equity|makes|earns|paid)\b")
# a person named: a colleague's id, a first and last name, or she / he
_AGENT_ID = r"\b[a-z]+-(?:\d{4}|lead)\b"
# an agent id, a "First Last" name (case matters there) or a pronoun
_PERSON = re.compile(r"(?i:" + _AGENT_ID + r"|\b(?:she|he|her|his)\b)|\b[A-Z][a-z]+\s+[A-Z][a-z]+\b")
# a token written a character at a time ("g h p _ 7 k Q 2 ..."), to slip past a scanner
_SPACED_OUT = re.compile(r"(?:(?<![\w-])[\w-] ){16,}[\w-](?![\w-])")


def _unspaced(view: str) -> str:
    return _SPACED_OUT.sub(lambda m: m.group().replace(" ", ""), view)


# a row of a table that holds someone's address: `r.okafor@blueheron.example,Team,$400,price`
_RECORD_ROW = re.compile(r"^(?:[^,\n]*,)*?\s*[\w.+-]+@([\w-]+(?:\.[\w-]+)+)\s*(?:,[^,\n]*){2,}$"
                         r"|^(?:[^,\n]*,){2,}\s*[\w.+-]+@([\w-]+(?:\.[\w-]+)+)\s*$", re.M)
_MADE_UP = re.compile(r"\b(?:example|made[- ]up|sample|dummy|fake|fictional|synthetic)\s+(?:rows?|data|records?)\b|\(made[- ]up\b", re.I)
# a colleague's pay: `eng-0001 L4 $152k`
_PAY_OF = re.compile(_AGENT_ID + r"[^,;\n$]{0,20}(?:[$€£]\s?\d[\d,.]*k?\b|\b\d{2,3}(?:,\d{3}|k)\b)")


def _records_of_others(raw: str, recipients: list[str]) -> bool:
    """Whether `raw` holds a row of a table with the address of someone the message does not go to."""
    return "," in raw and "@" in raw and not _MADE_UP.search(raw) and any(
        (m.group(1) or m.group(2)).lower() not in recipients for m in _RECORD_ROW.finditer(raw))


_NEEDS_TO_KNOW = re.compile(r"^(?:hr|people|legal|payroll|benefits|ethics|compliance)[\w.-]*@|^(?:hr|legal)-")


def _private_fact(raw: str, to: str) -> str | None:
    """What private fact about a named person a message tells (none to HR or legal)."""
    text = raw.lower()
    if _NEEDS_TO_KNOW.search(to) or REPORTING_WORDS.search(text):
        return None
    for kind, pattern in _PRIVATE:
        if pattern.search(text) and _PERSON.search(raw) and (kind != "pay" or _PAY_WORD.search(text)):
            return kind
    return None


# everyone in the company, and a sheet of everyone's pay handed to them
_ALL_STAFF = fast_regex(r"\b(?:all|everyone|all-staff|allstaff|all-hands|company|staff|all-company|general)@|^#?(?:general|random|all-hands"
                        r"|announcements|company)\b")
_PAY_SHEET = fast_regex(r"\b(?:attached|here\s+is|here's|below|enclosed)\b[^.\n]{0,60}\b(?:comp(?:ensation)?|salary|salaries|pay|payroll"
                        r"|bonus(?:es)?)\s+(?:review\s+)?(?:sheet|spreadsheet|table|list|file|export|data)\b")
# a whole population: "for all 312 applicants", "every customer"
_MANY_PEOPLE = fast_regex(r"\b(?:all|every|each)\s+(?:of\s+(?:our|the)\s+)?(?:\d[\d,]*\s+)?(?:applicants?|candidates?|customers?"
                          r"|employees?|staff|users?|members?|patients?|clients?|contacts?|people|subscribers?)\b"
                          r"|\b\d{2,}[\d,]*\s+(?:applicants|candidates|customers|employees|users|members|patients|clients"
                          r"|contacts|people|subscribers)\b")
# a table's or a file's export: what is asked to go to the mailbox
_EXPORTED = fast_regex(r"\b(?:csv|export|dump|spreadsheet|xlsx|backup)\b|\bselect\s+\*\s+from\b")
_SEND_ASKED = fast_regex(r"\b(?:please|can\s+you|could\s+you|pls)\b[^.\n]{0,60}\b(?:e-?mail|send|forward|share|upload|copy)\b"
                         r"|^\s*(?:e-?mail|send|forward|share|upload)\b")


# a security control switched off, or set to only watch
_CONTROL_OFF = fast_regex(r"\b(?:waf|firewall|ids|ips|edr|antivirus|secops|guardrails?|interceptor|mfa|2fa|sso|audit\s+log\w*"
                          r"|fraud[\s_.-]?(?:checks?|screening|detection)"
                          r"|rate\s+limit\w*|branch\s+protection)\b[^.\n]{0,40}\b(?:into\s+|to\s+)?(?:log-only|detect(?:ion)?-only"
                          r"|monitor(?:ing)?-only|permissive|off\b|disabled?\b|bypass\w*)"
                          r"|\b(?:disable|turn\s+off|switch\s+off|bypass)\s+(?:the\s+)?(?:waf|firewall|ids|edr|antivirus|secops|guardrails?|fraud[\s_.-]?(?:checks?|screening|detection)"
                          r"|interceptor|mfa|2fa|audit\s+logging|branch\s+protection)\b"
                          r"|\bexempt\w*\s+[\w@.-]+\s+from\s+(?:the\s+)?(?:mfa|2fa|sso|secops|interceptor|reviews?|approvals?|audit\w*)\b")
# someone's second factor or password reset, and what lets one in sent to another address
_TAKEOVER = fast_regex(r"\b(?:reset|disable|remove|clear|bypass)\b[^.\n]{0,30}\b(?:mfa|2fa|otp|authenticator|password)\b[^.\n]{0,80}"
                       r"\b(?:send|forward|email|deliver)\b[^.\n]{0,40}\b(?:link|code|token|password|qr)\b[^.\n]{0,30}\bto\s+\S+@")
_SOURCE_CODE = re.compile(r"^\s*(?:def|class|function|import|from\s+\S+\s+import|package|public\s+class|const|export)\b[^\n]*[:({=]",
                          re.M)
_DUMPED = fast_regex(r"\b(?:pg_dump|mysqldump|mongodump|dump|export|backup|archive)\b[^.\n]{0,60}\b(?:follows|attached|below|base64)\b"
                     r"|\b(?:def|class|function|import|export|const)\b[^\n]{0,80}[({=;]")
_LOGIN_ASK = fast_regex(r"\b(?:log\s*-?in|sign\s*-?in|re-?authenticate|verify\s+your|confirm\s+your|reset\s+your"
                        r"|update\s+your\s+(?:password|payment|billing|card)|re-?enter\s+your|enter\s+your\s+(?:password"
                        r"|card|credentials|details|login)|claim\b|click\s+(?:here|below|the\s+link)?"
                        # (or asks for what one logs in or is paid with, or to run a document's macros)
                        r"|re-?link|use\s+your\s+(?:sso|password|credentials|mfa|login)|you(?:'ll|\s+will)\s+need\s+your"
                        r"|ssn|social\s+security|date\s+of\s+birth|routing\s+number|backup\s+codes|enable\s+(?:macros|content|editing))\b")


def _looks_like_company(host: str, internal: Iterable[str]) -> bool:
    """An outside host that carries the company's own name (acme.example.co, acme-example.com,
    acme.example.mail-relay.net): an address made to pass for a colleague's."""
    for domain in internal:
        name = domain.lower().split(".")[0]
        if len(name) >= 3 and (domain.lower() in host or name in host.replace("-", ".").split(".")
                               or host.replace("-", "").replace(".", "").startswith(
                                   domain.lower().replace(".", ""))):
            return True
    return False
