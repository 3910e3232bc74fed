"""What a tool call's text says once the usual disguises are taken off.

Detectors match patterns against *views* of an argument: the text as written, lower-cased
with quotes, escapes and comments removed, shell variables substituted, and every string
hidden inside it (command substitutions, `bash -c`/`python -c`/`eval` bodies, Python string
literals, base64, hex and octal blobs, reversed strings) as views of their own, recursively
to a small depth. A view is lower-case with runs of whitespace collapsed to one space.
"""

from __future__ import annotations

import base64
import binascii
import re

MAX_DEPTH = 3
MAX_VIEWS = 48
MAX_TEXT = 20_000  # characters of an argument looked at (the rest is cut off, flagged)

_WS = re.compile(r"\s+")
_ESCAPED = re.compile(r"\\(.)", re.S)
_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'")
_HEX_ESC = re.compile(r"(?:\\x[0-9a-fA-F]{2}){2,}")
_OCT_ESC = re.compile(r"(?:\\[0-7]{3}){2,}")
_HEX_RUN = re.compile(r"(?<![0-9a-zA-Z])(?:[0-9a-fA-F]{2}){5,}(?![0-9a-zA-Z])")
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{8,}={0,2}(?![A-Za-z0-9+/=])")
_B64_URL_RUN = re.compile(r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{16,}={0,2}(?![A-Za-z0-9_\-=])")
_SUBST = re.compile(r"\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)|`([^`]*)`|<\(([^()]*)\)")
_INNER = re.compile(
    r"(?:\b(?:ba|z|k|da)?sh|\bpython[0-9.]*|\bperl|\bruby|\bnode|\bphp)\s+-[a-z]*[ce]\s+"
    r"(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)')"
    r"|\beval\s+(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)')", re.I | re.S)
_ASSIGN = re.compile(r"(?:^|[;&|\s(])(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?"
                     r"([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;&|]*)")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:#%/][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_PY_STR = re.compile(r"[rbuf]{0,2}(\"\"\"(?:.|\n)*?\"\"\"|'''(?:.|\n)*?'''|\"(?:[^\"\\\n]|\\.)*\""
                     r"|'(?:[^'\\\n]|\\.)*')", re.I)
_PY_CONCAT = re.compile(r"([\"'])\s*\+\s*[rbuf]{0,2}([\"'])")
_CHR = re.compile(r"chr\(\s*(\d{1,3})\s*\)")
_SQL_LINE = re.compile(r"--[^\n]*|#[^\n]*")
_SQL_BLOCK = re.compile(r"/\*.*?\*/", re.S)

# what a shell variable holds when a command does not set it
KNOWN_VARS = {"home": "/root", "user": "root", "ifs": " ", "pwd": ".", "shell": "/bin/sh",
              "path": "/usr/bin:/bin", "tmpdir": "/tmp", "oldpwd": ".."}


def words(text: str) -> list[str]:
    """A word list written as prose: whitespace-separated."""
    return text.split()


def squash(text: str) -> str:
    return _WS.sub(" ", text).strip().lower()


def _printable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 4 or sum(ch.isprintable() or ch in "\n\t\r" for ch in text) < 0.95 * len(text):
        return None
    return text


def decoded_blobs(text: str) -> list[str]:
    """Strings hidden as base64, hex or octal escapes in `text` (printable ones only)."""
    found: list[str] = []
    for m in _HEX_ESC.finditer(text):
        found.append(bytes(int(h, 16) for h in re.findall(r"\\x([0-9a-fA-F]{2})", m.group()))
                     .decode("latin-1"))
    for m in _OCT_ESC.finditer(text):
        found.append(bytes(int(o, 8) & 0xFF for o in re.findall(r"\\([0-7]{3})", m.group()))
                     .decode("latin-1"))
    for m in _HEX_RUN.finditer(text):
        if (plain := _printable(binascii.unhexlify(m.group()))) is not None:
            found.append(plain)
    for pattern, decode in ((_B64_RUN, base64.b64decode), (_B64_URL_RUN, base64.urlsafe_b64decode)):
        for m in pattern.finditer(text):
            blob = m.group()
            if blob.isalpha() and (blob.islower() or blob.isupper()):
                continue  # a word, not a blob
            try:
                raw = decode(blob + "=" * (-len(blob) % 4))
            except (binascii.Error, ValueError):
                continue
            if (plain := _printable(raw)) is not None:
                found.append(plain)
    return found


