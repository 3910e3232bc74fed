"""What a tool call's text says once the usual disguises are taken off.

Detectors match patterns against *views* of an argument: the text as written, lower-cased
with quotes, escapes and comments removed, shell variables substituted, and every string
hidden inside it (command substitutions, `bash -c`/`python -c`/`eval` bodies, Python string
literals, base64, hex and octal blobs, reversed strings) as views of their own, recursively
to a small depth. A view is lower-case with runs of whitespace collapsed to one space.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import contextlib
import fnmatch
import itertools
import re
import shlex
import unicodedata
import zlib
from collections.abc import Callable, Iterator
from typing import NamedTuple
from urllib.parse import unquote


# ---- regular expressions that search fast -------------------------------------------------
def fast_regex(source: str, flags: int = 0, by_first: bool = True) -> re.Pattern[str]:
    """`source` compiled so that a search skips, in C, the positions where no alternative
    can start. The regex engine does so when every alternative starts with a literal
    character, so `\\bcurl|\\b(?:nc|ssh)\\b` is rewritten `c(?<!\\w.)url|n(?<!\\w.)c\\b|s(?<!\\w.)sh\\b`
    (the same matches, in the same order of preference) instead of trying every
    alternative at every position. That cut the fast path's time several-fold.
    `by_first`: alternatives that start with the same character are then grouped under it
    (see `_by_first`)."""
    if source.startswith("(?:") and _group_end(source, 0) == len(source) - 1:
        source = source[3:-1]  # one group around everything: its alternatives are the pattern's
    multiline = bool(flags & re.M)
    led = [x for alt in _alternatives(source) for x in _literal_led(alt, multiline)]
    if by_first and not flags & re.I and not _captures(source):
        led = _by_first(led)
    return re.compile("|".join(led), flags)


def _by_first(alternatives: list[str]) -> list[str]:
    """Literal-led alternatives grouped by their first character (`ab|c|ad` as `a(?:b|d)|c`):
    where a text's character starts some alternatives, the engine tries one group of them
    instead of every alternative in turn. At any position only alternatives led by the
    character there can match, and within a group they keep their order, so the matches
    and their order of preference are the same. (Not with captures: moving an alternative
    would number its groups anew.)"""
    groups: dict[str, tuple[str, list[str]]] = {}
    for alternative in alternatives:
        lead = _LEADING_LITERAL.match(alternative)
        if lead is None:
            return alternatives
        char = lead.group()[-1]  # `\\-` and `-` alike
        groups.setdefault(char, (lead.group(), []))[1].append(alternative[lead.end():])
    grouped = []
    for written, rests in groups.values():
        # a look behind that rests in a row start with is said once, before them, so that
        # each rest starts with a character again (the engine skips a rest that differs)
        for behind, run in itertools.groupby(rests, key=_look_behind):
            tails = [rest[len(behind):] for rest in run]
            grouped.append(written + behind + (f"(?:{'|'.join(tails)})" if len(tails) > 1 else tails[0]))
    return grouped


_LOOK_BEHIND = re.compile(r"\(\?<[!=](?:\[(?:\\.|[^\]\\])+\]|\\.|[^\\()|])+\)")


def _look_behind(rest: str) -> str:
    m = _LOOK_BEHIND.match(rest)
    return m.group() if m else ""


_QUANTIFIER = r"[*+?{]"
# a character matched as written: a plain one or an escaped punctuation mark or space
_LITERAL = r"(?:\\[^\w]|[^\\.^$*+?{}\[\]|()\n])"
_LEADING_LITERAL = re.compile(f"{_LITERAL}(?!{_QUANTIFIER})")
# an assertion that looks at the one character before: `\b`, `^` (multi-line), `(?<!x)`
_ONE_BEHIND = re.compile(r"\\b|\^|\(\?<[!=](?:\[(?:\\.|[^\]\\])+\]|\\.|[^\\()|])\)")
_SMALL_CLASS = re.compile(r"\[((?:\\[^\w\s]|[^\\\]^\-]){1,8})\]" + f"(?!{_QUANTIFIER})")
_CLASS_MEMBER = re.compile(r"\\[^\w\s]|[^\\]")
MAX_EXPANSION = 64  # alternatives one alternative may be rewritten into


def _literal_led(alternative: str, multiline: bool) -> list[str]:
    r"""`alternative` as alternatives led by a literal character, where that can be done:
    an assertion on the character before moved after the first one (`\bX` as `X(?<!\w.)`,
    `^X` as `X(?<![^\n].)`, `(?<!a)X` as `X(?<!aX)`), and a leading group or small class
    spread over what follows it (`(?:a|b)c` as `ac|bc`). Anything else is left as it is."""
    found = _spread(alternative, multiline)
    if len(found) > MAX_EXPANSION or not all(map(_is_literal_led, found)):
        return [alternative]
    return found


def _is_literal_led(alternative: str) -> bool:
    if alternative.startswith("(?:"):  # a group of literal-led alternatives (see _expand)
        end = _group_end(alternative, 0) or 0
        return all(_LEADING_LITERAL.match(a) for a in _alternatives(alternative[3:end]))
    return _LEADING_LITERAL.match(alternative) is not None


def _spread(alternative: str, multiline: bool) -> list[str]:
    anchor = _ONE_BEHIND.match(alternative)
    if anchor is not None and (anchor.group() != "^" or multiline):
        rest = alternative[anchor.end():]
        if (first := _LEADING_LITERAL.match(rest)) is not None:
            return [first.group() + _looking_back(anchor.group(), first.group()) + rest[first.end():]]
        heads = _leading_choices(rest)
        return _expand([anchor.group() + c for c in heads[0]], heads[1], multiline) if heads \
            else [alternative]
    heads = _leading_choices(alternative)
    return _expand(*heads, multiline) if heads else [alternative]


def _looking_back(assertion: str, char: str) -> str:
    """`assertion` on the character before `char`, made after `char` has been matched."""
    if assertion == "\\b":  # a word boundary: the two sides differ in being word characters
        return r"(?<!\w.)" if re.fullmatch(r"\w", char) else r"(?<=\w.)"
    if assertion == "^":
        return r"(?<![^\n].)"
    return f"{assertion[:4]}{assertion[4:-1]}{char})"


def _expand(choices: list[str], tail: str, multiline: bool) -> list[str]:
    if len(choices) > 1 and _captures(tail):  # copies of a group would number groups anew:
        led = [x for c in choices for x in _spread(c, multiline)]  # rewrite inside the group
        return [f"(?:{'|'.join(led)}){tail}"]
    return [x for c in choices for x in _spread(c + tail, multiline)]


def _captures(source: str) -> bool:
    """Whether `source` has a capturing group or a back-reference."""
    return bool(re.search(r"\\\d", source)) or any(
        ch == "(" and (source[i + 1:i + 2] != "?" or source[i + 2:i + 3] == "P")
        for i, ch, _ in _structure(source))


def _leading_choices(text: str) -> tuple[list[str], str] | None:
    """(choices, what follows) for text led by a non-capturing group or a small class of
    plain characters that no quantifier follows (but a group's `?`: its choices and none);
    None otherwise."""
    if text.startswith("(?:"):
        end = _group_end(text, 0)
        if end is None:
            return None
        after = text[end + 1:end + 3]
        if after[:1] == "?" and after[1:] not in ("?", "+"):  # `(?:X)?Y` as `XY|Y`, in that order
            return [*_alternatives(text[3:end]), ""], text[end + 2:]
        if re.match(_QUANTIFIER, after):
            return None
        return _alternatives(text[3:end]), text[end + 1:]
    m = _SMALL_CLASS.match(text)
    if m is None:
        return None
    return [re.escape(c[-1]) for c in _CLASS_MEMBER.findall(m.group(1))], text[m.end():]


def _structure(source: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, group depth) of a regex's characters outside escapes and classes."""
    depth, i = 0, start
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":  # a class: `]` first in it (after an optional `^`) is a literal
            i += 1 + (source[i + 1:i + 2] == "^")
            i += source[i:i + 1] == "]"
            while i < len(source) and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
            i += 1
            continue
        depth += (ch == "(") - (ch == ")")
        yield i, ch, depth
        i += 1


def _alternatives(source: str) -> list[str]:
    """The top-level alternatives of a regular expression's source."""
    cuts = [i for i, ch, depth in _structure(source) if ch == "|" and depth == 0]
    return [source[a + 1:b] for a, b in zip([-1, *cuts], [*cuts, len(source)], strict=True)]


def _group_end(source: str, start: int) -> int | None:
    """The index of the `)` closing the group opened at `start`."""
    return next((i for i, ch, depth in _structure(source, start) if ch == ")" and depth == 0),
                None)


# ---- views ------------------------------------------------------------------------------
MAX_DEPTH = 3
MAX_VIEWS = 48
MAX_TEXT = 20_000  # characters of an argument looked at (the rest is cut off, flagged)

_ESCAPED = re.compile(r"\\(.)", re.S)
_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'")
# (patterns led by one literal character or class, with look-behinds after it: fast to search)
# (a lone escape too: `\\x2fetc\\x2fshadow` is /etc/shadow to printf and $'...')
_HEX_ESC = re.compile(r"\\\\*x[0-9a-fA-F]{2}(?:\\+x[0-9a-fA-F]{2})*")  # `\\x41` too: escaped again
_OCT_ESC = re.compile(r"\\\\*[0-7]{3}(?:\\+[0-7]{3})+")
_ONE_OCT_ESC = re.compile(r"\\\\*0?[0-7]{3}")
_READS_OCTAL = fast_regex(r"\bprintf\b|\$'|\becho\s+-\w*e")  # what reads a lone `\\056`
_HEX_START = r"[0-9a-fA-F](?<![0-9a-zA-Z][0-9a-fA-F])[0-9a-fA-F]"  # two hex digits starting a word
_HEX_RUN = re.compile(_HEX_START + r"(?:[0-9a-fA-F]{2}){4,}(?![0-9a-zA-Z])")
_SHORT_HEX_RUN = re.compile(_HEX_START + r"(?:[0-9a-fA-F]{2})+(?![0-9a-zA-Z])")  # then `xxd -r`
_SPACED_HEX = re.compile(_HEX_START + r"(?:[\s:][0-9a-fA-F]{2}){2,}(?![0-9a-zA-Z])")
_HEX_GAP = re.compile(r"[\s:]")
_B64_RUN = re.compile(r"[A-Za-z0-9+/](?<![A-Za-z0-9+/]{2})[A-Za-z0-9+/]{7,}={0,2}(?![A-Za-z0-9+/=])")
_B64_URL_RUN = re.compile(r"[A-Za-z0-9_\-](?<![A-Za-z0-9_\-]{2})[A-Za-z0-9_\-]{15,}={0,2}(?![A-Za-z0-9_\-=])")
_SUBST = re.compile(r"\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)|`([^`]*)`|<\(([^()]*)\)")
_INNER_SOURCE = (r"\b(?:bash|zsh|ksh|dash|sh|python[0-9.]*|perl|ruby|node|php)\s+(?:-[\w/:.=-]+\s+)*?-[a-z]*[ce]\s+"
                 r"(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)')"
                 r"|\beval\s+(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)')")
_INNER = fast_regex(_INNER_SOURCE, re.I | re.S)
# (searched in lower case and read back from the text: a case-blind search cannot skip ahead)
_INNER_LOWER = fast_regex(_INNER_SOURCE, re.S)


def _inner_bodies(text: str) -> Iterator[tuple[str | None, ...]]:
    """The bodies of `sh -c`, `python -c`, `eval` ... in `text`, as written."""
    if text.isascii():  # (lower() keeps every position of an ASCII text)
        for m in _INNER_LOWER.finditer(text.lower()):
            yield tuple(text[m.start(i):m.end(i)] if m.start(i) >= 0 else None for i in range(1, 5))
    else:
        for m in _INNER.finditer(text):
            yield m.groups()
_ASSIGN = re.compile(r"(?:^|[;&|\s(])(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?"
                     r"([A-Za-z_][A-Za-z0-9_]*)=((?:\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`|\"[^\"]*\"|'[^']*'|[^\s;&|\"'`])*)")
# what an echo or printf substitution gives: `c=$(printf '%s' 'terr' 'aform')` is terraform
_ECHOED_VALUE = re.compile(r"^(?:\$\(|`)\s*(echo|printf)\s+(.*?)\s*(?:\)|`)$", re.S)
_PRINTF_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*|\d)(?:[:#%/=-][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_PY_STR = re.compile(r"(\"\"\"(?:.|\n)*?\"\"\"|'''(?:.|\n)*?'''|\"(?:[^\"\\\n]|\\.)*\""
                     r"|'(?:[^'\\\n]|\\.)*')")  # (a r/b/f prefix is no part of the string)
# two string literals added: "+" + "HEAD:refs/heads/" is one string (a literal "+" is no operator)
_LITERAL_PLUS = re.compile(r"""[rbuf]{0,2}("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')\s*\+\s*[rbuf]{0,2}("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")


_LITERAL_TIMES = re.compile(r"""[rbuf]{0,2}("(?:[^"\\\n]|\\.){1,40}"|'(?:[^'\\\n]|\\.){1,40}')\s*\*\s*(\d{1,2})\b(?!\s*[*.(\[])""")


