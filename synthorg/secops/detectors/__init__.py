"""The fast path's detectors: deterministic checks of a call's arguments, one family a
module.

Each detector reads the call's views (normalise.py: the arguments with quoting, escaping,
substitutions, variables, encodings and comments taken off) and returns findings: a
*blocking* finding is a hard rule (denied whatever the agent's autonomy or an approval), an
*uncertain* one goes to the slow path. Patterns are written for views: lower-case, one
space between words.
"""

from __future__ import annotations

from collections.abc import Iterable

from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.call_views import code_views
from synthorg.secops.detectors.credentials import secret_findings
from synthorg.secops.detectors.destructive import destructive_findings
from synthorg.secops.detectors.injection import injection_findings
from synthorg.secops.detectors.network import network_findings
from synthorg.secops.detectors.outgoing_messages import message_findings
from synthorg.secops.detectors.paths import path_findings
from synthorg.secops.detectors.patterns import joined
from synthorg.secops.detectors.privilege import privilege_findings
from synthorg.secops.detectors.resource import abuse_findings

__all__ = ["findings"]


def findings(call: ToolCall, internal: Iterable[str]) -> list[Finding]:
    """The families' findings on the call, blocking ones first. The families are asked in
    a fixed order and the first blocking finding ends the search: the verdict is then a
    denial for that finding's rule, whatever the later families would find."""
    views = joined(call.all_views)
    runnable = code_views(call)  # (most calls: every view may be run)
    code = views if runnable == call.all_views else joined(runnable, within=views)
    families = (lambda: secret_findings(call, views, code), lambda: path_findings(call, code),
                lambda: destructive_findings(call, code),
                lambda: privilege_findings(call, code, views), lambda: abuse_findings(call, code),
                lambda: injection_findings(call, views),
                lambda: network_findings(call, views, internal),
                lambda: message_findings(call, internal))
    found: list[Finding] = []
    for family in families:
        for f in family():
            found.append(f)
            if f.block:
                return sorted(found, key=lambda f: not f.block)
    return found
