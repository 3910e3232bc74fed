"""The message family: what an outgoing email or chat message says (messages.py reads
its words)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import MESSAGE_ACTIONS, TEXT_ARGUMENTS
from synthorg.secops.detectors.patterns import finding
from synthorg.secops.messages import (
    asks_privilege,
    asks_secret,
    leaks_internal,
    relayed_injection,
    shares_secret,
)
from synthorg.secops.places import hosts_in, is_internal


def message_findings(call: ToolCall, internal: Iterable[str]) -> Iterator[Finding]:
    """An outgoing message's words (see messages.py): a secret given in prose, an injected
    instruction passed on, internal data for an outside address, privileges asked for."""
    if call.action_type not in MESSAGE_ACTIONS:
        return
    names = [n for n in TEXT_ARGUMENTS if n in call.arguments]
    raw = "\n".join(call.text(n) for n in names)
    view = "\n".join(v for n in names for v in call.argument_views[n])
    if shares_secret(view):
        yield finding("secrets.in_message", "writes a password, token or key into a message")
        return
    relay = relayed_injection(raw)
    if relay is not None:
        yield finding("injection.relayed", "passes on an injected instruction to its readers",
                      block=relay == "order", tier=RiskTier.high)
        return
    to = call.text("to").lower() + " "
    outside = sorted(h for h in hosts_in(to) if not is_internal(h, internal))
    if outside and leaks_internal(raw, view):
        yield finding("exfiltration.outside_mail", f"sends internal data or an encoded file to {outside[0]}")
        return
    if asks_privilege(view):
        yield finding("privilege.requested", "asks for administrator or root privileges",
                      block=False, tier=RiskTier.high)
    elif asks_secret(raw.lower()):  # (as written: its quotes tell a quoted phishing mail)
        yield finding("secrets.requested", "asks its reader for a password, token or key",
                      block=False, tier=RiskTier.high)
