"""Scripts written without spaces: Chinese, Japanese and Korean put no space around a number or an address,
so a CJK character next to one is a boundary, while a Latin letter glued to it is not."""

from __future__ import annotations

import re

# Hangul Jamo, CJK radicals … CJK unified ideographs (incl. CJK punctuation, kana), Hangul syllables,
# compatibility ideographs, CJK compatibility forms, half/full-width forms, supplementary ideographs.
CJK_RANGES = "\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
CJK_RANGES += "\U00020000-\U0003ffff"
CJK = re.compile(f"[{CJK_RANGES}]")


def local_part_char(ch: str) -> bool:
    """A character of an e-mail local part as the e-mail regex takes it: word characters (not CJK), ``.%+-``."""
    if ch.isascii():
        return ch.isalnum() or ch in "_.%+-"
    return (ch.isalnum() or ch == "_") and not CJK.match(ch)
