"""US Social Security numbers: ``AAA-GG-SSSS`` or ``AAA GG SSSS`` within the SSA's rules (area not 000, 666
or 900–999)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from pipeline.redact.numbers import isolated


def ssn_valid(area: str, group: str, serial: str) -> bool:
    """SSA rules: area not 000, 666 or 900–999; group not 00; serial not 0000."""
    return area != "000" and area != "666" and area[0] != "9" and group != "00" and serial != "0000"


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern:
    # dashes or single spaces, the same between both pairs of groups (123-45-6789, 123 45 6789)
    return re.compile(r"(?<![\w\-])(\d{3})([- ])(\d{2})\2(\d{4})(?!\w|-\d)", re.ASCII)


@lru_cache(maxsize=1)
def _tail() -> re.Pattern:
    # what follows the area number: it starts on a separator, which the scan skips to in C, instead of trying
    # ``_pattern``'s lookbehind at every position of a window (30 % of the SSN scan on number-dense text)
    return re.compile(r"[- ]\d\d[- ]\d{4}(?!\w|-\d)", re.ASCII)


class SSNDetector:
    def __init__(self, rules=None) -> None:
        self.ssn, self.tail = _pattern(), _tail()

    def find(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        # the matches of ``ssn.finditer(text, pos, endpos)``, found from their first separator: no two matches
        # overlap (one would start on a separator or inside a 4-digit group of the other), so every match is
        # ``ssn.match`` 3 characters before a tail match, and a tail match never covers another match's first
        # separator (that match would start on the tail's first separator)
        match = self.ssn.match
        for pos, endpos in windows:
            for tail in self.tail.finditer(text, pos, endpos):
                start = tail.start() - 3
                m = match(text, start, endpos) if start >= pos else None
                if m and ssn_valid(m.group(1), m.group(3), m.group(4)) and isolated(text, *m.span()):
                    yield m.span()
