"""What makes the detectors' patterns fast: each is searched only in text that holds one of
its hints (literal strings every match contains), and a call's views are joined into one
text so that a pattern is searched once per call, not once per view."""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable

import numpy as np

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding
from synthorg.secops.normalise import fast_regex, words
from synthorg.secops.places import hosts_in

# a text that reports an attack rather than making one
REPORTING_WORDS = fast_regex(r"\b(?:attack\w*|attacker|injection|injected|malicious|suspicious|phishing|attempt\w*|reported"
                             r"|ignored|blocked|flagged|planted|refused|declined|not\s+(?:act|follow|done|running|doing|sending|complying)\w*"
                             r"|won[\u2019']?t)\b|\bdid\s*n[o\u2019']t\s+(?:run|act|follow|execute|do|send|post|comply|obey|reply)")


def finding(rule: str, reason: str, block: bool = True, tier: RiskTier = RiskTier.critical) -> Finding:
    return Finding(rule=rule, block=block, reason=reason, tier=tier)


class Hinted:
    """A pattern searched only in text that holds one of its hints: literal strings of which
    every match contains at least one. A substring test is a C loop; a large alternation
    run at every position of every view was most of the fast path's time."""

    def __init__(self, pattern: re.Pattern[str], hints: str) -> None:
        # multi-line: each of the views joined into one text (see `findings`) is a line
        self.pattern = fast_regex(pattern.pattern, pattern.flags | re.M)
        self.hints = tuple(hints.split("|"))
        # the hints by the pair of characters in each that a text least often holds: a set
        # intersection (in C) with a text's pairs leaves the few hints worth looking for
        self.by_pair: dict[int, tuple[str, ...]] = {}
        for h in self.hints:
            pair = _rarest_pair(h)
            if pair is not None:
                self.by_pair[pair] = (*self.by_pair.get(pair, ()), h)
        self.pair_set = frozenset(self.by_pair)
        self.short = tuple(h for h in self.hints if _rarest_pair(h) is None)

    def search(self, text: str) -> re.Match[str] | None:
        if isinstance(text, JoinedViews):
            haystack = text.hint_text
            for pair in self.pair_set.intersection(text.pairs):
                for hint in self.by_pair[pair]:
                    if hint in haystack:
                        return self.pattern.search(text)
            for hint in self.short:
                if hint in haystack:
                    return self.pattern.search(text)
            return None
        for hint in self.hints:
            if hint in text:
                return self.pattern.search(text)
        return None


# how common pairs of characters are in a tool call's text (a rough guide is enough)
_COMMON_PAIRS = tuple(words("""e_ _t th he in er an re on at en nd ti es or te of ed is it al ar st
to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la
ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt
po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab
gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu rn
sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck ew
mu br bi pt ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip ub oi rl gu dr hr cc tw ft
wn nu"""))


def _rarest_pair(hint: str) -> int | None:
    """The pair of characters in `hint` least likely in a text (one not in the common
    list, else the last listed) as a number (see `char_pairs`); None for a one-character
    or non-ASCII hint."""
    pairs = [hint[i:i + 2] for i in range(len(hint) - 1)]
    if not pairs or not hint.isascii():
        return None
    rank = {p: i for i, p in enumerate(_COMMON_PAIRS)}
    pair = max(pairs, key=lambda p: rank.get(p, len(rank)))
    return ord(pair[0]) << 8 | ord(pair[1])


SHORT_TEXT = 200  # characters: below, Python's own loop is quicker than numpy's setting up


def char_pairs(text: str) -> frozenset[int]:
    """The pairs of adjacent bytes in `text` (UTF-8), each as one number (first << 8 |
    second): an ASCII pair is in the text iff its number is in the set."""
    raw = text.encode()
    if len(raw) < SHORT_TEXT:
        return frozenset(map(operator.or_, map(operator.lshift, raw, [8] * len(raw)), raw[1:]))
    b = np.frombuffer(raw, np.uint8).astype(np.uint16)
    return frozenset(np.unique((b[:-1] << 8) | b[1:]).tolist())


class AnyOf:
    """Several hinted patterns: a match of any."""

    def __init__(self, parts: Iterable[tuple[str, str]]) -> None:
        self.parts = [Hinted(fast_regex(pattern), hints) for hints, pattern in parts]

    def search(self, text: str) -> re.Match[str] | None:
        for part in self.parts:
            if (m := part.search(text)) is not None:
                return m
        return None


VIEW_SEPARATOR = "\n;\n"  # ends a line and a shell command: no pattern spans two views


class JoinedViews(str):
    """Views as one text, a line each, and `hint_text`: the views that are no part of
    another (a hint in a part is in the whole), where hints are looked for in half the
    characters. The hosts the text names are worked out once (several families ask)."""

    hint_text: str
    pairs: frozenset[int]
    _hosts: set[str] | None = None

    def hosts(self) -> set[str]:
        if self._hosts is None:
            self._hosts = hosts_in(self)
        return self._hosts


def hosts_of(text: str) -> set[str]:
    return text.hosts() if isinstance(text, JoinedViews) else hosts_in(text)


def joined(views: tuple[str, ...], within: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The views as one text, a line each: every pattern is searched once per call, not
    once per view (views have no newlines of their own; see normalise.squash). `within`:
    joined views that hold these, whose character pairs these then share."""
    if not views:
        return ()
    text = JoinedViews(VIEW_SEPARATOR.join(views))
    wholes = ""
    for v in sorted(views, key=len, reverse=True):
        if v not in wholes:
            wholes += "\n" + v
    text.hint_text = wholes
    outer = within[0] if within else None
    text.pairs = outer.pairs if isinstance(outer, JoinedViews) else char_pairs(wholes)
    return (text,)