def _concatenated(text: str) -> str:
    """Adjacent literals joined by + made one literal, as Python makes them (a short one
    repeated a few times, '9**' * 6, made the string it makes)."""
    if "*" in text and _LITERAL_TIMES.search(text):
        text = _LITERAL_TIMES.sub(lambda m: m.group(1)[0] + m.group(1)[1:-1] * int(m.group(2)) + m.group(1)[0], text)
    if "+" not in text:
        return text
    for _ in range(16):
        text, n = _LITERAL_PLUS.subn(lambda m: m.group(1)[0] + m.group(1)[1:-1] + m.group(2)[1:-1] + m.group(1)[0], text)
        if not n:
            break
    return text
_CHR = re.compile(r"chr\(\s*(\d{1,3})\s*\)")
_CHARACTER_CODES = re.compile(r"[\[(]\s*(\d{1,3}(?:\s*,\s*\d{1,3}){5,})\s*,?\s*[\])]")
_CHR_ADDED = re.compile(r"\bchr\(\s*(3[2-9]|[4-9]\d|1[01]\d|12[0-6])\s*\)(?=\s*\+)|(?<=\+)\s*chr\(\s*(3[2-9]|[4-9]\d|1[01]\d|12[0-6])\s*\)")
_SINGLE_QUOTED = re.compile(r"(?<![\w$])'[^'\n]*'")
_DQ_ESCAPE = re.compile(r"\\([\\\"$`])")
_SQL_BLOCK = re.compile(r"/\*.*?\*/", re.S)

# what a shell variable holds when a command does not set it
KNOWN_VARS = {"home": "/root", "user": "root", "ifs": " ", "pwd": ".", "shell": "/bin/sh",
              "path": "/usr/bin:/bin", "tmpdir": "/tmp", "oldpwd": ".."}


def words(text: str) -> list[str]:
    """A word list written as prose: whitespace-separated."""
    return text.split()


def squash(text: str) -> str:
    return " ".join(text.split()).lower()


_LAYOUT = str.maketrans("", "", "\n\t\r")


