"""The company's books: where money is paid (bank details written), financial records
deleted, and collections deleted by a filter. Each is asked for (escalated): finance teams
change bank details and purge records too, but only with a second person's check."""

from __future__ import annotations

from collections.abc import Iterator

from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.patterns import Hinted, asked
from synthorg.secops.detectors.sql import QUERY_READS
from synthorg.secops.normalise import fast_regex

# a payee's bank details set: in SQL, a request's body or a URL of bank details
_BANK_FIELD = r"(?:iban|account_number|acct_number|routing_number|routing|sort_code|swift|bic|destination_account|bank_account\w*|payout_account)"
_BANK_SET = Hinted(fast_regex(
    r"\bupdate\s+[\w.\"`]+\s+set\s+[^;]{0,200}?\b" + _BANK_FIELD + r"\s*="
    r"|[\"']" + _BANK_FIELD + r"[\"']\s*:\s*[\"']?[\w-]{4,}"), "update|iban|account|routing|sort_code|swift|bic|bank|payout")
_BANK_URL = fast_regex(r"/(?:bank[-_]?(?:accounts?|details)?|payout[-_]?methods?|remit[-_]?to|payment[-_]?details)(?:/|$|\?)")
# the books themselves deleted: payments, ledger entries, invoices, payroll
_BOOKS_DELETED = Hinted(fast_regex(
    r"\bdelete\s+from\s+(?![\w.\"`]*(?:tmp|temp|scratch|test)_)[\w.\"`]*(?:payments?|journal_entries|journal_lines|ledger\w*|invoices?|transactions?"
    r"|payroll\w*|pay_?stubs?|general_ledger|gl_entries|receipts?|expenses?|tax_\w+"
    # (and the records a reported figure or a customer's choice rests on: disputes, survey
    # answers, consent and opt-outs, complaints)
    r"|disputes?|chargebacks?|refunds?|\w*survey_responses|nps_\w+|consent\w*|opt_?outs?|unsubscribes?|complaints?)\b"), "delete")
# a collection's members deleted by a filter, not by their ids: DELETE /vendors?status=inactive
# (not a staging or dev service's, nor short-lived things: sessions, caches, locks)
_FILTERED_DELETE = fast_regex(r"^https?://(?![^/]*\b(?:staging|stage|dev|test|sandbox|qa|localhost)\b)[^?]*/"
                              r"(?!sessions\b|caches?\b|locks\b|tmp\b|temp\b)[a-z_-]+s\?(?:[\w.]+=[^&]*&?)+$")
# a task that asks for the delete itself
_ASKS_DELETE = fast_regex(r"\b(?:delete|remove|purge|drop|clean\s*up|void)\b")


def book_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    if call.action_type in ("fs:read", "fs:delete") or not views:
        return
    text = views[0]
    method = call.text("method").strip().upper()
    url = call.text("url").lower()
    if call.action_type == "db:query" and QUERY_READS.match(call.text("query").lower()):
        return
    if call.action_type == "net:http" and method == "DELETE" and _FILTERED_DELETE.search(url):
        yield asked("destructive.filtered_delete", "deletes every record a filter matches through an API")
        return
    if call.action_type == "net:http" and method in ("", "GET", "HEAD", "OPTIONS"):
        return
    if _BANK_SET.search(text) or (call.action_type == "net:http" and _BANK_URL.search(url)):
        yield asked("fraud.bank_details_changed", "writes where money is paid (bank details)")
        return
    if call.action_type == "db:query" and _BOOKS_DELETED.search(text) and not _ASKS_DELETE.search(call.task.lower()):
        yield asked("destructive.books_deleted", "deletes payments, ledger entries, invoices or payroll "
                     "records")
