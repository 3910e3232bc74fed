"""People's records read in bulk: a query (or a GraphQL request) that selects identity,
contact, location, pay, health or payment details of many people, where the work needs a
count, one customer's row or none of it. A person is asked: analytics and support read such
columns too, but rarely several of them for everyone."""

from __future__ import annotations

import re
from collections.abc import Iterator

from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.patterns import asked
from synthorg.secops.normalise import fast_regex

# a column that says something private about a person (a name or an email alone does not)
_PERSONAL_COLUMN = re.compile(
    r"\b(?:national_id|ssn|social_security\w*|passport\w*|tax_id|date_of_birth|dob|birth_?date|home_address|address"
    r"|addresses|billing_address|line1|postcode|zip_?code|phone|phones|phone_number|mobile|last_ip|last_login_ip|ip_address"
    r"|geo_\w+|\w*salary|bonus\w*|compensation|medical\w*|diagnos\w*|health\w*|disabilit\w*|card_\w+|last4|iban"
    r"|account_number|paymentmethods)\b")
# a column found only in records no work reads in bulk
_INTIMATE_COLUMN = re.compile(r"national_id|ssn|social_security|passport|tax_id|salary|compensation|medical|diagnos"
                              r"|health|disabilit|iban|account_number")
_SELECTED = fast_regex(r"\bselect\s+(?!count\s*\(\s*\*?\s*\)\s+from\b)([\s\S]{1,400}?)\s+from\s")
# count(x), round(avg(salary)): a figure, not the column's values; `AS avg_salary` names the figure
_CALLED = re.compile(r"\b\w+\s*\([^()]*\)|\bas\s+\w+")
# one row, by its key: a customer's own record read for their request (a view may have lost the quotes)
_KEY_EQUALS = re.compile(r"(?<![\w.])[\w.]*id\s*=\s*(?:'[^']*'|[\w-]+(?![\w.-])|\$\d|%s|\?|:\w+)")
_GRAPHQL_MANY = fast_regex(r"\b\w+\s*\(\s*(?:first|last|limit|take)\s*:\s*\d{3,}")


def privacy_findings(call: ToolCall, views: tuple[str, ...]) -> Iterator[Finding]:
    if call.action_type == "net:http":
        body = call.text("body").lower()
        if _GRAPHQL_MANY.search(body) and _private(body):
            yield asked("privacy.bulk_personal_read", "asks an API for the private details of many people")
        return
    if call.action_type not in ("db:query", "code:python", "code:shell"):
        return
    for v in views:
        if "select" not in v:
            continue
        for m in _SELECTED.finditer(v):
            if _private(_figures_out(m.group(1))) and not _one_row(v[m.end():].split(";", 1)[0]):
                yield asked("privacy.bulk_personal_read", "reads the private details (identity, contact, "
                            "pay, health or payment) of many people")
                return


def _one_row(statement: str) -> bool:
    """Whether the statement's WHERE pins one row by its key (and nothing ORs more in)."""
    where = statement.find("where")
    return where >= 0 and not re.search(r"\bor\b", statement[where:]) and bool(_KEY_EQUALS.search(statement, where))


def _figures_out(columns: str) -> str:
    for _ in range(4):  # (nested calls, innermost first)
        columns, n = _CALLED.subn(" ", columns)
        if not n:
            break
    return columns


def _private(columns: str) -> bool:
    found = set(_PERSONAL_COLUMN.findall(columns))
    return len(found) >= 2 or any(_INTIMATE_COLUMN.search(c) for c in found)
