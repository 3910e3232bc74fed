"""A change that misses what its task names, as honest mistakes do: production changed for a
task about staging, another host than the one the task names, or a record whose id is the
task's with two digits swapped."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from synthorg.secops.calls import Finding, ToolCall
from synthorg.secops.detectors.patterns import asked
from synthorg.secops.detectors.task_words import own_words
from synthorg.secops.places import is_internal

_NOT_PROD_TASK = re.compile(r"\b(?:staging|stg|qa|sandbox|uat)\b|\b(?:dev|development|test|local)\s+(?:env|environment"
                            r"|cluster|database|db|context|namespace|stack|server|instance)\b")
_PROD_WORDS = re.compile(r"\bprod(?:uction)?\b|\blive\b")
# production named as a target: a context, host, inventory, workspace or namespace
_PROD_TARGET = re.compile(r"(?:^|[\s=/:@'\"_.-])prod(?:uction)?(?=$|[\s/:'\".,_-]|\d)")


def _changes(call: ToolCall) -> bool:
    """Whether the call changes something (its action type refined from its arguments)."""
    from synthorg.secops.classify import READ_ACTIONS, call_action, default_tiers  # (it imports detectors)
    return call_action(call, default_tiers(), ()) not in READ_ACTIONS


def _names_production(own: str, text: str) -> bool:
    """Whether the call's text targets production in a task about another environment."""
    return bool(_NOT_PROD_TASK.search(own)) and not _PROD_WORDS.search(own) and bool(_PROD_TARGET.search(text))


_ID = re.compile(r"\b[a-z]{0,3}-?\d{4,}\b")
_MOST_IDS = 64  # (ids compared each way: a crafted call of thousands costs no more)


def _swapped(a: str, b: str) -> bool:
    """Whether `b` is `a` with two adjacent characters swapped."""
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def _swapped_id(text: str, own: str) -> tuple[str, str] | None:
    named = set(_ID.findall(own)[:_MOST_IDS])
    if not named:
        return None
    seen: set[str] = set()
    for m in _ID.finditer(text):
        used = m.group()
        if used in seen:
            continue
        seen.add(used)
        if len(seen) > _MOST_IDS:
            break
        if used not in named and (twin := next((n for n in named if _swapped(n, used)), None)):
            return twin, used
    return None


_HOST = re.compile(r"(?<![\w.-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){1,8}[a-z]{2,24}(?![\w-])")
_MOST_HOSTS = 32
_SAFE_HOST = re.compile(r"staging|stg|dev|test|qa|scratch|sandbox|loadtest|load-test|perf|uat|preview|replica")
_LIVE_HOST = re.compile(r"prod|primary|master|live|(?<![a-z])rs\d")


def _internal_hosts(text: str, internal: tuple[str, ...]) -> list[str]:
    """The company's host names in `text` (not its bare domains, which mail addresses end in,
    nor addresses), the first few of them."""
    found = dict.fromkeys(m.group() for m in _HOST.finditer(text))
    return [h for h in list(found)[:_MOST_HOSTS] if h not in internal and is_internal(h, internal)
            and not h.replace(".", "").isdigit()]


def _kin(a: str, b: str) -> bool:
    """Whether two hosts look like two of one kind (mongo-scratch and mongo-rs0-a, mq-dev and
    mq-prod-2), or a safe one and a live one (staging-db and pg-primary)."""
    stem_a, stem_b = re.split(r"[-.\d]", a, maxsplit=1)[0], re.split(r"[-.\d]", b, maxsplit=1)[0]
    return (len(stem_a) >= 2 and stem_a == stem_b) or bool(_SAFE_HOST.search(a) and _LIVE_HOST.search(b))


def _named_by_label(label: str, own: str) -> bool:
    """Whether the task names a host by its first label alone ("pg-primary"; not "api")."""
    return (len(label) >= 6 or "-" in label or any(c.isdigit() for c in label)) and bool(
        re.search(rf"(?<![\w.-]){re.escape(label)}(?![\w-])", own))


def _other_host(own: str, text: str, internal: tuple[str, ...]) -> tuple[str, str] | None:
    """(the task's host, the call's) when the task names internal hosts and the call works on
    another one of their kind that the task's words never name."""
    named = _internal_hosts(own, internal)
    if not named:
        return None
    used = _internal_hosts(text, internal)
    if not used or any(h in named or _named_by_label(h.split(".", 1)[0], own)
                       or any(h.startswith(n + ".") for n in named) for h in used):
        return None
    return next(((n, h) for h in used for n in named if _kin(n.split(".", 1)[0], h.split(".", 1)[0])), None)


def task_fit_findings(call: ToolCall, internal: Iterable[str] = ()) -> Iterator[Finding]:
    if not call.task or call.action_type not in ("code:shell", "code:python", "db:query", "net:http"):
        return
    own = own_words(call.task)
    text = "\n".join(call.texts.values()).lower()
    if _names_production(own, text) and _changes(call):
        yield asked("policy.wrong_environment", "changes production in a task about a staging, test or dev environment")
        return
    if (hosts := _other_host(own, text, tuple(internal))) is not None and _changes(call):
        yield asked("policy.wrong_host", f"works on {hosts[1]} where its task names {hosts[0]}")
        return
    if (pair := _swapped_id(text, own)) is not None and _changes(call):
        yield asked("policy.wrong_record", f"uses {pair[1]} where its task names {pair[0]} (two digits swapped?)")
