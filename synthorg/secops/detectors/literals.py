"""Literal strings of which every match of a regex contains one (a prefilter, as RE2 and
Hyperscan derive), worked out from the parsed pattern: the hints that a pattern's written
ones must cover. The text searched is a call's views, squashed (lower case, every run of
white space one space)."""
from __future__ import annotations

import re
import re._constants as c
import re._parser as sre

from synthorg.secops.normalise import words

# how common pairs of characters are in a tool call's text (a rough guide is enough)
COMMON_PAIRS = tuple(words("""e_ _t th he in er an re on at en nd ti es or te of ed is it al ar st
to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la
ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt
po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab
gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu rn
sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck ew
mu br bi pt ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip ub oi rl gu dr hr cc tw ft
wn nu"""))
_COMMON = frozenset(COMMON_PAIRS)

MAX_SET = 64  # strings a set may grow to before it is given up (a class product, a branch)
MIN_LENGTH = 2  # a one-character hint is in nearly every text: no filter

Info = tuple[frozenset[str] | None, frozenset[str] | None]  # (exact language, requirement)


Sets = list[frozenset[str] | None]
_EMPTY = frozenset({""})
_SPACE = frozenset({" "})


def alternatives_requirements(pattern: re.Pattern[str]) -> list[list[frozenset[str]]] | None:
    """For each of the pattern's top-level alternatives, every set of strings of which each
    match of that alternative contains one (the most selective first); None when some
    alternative has none, or the pattern ignores case."""
    if pattern.flags & re.I:
        return None
    parsed = sre.parse(pattern.pattern, pattern.flags)
    items = list(parsed)
    alternatives = items[0][1][1] if len(items) == 1 and items[0][0] is c.BRANCH else [parsed]
    found = []
    for alternative in alternatives:
        _exact, best, sets = _walk(alternative)
        if best is None:
            return None
        found.append([best, *(s for s in sets if s and s != best and _choose([s]) is not None)])
    return found


def _choose(sets: Sets) -> frozenset[str] | None:
    """The most selective usable set: its shortest string the longest (a string with a
    pair of characters that text seldom holds counts as two longer), then the fewest."""
    usable = [s for s in sets if s and min(map(len, s)) >= MIN_LENGTH
              and not any("\n" in x for x in s)]
    return max(usable, key=_selectivity, default=None)


def _selectivity(strings: frozenset[str]) -> tuple[int, int, int]:
    shortest = min(map(len, strings))
    rare = all(any(x[i:i + 2] not in _COMMON for i in range(len(x) - 1)) for x in strings)
    return min(shortest, 6) + 2 * rare, -len(strings), shortest


def _walk(items, prefix: frozenset[str] = _EMPTY) -> tuple[frozenset[str] | None, frozenset[str] | None, Sets]:
    """A sequence's exact language (None unless finite and small), its best requirement and
    every requirement found on the way. The literal run before a branch is carried into each
    of its alternatives (the parser moves a prefix the alternatives share out of them:
    `srm|shred` is parsed `s(?:rm|hred)`)."""
    sets: Sets = []
    run = prefix  # the exact strings matched since the last part that is not exact
    whole_exact = True
    for op, av in items:
        branch = _as_branch(op, av)
        if branch is not None and run != _EMPTY:
            exact, need = _branch(branch, run)  # (both hold the run)
            sets.append(need)
            if exact is not None:
                run = exact
                continue
            whole_exact = False
            sets.append(run)
            run = _EMPTY
            continue
        exact, need = _node(op, av)
        sets.append(need)
        if exact is not None and len(run) * len(exact) <= MAX_SET:
            run = frozenset(a + b for a in run for b in exact)
            continue
        whole_exact = False
        sets.append(run)
        run = exact if exact is not None else _EMPTY
    sets.append(run)
    return (run if whole_exact else None), _choose(sets), sets


def _as_branch(op, av) -> list | None:
    """The alternatives of a branch, or of a plain group that holds only a branch."""
    if op is c.BRANCH:
        return av[1]
    if op is c.SUBPATTERN and not av[1] & re.I:
        body = list(av[3])
        if len(body) == 1 and body[0][0] is c.BRANCH:
            return body[0][1][1]
    return None


def _node(op, av) -> Info:
    if op is c.LITERAL:
        return frozenset({chr(av)}), None
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return _EMPTY, None
    if op is c.IN:
        return _class(av), None
    if op is c.SUBPATTERN:
        _group, add_flags, _del, body = av
        return (None, None) if add_flags & re.I else _walk(body)[:2]
    if op is c.ATOMIC_GROUP:
        return _walk(av)[:2]
    if op is c.BRANCH:
        return _branch(av[1], _EMPTY)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        low, high, body = av
        exact, need = _walk(body)[:2]
        if exact == _SPACE:  # (the text searched is squashed: a run of white space is one space)
            return (_SPACE if low else _SPACE | _EMPTY), None
        if low == 0:
            return (exact | _EMPTY if exact is not None and high == 1 else None), None
        repeated = None
        if exact is not None and low == high and len(exact) ** low <= MAX_SET:
            repeated = _EMPTY
            for _ in range(low):
                repeated = frozenset(a + b for a in repeated for b in exact)
        return repeated, _choose([need, exact])
    return None, None


def _class(items) -> frozenset[str] | None:
    chars: set[str] = set()
    for op, av in items:
        if op is c.CATEGORY and av is c.CATEGORY_SPACE:
            chars.add(" ")  # (squashed text: white space is a space)
        elif op is c.LITERAL:
            chars.add(chr(av))
        elif op is c.RANGE and av[1] - av[0] < 10:
            chars.update(map(chr, range(av[0], av[1] + 1)))
        else:
            return None
    return frozenset(chars) if 0 < len(chars) <= 10 else None


def _branch(alternatives, prefix: frozenset[str]) -> Info:
    """A branch's exact language and requirement, each alternative after `prefix`."""
    walked = [_walk(alternative, prefix) for alternative in alternatives]
    exacts = [w[0] for w in walked if w[0] is not None]
    exact = None
    if len(exacts) == len(walked):
        union = frozenset[str]().union(*exacts)
        exact = union if len(union) <= MAX_SET else None
    needs = [n for w in walked if (n := _choose([w[1], w[0]])) is not None]
    need = frozenset[str]().union(*needs) if len(needs) == len(walked) else None
    return exact, need
