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


class SSNDetector:
    def __init__(self, rules=None) -> None:
        self.ssn = _pattern()

    def find(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        for pos, endpos in windows:
            for m in self.ssn.finditer(text, pos, endpos):
                if ssn_valid(m.group(1), m.group(3), m.group(4)) and isolated(text, *m.span()):
                    yield m.span()