def _printable(raw: bytes, shortest: int = 4) -> str | None:
    if len(raw) >= 8 and len(raw) % 2 == 0 and raw[1::2].count(0) >= 0.9 * (len(raw) // 2):
        with contextlib.suppress(UnicodeDecodeError):  # UTF-16LE: what PowerShell's -EncodedCommand carries
            raw = raw.decode("utf-16-le").encode("utf-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < shortest:
        return None
    if text.isprintable() or text.translate(_LAYOUT).isprintable():
        return text  # (most decoded text: no per-character count)
    if sum(ch.isprintable() or ch in "\n\t\r" for ch in text) < 0.95 * len(text):
        return None
    return text


# a hex or base64 run longer than this is cut from the text it sits in (what it decodes to
# is a view of its own): the detectors' patterns then scan text, not encodings
LONG_BLOB = 48
BLOB_STUB = "_encoded_"
_CHR_CHAIN = re.compile(r"chr\(\s*\d{1,3}\s*\)(?:\s*\+\s*chr\(\s*\d{1,3}\s*\))+")
_CODE_LIST = re.compile(r"\b(?:bytes|bytearray)\(\s*\[([\d\s,]+)\]\s*\)"
                        r"|\bmap\(\s*chr\s*,\s*[\[(]([\d\s,]+)[\])]\s*\)"
                        r"|\bchr\(\s*(\w+)\s*\)\s*for\s+\3\s+in\s+[\[(]([\d\s,]+)[\])]"
                        r"|\b(?i:string\.fromcharcode)\(\s*([\d\s,]+)\)")  # (JavaScript's)
_NUMBER = re.compile(r"\d+")
_HEX_PAIR = re.compile(r"x([0-9a-fA-F]{2})")
_OCTAL = re.compile(r"[0-7]{3}")
_QUOTE_OR_ESCAPE = re.compile(r"[\"'\\]")


class Blob(NamedTuple):
    """An encoded run in a text: where it is, what it says, and what stands in its place."""

    start: int
    end: int
    plain: str
    replacement: str | None  # None: the run stays as written


def _as_literal(plain: str) -> str:
    """`plain` as the string literal that chr() calls build (a stub if it cannot be one)."""
    if _QUOTE_OR_ESCAPE.search(plain):
        return BLOB_STUB
    return f"'''{plain}'''" if "\n" in plain else f"'{plain}'"


def _characters(numbers: str) -> str | None:
    """Character codes (`[105, 109, ...]`) as the text they spell; None for binary data."""
    codes = [int(n) for n in _NUMBER.findall(numbers)]
    if len(codes) < 4 or not all(9 <= c < 127 for c in codes):
        return None
    return "".join(map(chr, codes))


def _escapes(text: str) -> Iterator[Blob]:
    """`\\x63\\x75` and `\\143\\165` runs, read in place as the shell or Python reads them."""
    octal = _ONE_OCT_ESC if _READS_OCTAL.search(text) else _OCT_ESC
    for pattern, digits, base in ((_HEX_ESC, _HEX_PAIR, 16), (octal, _OCTAL, 8)):
        for m in pattern.finditer(text):
            plain = bytes(int(n, base) & 0xFF for n in digits.findall(m.group())).decode("latin-1")
            readable = _printable(plain.encode(), 2) is not None and not _QUOTE_OR_ESCAPE.search(plain)
            if len(plain) == 1:  # a lone escape: read in place when printable, else left
                printable = plain.isprintable() and not _QUOTE_OR_ESCAPE.search(plain)
                yield Blob(m.start(), m.end(), plain, plain if printable else None)
                continue
            yield Blob(m.start(), m.end(), plain, plain if readable else BLOB_STUB)


def _character_codes(text: str) -> Iterator[Blob]:
    """chr() chains and lists of character codes, read in place as a string literal."""
    if "chr" in text:
        for m in _CHR_CHAIN.finditer(text):
            plain = "".join(chr(int(c)) for c in _CHR.findall(m.group()) if int(c) < 256)
            yield Blob(m.start(), m.end(), plain, _as_literal(plain))
    if "chr" in text or "bytes" in text or "harCode" in text or "harcode" in text:
        for m in _CODE_LIST.finditer(text):
            if (spelt := _characters(m.group(1) or m.group(2) or m.group(4) or m.group(5))) is not None:
                yield Blob(m.start(), m.end(), spelt, _as_literal(spelt))


def _cut_if_long(m: re.Match[str], plain: str) -> Blob:
    return Blob(m.start(), m.end(), plain, BLOB_STUB if m.end() - m.start() > LONG_BLOB else None)


def encoded_blobs(text: str) -> list[Blob]:
    """Strings hidden in `text` as escapes, character codes, hex or base64 (printable ones)."""
    found = [*_escapes(text), *_character_codes(text)] if "\\" in text or "chr" in text \
        or "bytes" in text or "harCode" in text or "harcode" in text else []
    hex_run = _SHORT_HEX_RUN if "xxd" in text or "unhex" in text else _HEX_RUN
    for m in hex_run.finditer(text):
        if (plain := _printable(binascii.unhexlify(m.group()), 2)) is not None:
            found.append(_cut_if_long(m, plain))
    if "xxd" in text or "fromhex" in text:  # (both read hex pairs apart: `2e 2e 2f`)
        for m in _SPACED_HEX.finditer(text):
            raw = binascii.unhexlify(_HEX_GAP.sub("", m.group()))
            if (plain := _printable(raw, 2)) is not None:
                found.append(_cut_if_long(m, plain))
    if "0x" in text or "0X" in text:
        found += _prefixed_hex(text)
    if "\\x" in text:  # a bytea literal: '\x4452...'
        for m in _BYTEA_HEX.finditer(text):
            if (plain := _printable(binascii.unhexlify(m.group(1)), 2)) is not None:
                found.append(_cut_if_long(m, plain))
    # (an address is read in place: where a program sends is what its call says)
    return [b._replace(replacement=b.plain) if _ADDRESS.fullmatch(b.plain) else b
            for b in found + _base64_blobs(text)]


_BYTEA_HEX = re.compile(r"\\x((?:[0-9a-fA-F]{2}){4,})(?![0-9a-fA-F])")


# hex written with C's prefix, once (`0x2e2e2f`) or before every byte (`0x2e0x2e 0x2f`)
_PREFIXED_HEX = re.compile(r"0[xX]([0-9a-fA-F]{2}(?:[\s,:]*0[xX][0-9a-fA-F]{2})+|(?:[0-9a-fA-F]{2}){2,})"
                           r"(?![0-9a-zA-Z])")
_HEX_PREFIX = re.compile(r"[\s,:]*0[xX]")


def _prefixed_hex(text: str) -> list[Blob]:
    """`0x`-led hex, read in place when it is text (a number such as 0xff00 is not)."""
    found = []
    for m in _PREFIXED_HEX.finditer(text):
        plain = _printable(binascii.unhexlify(_HEX_PREFIX.sub("", m.group(1))), 2)
        if plain is not None:
            readable = not _QUOTE_OR_ESCAPE.search(plain) and m.end() - m.start() <= LONG_BLOB
            found.append(Blob(m.start(), m.end(), plain, plain if readable else BLOB_STUB))
    return found


# where a base64 run may be: a run of both alphabets' characters and padding. One scan of
# the text finds these few places; each alphabet's own pattern is then tried only there
_B64_CANDIDATE = re.compile(r"[A-Za-z0-9+/=_\-]{8,}")


def _inflated(raw: bytes) -> bytes:
    """zlib or gzip data unpacked, at most 64 KiB of it (a bomb stays a bomb, unread)."""
    try:
        unpack = zlib.decompressobj(16 + zlib.MAX_WBITS if raw[:2] == b"\x1f\x8b" else zlib.MAX_WBITS)
        return unpack.decompress(raw, 65536)
    except zlib.error:
        return raw


_ADDRESS = re.compile(r"(?:https?|ftp|wss?)://[\w.-]+(?::\d+)?(?:/[\w./%?=&-]*)?|(?:[a-z0-9-]+\.)+[a-z]{2,12}")


def _base64_blobs(text: str) -> list[Blob]:
    found: list[Blob] = []
    spans: set[tuple[int, int]] = set()  # a run of letters and digits only is both alphabets'
    for candidate in _B64_CANDIDATE.finditer(text):
        run, at = candidate.group(), candidate.start()
        for pattern, decode in ((_B64_RUN, base64.b64decode), (_B64_URL_RUN, base64.urlsafe_b64decode)):
            for m in pattern.finditer(run):
                blob = m.group()
                if blob.islower() or (blob.isalpha() and blob.isupper()):
                    continue  # a word or a path, not a blob (base64 of text has capitals)
                span = (at + m.start(), at + m.end())
                if span in spans:
                    continue
                try:
                    raw = decode(blob + "=" * (-len(blob) % 4))
                except (binascii.Error, ValueError):
                    continue
                if raw[:2] in (b"\x78\x9c", b"\x78\x01", b"\x78\xda", b"\x1f\x8b"):
                    raw = _inflated(raw)  # compressed, then encoded: what runs is the text inside
                if (plain := _printable(raw)) is not None:
                    spans.add(span)
                    found.append(Blob(*span, plain, BLOB_STUB if span[1] - span[0] > LONG_BLOB else None))
    return found


def decoded_blobs(text: str) -> list[str]:
    """Strings hidden as escapes, character codes, hex or base64 in `text`."""
    return [b.plain for b in encoded_blobs(text)]


def read_in_place(text: str, blobs: list[Blob]) -> str:
    """`text` with its blobs read in place or cut to a stub (of overlapping ones, the first)."""
    parts: list[str] = []
    at = 0
    for b in sorted(blobs, key=lambda b: b.start):
        if b.replacement is not None and b.start >= at:
            parts += [text[at:b.start], b.replacement]
            at = b.end
    return "".join(parts) + text[at:] if parts else text


def _ansi_c(text: str) -> str:
    def unquote(m: re.Match[str]) -> str:
        body = m.group(1)
        try:
            return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except UnicodeDecodeError:
            return body
    return _ANSI_C.sub(unquote, text)


# (`$0` is not empty: it is the shell or script itself)
_IFS = re.compile(r"\$\{IFS(?:[:#%/][^}]*)?\}|\$IFS(?:\$\d)?|\$[1-9](?![\d])|\$[@*](?![\w])")
_PWD = re.compile(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`")


def separators(text: str) -> str:
    """`${IFS}` (also run into the next word, as in `cat$IFS/etc/passwd`) read as the space
    it is used for; empty positional parameters (`$9`, `$@`) dropped; `$(pwd)` is `.`."""
    if "$" not in text and "`" not in text:
        return text
    text = _IFS.sub(lambda m: " " if "IFS" in m.group() else "", text)
    return _PWD.sub(".", text)


# the shell's ~ (home) starts a word: `~/x`, `~`; "~8s" in prose is no home, nor is the match
# operator of awk, perl or [[ ]] before its pattern: $9 ~ /^5/
_HOME = re.compile(r"(?<![^\s=:'\"(,;&|<>])~(?=[/\s'\";&|)]|$)(?!\s+/)")


def _plain_assignments(text: str) -> dict[str, str]:
    """The variables `text` sets to a value that starts plain (`logs`, `out-$(date +%s)`,
    `${DIR:-./logs}`), for the texts found inside it: read alone, their variables would be
    unset, and where a path starts is what its place depends on."""
    found = {}
    for name, value in _ASSIGN.findall(text):
        value = value.strip("\"'")
        own = _OWN_DEFAULT.fullmatch(value)
        value = own.group(2) if own and own.group(1) == name else value
        if value[:1] not in "$`":
            found[name] = value
    for name, value in _script_set(text).items():
        found.setdefault(name, value)
    return found


def _script_set(text: str) -> dict[str, str]:
    """Variables a script sets by `read` (something not known here) or as a loop's (the
    words written out that it runs over)."""
    found: dict[str, str] = {}
    if "read" in text or "for" in text:
        for m in _SCRIPT_SET.finditer(text):
            items = m.group(3) or ""
            for name in (m.group(1) or m.group(2)).split():
                found.setdefault(name, items.strip() if items and "$" not in items and "`" not in items else "_")
    return found


_ONE_VAR = re.compile(r"\$\{?([A-Za-z_]\w*|\d)\}?")


def _with_values(text: str, values: dict[str, str]) -> str:
    """`text` with the variables `values` knows replaced (the others left as written)."""
    return _VAR.sub(lambda m: values.get(m.group(1) or m.group(2), m.group(0)), text)


def substitute_vars(text: str) -> str:
    """Shell variables replaced by what the command assigned them (or a known value)."""
    text = separators(text)
    if "$" not in text and "~" not in text:
        return text
    values: dict[str, str] = {}
    for name, value in _ASSIGN.findall(text):
        if name in values and "$" in value:  # P=/etc/sudo; P=${P}ers: the earlier value in the later
            value = _with_values(value, {name: values[name]})
        own = _OWN_DEFAULT.fullmatch(value.strip("\"'"))
        if own and own.group(1) == name and name not in values:
            values[name] = own.group(2)  # BASE=${BASE:-https://...}: set from outside, or this
            continue
        other = _ONE_VAR.fullmatch(value.strip("\"'"))
        if other and other.group(1) not in values and other.group(1).lower() not in KNOWN_VARS:
            values[name] = "_"  # DIR=$OPTARG, F=$1: set to something not known here (not to nothing)
            continue
        values[name] = _echoed(value) if value[:1] in "$`" else value.strip("\"'")

    for name, value in _script_set(text).items():  # `while read -r path`: the script's own, not $PATH
        values.setdefault(name, value)
    split = values.get("IFS", values.get("ifs", ""))  # IFS=, : a value's commas split words
    split_on = {ord(c): " " for c in split if not c.isspace() and not c.isalnum()}

    def value_of(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        value = values[name] if name in values else KNOWN_VARS.get(name.lower(), "")
        value = value.translate(split_on) if split_on and name.lower() != "ifs" else value
        default = _DEFAULT.match(m.group(0))  # ${1:-/}: what an unset (or empty) one stands for
        if default and not value:
            return default.group(1)
        cut = _SUBSTRING.match(m.group(0))  # ${HOME:0:1} is "/"
        if cut:
            start = int(cut.group(1))
            return value[start:start + int(cut.group(2))] if cut.group(2) else value[start:]
        trim = _TRIM.match(m.group(0))  # ${PWD%%/*}: the working folder's path cut to nothing
        if trim:
            if name.lower() == "pwd" and trim.group(1) == "%" and trim.group(2) == "/*":
                return ".."  # the folder above the working one, wherever that is
            return _trimmed(DEFAULT_WORKSPACE if name.lower() == "pwd" else value, *trim.groups())
        swap = _REPLACE.match(m.group(0))  # ${p//_//}: every _ made a /
        if swap and swap.group(2):
            old, new = swap.group(2), swap.group(3) or ""
            return value.replace(old, new) if swap.group(1) else value.replace(old, new, 1)
        return value
    def substituted(part: str) -> str:
        for _ in range(3):  # variables made of variables
            part, n = _VAR.subn(value_of, part)
            if not n:
                break
        return _HOME.sub("/root", part) if "~" in part else part
    if "'" not in text:
        return substituted(text)
    # the shell leaves single-quoted text as written: awk '$9 ~ /^5/' (the text inside is read
    # on its own too, as what `bash -c '...'` would run)
    parts = _SINGLE_QUOTED_PART.split(text)
    return "".join(p if i % 2 else substituted(p) for i, p in enumerate(parts))


_SINGLE_QUOTED_PART = re.compile(r"((?<![\w\\])'[^'\n]*')")
_INDIRECT = re.compile(r"\$\{!(\w+)\}")
_NAMEREF = re.compile(r"\b(?:declare|typeset|local)\s+-n\s+(\w+)=[\"']?(\w+)[\"']?")
_REF_USE = re.compile(r"\$\{?(\w+)\}?")


_SCRIPT_SET = re.compile(r"\bread\s+(?:-[a-zA-Z]+\s+(?:[\"'][^\"']*[\"']\s+|\d+\s+)?)*([A-Za-z_]\w*(?:[ \t]+[A-Za-z_]\w*)*)"
                         r"|\bfor\s+([A-Za-z_]\w*)\s+in\b([^;\n]*)")
_TRIM = re.compile(r"\$\{\w+(%%|%|##|#)([^}]*)\}")
_DEFAULT = re.compile(r"\$\{\w+:?[-=]([^}]*)\}")
_OWN_DEFAULT = re.compile(r"\$\{(\w+):?[-=]([^}]*)\}")
DEFAULT_WORKSPACE = "/workspace"  # (what the working folder is when a trim needs its full path)


def _trimmed(value: str, op: str, pattern: str) -> str:
    """`value` less its shortest (% #) or longest (%% ##) end (%) or start (#) that the
    shell pattern matches."""
    value = value[:256]
    if op.startswith("%"):
        ends = range(len(value), -1, -1) if op == "%" else range(len(value) + 1)
        cut = next((i for i in ends if fnmatch.fnmatchcase(value[i:], pattern)), None)
        return value if cut is None else value[:cut]
    starts = range(len(value) + 1) if op == "#" else range(len(value), -1, -1)
    cut = next((i for i in starts if fnmatch.fnmatchcase(value[:i], pattern)), None)
    return value if cut is None else value[cut:]


def _echoed(value: str) -> str:
    """What a `$(echo ...)` or `$(printf FORMAT ARGS...)` assigned to a variable holds (other
    substitutions are kept as written: their commands are views of their own)."""
    m = _ECHOED_VALUE.match(value)
    if m is None:
        return value
    try:
        args = shlex.split(m.group(2))
    except ValueError:
        return value
    if m.group(1) == "echo":
        return " ".join(a for a in args if not re.fullmatch(r"-[neE]+", a))
    if not args:
        return ""
    fmt, rest = args[0], args[1:]
    slots = fmt.count("%s")
    if slots and rest:  # the format is used again until the arguments run out
        out = ""
        for i in range(0, len(rest), slots):
            chunk = rest[i:i + slots] + [""] * max(0, slots - len(rest[i:i + slots]))
            out += re.sub(r"%s", _filled_from(chunk), fmt)
    else:
        out = fmt.replace("%s", "")
    return _printf_escapes(out)


def _printf_escapes(text: str, new_line: str = " ") -> str:
    """printf's escapes read: octal and hex codes, \\n (as `new_line`) and \\t."""
    return _PRINTF_ESCAPE.sub(lambda e: chr(int(e.group(1), 8)) if e.group(1) else
                              chr(int(e.group(2), 16)) if e.group(2) else
                              {"n": new_line, "t": " ", "\\": "\\"}.get(e.group(3), e.group(3)), text)


# a quoted word holding < > | or ; (grep '<syscheck>', grep -E 'curl|sudo'): text, no
# redirection nor pipe, once its quotes are gone (a double-quoted substitution still runs:
# "$(cat</etc/shadow)"; a body handed to sh -c or eval is read as a view of its own)
_AS_TEXT = str.maketrans("<>|;", "____")
_QUOTED_OPERATORS = re.compile(r"'[^'\s]*[<>|;][^'\s]*'|\"[^\"\s$`]*[<>|;][^\"\s$`]*\"")


def unquoted(text: str) -> str:
    """Shell words as the shell joins them: quotes dropped, backslash escapes resolved."""
    if ("'" in text or '"' in text) and _QUOTED_OPERATORS.search(text):
        text = _QUOTED_OPERATORS.sub(lambda q: q.group(0).translate(_AS_TEXT), text)
    text = separators(_ansi_c(text))
    text = _ESCAPED.sub(lambda m: " " if m.group(1) == "\n" else m.group(1), text)
    return text.replace('"', "").replace("'", "")


def inner_texts(text: str) -> list[str]:
    """Code inside code: command substitutions, `sh -c`/`python -c`/`eval` bodies,
    Python string literals (adjacent ones joined), chr() sequences."""
    if "(" not in text and "`" not in text and "'" not in text and '"' not in text:
        return []
    # (what single quotes hold the shell does not run: a name with "$(rm -rf ~)" in it is text;
    # a body handed to sh -c, eval or a pipe into a shell is read as a view of its own)
    masked = _SINGLE_QUOTED.sub(lambda q: "'" + "_" * (len(q.group(0)) - 2) + "'", text) if "'" in text else text
    found = [text[m.start(i):m.end(i)] for m in _SUBST.finditer(masked) for i in range(1, len(m.groups()) + 1)
             if m.group(i)] if "$(" in text or "`" in text or "<(" in text else []
    inner = _inner_bodies(text) if "-" in text or "eval" in text.lower() else ()
    for groups in inner:  # a double-quoted body is unescaped as the shell does
        found += [_DQ_ESCAPE.sub(r"\1", g) if i in (0, 2) else g
                  for i, g in enumerate(groups) if g]
    if not _LOOKS_LIKE_CODE.search(text):
        return found  # a shell line: its quoted words are data, not code
    written, text = text, _OS_PARTS.sub(lambda m: _OS_PART_VALUES[m.group(0)], text) if "os." in text else text
    if ".join(" in text and "chr(" in text:  # chr(47).join(['', 'etc', 'shadow'])
        text = _CHR_SEP.sub(lambda m: repr(chr(int(m.group(1)))) + ".join(", text)
    if "chr(" in text and "+" in text:  # chr(47) + 'etc': the character, added as a literal is
        text = _CHR_ADDED.sub(lambda m: repr(chr(int(m.group(1) or m.group(2)))), text)
    joined = _concatenated(_EMPTY_JOIN.sub(_joined_literals, text) if ".join(" in text else text)
    if "decode(" in joined and _DECODED_ADDRESS.search(joined):  # u = b64decode('<address>').decode()
        joined = _DECODED_ADDRESS.sub(r"'\2'", joined)  # is u = '<address>', for the names below
    if "rot" in joined and _ROT13.search(joined):  # codecs.decode('puzbq 777 /rgp/funqbj', 'rot13')
        joined = _ROT13.sub(lambda m: "'" + codecs.decode(m.group(2), "rot13") + "'", joined)
        found.append(joined)
    if ".join(" in joined and "[" in joined:  # parts = ['s','h','r','e','d']; ''.join(parts) is 'shred'
        joined = _joined_names(joined)
    if "=" in joined:  # base = '/srv'; shutil.rmtree(os.path.join(base, 'acme')): the name read as its string
        named = _python_names(joined)
        if named != joined:
            found.append(named)
    dotted = _attributes(joined)  # getattr(__import__('os'), 'system') read as os.system
    if "=" in dotted and _CALLABLE_ALIAS.search(dotted):
        for alias, target in _CALLABLE_ALIAS.findall(dotted):
            dotted = re.sub(rf"(?<![\w.]){re.escape(alias)}\(", target.replace("\\", r"\\") + "(", dotted)
    if dotted != written:
        found.append(dotted)  # 'OPENAI_AP' + 'I_KEY' read as the one string it makes
    literals = [m.group(1)[1:-1] if not m.group(1).startswith(("'''", '"""'))
                else m.group(1)[3:-3] for m in _PY_STR.finditer(joined)]
    # a lone short word is a key or a name, not code
    found += [lit for lit in literals if len(lit) >= 12 or re.search(r"[\s/.;|&$<>]", lit)]
    # code in a string is run with its escapes read: exec('a=[]\nwhile 1: ...')
    found += [lit.replace("\\n", "\n").replace("\\t", " ") for lit in literals if "\\n" in lit]
    if _RUNS_COMMAND.search(joined):  # except the command a shell is given: `run("env", shell=True)`
        found += [m.group(2) for m in _RUNS_COMMAND.finditer(joined)]
    if len(literals) > 1:
        found.append(" ".join(literals))  # a command given as a list of words
    chars = _CHR.findall(text)
    if len(chars) >= 2:
        found.append("".join(chr(int(c)) for c in chars if int(c) < 256))
    if "chr" in text or "bytes(" in text or "bytearray(" in text:  # a list of character codes
        for m in _CHARACTER_CODES.finditer(text):
            codes = [int(c) for c in m.group(1).split(",")]
            if all(9 <= c < 127 for c in codes):
                found.append("".join(map(chr, codes)))
    return found


_CALLABLE_ALIAS = re.compile(r"(?:^|[\n;]|(?<=\s))\s*([a-z_]\w*)\s*=\s*((?:pathlib\.)?path|os\.path\.join|os\.system|os\.popen"
                             r"|os\.remove|os\.unlink|os\.kill(?:pg)?|shutil\.rmtree|subprocess\.\w+|builtins\.(?:eval|exec|open)|open"
                             r"|urllib\.request\.urlopen|requests\.(?:get|post|put|patch|request)|socket\.create_connection"
                             r"|smtplib\.smtp(?:_ssl)?|ftplib\.ftp(?:_tls)?)\s*(?=$|[\n;]|\s+\w+\s*=)",
                             re.I)
_IMPORTED = re.compile(r"""(?:__import__|importlib\.import_module|import_module)\(\s*[rbuf]{0,2}(["'])([\w.]+)\1\s*(?:,[^()]*(?:\[[^\]]*\][^()]*)?)?\)""")
_GETATTR = re.compile(r"""\bgetattr\(\s*([\w.]+)\s*,\s*[rbuf]{0,2}(["'])(\w+)\2\s*(?:,[^()]*)?\)""")


_EMPTY_JOIN = re.compile(r"""(["'])([^"'\\\n]{0,3})\1\.join\(\s*[\[(]((?:\s*[rbuf]?(?:"[^"\\]*"|'[^'\\]*')\s*,?)+)\s*[\])]\s*\)""")
_CHR_SEP = re.compile(r"\bchr\(\s*(3[2-9]|[4-9]\d|1[01]\d|12[0-6])\s*\)\.join\(")
_LITERAL_PART = re.compile(r"""[rbuf]?(?:"([^"\\]*)"|'([^'\\]*)')""")


def _joined_literals(m: re.Match[str]) -> str:
    return "'" + m.group(2).join(a or b for a, b in _LITERAL_PART.findall(m.group(3))) + "'"


_OS_PART_VALUES = {"os.sep": "'/'", "os.path.sep": "'/'", "os.pardir": "'..'", "os.curdir": "'.'",
                   "os.getcwd()": "'.'"}
_OS_PARTS = re.compile(r"\bos\.(?:path\.)?sep\b|\bos\.pardir\b|\bos\.curdir\b|\bos\.getcwd\(\)")
_ROT13 = re.compile(r"""\b(?:codecs\.)?(?:decode|encode)\(\s*[rbuf]?(["'])([^"']+)\1\s*,\s*["']rot[_-]?13["']\s*\)""")
_PY_NAME_STRING = re.compile(r"""^\s*([A-Za-z_]\w*)\s*=\s*([rbuf]?["'][^"'\n]*["'])\s*$""", re.M)


_PY_NAME_LIST = re.compile(r"""^\s*([A-Za-z_]\w*)\s*=\s*\[((?:\s*[rbuf]?(?:"[^"\\\n]*"|'[^'\\\n]*')\s*,?)+)\]""", re.M)


def _joined_from(parts: list[str]) -> Callable[[re.Match[str]], str]:
    """A replacement: the separator a match holds (its second group) joining `parts`."""
    return lambda m: repr(m.group(2).join(parts))


def _joined_names(code: str) -> str:
    """`sep.join(name)` of a name given a list of literals, as the string it makes."""
    for name, items in _PY_NAME_LIST.findall(code):
        parts = [a or b for a, b in _LITERAL_PART.findall(items)]
        code = re.sub(rf"""(["'])([^"'\\\n]{{0,3}})\1\.join\(\s*{re.escape(name)}\s*\)""",
                      _joined_from(parts), code)
    return code


def _python_names(code: str) -> str:
    """Names given a string once (`base = '/srv'`) replaced by the string where they are used."""
    names = {}
    for name, value in _PY_NAME_STRING.findall(code):
        names[name] = None if name in names else value  # (given twice: which one is unknown)
    for name, value in names.items():
        if value is not None:
            code = re.sub(rf"(?<![\w.'\"]){re.escape(name)}\b(?!\s*=(?!=))", value.replace("\\", r"\\"), code)
    if "{" in code:  # an f-string's field given a string: f"{base}/{name}" is the text it makes
        code = _FILLED_FIELD.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), code)
    return _concatenated(code)


_FILLED_FIELD = re.compile(r"\{\s*'([^'{}\\]*)'\s*\}|\{\s*\"([^\"{}\\]*)\"\s*\}")


def _attributes(text: str) -> str:
    """Imports and attributes asked for by name, written as plain code."""
    if "import" not in text and "getattr" not in text:
        return text
    text = _IMPORTED.sub(r"\2", text)
    for _ in range(4):  # nested: getattr(getattr(os, 'path'), 'join')
        text, n = _GETATTR.subn(r"\1.\3", text)
        if not n:
            break
    # a module under another name: `o = os` (as left by __import__) or `import os as o`
    if " as " not in text and not _ALIASED.search(text):
        return text
    aliases = {m.group(1) or m.group(4): m.group(2) or m.group(3) for m in _MODULE_ALIAS.finditer(text)}
    for alias, module in aliases.items():
        if alias != module:
            text = re.sub(rf"(?<![\w.]){re.escape(alias)}\.", module + ".", text)
    return text


# the modules whose other names are worth reading through
_ALIASABLE = (r"(os|sys|subprocess|socket|shutil|pty|ctypes|requests|urllib\.request|http\.client|smtplib|ftplib"
              r"|base64|pathlib|glob|builtins)")
_ALIASED = re.compile(r"=\s*(?:" + _ALIASABLE + r"|urllib|http)\b(?![\w.(])")
_MODULE_ALIAS = re.compile(r"(?<![\w.])(\w+)\s*=\s*" + _ALIASABLE + r"\b(?![\w.(])"
                           r"|\bimport\s+" + _ALIASABLE + r"\s+as\s+(\w+)")


_RUNS_COMMAND = fast_regex(r"\b(?:system|popen|getoutput|getstatusoutput|spawn\w*|execl?p?e?|run|call"
                           r"|check_output|check_call)\(\s*[rbuf]{0,2}([\"'])([\w-]{1,11})\1")


def strip_sql_comments(text: str, options_too: bool = True) -> list[str]:
    """The text without its comments (a block comment as nothing, and as a space); a
    comment's marks inside a string literal are the string's ('## Config' is text).
    Without `options_too`, a -- before a letter is a command's option (dropdb --if-exists),
    not a comment."""
    line, comment = (_SQL_LINE, _SQL_COMMENT) if options_too else (_SQL_LINE_NOT_OPTION, _SQL_COMMENT_NOT_OPTION)
    if "'" not in text:
        return [_SQL_BLOCK.sub("", line.sub(" ", text)), _SQL_BLOCK.sub(" ", line.sub(" ", text))]
    return [comment.sub(lambda m: m.group(0) if m.group(1) else "" if m.group(3) else " ", text),
            comment.sub(lambda m: m.group(0) if m.group(1) else " ", text)]


def _comment_patterns(line: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A line comment's pattern, and with it a string literal (kept), a line comment and a
    block comment, found from the start, in order."""
    return re.compile(line), re.compile(rf"('(?:[^'\\\n]|''|\\.)*')|({line})|(/\*.*?\*/)", re.S)


_SQL_LINE, _SQL_COMMENT = _comment_patterns(r"--[^\n]*|#[^\n]*")
_SQL_LINE_NOT_OPTION, _SQL_COMMENT_NOT_OPTION = _comment_patterns(r"--(?![a-zA-Z])[^\n]*|#[^\n]*")


_ECHO_DATA = re.compile(r"\b(echo|printf)\s+(?:-\w+\s+)*(['\"])(?:(?!\2).)*\2")
_RUNS_TEXT = re.compile(r"\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\|\s*(?:at|batch)\b"
                        # (or reads it as settings: a policy, a manifest, a crontab)
                        r"|\|\s*(?:sudo\s+)?(?:vault|kubectl|oc|crontab|consul|nomad|aws|gcloud|az)\b|\|\s*(?:python|perl|ruby|node|eval|source|xargs"
                        r"|psql|mysql|mariadb|sqlite3|redis-cli|mongo(?:sh)?|clickhouse-client|cqlsh|sqlcmd|nc|ncat|netcat|socat|telnet)"
                        r"|\$\(\s*(?:echo|printf)|`\s*(?:echo|printf)|\beval\b")
# echoed into a file that is then run: printf '...' > t.sh && chmod +x t.sh && ./t.sh
# the folders of git hooks: what is written there runs at the next commit, unbidden
HOOK_FOLDERS = r"\.git/hooks/|\.husky/"
# (or made a program, a make file run, a git hook that runs at the next commit)
_WRITTEN_THEN_RUN = re.compile(r">\s*(?:\./)?([\w./~-]+?)(?![\w./~-]).*?(?:\b(?:ba|z|da)?sh\s+|\bsource\s+|(?<![\w.])\.\s+|\./"
                               r"|\bmake\s+(?:-\w+\s+)*-f\s*|\bchmod\s+(?:-\w+\s+)*[ugoa]*\+[rw]*x\w*\s+)(?:\./)?\1(?![\w./~-])"
                               r"|>\s*\S*(?:" + HOOK_FOLDERS + ")", re.S)
# echoed text that a shell is given: piped to it, or written to a file that is then run
_ECHOED_TO_RUN = re.compile(r"\b(echo|printf)\s+(?:-\w+\s+)*(['\"])((?:(?!\2)[\s\S])*)\2((?:[ \t]+[^\s|;&>'\"]+)*)\s*"
                            r"(?:\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|da|k)?sh|at|batch)\b|>)")
_ECHO_SUBST = re.compile(r"\$\(\s*(?:echo|printf)\s+([^()|`]*?)\s*(?:\|[^()]*)?\)"
                         r"|`\s*(?:echo|printf)\s+([^`|]*?)\s*(?:\|[^`]*)?`")
_REV_SUBST = re.compile(r"\$\(\s*rev\s*<<<\s*['\"]?([^)'\"\s]+)['\"]?\s*\)|`\s*rev\s*<<<\s*['\"]?([^`'\"\s]+)['\"]?\s*`")
# a host's address looked up in place stands for the host: `dig +short x.net`, `getent hosts x.net`
_LOOKED_UP = re.compile(r"\$\(\s*(?:dig\s+(?:[+@-]\S+\s+)*|host\s+|nslookup\s+|getent\s+a?hosts\s+)([\w.-]+\.[a-z]{2,})\b[^()]*\)"
                        r"|`\s*(?:dig\s+(?:[+@-]\S+\s+)*|host\s+|nslookup\s+|getent\s+a?hosts\s+)([\w.-]+\.[a-z]{2,})\b[^`]*`")
_REVERSED = re.compile(r"(?:echo|printf|<<<)\s*(?:-\w+\s+)*([\"'])(.*?)\1\s*\|\s*rev\b|"
                       r"\brev\s*<<<\s*([\"'])(.*?)\3|\brev\s*<<<\s*()([^\s\"'`;&|)]+)", re.S)
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_PERCENT = re.compile(r"%(?:25)?[0-9a-fA-F]{2}")
_SQL_STATEMENT = re.compile(r"\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*(?:select|with|insert|update|delete|create|alter|drop"
                            r"|truncate|merge|grant|revoke|copy|explain|vacuum|analyze|unload|upsert|replace\s+into"
                            r"|comment\s+on)\b", re.I | re.S)
# lines only a shell script has (its functions' f() { would look like a call in code)
_SHELL_SCRIPT_LINE = re.compile(r"^[ \t]*(?:set\s+-[euxo]+\b|fi|done|esac|then|do)[ \t]*$|^[ \t]*set\s+-[euxo]"
                                r"|^[ \t]*(?:function\s+)?[\w-]+\s*\(\)\s*\{", re.M)  # (or a function of the shell's)
_LOOKS_LIKE_CODE = fast_regex(r"\bimport\b|\((?<=\w\()|\bdef\b|\blambda\b")  # `\((?<=\w\()`: a call


def _without_echoed_text(text: str) -> str:
    """Text that `echo`/`printf` write out is data, unless it is then run."""
    if "echo" not in text and "printf" not in text:
        return text
    if _RUNS_TEXT.search(text) or _WRITTEN_THEN_RUN.search(text):
        return text
    # (a double-quoted $(...) or `...` runs: echo "$(cat /run/secrets/key)" >> file; a CI
    # expression ${{ ... }} is filled in before any shell runs)
    return _ECHO_DATA.sub(lambda m: m.group(0) if "${{" in m.group(0) or (m.group(2) == '"' and (
        "$" in m.group(0) or "`" in m.group(0))) else m.group(1) + " _", text)


# sums the shell works out: $((2048*1024)), $(expr 2048 \* 4), `expr 2048`
_ARITHMETIC = re.compile(r"\$\(\(\s*([\d\s*+\-/()<]{1,60}?)\s*\)\)|\$\(\s*expr\s+([\d\s*+\-/()\\]{1,60}?)\s*\)"
                         r"|`\s*expr\s+([\d\s*+\-/()\\]{1,60}?)\s*`")
_SUM_PART = re.compile(r"\d{1,12}|<<|\*\*|[*+\-/()]")


_ECHO_DECODED = re.compile(r"\|\s*base64\s+(?:-d|--decode|-D)\b")


def _echo_output(m: re.Match[str]) -> str:
    """What `$(echo X)` gives: X, or X decoded when it is piped through `base64 -d` (a blob
    too short to be looked for on its own: `$(echo c3Vkbw==|base64 -d)` is sudo)."""
    said = m.group(1) or m.group(2) or ""
    printed = m.group(0).lstrip("$(` ").startswith("printf") and "%" in said
    if printed and (_ECHO_DECODED.search(m.group(0)) or _ECHO_UNHEXED.search(m.group(0))):
        said = _printf_filled(said)  # $(printf '%s' <base64> | base64 -d): what printf prints
    if _ECHO_DECODED.search(m.group(0)):
        try:
            plain = base64.b64decode(said.strip("'\" "), validate=True).decode()
        except (binascii.Error, ValueError):
            return said
        return plain if plain.isprintable() else said
    if _ECHO_UNHEXED.search(m.group(0)):  # $(echo 67737574696c | xxd -r -p) is gsutil
        try:
            plain = bytes.fromhex(said.strip("'\" ")).decode()
        except ValueError:
            return said
        return plain if plain.isprintable() else said
    return _printf_filled(said) if printed else said


_ECHO_UNHEXED = re.compile(r"\|\s*xxd\s+(?:-\w+\s+)*-r\b")
_FORMAT_FIELD = re.compile(r"%(-?0?\d*)([sdixX%])")


def _printf_filled(said: str) -> str:
    """printf's format with its arguments filled in: `printf 'eng-%04d' 5` is eng-0005 (the
    format is used again while arguments are left: `printf %s r m` is rm)."""
    try:
        fmt, *args = shlex.split(said)
    except ValueError:
        return said
    given = iter(args)
    left = len(args)

    def field(f: re.Match[str]) -> str:
        nonlocal left
        left -= f.group(2) != "%"
        if f.group(2) == "%":
            return "%"
        value = next(given, "")
        if f.group(2) == "s":
            return f"%{f.group(1)}s" % value
        try:
            return f"%{f.group(1)}{f.group(2)}" % int(value or "0", 0)
        except ValueError:
            return value
    filled = _FORMAT_FIELD.sub(field, fmt)
    while left > 0 and _FORMAT_FIELD.search(fmt):  # the format again for arguments left over
        filled += _FORMAT_FIELD.sub(field, fmt)
    return filled


def _computed(m: re.Match[str]) -> str:
    """The sum's value (integers, + - * / ** << and brackets; anything else left as written)."""
    text = (m.group(1) or m.group(2) or m.group(3) or "").replace("\\", "")
    if not text.strip():
        return m.group(0)
    try:
        tree = ast.parse(" ".join(_SUM_PART.findall(text)), mode="eval")
        value = _sum_value(tree.body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return m.group(0)
    return str(value) if abs(value) < 10 ** 30 else m.group(0)


def _sum_value(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_sum_value(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        a, b = _sum_value(node.left), _sum_value(node.right)
        if not (0 <= b <= 128 and abs(a) <= 1 << 20):
            raise ValueError("a power too large to work out")
        return a ** b
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.LShift):
        a, b = _sum_value(node.left), _sum_value(node.right)
        if not 0 <= b <= 100:
            raise ValueError("a shift too far to work out")
        return a << b
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        a, b = _sum_value(node.left), _sum_value(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        return a // b
    raise ValueError("not a sum")


_SHELL_SYNTAX = re.compile(r"[\"'\\$`~]")  # what makes the shell read a text other than as written


def _as_script_lines(text: str) -> str:
    """A script's lines as commands ended by `;`, except where a line goes on: after do, then,
    else, {, a pipe, && or || (`while :; do\n curl x &\ndone` is `while :; do curl x & done`)."""
    lines = text.replace("\\\n", " ").replace("\n", " ; ")
    return _GOES_ON.sub(r"\1 ", lines) if ";" in lines else lines


_GOES_ON = re.compile(r"(\b(?:do|then|else)|[{|&])\s+;\s")


def _forms(raw: str) -> list[str]:
    """`raw` as written and as the shell reads it: variables substituted, quotes and escapes
    removed, echoed substitutions replaced by what they echo, SQL comments stripped."""
    written = raw  # (a comment ends at its line's end: stripped before lines are joined)
    if "\n" in raw and (raw.startswith("#!") or _SHELL_SCRIPT_LINE.search(raw)
                        or not (_LOOKS_LIKE_CODE.search(raw) or _SQL_STATEMENT.match(raw))):
        # a script's lines are commands of their own (squashed, they would run into each other;
        # a SQL statement's lines are one statement: DELETE FROM t\nWHERE ...)
        raw = _as_script_lines(raw)
    forms = [raw]
    if _SHELL_SYNTAX.search(raw):
        echoed = _ARITHMETIC.sub(_computed, _ECHO_SUBST.sub(_echo_output, raw)) \
            if "$(" in raw or "`" in raw else raw
        if "rev" in raw and _REV_SUBST.search(echoed):  # $(rev <<<mr) is rm
            echoed = _REV_SUBST.sub(lambda m: (m.group(1) or m.group(2))[::-1], echoed)
        if ("dig" in raw or "host" in raw or "nslookup" in raw) and _LOOKED_UP.search(echoed):
            echoed = _LOOKED_UP.sub(lambda m: m.group(1) or m.group(2), echoed)  # user@$(dig +short x)
        plain = unquoted(raw)
        substituted = substitute_vars(raw)
        forms += [plain if substituted == raw else unquoted(substituted), plain,
                  plain if echoed == raw else unquoted(echoed)]
        if echoed != raw and "$" in echoed:  # H=$(echo <base64> | base64 -d); curl https://$H
            forms.append(unquoted(substitute_vars(echoed)))
    if "value" in raw and _NAMED_VALUE.search(raw):  # {"key": "db_password", "value": "..."}
        named = _NAMED_VALUE.sub(r'"\3": ', raw)  # is {"db_password": "..."}
        forms += [named, unquoted(named)]
    if "${!" in raw:  # v=AWS_SECRET; ${!v} is $AWS_SECRET (the variable it names, kept as named)
        named_by = _plain_assignments(raw)
        forms.append(named := _INDIRECT.sub(lambda m: "$" + named_by.get(m.group(1), m.group(1)), raw))
        forms.append(unquoted(substitute_vars(named)))  # (and its value: t=V; V=/srv; rm -rf "${!t}")
    if "-n" in raw and (refs := dict(_NAMEREF.findall(raw))):  # declare -n t=DIR: $t is $DIR
        named = _REF_USE.sub(lambda m: "$" + refs[m.group(1)] if m.group(1) in refs else m.group(0), _NAMEREF.sub(" ", raw))
        forms += [named, unquoted(substitute_vars(named))]
    if "busybox " in raw:  # busybox wget ... | busybox sh: the applet named is what runs
        forms.append(raw.replace("busybox ", ""))
    if "decode(" in raw and _DECODED_ADDRESS.search(raw):  # b64decode('<an address read in place>')
        forms.append(_DECODED_ADDRESS.sub(r"'\2'", raw))  # is that address, as a literal
    if "$(" in raw and "|" in raw:  # (its own pipes would end the command around it for a pattern)
        forms.append(_INNERMOST_SUBST.sub("_", _INNERMOST_SUBST.sub("_", raw)))
    forms += [_GIT_OPTIONS.sub("git ", f) for f in forms  # `git -C repo push` is `git push`
              if "git" in f and _GIT_OPTIONS.search(f)]
    if "alias." in raw:  # git -c alias.sync='push --force' sync: the alias is what runs
        forms += [_git_aliased(f) for f in forms if "alias." in f]
    if "{" in raw and "," in raw:
        forms += [_BRACE_COMMAND.sub(lambda m: m.group(1).replace(",", " "), f) for f in forms
                  if _BRACE_COMMAND.search(f)]
    # (only text with comments has anything to strip; a script's lines stay commands;
    # --WHERE in SQL is a comment, --if-exists in a shell an option)
    options_too = "--" in raw and _SQL_WORDS.search(raw) is not None
    if "/*" in raw or "-- " in raw or "#" in raw or raw.endswith("--") or options_too:
        forms += [_as_script_lines(s) if raw is not written else s
                  for s in strip_sql_comments(written, options_too)]
    if "/*!" in raw:  # MySQL runs a versioned comment's text (and reads past the others)
        versioned = _MYSQL_VERSIONED.sub(r" \1 ", raw)
        forms += [versioned, *strip_sql_comments(versioned)]
    if "char(" in raw.lower():  # CHAR(68,82,79,80) is 'DROP'
        raw = _SQL_CHAR_LIST.sub(lambda m: "'" + "".join(chr(int(n)) for n in re.findall(r"\d+", m.group(1))
                                                        if int(n) < 128) + "'", raw)
        forms.append(raw)
    if "concat(" in raw.lower():  # MySQL's CONCAT('/et','c/','shadow') is the string it makes
        forms.append(_SQL_CONCAT_CALL.sub(lambda m: "'" + "".join(_SQL_LITERAL.findall(m.group(1))) + "'", raw))
    if "'" in raw and "+" in raw and _SQL_PLUS.search(raw):  # T-SQL: N'DR' + N'OP TABLE x'
        forms.append(_SQL_PLUS.sub("", raw))
    if "||" in raw and ("'" in raw or "chr(" in raw.lower()):  # strings built in pieces: 'DR'||'OP '||chr(84)||'ABLE'
        raw = _SQL_CONCAT.sub("", _SQL_CHR.sub(
            lambda m: f"'{chr(int(m.group(1)))}'" if int(m.group(1)) < 128 else m.group(0), raw))
        forms.append(_SQL_SPLICE.sub(r"\1", raw))  # '... (1, ' || (10^12)::bigint || ') ...': the value in place
        forms.append(raw)
    if "format(" in raw.lower() and "%" in raw:  # format('COPY f FROM %L', '/etc/passwd') in PL/pgSQL
        forms.append(_SQL_FORMAT.sub(_formatted, raw))
        # (a name given as a literal and more, 'tmp_import_' || to_char(...): its start filled in)
        forms.append(_SQL_FORMAT_PREFIX.sub(lambda m: "'" + re.sub(r"%[Iis]", m.group(2), m.group(1), count=1) + "'", raw))
    return forms


_SQL_SPLICE = re.compile(r"'\s*\|\|\s*(\([^'()]*\)(?:::\w+)?|[\w.]+(?:::\w+)?)\s*\|\|\s*'")
_SQL_FORMAT = re.compile(r"\bformat\(\s*'((?:[^']|'')*)'\s*((?:,\s*'(?:[^']|'')*'\s*)+)\)", re.I)


def _formatted(m: re.Match[str]) -> str:
    """PostgreSQL's format() with literal arguments: %L quoted, %s and %I as they are."""
    given = iter(re.findall(r"'((?:[^']|'')*)'", m.group(2)))
    return re.sub(r"%([LsI])", lambda f: (lambda a: f"'{a}'" if f.group(1) == "L" else a)(next(given, "")),
                  m.group(1))


_NAMED_VALUE = re.compile(r"([\"'])(?:key|name|param|parameter|variable|setting)\1\s*:\s*([\"'])([^\"'\n]{1,80})\2\s*,\s*"
                          r"([\"'])value\4\s*:\s*")
_TR_ROT13 = re.compile(r"\btr\s+['\"]?a-za-z['\"]?\s+['\"]?n-za-mn-za-m['\"]?\s*<<<\s*(['\"])(.*?)\1", re.I | re.S)
_DECODED_ADDRESS = re.compile(r"\b(?:(?:base64\.)?(?:urlsafe_)?b(?:64|32|16)decode|bytes\.fromhex|(?:binascii\.)?unhexlify)"
                              r"\(\s*[rb]?(['\"])(" + _ADDRESS.pattern
                              + r")\1\s*\)(?:\.decode\([^()]*\))?")
_INNERMOST_SUBST = re.compile(r"\$\([^()|]*\|[^()]*\)")  # (one with a pipe of its own)
_BRACE_COMMAND = re.compile(r"(?:^|(?<=[;&|(`]))\s*\{([^{}\s,]+(?:,[^{}\s,]*)+)\}")
_GIT_ALIAS = re.compile(r"-c\s+alias\.([\w-]+)=(\"[^\"]*\"|'[^']*'|\S+)")


def _filled_from(values: list[str]) -> Callable[[re.Match[str]], str]:
    """A replacement that gives the next of `values` each time."""
    given = iter(values)
    return lambda _m: next(given)


def _kept_then(value: str) -> Callable[[re.Match[str]], str]:
    """A replacement that keeps a match's first group and puts `value` after it."""
    return lambda m: m.group(1) + value


def _git_aliased(text: str) -> str:
    aliases = _GIT_ALIAS.findall(text)
    text = _GIT_ALIAS.sub("", text)
    for name, value in aliases:
        text = re.sub(rf"(\bgit\b.*?\s){re.escape(name)}\b", _kept_then(value.strip("\"'")),
                      text, count=1)
    return text


# git's options before its command: where it runs, its settings, no pager
_GIT_OPTIONS = re.compile(r"\bgit\s+(?:(?:-C|-c)\s+\S+\s+|--(?:git-dir|work-tree|namespace)[= ]\S+\s+"
                          r"|--(?:no-pager|bare|no-replace-objects|literal-pathspecs)\s+|-P\s+)+")
_MYSQL_VERSIONED = re.compile(r"/\*!\d*\s*(.*?)\*/", re.S)
_SQL_WORDS = re.compile(r"\b(?:select|update|delete|insert|where|set|values)\b", re.I)
_SQL_CHR = re.compile(r"\bchr\(\s*(\d{1,3})\s*\)", re.I)
_SQL_CHAR_LIST = re.compile(r"\b(?:n?char)\(\s*(\d{1,3}(?:\s*,\s*\d{1,3})+)\s*\)", re.I)
_SQL_PLUS = re.compile(r"'\s*\+\s*N?'")
_SQL_FORMAT_PREFIX = re.compile(r"\bformat\(\s*'([^'%]*%[Iis][^'%]*)'\s*,\s*'([\w.]+)'\s*\|\|")
_SQL_CONCAT_CALL = re.compile(r"\bconcat\(\s*((?:'[^']*'\s*,\s*)+'[^']*')\s*\)", re.I)
_SQL_LITERAL = re.compile(r"'([^']*)'")
_SQL_CONCAT = re.compile(r"'\s*\|\|\s*'")


_DECODES = re.compile(r"\bbase64\s+(?:-\w*d\w*|--decode)|\bb(?:64|32|16|85)decode\(|\bxxd\s+-r|\bfromhex\(|\bunhexlify\(")
# a decoding whose output is only shown: to the terminal, printed, paged or dumped
_SHOWN = re.compile(r"(?:\bbase64\s+(?:-\w*d\w*|--decode)|\bxxd\s+-r\s*(?:-p)?)\s*(?=$|;|&&|\|\||\|\s*(?:head|less|more|cat|xxd|hexdump"
                    r"|od|strings|file|wc)\b)|\b(?:print|pprint)\(\s*(?:repr\()?(?:base64\.|binascii\.)?"
                    r"(?:b(?:64|32|16|85)decode|unhexlify)\(|\b(?:print|pprint)\(\s*(?:repr\()?bytes\.fromhex\(")
_RUNS = re.compile(r"\$\(|`|\b(?:eval|exec|source|system|popen|subprocess|spawn|compile|__import__|getattr|importlib"
                   r"|psql|mysql|sqlite3|curl|wget|socket|requests|urllib|execute|connect|open)\b|\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|>")


def _only_shown(raw: str) -> bool:
    """Whether every blob `raw` decodes is only looked at (`echo ... | base64 -d`,
    print(b64decode(...))) and nothing in it runs or sends what it says."""
    decodings = len(_DECODES.findall(raw))
    return decodings > 0 and decodings == len(_SHOWN.findall(raw)) and not _RUNS.search(raw)


def unicode_unescaped(text: str) -> str:
    """`text` with its \\uXXXX escapes (JSON's, code's) read as the characters they stand for."""
    return _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def _hidden(raw: str, blobs: list[Blob]) -> list[str]:
    """The texts hidden in `raw`: decoded blobs, code inside code, text written backwards,
    percent-encoded and look-alike Unicode text."""
    shown = bool(blobs) and _only_shown(raw)
    # (a blob decoded only to be looked at, `echo ... | base64 -d`, print(b64decode(...)), is
    # data: what it says is not run)
    hidden = ([] if shown else [b.plain for b in blobs if len(b.plain) > 1]) + inner_texts(raw)
    if ("echo" in raw or "printf" in raw) and (_RUNS_TEXT.search(raw) or _WRITTEN_THEN_RUN.search(raw)):
        # what is echoed to a shell or to a script that runs is a command (printf's \n a new line)
        hidden += [_printf_escapes(_printf_filled(shlex.quote(m.group(3)) + m.group(4)) if m.group(1) == "printf"
                                   and m.group(4) else m.group(3), new_line="\n")
                   for m in _ECHOED_TO_RUN.finditer(raw) if len(m.group(3)) > 3]
    if ("za-m" in raw or "ZA-M" in raw) and (rot := _TR_ROT13.search(raw)):  # tr 'A-Za-z' 'N-ZA-Mn-za-m' <<< '...' | bash
        hidden.append(codecs.decode(rot.group(2), "rot13"))
    if "install" in raw or "prepare" in raw or "prepublish" in raw or "pack" in raw:
        # a package's lifecycle scripts: commands that npm install runs
        hidden += [_JSON_ESCAPE.sub(lambda e: e.group(1), m.group(1)) for m in _LIFECYCLE.finditer(raw)]
    if blobs and _DECODED_TO_SHELL.search(raw):  # what is decoded is what the shell is given
        hidden += [b.plain + " | sh" for b in blobs if len(b.plain) > 6]
    if "tr " in raw and ("<<<" in raw or "|" in raw):  # tr 'A-Za-z' 'N-ZA-Mn-za-m' <<<'...': rot13
        hidden += [t for m in _TRANSLATED.finditer(raw) if (t := _tr(m))]
    if "base32" in raw:  # base32 -d <<<'...' | sh: what it decodes to is what runs
        hidden += [d + (" | sh" if _DECODED_TO_SHELL.search(raw) else "") for m in _BASE32_GIVEN.finditer(raw)
                   if (d := _base32(m.group(1) or m.group(2)))]
    if "[::-1]" in raw:  # strings written backwards and turned round in code
        backwards = [m.group(2)[::-1] for m in _QUOTED.finditer(raw) if len(m.group(2)) > 1]
        hidden += [" ".join(backwards)] if backwards else []
    if "rev" in raw and _REV.search(raw):  # text written backwards, then turned round and run
        hidden += [(m.group(2) or m.group(4) or m.group(6) or "")[::-1] for m in _REVERSED.finditer(raw)] \
            or [raw[::-1]]
    if "%" in raw and _PERCENT.search(raw):
        hidden.append(unquote(unquote(raw)))
    if "\\u" in raw and _UNICODE_ESCAPE.search(raw):  # JSON's and code's \u006c is l
        hidden.append(unicode_unescaped(raw))
    if not raw.isascii():
        hidden.append(unicodedata.normalize("NFKC", raw))
    return hidden


_REV = re.compile(r"(?<![\w-])rev(?![\w-])")  # (not git rev-parse)
# tr SET1 SET2 given text: by a here-string, or from echo/printf through a pipe
_TRANSLATED = re.compile(r"\btr\s+(['\"]?)([\w\-]+)\1\s+(['\"]?)([\w\-]+)\3\s*<<<\s*(['\"])(.*?)\5"
                         r"|\b(?:echo|printf)\s+(['\"])(.*?)\7\s*\|\s*tr\s+(['\"]?)([\w\-]+)\9\s+(['\"]?)([\w\-]+)\11", re.S)
_BASE32_GIVEN = re.compile(r"\bbase32\s+(?:-d|--decode)\s*<<<\s*['\"]?([A-Za-z2-7=]{8,})"
                           r"|\becho\s+(?:-n\s+)?['\"]?([A-Za-z2-7=]{8,})['\"]?\s*\|\s*base32\s+(?:-d|--decode)")


def _tr_set(spec: str) -> str:
    """A tr set written with ranges (A-Z) as the characters it stands for."""
    return re.sub(r"(.)-(.)", lambda r: "".join(map(chr, range(ord(r.group(1)), ord(r.group(2)) + 1)))
                  if r.group(1) <= r.group(2) else r.group(0), spec)


def _tr(m: re.Match[str]) -> str | None:
    first, second, text = (m.group(2), m.group(4), m.group(6)) if m.group(2) else (m.group(10), m.group(12), m.group(8))
    a, b = _tr_set(first), _tr_set(second)
    if not a or len(a) > 256 or len(b) < len(a):
        return None
    return text.translate(str.maketrans(a, b[:len(a)]))


def _base32(blob: str) -> str | None:
    try:
        text = base64.b32decode(blob.upper() + "=" * (-len(blob) % 8)).decode()
    except (binascii.Error, ValueError):
        return None
    return text if text.isprintable() else None
_LIFECYCLE = re.compile(r"[\"'](?:pre|post)?(?:install|prepare|prepublish(?:only)?|pack|uninstall)[\"']\s*:\s*\"((?:[^\"\\]|\\.)*)\"",
                        re.I)
_JSON_ESCAPE = re.compile(r"\\([\"\\/])")
_DECODED_TO_SHELL = re.compile(r"(?:base64\s+(?:-\w*d\w*|--decode)|xxd\s+-r|\bbase32\s+-d)[\s\S]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b")
_REPLACE = re.compile(r"\$\{\w+/(/?)([^/}]*)(?:/([^}]*))?\}")
_SUBSTRING = re.compile(r"\$\{\w+:(\d+)(?::(\d+))?\}")
_ZERO_WIDTH = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad]")
_QUOTED = re.compile(r"([\"'])((?:(?!\1)[^\\\n])*)\1")


# a statement EXPLAIN only plans: without ANALYZE (which runs it), or with ANALYZE false/off
_PLANNED = re.compile(r"(?:^|(?<=;))\s*explain\b(?!\s+analy[sz]e\b)(?!\s*\((?:(?!\banaly[sz]e\b)[^)])*\banaly[sz]e\b"
                      r"(?!\s+(?:false|off|0)\b))[^;]*", re.I)


def views(text: str) -> tuple[str, ...]:
    """Every view of `text` the detectors look at (see the module's docstring)."""
    seen: dict[str, None] = {}
    text = _ZERO_WIDTH.sub("", text) if not text.isascii() else text
    if "explain" in text[:40].lower():  # (a plan is shown; the statement is not run)
        text = _PLANNED.sub("EXPLAIN", text)
    pending = [(text[:MAX_TEXT], 0)]
    while pending and len(seen) < MAX_VIEWS:
        raw, depth = pending.pop()
        raw = _without_echoed_text(raw)
        blobs = encoded_blobs(raw) if depth < MAX_DEPTH else []
        raw = read_in_place(raw, blobs)
        for form in dict.fromkeys(_forms(raw)):
            seen.setdefault(squash(form), None)
        if depth >= MAX_DEPTH:
            continue
        assigned = _plain_assignments(raw) if "=" in raw and "$" in raw else {}
        for inner in _hidden(raw, blobs):
            if assigned and "$" in inner:  # ("$LOG_DIR/run.log" quoted, with LOG_DIR=logs before it)
                inner = _with_values(inner, assigned)
            if squash(inner) not in seen:
                pending.append((inner, depth + 1))
    return tuple(v for v in seen if v)
