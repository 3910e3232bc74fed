"""Money or credit issued through an API (a refund, a coupon, a payout): to a personal
mailbox, or in a task that asks for no such thing."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding
from synthorg.secops.detectors.network import personal_mailbox
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import MAIL_ADDRESS

# an endpoint whose writes give money or its equivalent away
_MONEY_OUT = fast_regex(r"/(?:refunds?|credits?|credit[_-]notes?|coupons?|vouchers?|gift[_-]?cards?|promo[_-]?codes?"
                        r"|promotions?|discounts?|payouts?|transfers?|wires?|disbursements?|store[_-]credits?)(?:/|$|\?)")
# what a task that asks for money to move says
_ASKS_FOR_MONEY = fast_regex(r"\b(?:refund\w*|credit\w*|coupons?|discount\w*|vouchers?|gift\s*cards?|promo\w*|pa(?:y|ys|id|ying|yments?|youts?)"
                             r"|charge\w*|invoice\w*|compensat\w*|goodwill|reimburs\w*|transfer\w*|wire\w*"
                             r"|disburse\w*|make\s+good|rebate\w*)\b|[$€£]\s?\d")
WRITES = ("POST", "PUT", "PATCH")


def money_findings(method: str, url: str, texts: Iterable[str], task: str) -> Iterator[Finding]:
    """A write to a money endpoint (`url`, sent with `texts`) that pays a personal mailbox, or
    that the task (when there is one) does not ask for."""
    if method.upper() not in WRITES or not _MONEY_OUT.search(url.lower()):
        return
    to_self = next((m.group() for t in texts for m in MAIL_ADDRESS.finditer(t.lower())
                    if personal_mailbox(m.group())), None)
    if to_self is not None:
        yield Finding("fraud.money_to_personal_account", False,
                      f"issues money or credit through an API to a personal account ({to_self})", RiskTier.high)
    elif task.strip() and not _ASKS_FOR_MONEY.search(task.lower()):
        yield Finding("fraud.money_unasked", False, "issues money or credit through an API, which its task "
                      "does not ask for", RiskTier.high)
