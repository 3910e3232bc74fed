"""Huge sizes asked for: constant expressions (10**12, 1 << 40, 1024*1024*1024*64) where
memory, disk or iterations are taken, and what a `dd` writes."""

from __future__ import annotations

import re

from synthorg.secops.normalise import fast_regex

_SIZE_SINK = fast_regex(
    r"(?:[\"'\]\)]\s*\*|\bx|\b(?:bytearray|bytes|range|zeros|ones|empty|full|urandom|truncate|alloc\w*|"
    r"array|repeat|buffer\.alloc|malloc|calloc|randbytes|token_bytes|read|generate_series)\s*\((?:[^(),]*,)?)"
    r"\s*(\(?[\d\s*+<().e_]*\d[\d\s*+<().e_]*)")
_CONSTANT = fast_regex(r"[\d\s*+<().e_]+")
HUGE = 10**9  # elements or bytes: more than a tool call has any business asking for
HUGE_FILE = 16 * 2**30  # a file's bytes: a gigabyte or two is a disk test, hundreds fill a disk


_DD = fast_regex(r"\bdd\b[^;&|]*")
_DD_OPERAND = re.compile(r"\b(bs|count)=(\d+)([kmgtp]?)")
_UNIT = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}


def dd_size(view: str) -> int:
    """The bytes the largest `dd` in the view writes (block size times count)."""
    largest = 0
    for m in _DD.finditer(view) if "dd" in view else ():
        operands = {name: int(n) * _UNIT[unit] for name, n, unit in _DD_OPERAND.findall(m.group())}
        largest = max(largest, operands.get("bs", 512) * operands.get("count", 0))
    return largest


_NUMBER = re.compile(r"\d+")


def _below_huge(expr: str) -> bool:
    """Whether sums and products of the numbers in `expr` stay below HUGE: the product of
    its numbers (each at least 2) bounds them. Powers, shifts and exponents are not bounded."""
    if "**" in expr or "<<" in expr or "e" in expr:
        return False
    bound = 1
    for n in _NUMBER.findall(expr):
        bound *= max(int(n), 2)
        if bound >= HUGE:
            return False
    return True


# what a huge constant is written with: a long number, a power, a shift, an exponent or a
# product (of numbers or a parenthesised sum); or a side of an array's shape
_BIG_CONSTANT = re.compile(r"\d(?:[\d_]{8}|[\d_]{3}\s*[,)]|\s*(?:\*|<<|e\s*\d|\)\s*(?:\*|<<)))")


_SHAPE = fast_regex(r"\b(?:zeros|ones|empty|full|rand\w*|random|normal|uniform|integers|standard_normal)"
                    r"\(\s*\(?\s*(\d[\d_]*(?:\s*,\s*\d[\d_]*)+)")


def huge_size(view: str) -> bool:
    """A constant expression (10**12, 2**40, 1 << 40, 1024*1024*1024*64) that is huge, used
    where memory, disk or iterations are taken."""
    if not _BIG_CONSTANT.search(view):
        return False  # (most texts: the sinks need not be looked for)
    for m in _SHAPE.finditer(view):  # an array's shape: its sides multiplied
        product = 1
        for side in m.group(1).split(","):
            product *= int(side.strip().replace("_", ""))
        if product >= HUGE:
            return True
    for m in _SIZE_SINK.finditer(view):
        expr = m.group(1).strip()
        while expr.count(")") > expr.count("(") and expr.endswith(")"):
            expr = expr[:-1].rstrip()  # the sink's own closing parenthesis
        expr = expr.rstrip("(").strip()
        if not _CONSTANT.fullmatch(expr) or not any(op in expr for op in ("*", "<<", "e")):
            if expr.replace("_", "").isdigit() and int(expr.replace("_", "")) >= HUGE:
                return True
            continue
        if _below_huge(expr):
            continue  # (evaluating is slow; most sizes are plainly small)
        try:
            value = eval(compile(expr.replace("_", ""), "<size>", "eval",
                                 dont_inherit=True), {"__builtins__": {}})
        except (SyntaxError, TypeError, ValueError, OverflowError, MemoryError):
            continue
        if isinstance(value, int | float) and value >= HUGE:
            return True
    return False
