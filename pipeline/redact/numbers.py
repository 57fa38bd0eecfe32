"""What the number detectors (phone, card, SSN) share: check digits, the windows that hold enough digits to
be worth a closer look, and the test that a number stands alone."""

from __future__ import annotations

import re
from collections.abc import Iterator

from pipeline.redact.scripts import glued

# windows worth a closer look: runs of digits and phone/card separators (at least 9 characters; a line
# break inside, for a card split across lines)
NUMBER_RUN = re.compile(r"\d[\d \-.()/+\r\n]{8,}", re.ASCII)
DIGIT_GROUPS = re.compile(r"\d+")
_BEFORE_NUMBER = " -./,:"
_DROP_ASCII_DIGITS = str.maketrans("", "", "0123456789")


def luhn_valid(digits: str) -> bool:
    """Luhn (mod 10) check used by every payment card number."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def gs1_valid(digits: str) -> bool:
    """GS1 mod-10 check (weights 3,1 from the right): EAN-8/13, UPC-A, GTIN-14, SSCC-18, ISBN-13."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        total += (ord(ch) - 48) * (3 if i % 2 else 1)
    return total % 10 == 0


def digit_count(s: str) -> int:
    return len(s) - len(s.translate(_DROP_ASCII_DIGITS))


def isolated(text: str, start: int, end: int) -> bool:
    """A number stands alone: not glued to letters, not part of a longer digit run, price or percentage.

    CJK characters are boundaries (``电话13812345678请``): those scripts put no space around numbers.
    """
    if start:
        prev = text[start - 1]
        if glued(prev) or prev in "_$€£¥#@":
            return False
        if prev in _BEFORE_NUMBER and start >= 2 and text[start - 2].isdigit():
            return False
    if end < len(text):
        nxt = text[end]
        if glued(nxt) or nxt in "_%€$":
            return False
        if nxt in _BEFORE_NUMBER and end + 1 < len(text) and text[end + 1].isdigit():
            return False
    return True


def after_last_digit(text: str, start: int, reach: int) -> int:
    """The position after the last ASCII digit in the ``reach`` characters before ``start`` (or their start).

    Context words contain no digits, so a context regex need not look past the previous number: in
    number-dense text that window is a few characters instead of 40.
    """
    low = max(0, start - reach)
    i = start
    while i > low and not ("0" <= text[i - 1] <= "9"):
        i -= 1
    return i


def merge(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def number_windows(text: str) -> list[tuple[int, int]]:
    """Stretches that hold at least 8 digits: every phone, card and SSN lies inside one.

    The margins let a pattern start on a ``+`` or ``(`` just before the run and see the characters
    after it (a regex searched with ``endpos`` cannot look past it; lookbehinds do see before ``pos``).
    """
    n = len(text)
    return merge(
        [(max(0, m.start() - 2), min(n, m.end() + 3)) for m in NUMBER_RUN.finditer(text) if digit_count(m.group()) >= 8]
    )


def find_all(text: str, needle: str) -> Iterator[int]:
    i = text.find(needle)
    while i != -1:
        yield i
        i = text.find(needle, i + 1)
