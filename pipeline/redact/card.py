"""Payment card numbers: Luhn-valid 12–19-digit runs, bare or grouped as cards are printed, with a known
issuer prefix; a GS1-valid barcode or a number after an id label is a card only when a card word is near."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from pipeline.redact.labels import after_iban_prefix, id_label_before
from pipeline.redact.numbers import DIGIT_GROUPS, gs1_valid, luhn_valid

_CARD_WORDS = (
    r"card|cards|credit|debit|visa|mastercard|master card|amex|american express|discover|jcb|maestro"
    r"|unionpay|diners|cc|ccn|karte|kreditkarte|carte|tarjeta|cart[ãa]o|carta|kaart|karta|карта"
)
_CARD_WORDS_CJK = r"卡号|信用卡|银行卡|借记卡|卡|カード|카드"


def card_brand_ok(digits: str) -> bool:
    """Known issuer prefix (IIN) with a length that brand issues; other Luhn-valid runs are IDs.

    Ranges as the brands publish them: Visa 4 (13, 16, 19); Mastercard 51–55 and 2221–2720 (16); Amex 34/37
    (15); Mir 2200–2204 (16–19); JCB 3528–3589 (16–19) and 1800/2131 (15); Diners 300–305, 3095, 36, 38, 39
    (14–19); Discover 6011, 644–649, 65, 622126–622925 (16–19); UnionPay 62 (16–19); Maestro 50, 56–69
    (13–19) and its 12-digit IINs 5018, 5020, 5038, 5893, 6304, 6759, 6761–6763; Troy 9792 (16).
    """
    n = len(digits)
    p2, p3, p4, p6 = int(digits[:2]), int(digits[:3]), int(digits[:4]), int(digits[:6])
    if n == 12:
        return p4 in (5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763)  # Maestro
    if digits[0] == "4":  # Visa
        return n in (13, 16, 19)
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:  # Mastercard
        return n == 16
    if p2 in (34, 37):  # American Express
        return n == 15
    if 2200 <= p4 <= 2204:  # Mir
        return 16 <= n <= 19
    if 3528 <= p4 <= 3589:  # JCB
        return 16 <= n <= 19
    if p4 in (1800, 2131):  # JCB, 15 digits
        return n == 15
    if 300 <= p3 <= 305 or p4 == 3095 or p2 in (36, 38, 39):  # Diners Club
        return 14 <= n <= 19
    if p4 == 6011 or 644 <= p3 <= 649 or p2 == 65 or 622126 <= p6 <= 622925:  # Discover
        return 16 <= n <= 19
    if p2 == 62:  # UnionPay
        return 16 <= n <= 19
    if p2 == 50 or 56 <= p2 <= 69:  # Maestro
        return 13 <= n <= 19
    if p4 == 9792:  # Troy
        return n == 16
    return False


class _Patterns:
    def __init__(self) -> None:
        self.card = re.compile(r"(?<![\w.,\-/+])\d(?:[ \-]?\d){11,18}(?!\w)", re.ASCII)
        self.card_word = re.compile(rf"(?i)(?<![^\W_])(?:{_CARD_WORDS})(?![^\W_])|{_CARD_WORDS_CJK}")


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    return _Patterns()


class CardDetector:
    def __init__(self, rules=None) -> None:
        self.p = _patterns()

    def find(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        for pos, endpos in windows:
            for m in self.p.card.finditer(text, pos, endpos):
                span = self._card_span(m.start(), m.group())
                if span and self._card_context_ok(text, *span):
                    yield span

    def _card_word_near(self, text: str, start: int, end: int) -> bool:
        line_start = max(text.rfind("\n", 0, start) + 1, start - 48)
        line_end = text.find("\n", end, end + 16)
        after = self.p.card_word.search(text, end, line_end if line_end != -1 else min(len(text), end + 16))
        return bool(after) or bool(self.p.card_word.search(text, line_start, start))

    def _card_context_ok(self, text: str, start: int, end: int) -> bool:
        """Barcodes and labelled ids are not cards, unless a card word says otherwise."""
        if after_iban_prefix(text, start):
            return False
        if start and text[start - 1] in "#@$€£":
            return self._card_word_near(text, start, end)
        digits = text[start:end]
        # GS1 keys (UPC-A, EAN-13, GTIN-14) are printed as bare digits; a grouped 4-6-4 run is a card
        barcode = len(digits) in (12, 13, 14) and digits.isdigit() and gs1_valid(digits)
        if barcode or id_label_before(text, start):
            return self._card_word_near(text, start, end)
        return True

    def _card_span(self, start: int, candidate: str) -> tuple[int, int] | None:
        """Try the candidate, then its prefixes at group boundaries (a CVV or a year may follow the number)."""
        seps = {ch for ch in candidate if not ch.isdigit()}
        if len(seps) > 1:
            return None  # mixed separators: not a card as printed or typed
        groups = [(g.group(), g.end()) for g in DIGIT_GROUPS.finditer(candidate)]
        if seps and (len(groups) < 3 or len(groups[0][0]) != 4 or any(not 3 <= len(g) <= 6 for g, _ in groups[1:])):
            return None  # cards are grouped 4-4-4-4(-3), 4-6-5, 4-6-4; other groupings are ISBNs, IDs, tables
        for n in range(len(groups), 0, -1):
            digits = "".join(g for g, _ in groups[:n])
            if len(digits) < 12:
                break
            if luhn_valid(digits) and card_brand_ok(digits):
                return start, start + groups[n - 1][1]
        return None
