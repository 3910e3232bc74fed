"""What makes the detectors' patterns fast: each is searched only in text that holds one of
its hints (literal strings every match contains), and a call's views are joined into one
text so that a pattern is searched once per call, not once per view."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np

from synthorg.domain.enums import RiskTier
from synthorg.secops.calls import Finding
from synthorg.secops.detectors.literals import COMMON_PAIRS, alternatives_requirements
from synthorg.secops.normalise import fast_regex
from synthorg.secops.places import hosts_in

# a refusal, or a change said not to be made: "we can't share that", "I haven't changed anything"
_DECLINING = (r"\b(?:refused|declined|won[\u2019']?t|not\s+(?:act|follow|done|doing|sending|complying)\w*)\b"
              r"|\b(?:we|i)\s+(?:can[\u2019']?t|cannot|can\s+not|don[\u2019']?t|do\s+not|(?:are|am)\s+unable\s+to)\s+(?:share|send"
              r"|disclose|provide|release|give\s+out|change|disable|reset|grant|remove)\b|\bhave\s*n[o\u2019']?t\s+(?:changed|touched|done|run|sent|applied|acted|made)\b"
              r"|\bdid\s*n[o\u2019']t\s+(?:run|act|follow|execute|do|send|post|comply|obey|reply)\b")
DECLINING_WORDS = fast_regex(_DECLINING)
# a text that reports an attack rather than making one (or declines to make it)
REPORTING_WORDS = fast_regex(r"\b(?:attack\w*|attacker|injection|injected|malicious|suspicious|phishing|attempt\w*|reported"
                             r"|ignored|flagged|flagging|planted|excluded|redacted|quarantined|saniti[sz]ed"
                             r"|not\s+(?:running|appropriate)\w*)\b|\[removed\b|" + _DECLINING +
                             # (blocked by someone, not "retry when blocked")
                             r"|\b(?:was|were|been|is|are|got|have|has|i|we|and|secops)\s+blocked\b|\bblocked\s+(?:it|this|that|the|an?|by)\b")


# an order said not to be done: "do NOT disable the WAF", "never grant admin"
_NEGATED_ORDER = re.compile(r"\b(?:do\s+not|don[\u2019']?t|never|must\s+not|mustn[\u2019']?t|should\s+not|shouldn[\u2019']?t"
                            r"|not\s+to|no\s+need\s+to)\s+(?:\w+\s+)?(?:disable|turn|switch|remove|stop|bypass|skip|grant"
                            r"|give|add|make|delete|drop|open|allow|lower|weaken|deactivate|uninstall|kill|change|set|put|pause)\b")


def negated(view: str, match: re.Match[str]) -> bool:
    """Whether an order that `match` found in `view` is said not to be done (the words that
    say so may come just before the match or inside it: "WAF ... do NOT disable it")."""
    return bool(_NEGATED_ORDER.search(view, max(0, match.start() - 30), match.end()))


def finding(rule: str, reason: str, block: bool = True, tier: RiskTier = RiskTier.critical) -> Finding:
    return Finding(rule=rule, block=block, reason=reason, tier=tier)


def asked(rule: str, reason: str) -> Finding:
    """A finding a person is asked about (escalated at high risk), not a refusal."""
    return finding(rule, reason, block=False, tier=RiskTier.high)


class Hinted:
    """A pattern searched only in text that holds one of its hints: literal strings of which
    every match contains at least one. A substring test is a C loop; a large alternation
    run at every position of every view was most of the fast path's time."""

    def __init__(self, pattern: re.Pattern[str], hints: str) -> None:
        # multi-line: each of the views joined into one text (see `findings`) is a line
        self.pattern = fast_regex(pattern.pattern, pattern.flags | re.M)
        # (worked out from the alternatives as written, not grouped by their first character)
        self.hints = _sound_hints(tuple(hints.split("|")),
                                  fast_regex(pattern.pattern, pattern.flags | re.M, by_first=False))
        self.number = _HINTS.register(self)

    def search(self, text: str) -> re.Match[str] | None:
        if isinstance(text, JoinedViews):
            return self.pattern.search(text) if self.number in text.live else None
        for hint in self.hints:
            if hint in text:
                return self.pattern.search(text)
        return None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text) if self.search(text) is not None else iter(())