def _ansi_c(text: str) -> str:
    def unquote(m: re.Match[str]) -> str:
        body = m.group(1)
        try:
            return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except UnicodeDecodeError:
            return body
    return _ANSI_C.sub(unquote, text)


def substitute_vars(text: str) -> str:
    """Shell variables replaced by what the command assigned them (or a known value)."""
    values: dict[str, str] = {}
    for name, value in _ASSIGN.findall(text):
        values[name] = value.strip("\"'")

    def value_of(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name in values:
            return values[name]
        return KNOWN_VARS.get(name.lower(), "")
    for _ in range(3):  # variables made of variables
        text, n = _VAR.subn(value_of, text)
        if not n:
            break
    return text.replace("~", "/root")


def unquoted(text: str) -> str:
    """Shell words as the shell joins them: quotes dropped, backslash escapes resolved."""
    text = _ansi_c(text)
    text = _ESCAPED.sub(lambda m: " " if m.group(1) == "\n" else m.group(1), text)
    return text.replace('"', "").replace("'", "")


def inner_texts(text: str) -> list[str]:
    """Code inside code: command substitutions, `sh -c`/`python -c`/`eval` bodies,
    Python string literals (adjacent ones joined), chr() sequences."""
    found = [g for m in _SUBST.finditer(text) for g in m.groups() if g]
    found += [g for m in _INNER.finditer(text) for g in m.groups() if g]
    if not _LOOKS_LIKE_CODE.search(text):
        return found  # a shell line: its quoted words are data, not code
    joined = _PY_CONCAT.sub("", text)
    literals = [m.group(1)[1:-1] if not m.group(1).startswith(("'''", '"""'))
                else m.group(1)[3:-3] for m in _PY_STR.finditer(joined)]
    # a lone short word is a key or a name, not code
    found += [lit for lit in literals if len(lit) >= 12 or re.search(r"[\s/.;|&$<>]", lit)]
    if len(literals) > 1:
        found.append(" ".join(literals))  # a command given as a list of words
    chars = _CHR.findall(text)
    if len(chars) >= 2:
        found.append("".join(chr(int(c)) for c in chars if int(c) < 256))
    return found


def strip_sql_comments(text: str) -> list[str]:
    return [_SQL_BLOCK.sub("", _SQL_LINE.sub(" ", text)),
            _SQL_BLOCK.sub(" ", _SQL_LINE.sub(" ", text))]


_ECHO_DATA = re.compile(r"\b(echo|printf)\s+(?:-\w+\s+)*(['\"])(?:(?!\2).)*\2")
_RUNS_TEXT = re.compile(r"\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\|\s*(?:python|perl|ruby|node|eval|source|xargs)"
                        r"|\$\(\s*(?:echo|printf)|`\s*(?:echo|printf)|\beval\b")
_ECHO_SUBST = re.compile(r"\$\(\s*(?:echo|printf)\s+([^()|`]*?)\s*(?:\|[^()]*)?\)"
                         r"|`\s*(?:echo|printf)\s+([^`|]*?)\s*(?:\|[^`]*)?`")
_LOOKS_LIKE_CODE = re.compile(r"\bimport\b|\b\w+\(|\bdef\b|\blambda\b")


def _without_echoed_text(text: str) -> str:
    """Text that `echo`/`printf` write out is data, unless it is then run."""
    return text if _RUNS_TEXT.search(text) else _ECHO_DATA.sub(r"\1 _", text)


def views(text: str) -> tuple[str, ...]:
    """Every view of `text` the detectors look at (see the module's docstring)."""
    seen: dict[str, None] = {}
    pending = [(text[:MAX_TEXT], 0)]
    while pending and len(seen) < MAX_VIEWS:
        raw, depth = pending.pop()
        raw = _without_echoed_text(raw)
        echoed = _ECHO_SUBST.sub(lambda m: m.group(1) or m.group(2) or "", raw)
        for form in (raw, unquoted(substitute_vars(raw)), unquoted(raw), unquoted(echoed),
                     *strip_sql_comments(raw)):
            seen.setdefault(squash(form), None)
        if "rev" in raw:
            seen.setdefault(squash(raw[::-1]), None)
        if depth >= MAX_DEPTH:
            continue
        hidden = [*decoded_blobs(raw), *decoded_blobs(_ESCAPED.sub(r"\1", raw)),
                  *inner_texts(raw)]
        for inner in hidden:
            if squash(inner) not in seen:
                pending.append((inner, depth + 1))
    return tuple(v for v in seen if v)
