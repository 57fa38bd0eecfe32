"""What the number detectors (phone, card, SSN) share: check digits, the windows that hold enough digits to
be worth a closer look, and the test that a number stands alone."""

from __future__ import annotations

import re
from collections.abc import Iterator

from pipeline.redact.scripts import CJK

# windows worth a closer look: runs of digits and phone/card separators of at least 9 characters (a line
# break inside, for a card split across lines) that hold at least 8 digits. One scan finds them: a match
# starts where a run starts (never right after a digit; a later start inside a run that failed holds fewer
# digits and fails too) and takes the whole run. Found as "every run, then count its digits in Python" before:
# number-dense text has ~25,000 runs per MB (dates, times, short ids), and that step cost 2x the scan.
WINDOW_RUN = re.compile(r"\d(?<!\d\d)(?=[\d \-.()/+\r\n]{8})(?:[ \-.()/+\r\n]*\d){7}[\d \-.()/+\r\n]*", re.ASCII)
_LAST_DIGIT = re.compile(r"(?s).*[0-9]")
DIGIT_GROUPS = re.compile(r"\d+")
_BEFORE_NUMBER = " -./,:"
_DROP_ASCII_DIGITS = str.maketrans("", "", "0123456789")


# the digit sum of 2d for every digit d: the Luhn weight of every second digit from the right
_LUHN_DOUBLED = str.maketrans("0123456789", "0246813579")


def luhn_valid(digits: str) -> bool:
    """Luhn (mod 10) check used by every payment card number (``digits``: ASCII digits).

    Summed in C (the code points of the digits, every second one translated to its doubled digit sum) rather
    than digit by digit in Python: 2x faster, and number-dense text asks this for thousands of digit runs.
    """
    reverse = digits[::-1]
    total = sum(reverse[0::2].encode()) + sum(reverse[1::2].translate(_LUHN_DOUBLED).encode())
    return (total - 48 * len(digits)) % 10 == 0


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
        if prev.isalnum():  # a letter or digit continues the token, unless CJK (none of the characters below)
            if prev.isascii() or not CJK.match(prev):
                return False
        elif prev in "_$€£¥#@" or (prev in _BEFORE_NUMBER and start >= 2 and text[start - 2].isdigit()):
            return False
    if end < len(text):
        nxt = text[end]
        if nxt.isalnum():
            if nxt.isascii() or not CJK.match(nxt):
                return False
        elif nxt in "_%€$" or (nxt in _BEFORE_NUMBER and end + 1 < len(text) and text[end + 1].isdigit()):
            return False
    return True


def after_last_digit(text: str, start: int, reach: int) -> int:
    """The position after the last ASCII digit in the ``reach`` characters before ``start`` (or their start).

    Context words contain no digits, so a context regex need not look past the previous number: in
    number-dense text that window is a few characters instead of 40.
    """
    low = max(0, start - reach)
    last = _LAST_DIGIT.match(text, low, start)  # greedy: backtracks from ``start`` to the last digit, in C
    return last.end() if last else low


def number_windows(text: str) -> list[tuple[int, int]]:
    """Stretches that hold at least 8 digits: every phone, card and SSN lies inside one.

    The margins let a pattern start on a ``+`` or ``(`` just before the run and see the characters
    after it (a regex searched with ``endpos`` cannot look past it; lookbehinds do see before ``pos``).
    """
    windows: list[tuple[int, int]] = []
    append = windows.append
    last_end = -3  # below the first run's unclipped start (-2 at the least)
    for m in WINDOW_RUN.finditer(text):
        start, end = m.span()
        if start - 2 <= last_end:  # runs come in order, so a window overlaps at most the one before it
            windows[-1] = (windows[-1][0], end + 3)
        else:
            append((start - 2, end + 3))
        last_end = end + 3
    # the margins clipped to the text only at its two ends (a window past the end is the last one: a run after it
    # would need 9 characters), not for every run
    if windows:
        if windows[0][0] < 0:
            windows[0] = (0, windows[0][1])
        if windows[-1][1] > len(text):
            windows[-1] = (windows[-1][0], len(text))
    return windows


def find_all(text: str, needle: str) -> Iterator[int]:
    i = text.find(needle)
    while i != -1:
        yield i
        i = text.find(needle, i + 1)