def _sound_hints(given: tuple[str, ...], pattern: re.Pattern[str]) -> tuple[str, ...]:
    """The hints written with a pattern, and for each of its alternatives that no written
    hint is shown to cover, strings that every match of it contains (worked out from the
    pattern): a hint written wrong, or one forgotten, cannot then hide a match."""
    alternatives = alternatives_requirements(pattern)
    if alternatives is None:
        return given
    added: dict[str, None] = {}
    for candidates in alternatives:
        if not any(all(any(h in r for h in given) for r in needed) for needed in candidates):
            added.update(dict.fromkeys(sorted(candidates[0])))
    return given + tuple(h for h in added if h not in given)


class _HintIndex:
    """Every pattern's hints, by the run of three characters in each that a text least
    often holds. Which patterns a joined text may match is worked out once per text: one
    set intersection (in C) with the text's runs (see `triples`) leaves the few hints worth
    looking for, instead of a look for each pattern that a detector asks about. (Runs of
    three leave a tenth as many hints to look for as pairs did.)"""

    def __init__(self) -> None:
        self.by_triple: dict[int, list[tuple[str, int]]] = {}
        self.short: list[tuple[str, int]] = []  # hints with no run of three to index by
        self.triples: frozenset[int] = frozenset()
        self.patterns: list[Hinted] = []

    def register(self, pattern: Hinted) -> int:
        number = len(self.patterns)
        self.patterns.append(pattern)
        for hint in pattern.hints:
            triple = _rarest_triple(hint)
            if triple is None:
                self.short.append((hint, number))
            else:
                self.by_triple.setdefault(triple, []).append((hint, number))
        self.triples = frozenset(self.by_triple)
        return number

    def live(self, haystack: str, triples: frozenset[int]) -> set[int]:
        """The patterns with a hint in `haystack` (whose runs of three are `triples`)."""
        live: set[int] = set()
        for triple in self.triples.intersection(triples):
            for hint, number in self.by_triple[triple]:
                if number not in live and hint in haystack:
                    live.add(number)
        for hint, number in self.short:
            if number not in live and hint in haystack:
                live.add(number)
        return live


_PAIR_RANK = {p: i for i, p in enumerate(COMMON_PAIRS)}


def _rarest_triple(hint: str) -> int | None:
    """The run of three characters in `hint` least likely in a text, as a number (see
    `triples`); None for a shorter or non-ASCII hint. A run is as rare as its rarer pair
    (one not in the common list, else the later listed)."""
    if len(hint) < 3 or not hint.isascii():
        return None

    def rarity(run: str) -> tuple[int, int]:
        ranks = [_PAIR_RANK.get(run[:2], len(_PAIR_RANK)), _PAIR_RANK.get(run[1:], len(_PAIR_RANK))]
        return max(ranks), min(ranks)

    run = max((hint[i:i + 3] for i in range(len(hint) - 2)), key=rarity)
    return ord(run[0]) << 16 | ord(run[1]) << 8 | ord(run[2])


_HINTS = _HintIndex()


def hinted_patterns() -> tuple[Hinted, ...]:
    """Every hinted pattern made so far (the detectors' own, once they are imported)."""
    return tuple(_HINTS.patterns)


def triples(text: str) -> frozenset[int]:
    """The runs of three adjacent bytes in `text` (UTF-8), each as one number (`abc` as
    a << 16 | b << 8 | c): an ASCII run is in the text iff its number is in the set."""
    b = np.frombuffer(text.encode(), np.uint8).astype(np.uint32)
    runs = (b[:-2] << 16) | (b[1:-1] << 8) | b[2:]
    # (a short text's few runs are quicker put in a set as they are; a long one's, sorted first)
    return frozenset((np.unique(runs) if len(runs) > 256 else runs).tolist())


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
    triples: frozenset[int]  # (see `triples`)
    live: set[int]  # the patterns with a hint in this text (see _HintIndex)
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
    joined views that hold these, whose runs of characters these then share."""
    if not views:
        return ()
    text = JoinedViews(VIEW_SEPARATOR.join(views))
    wholes = ""
    for v in sorted(views, key=len, reverse=True):
        if v not in wholes:
            wholes += "\n" + v
    text.hint_text = wholes
    outer = within[0] if within else None
    text.triples = outer.triples if isinstance(outer, JoinedViews) else triples(wholes)
    text.live = _HINTS.live(wholes, text.triples)
    return (text,)
