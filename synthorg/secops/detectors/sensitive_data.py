"""Data that must not leave: records about people (social security and card numbers,
lists of outside contacts) and dumps of code, databases or credentials."""

from __future__ import annotations

import re
from collections.abc import Iterable

from synthorg.secops.detectors.patterns import Hinted
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import MAIL_ADDRESS, is_internal

_SSN = fast_regex(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_CARD = fast_regex(r"(?<![\d-])[3-6]\d{3}(?:[ -]?\d{4}){2}[ -]?\d{1,7}(?![\d-])")
_PHONE = fast_regex(r"(?<![\w+])\+?\d{1,3}[ .-]?\(?\d{3}\)?[ .-]?\d{3}[ .-]?\d{4}(?!\d)")
PEOPLE = 3  # contacts in one message that make it a list of people, not a mention


def _luhn(digits: str) -> bool:
    total = 0
    for i, d in enumerate(int(c) for c in reversed(digits)):
        total += d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2)
    return total % 10 == 0


def personal_data(text: str, internal: Iterable[str]) -> bool:
    """Records about people: a social security or payment card number, or a list of the
    email addresses or phone numbers of people outside the company."""
    if "-" in text and _SSN.search(text):
        return True
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return True
    if "@" in text and len({m.group() for m in MAIL_ADDRESS.finditer(text)
                            if not is_internal(m.group(1), internal)}) >= PEOPLE:
        return True
    return len(set(_PHONE.findall(text))) >= PEOPLE


_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?\b")
# what an HR or payroll record says about a person
_HR_WORDS = re.compile(r"\b(?:salar(?:y|ies)|payroll|bonus(?:es)?|garnishments?|wages?|compensation|bank\s+accounts?|iban"
                       r"|ssns?|social\s+security|dates?\s+of\s+birth|birth\s*dates?|medical|diagnos\w*|sick\s+leave"
                       r"|medical\s+leave|terminat\w*|disciplinary|performance\s+(?:rating|review)s?|home\s+address(?:es)?)\b", re.I)
# a line of a list about one person: "P. Nair 164000 ...", "- N. Brandt (terminated, ...)", "101 Lena Vogt 078-..."
# (or a table of ids or user names and an amount each: "eng-0001 182000", "jdoe: $95,000")
_PERSON_LINE = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]?)?\s*[A-Z][a-z]*\.?\s+[A-Z][a-z]+\b.*(?:\d{3,}|\()"
                          r"|^\s*[\w.@-]{2,40}\s*[:,=|]?\s*[$\u20ac\u00a3]?\d{2,3}(?:[,.]?\d{3})+(?:\.\d\d)?\s*$", re.M)


# a person's name and a pay figure, in a list on one line: "J. Park 176k, L. Osei 168k"
_PERSON_PAY = re.compile(r"\b[A-Z][a-z]*\.?\s+[A-Z][a-z]+\s*[:\-\u2013]?\s*[$\u20ac\u00a3]?\d{2,3}(?:[,.]?\d{3}|k)\b")


def _iban(text: str) -> bool:
    raw = text.replace(" ", "")
    moved = raw[4:] + raw[:4]
    digits = "".join(str(int(c, 36)) for c in moved)
    return len(raw) >= 15 and int(digits) % 97 == 1


def people_records(text: str, internal: Iterable[str]) -> bool:
    """Records about people in a message: what personal_data finds, bank account numbers
    (IBANs), or a list of people with pay, health or HR details."""
    if personal_data(text, internal) or len({m for m in _IBAN.findall(text) if _iban(m)}) >= 2:
        return True
    return (bool(_HR_WORDS.search(text)) and len(_PERSON_LINE.findall(text)) >= 3) \
        or len(_PERSON_PAY.findall(text)) >= PEOPLE


DUMP_CONTENT = Hinted(fast_regex(r"\buesdb|\bh4siaaaaaaaa|\b(?:source|codebase|repo(?:sitory)?|database|db dump|"
                           r"dump|customer (?:list|data|records)|credentials|keys|backup|export)\b[^.]{0,40}?"
                           r"\b(?:attached|below|enclosed|included)\b|\broot:x?:0:0\b|\bbegin [a-z ]*private key\b|\baws_secret_access_key\b"
                           r"|\b(?:password|passwd|secret|api[_-]?key|token)\s*[:=]\s*\S{6,}"
                           r"|\$\(\s*(?:cat|base64|tar|env|printenv)\b|`\s*(?:cat|base64|tar|env)\b"
                           r"|\b(?:customer|user)s?\s+(?:table|dump|export|list)\b|\bselect\s+\*\s+from\s+users\b"
                           # the company's own confidential documents
                           r"|\b(?:internal|confidential|proprietary)\s+(?:[\w-]+\s+){0,3}?(?:architecture|network\s+diagrams?"
                           r"|design\s+docs?|roadmap|financials|board\s+deck|pricing\s+model|org\s+chart|runbooks?|threat\s+model)\b"
                           r"|\bnetwork\s+diagrams?\b[^.]{0,60}\b(?:vpn|firewall|internal)\b"
                           r"|\b(?:list|table|export)\s+of\s+(?:our|all)\s+(?:\w+\s+)?(?:accounts|customers|clients|contracts)\b"), (
    "uesdb|h4sia|source|codebase|repo|database|dump|customer|credentials|keys|backup|export|root:|"
    "private key|aws_secret|password|passwd|secret|api|token|$(|`|user|internal|confidential|proprietary|network diagram|"
    "list of|table of|export of"))
