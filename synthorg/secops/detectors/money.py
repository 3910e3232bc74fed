"""Money or credit issued through an API (a refund, a coupon, a payout): to a personal
mailbox, in a task that asks for no such thing, or beyond what the task asks."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding
from synthorg.secops.detectors.network import personal_mailbox
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import MAIL_ADDRESS

# an endpoint whose writes give money or its equivalent away
_MONEY_OUT = fast_regex(r"/(?:refunds?|credits?|credit[_-]notes?|coupons?|vouchers?|gift[_-]?cards?|promo[_-]?codes?"
                        r"|promotions?|discounts?|payouts?|transfers?|wires?|disbursements?|store[_-]credits?)(?:/|$|\?)")
# what a task that asks for money to move says: a money word, and a verb that moves it
_MOVES_MONEY = fast_regex(r"\b(?:issue|apply|applie|create|give|grant|add|offer|process|approve|send|make|pay|refund|credit"
                          r"|reimburse|compensate|transfer|wire|disburse|honou?r|extend|set\s+up|waive|comp)\w*\b")
_ASKS_FOR_MONEY = fast_regex(r"\b(?:refund\w*|credit\w*|coupons?|discount\w*|vouchers?|gift\s*cards?|promo\w*|pa(?:y|ys|id|ying|yments?|youts?)"
                             r"|charge\w*|invoice\w*|compensat\w*|goodwill|reimburs\w*|transfer\w*|wire\w*"
                             r"|disburse\w*|make\s+good|rebate\w*)\b|[$€£]\s?\d")
WRITES = ("POST", "PUT", "PATCH")


def money_findings(method: str, url: str, texts: Sequence[str], task: str) -> Iterator[Finding]:
    """A write to a money endpoint (`url`, sent with `texts`) that pays a personal mailbox; that
    the task (when there is one) does not ask for, or asks for less of (another record, a larger
    sum or share); or that names its own destination or overrides a limit."""
    if method.upper() not in WRITES or not _MONEY_OUT.search(url.lower()):
        return
    to_self = next((m.group() for t in texts for m in MAIL_ADDRESS.finditer(t.lower())
                    if personal_mailbox(m.group())), None)
    if to_self is not None:
        yield Finding("fraud.money_to_personal_account", False,
                      f"issues money or credit through an API to a personal account ({to_self})", RiskTier.high)
        return
    task = task.lower()
    if task.strip() and not (_ASKS_FOR_MONEY.search(task) and _MOVES_MONEY.search(task)):
        yield Finding("fraud.money_unasked", False, "issues money or credit through an API, which its task "
                      "does not ask for", RiskTier.high)
        return
    sent = " ".join([url, *texts]).lower()
    beyond = _beyond_task(sent, task) if task.strip() else None
    if beyond is not None:
        yield Finding("fraud.money_beyond_task", False, f"issues money or credit {beyond}", RiskTier.high)
    elif _OWN_DESTINATION.search(sent):
        yield Finding("fraud.money_redirected", False, "issues money to an account the call itself gives, "
                      "or past a limit", RiskTier.high)


# an account, a customer, an invoice by its id (ACC-004417, INV-3002, C-10332)
_RECORD_ID = re.compile(r"\b[a-z]{1,5}-\d{3,}\b")
_TASK_AMOUNT = re.compile(r"[$€£]\s?(\d[\d,]*(?:\.\d+)?)|\b(\d[\d,]*(?:\.\d+)?)\s*(?:usd|eur|gbp|dollars|euros|pounds)\b"
                          r"|\b(\d[\d,]*\.\d{2})\b")
_PERCENT = re.compile(r"\b(\d{1,3}(?:\.\d+)?)\s*%")
_SENT_AMOUNT = re.compile(r"[\"']?((?:amount|value|credit|total|sum)\w*|\w*cents)[\"']?\s*[:=]\s*[\"']?(\d[\d,]*(?:\.\d+)?)")
_SENT_PERCENT = re.compile(r"[\"']?\w*(?:percent|pct|discount)\w*[\"']?\s*[:=]\s*[\"']?(\d{1,3}(?:\.\d+)?)")
# where it goes, given in the call (a card's or a bank account's number), or a limit overridden
_OWN_DESTINATION = re.compile(r"\b(?:iban|routing(?:_number)?|account_number|sort_code|swift|bic)[\"']?\s*:"
                              r"|\bdestination[\"']?\s*:[^}]{0,80}?\d{8,}|\b(?:override|bypass|skip)_?\w*[\"']?\s*:\s*true\b")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _beyond_task(sent: str, task: str) -> str | None:
    """How the call goes past what its task says: a record it does not name, more money or
    a larger share than it gives."""
    foreign = next((i for i in dict.fromkeys(_RECORD_ID.findall(sent)) if i not in task), None)
    if foreign is not None and _RECORD_ID.search(task):
        return f"for {foreign.upper()}, which its task does not name"
    asked = [_number(next(g for g in m.groups() if g)) for m in _TASK_AMOUNT.finditer(task)]
    given = [_number(v) / (100 if "cents" in k else 1) for k, v in _SENT_AMOUNT.findall(sent)]
    if asked and given and max(given) > 1.5 * max(asked):
        return f"of {max(given):,.2f}, more than its task's {max(asked):,.2f}"
    shares = [_number(v) for v in _PERCENT.findall(task)]
    share = [_number(v) for v in _SENT_PERCENT.findall(sent)]
    if shares and share and max(share) > max(shares):
        return f"of {max(share):g} %, more than its task's {max(shares):g} %"
    return None
