"""E-mail addresses: a local part of word characters and ``.%+-`` (so ``name+tag@`` is one address), a
domain of labels, and a top-level domain of letters that is not an image extension (``icon@2x.png``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from pipeline.redact.numbers import find_all
from pipeline.redact.scripts import CJK_RANGES, local_part_char

_IMAGE_TLDS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "tif", "tiff", "avif"})


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern:
    cjk = CJK_RANGES
    # letters and digits of scripts written with spaces: CJK text glued to an address is a boundary
    w = rf"[^\W{cjk}]"  # a word character that is not CJK
    dw = rf"[^\W_{cjk}]"  # the same without "_" (domain labels start and end with one)
    return re.compile(
        rf"(?<!{w})(?<![.%+-])(?:{w}|[.%+-]){{1,64}}@(?:{dw}(?:(?:{w}|-){{0,61}}{dw})?\.){{1,8}}"
        rf"([^\W\d_{cjk}]{{2,24}})(?!{w}|-)"
    )


class EmailDetector:
    def __init__(self, rules=None) -> None:
        self.email = _pattern()

    def find(self, text: str, _: list) -> Iterator[tuple[int, int]]:
        if "@" not in text:
            return
        n = len(text)
        for i in find_all(text, "@"):
            # walk back over the local part and match once there (scanning a window with the regex, which
            # starts with lookbehinds, tried every position: ~2x slower on web pages)
            start = i
            while start > 0 and i - start <= 64 and local_part_char(text[start - 1]):
                start -= 1
            if start == i or i - start > 64:
                continue
            m = self.email.match(text, start, min(n, i + 320))
            if m and m.group(1).lower() not in _IMAGE_TLDS:  # icon@2x.png is a file name
                yield m.span()
