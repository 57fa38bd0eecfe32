"""Payment card numbers: Luhn-valid 12–19-digit runs, bare or grouped as cards are printed, with a known
issuer prefix; a GS1-valid barcode or a number after an id label is a card only when a card word is near."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from pipeline.redact.labels import after_iban_prefix, id_label_before
from pipeline.redact.numbers import DIGIT_GROUPS, gs1_valid, luhn_valid

# "card" in every language of the quality stage's stop-word lists (pipeline/curate/quality/stop_words.py),
# with the inflections a number follows ("Kartennummer", "kortin", "kartı"); a Luhn-valid number next to one
# is a card whatever its issuer prefix
_CARD_WORDS = (
    r"card|cards|cardholder|creditcard|debitcard|credit|debit|visa|mastercard|master card|amex"
    r"|american express|discover|jcb"
    r"|maestro|unionpay|diners|cc|ccn"
    # de fr es pt it nl pl cs sk lv uz
    r"|\w*karte\w*|carte|cartes|tarjeta\w*|cart[ãa]o|cart[õo]es|carta|\w*kaart\w*|kart[aeęyąi]\w*"
    # sv da no nn is fi lt
    r"|\w*kort|kortet|kortnummer|kortin\w*|kortti\w*|kortel\w*"
    # tr az sq hu hr sl ca gl ro
    r"|kart|kartı\w*|kartë\w*|k[áa]rty[aá]\w*|\w*k[áa]rtya\w*|kartic\w*|targeta|tarxeta|card(?:ul|ului)"
    # id ms sw tl vi ga cy eo la
    r"|kartu|kad|kadi|kard|thẻ|c[áa]rta|cerdyn|karto|charta"
    # ru uk bg mk be sr, el he ar fa ur, hi mr ne, bn
    r"|карт\w*|κάρτα\w*|κάρτας|כרטיס\w*|بطاق\w*|البطاق\w*|کارت|کارڈ|कार्ड|কার্ড"
)
_CARD_WORDS_CJK = r"卡号|信用卡|银行卡|借记卡|卡|カード|카드"
# a substring of every card word that an ASCII text can hold (lower case): the gate in front of the card-word
# regex, whose "\w*karte\w*"-style alternatives make it cost ~20 µs per search
_CARD_HINTS: tuple[str, ...] = ("card", "credit", "debit", "visa", "master", "amex", "american", "discover", "jcb")
_CARD_HINTS += ("maestro", "unionpay", "diners", "cc", "kart", "cart", "tarjeta", "kaart", "kort", "targeta")
_CARD_HINTS += ("tarxeta", "kad", "kard", "cerdyn", "charta")


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
        # separators as cards are printed: spaces, dashes, dots (4111.1111.1111.1111), and a line break
        # between two groups (a number split across lines)
        # (a digit first in the repeated group: the same matches as "(?:separator)?\d", 1.4x faster on digit runs)
        self.card = re.compile(r"(?<![\w.,\-/+])\d(?:\d|[ \-.]\d|[ \t]*\r?\n[ \t]*\d){11,18}(?!\w|\.\d)", re.ASCII)
        self.line_break = re.compile(r"[ \t]*\r?\n[ \t]*")
        self.card_word = re.compile(rf"(?i)(?<![^\W_])(?:{_CARD_WORDS})(?![^\W_])|{_CARD_WORDS_CJK}")
        self.card_hint = re.compile("|".join(_CARD_HINTS))


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    return _Patterns()


class CardDetector:
    def __init__(self, rules=None) -> None:
        self.p = _patterns()
        self._word_near: tuple[int, int, bool] | None = None  # the last span accepted for its card word

    def find(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        for pos, endpos in windows:
            for m in self.p.card.finditer(text, pos, endpos):
                span = self._card_span(text, m.start(), m.group())
                if span and self._card_context_ok(text, *span):
                    yield span

    def _card_word_near(self, text: str, start: int, end: int) -> bool:
        line_start = max(text.rfind("\n", 0, start) + 1, start - 48)
        line_end = text.find("\n", end, end + 16)
        return self._card_word_in(text, end, line_end if line_end != -1 else min(len(text), end + 16)) or (
            self._card_word_in(text, line_start, start)
        )

    def _card_word_in(self, text: str, pos: int, endpos: int) -> bool:
        """``card_word`` matches in ``text[pos:endpos]``; an ASCII window without a hint is answered without it
        (the regex is case-insensitive, and on ASCII text that is what lower-casing the window gives)."""
        window = text[pos:endpos]
        if window.isascii() and not self.p.card_hint.search(window.lower()):
            return False
        return bool(self.p.card_word.search(text, pos, endpos))

    def _card_context_ok(self, text: str, start: int, end: int) -> bool:
        """Barcodes and labelled ids are not cards, unless a card word says otherwise."""
        if after_iban_prefix(text, start):
            return False
        if start and text[start - 1] in "#@$€£":
            return self._card_word_near(text, start, end)
        if self._word_near is not None and self._word_near[:2] == (start, end) and self._word_near[2]:
            return True  # accepted for its card word (_card_span): neither a barcode nor an id then
        digits = text[start:end]
        # GS1 keys (UPC-A, EAN-13, GTIN-14) are printed as bare digits; a grouped 4-6-4 run is a card
        barcode = len(digits) in (12, 13, 14) and digits.isdigit() and gs1_valid(digits)
        if barcode or id_label_before(text, start) is not None:
            return self._card_word_near(text, start, end)
        return True

    def _card_span(self, text: str, start: int, candidate: str) -> tuple[int, int] | None:
        """Try the candidate, then its prefixes at group boundaries (a CVV or a year may follow the number).

        Luhn-valid with a known issuer prefix and length (``card_brand_ok``) is a card; Luhn-valid with another
        prefix only when a card word is near (``_card_word_near``)."""
        self._word_near = None
        if candidate.isdigit():  # most candidates: a bare run of 12–19 digits, its only grouping itself
            if not luhn_valid(candidate):
                return None
            end = start + len(candidate)
            if card_brand_ok(candidate):
                return start, end
            if self._card_word_near(text, start, end):
                self._word_near = (start, end, True)
                return start, end
            return None
        if not candidate[:4].isdigit() or candidate[4].isdigit():
            return None  # grouped, but the first group is not 4 digits (checked below too; cheap here)
        flat = candidate
        if "\n" in candidate:  # a line break stands for the separator of the other groups (or a space)
            other = {ch for ch in self.p.line_break.sub("", candidate) if not ch.isdigit()}
            flat = self.p.line_break.sub(other.pop() if len(other) == 1 else " ", candidate)
        seps = {ch for ch in flat if not ch.isdigit()}
        if len(seps) > 1:
            return None  # mixed separators: not a card as printed or typed
        groups = [(g.group(), g.end()) for g in DIGIT_GROUPS.finditer(candidate)]
        if seps and (len(groups) < 3 or len(groups[0][0]) != 4 or any(not 3 <= len(g) <= 6 for g, _ in groups[1:])):
            return None  # cards are grouped 4-4-4-4(-3), 4-6-5, 4-6-4; other groupings are ISBNs, IDs, tables
        if seps == {"."} and any(len(g) != 4 for g, _ in groups[:4]):
            return None  # dotted: 4111.1111.1111.1111 only (other dotted runs are versions, OIDs, amounts)
        word: bool | None = None
        for n in range(len(groups), 0, -1):
            digits = "".join(g for g, _ in groups[:n])
            if len(digits) < 12:
                break
            if not luhn_valid(digits):
                continue
            end = start + groups[n - 1][1]
            if card_brand_ok(digits):
                return start, end
            if word is None:
                word = self._card_word_near(text, start, start + len(candidate))
            if word:
                self._word_near = (start, end, True)
                return start, end
        return None
