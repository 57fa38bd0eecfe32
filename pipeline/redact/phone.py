"""Phone numbers: E.164 (``+44 20 7946 0958``), numbers dialled with an international prefix, and national
forms whose structure decides (NANP, trunk-prefix 0, Russia's 8, Brazil/Mexico area codes in brackets).

A phone word (``tel``, ``phone``, ``Telefon``, ``电话``, ``電話`` …) before a number admits the forms that are
otherwise ids: bare digit runs, national numbers without a trunk prefix. An id label before a number
(``pipeline.redact.labels``) rejects it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from functools import lru_cache

from pipeline.redact.labels import GENERIC_NUMBER_WORDS, after_iban_prefix, id_label_before
from pipeline.redact.national import national_phone
from pipeline.redact.numbers import DIGIT_GROUPS, after_last_digit, isolated

# words that introduce a phone number; the number may follow within a few non-digit characters
_PHONE_WORDS = (
    r"phone|telephone|tel|tfn|call|fax|mobile|mob|cell|cellphone|whatsapp|hotline|ph"
    r"|telefon\w*|handy|mobil\w*|rufnummer|durchwahl|t[ée]l[ée]phone|t[ée]l|portable|appelez|appeler"
    r"|tel[ée]fono|m[óo]vil|celular|llame|telefone|cellulare|telefoon|mobiel|bel|kom[óo]rka|tfn"
    r"|телефон\w*|тел|моб\w*|факс"
)
_PHONE_WORDS_CJK = r"电话|電話|手机|手機|座机|致电|传真|傳真|携帯|ファックス|ＴＥＬ|전화|휴대폰|핸드폰|팩스"
# the separators of a candidate (what it holds besides digits and "()+"), by which of " ", ".", "-", "/" it holds
_SEPARATOR_SETS = {
    present: frozenset(ch for ch, there in zip(" .-/", present, strict=True) if there)
    for present in itertools.product((False, True), repeat=4)
}
_ASCII_DIGITS = frozenset("0123456789")
_EXT_STARTS = frozenset(" ,xXeE内分转轉")
# a substring of every phone word (lower case): the gate in front of the phone-word regex
_PHONE_HINTS: tuple[str, ...]
_PHONE_HINTS = (
    "te",
    "ph",
    "call",
    "fax",
    "mob",
    "cel",
    "whats",
    "hot",
    "handy",
    "ruf",
    "durch",
    "port",
    "appel",
)
_PHONE_HINTS += ("llam", "móvil", "movil", "bel", "kom", "tfn", "тел", "моб", "факс", "电话", "電話", "手机", "手機")
_PHONE_HINTS += ("座机", "致电", "传真", "傳真", "携帯", "ファックス", "ｔｅｌ", "전화", "휴대폰", "핸드폰", "팩스")
_IDD_GROUPS = frozenset({"00", "011", "001", "0011", "010", "002", "005", "009"})

# ITU-T E.164 assigned country codes (1–3 digits; spare and reserved codes left out)
_COUNTRY_CODE_TABLE = (
    "1 7 20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58 60 61 62 63 64 65 66 81 82"
    " 84 86 90 91 92 93 94 95 98 211 212 213 216 218 220 221 222 223 224 225 226 227 228 229 230 231 232 233 234"
    " 235 236 237 238 239 240 241 242 243 244 245 246 247 248 249 250 251 252 253 254 255 256 257 258 260 261 262"
    " 263 264 265 266 267 268 269 290 291 297 298 299 350 351 352 353 354 355 356 357 358 359 370 371 372 373 374"
    " 375 376 377 378 379 380 381 382 383 385 386 387 389 420 421 423 500 501 502 503 504 505 506 507 508 509 590"
    " 591 592 593 594 595 596 597 598 599 670 672 673 674 675 676 677 678 679 680 681 682 683 685 686 687 688 689"
    " 690 691 692 800 808 850 852 853 855 856 870 878 880 881 882 883 886 888 960 961 962 963 964 965 966 967 968"
    " 970 971 972 973 974 975 976 977 979 992 993 994 995 996 998"
)
_COUNTRY_CODES = frozenset(_COUNTRY_CODE_TABLE.split())


def _country_code_ok(digits: str) -> bool:
    """The digits after ``+`` start with an assigned country code; +1 numbers have the NANP shape."""
    if digits[0] == "1":
        nsn = digits[1:]
        return len(nsn) == 10 and nsn[0] in "23456789" and nsn[3] in "23456789"
    return digits[:1] in _COUNTRY_CODES or digits[:2] in _COUNTRY_CODES or digits[:3] in _COUNTRY_CODES


def _looks_like_date(groups: list[str], lengths: list[int]) -> bool:
    """``01-02-2024 12`` or ``2024-03-15 12``: a date (and the start of a time) that met a phone shape
    (``lengths``: the lengths of ``groups``)."""
    if len(groups) < 3:
        return False
    a, b, c = lengths[0], lengths[1], lengths[2]
    year_last = a <= 2 and b <= 2 and c == 4 and groups[2][:2] in ("19", "20")
    year_first = a == 4 and b <= 2 and c <= 2 and groups[0][:2] in ("19", "20")
    return year_last or year_first


def _never_national(candidate: str, groups: list[str], lengths: list[int], digits: str, seps: frozenset[str]) -> bool:
    """A candidate without "+" that ``_phone_shape`` rejects (None or "zip") and ``national_phone`` is not asked
    about (dots, more than 13 digits): decimals, versions, dotted quads, dates, ZIP+4, long ids. The same rules as
    there, only asked first: they need nothing but the candidate, and decide most candidates of number-dense text.
    """
    if "." in seps and (seps != {"."} or len(groups) == 2 or (len(groups) == 4 and max(lengths) <= 3)):
        return True  # dots alone only as groups of a phone (415.555.0132), never with another separator
    if len(digits) > 13 and digits[:2] != "00" and groups[0] not in _IDD_GROUPS:
        return True  # only an international prefix makes a phone of so many digits
    if len(groups) == 2 and lengths[0] == 5 and lengths[1] == 4 and seps == {"-"}:
        return True  # ZIP+4
    return _looks_like_date(groups, lengths) or candidate.count("/") > 1


class _Patterns:
    def __init__(self) -> None:
        a = re.ASCII
        # one candidate shape for every phone form: groups of digits, "(0)"/"(495)" area codes, separators
        # the lookahead skips, at C speed, pieces shorter than 8 characters (the check rejects those anyway)
        self.phone = re.compile(
            # "(06 1)": Hungary's trunk prefix and area code in one bracket
            r"(?=[\d+(][\d .\-/()]{7})(?:\+ ?)?(?:\(\d{1,5}(?: \d{1,4})?\)[ .\-]?)?"
            r"\d+(?:(?:[ .\-/]|[ .\-]?\(\d{1,5}\)[ .\-]?)\d+)*",
            a,
        )
        self.phone_ext = re.compile(
            r"(?i)(?:[ ]?,?[ ]?(?:x|ext\.?|extn\.?|extension|ext:|durchwahl|poste|anexo|доб\.?)[ ]?"
            r"|[ ]?(?:内線|分机|转|轉))(\d{1,6})(?!\d)"
        )
        self.phone_word = re.compile(
            rf"(?i)(?:(?<![^\W\d_])(?:{_PHONE_WORDS})(?![^\W\d_])|{_PHONE_WORDS_CJK})[^\d\n]{{0,24}}$"
        )
        self.phone_hint = re.compile("|".join(map(re.escape, _PHONE_HINTS)), re.IGNORECASE)
        self.ascii_hint = re.compile("|".join(re.escape(h) for h in sorted(set(_PHONE_HINTS)) if h.isascii()))
        self.letter = re.compile(r"[^\W\d_]")  # every phone word starts with one
        self.glued_label = re.compile(r"(?i)(?<![A-Za-z])(?:tel|fax|ph|mob|tfn|phone)[.:]?$")


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    return _Patterns()


class PhoneDetector:
    def __init__(self, rules=None) -> None:
        self.p = _patterns()

    def find(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        phone, span_of, word_before = self.p.phone.finditer, self._phone_span, self._phone_word_before
        for pos, endpos in windows:
            for m in phone(text, pos, endpos):
                candidate = m.group()
                if len(candidate) < 8:
                    continue
                # a bare run of digits is a phone only after a phone word (``_phone_shape`` gives it "word" or
                # nothing, and ``national_phone`` wants three groups or a bracket without one): in number-dense
                # text most candidates are such runs (barcodes, ids), so the word is asked for first; one of more than
                # 13 digits is none without an international prefix (``_never_national``), word or not
                if candidate.isdigit():
                    if (len(candidate) <= 13 or candidate[:2] == "00") and word_before(text, m.start()):
                        span = span_of(text, m.start(), m.end(), candidate)
                        if span:
                            yield span
                    continue
                # dots mixed with another separator (1.2.3-4, 15.03.2024 12:30): never a phone, a rule of
                # ``_never_national``/``_phone_shape`` asked here, before the digit groups are split out (a
                # candidate holds no characters but digits and "+() .-/"; "+" only first)
                plus = candidate[0] == "+"
                if not plus and "." in candidate and ("-" in candidate or " " in candidate or "/" in candidate):
                    continue
                # after "+", a first digit 0 is no country code (``_country_code_ok``), unless "(0)" is dropped
                # first: the "+0000 10.1.2.3", "+0100 …" of log and changelog timestamps
                if plus and candidate.lstrip("+ (")[:1] == "0" and "(0)" not in candidate:
                    continue
                span = span_of(text, m.start(), m.end(), candidate)
                if span:
                    yield span

    def _phone_word_before(self, text: str, start: int) -> bool:
        # the phone word ends on the number's line, or on the line before when the number starts its line
        # (``phone_word`` allows no line break after the word but ``$``'s one before ``start``), so a number
        # with no letter there has none: a gate that decides most numbers of number-dense text before the hint
        # search (the hint gate itself stays as it was)
        if not start:
            return False
        end = start - 1 if text[start - 1] == "\n" else start
        if not end or text[end - 1] in _ASCII_DIGITS:
            return False  # the number before ends right there (``low`` below is ``end``): no room for a word
        low = after_last_digit(text, start, 48)  # the word stands between the previous number and this one
        if not self.p.letter.search(text, max(low, text.rfind("\n", low, end) + 1), end):
            return False
        # cheap gate before the regex (number-dense text asks this thousands of times); an ASCII window is matched
        # lower-cased against the ASCII hints, the same answer as the case-insensitive hint regex, 2x faster
        window = text[low:start]
        if window.isascii():
            if not self.p.ascii_hint.search(window.lower()):
                return False
        elif not self.p.phone_hint.search(text, low, start):
            return False
        return bool(self.p.phone_word.search(text, low, start))

    def _phone_span(self, text: str, start: int, end: int, candidate: str) -> tuple[int, int] | None:
        """Accept a phone-shaped candidate by its structure, and by context where structure cannot decide."""
        groups = DIGIT_GROUPS.findall(candidate)
        digits = "".join(groups)
        n = len(digits)
        if n < 8:
            return None  # pieces of dates, times, prices
        if candidate[0] == "+" and n - candidate.count("(0)") > 15:
            # E.164 has at most 15 digits: what follows belongs to the next number (+44 20 7946 0958 / 030 …)
            kept = cut = 0
            for g in DIGIT_GROUPS.finditer(candidate):
                if kept + len(g.group()) > 15 + candidate.count("(0)", 0, g.start()):
                    break
                kept += len(g.group())
                cut = g.end()
            if not cut:
                return None
            candidate = candidate[:cut]
            end = start + cut
            groups = DIGIT_GROUPS.findall(candidate)
            digits = "".join(groups)
        lengths = [*map(len, groups)]
        # the separators among the characters a candidate can hold (digits and "+() .-/"): four lookups and a table,
        # not a set of every character minus the others
        seps = _SEPARATOR_SETS[(" " in candidate, "." in candidate, "-" in candidate, "/" in candidate)]
        if candidate[0] != "+" and _never_national(candidate, groups, lengths, digits, seps):
            return None  # most candidates of number-dense text, decided before any look at the context
        # answers of the shape alone, asked before the context, which cannot change them: "zip" is never a phone,
        # and None is one only in a national format (no "+", no dots, 8–13 digits)
        kind = self._phone_shape(candidate, groups, lengths, digits, seps)
        national = candidate[0] != "+" and "." not in candidate and 8 <= len(digits) <= 13
        if kind == "zip" or (kind is None and not national):
            return None
        size = len(text)
        stop = end
        if end < size and text[end] in _EXT_STARTS:
            ext = self.p.phone_ext.match(text, end)
            if ext:
                stop = ext.end()
        prev = text[start - 1] if start else ""
        if prev and prev in "-+~":
            return None  # a minus sign (-013030.000001), a version's "~++20220202101403"
        if stop < size and text[stop] in "+~":
            return None
        if prev.isascii() and prev.isalpha():
            # glued to a letter: only "TEL03-1234-5678", "Fax:+49…" style labels (common in Japanese text)
            letters = self.p.glued_label.search(text, max(0, start - 8), start)
            if not letters or not isolated(text, letters.start(), stop):
                return None
        elif not isolated(text, start, stop):
            return None
        if kind is None or kind == "word":
            # libphonenumber's formats (national.py) hold 8–13 digits, no "+" (E.164 is decided above), no dots
            cue = self._phone_word_before(text, start)
            if kind == "word" and cue:
                pass
            elif national and national_phone(candidate, digits, cue):
                kind = "national"  # the format of one of the 20 most populous countries
            else:
                return None
        if candidate[0] != "+":
            label = id_label_before(text, start)
            # Order no. 030 12345678, #030…; but after a phone word "number"/"no." is the phone's: Phone number 030 …
            if label is not None:
                generic = label in GENERIC_NUMBER_WORDS
                if not generic or not (kind == "word" or self._phone_word_before(text, start)):
                    return None
        if after_iban_prefix(text, start):
            return None
        return start, stop

    def _phone_shape(
        self, candidate: str, groups: list[str], lengths: list[int], digits: str, seps: frozenset[str]
    ) -> str | None:
        """ "intl"/"national" (a phone as written), "word" (a phone only after a phone word), "zip" (never a
        phone) or None (not by these rules; ``national_phone`` may still accept it)."""
        n = len(digits)
        if n > 17:
            return None  # longer than any E.164 number with a 2-digit international prefix
        dotted_quad = len(groups) == 4 and candidate[0] != "+" and max(lengths) <= 3
        if seps == {"."} and (len(groups) == 2 or dotted_quad):
            return None  # 0123456.12, +35236450.6 are decimals; 016.016.016.016 is a (bad) IPv4 address
        if candidate[0] == "+":
            if seps == {"-"} and len(groups) == 2 and lengths[0] in (4, 6) and lengths[1] in (5, 7):
                return None  # an ISO 6709 coordinate (zone.tab: +3217-06446, +484531-0913718)
            if "/" in seps:
                return None  # + 9.0.241/242 is a changelog line; E.164 numbers have no slashes
            if "(0)" in candidate:
                n -= 1
            if not 8 <= n <= 15 or not _country_code_ok(digits.replace("0", "", 1) if "(0)" in candidate else digits):
                return None  # E.164: at most 15 digits, an assigned country code (+4294967296 is a number)
            if seps == {"."} and len(groups) > 1 and lengths.count(3) == len(groups) - (lengths[0] != 3):
                return "word"  # +12.345.678 is a signed number with thousands separators, unless "Tel.:"
            return "intl"
        if len(groups) == 2 and lengths[0] == 5 and lengths[1] == 4 and seps == {"-"}:
            return "zip"  # a US ZIP+4 code (Boston, MA 02110-1301), never tried as a national number
        if _looks_like_date(groups, lengths) or candidate.count("/") > 1:
            return None  # 01-02-2024 12:30, 03/15/2024
        if "." in seps and seps != {"."}:
            return None  # 15.03.2024 12:30, 1.234,56: dots mix with other separators only in numbers
        many = len(groups) > 1
        # international prefix from a national network: 00 44 …, 0044 …, 011 44 …, 0011 61 …
        if digits[:2] == "00" or groups[0] in _IDD_GROUPS:
            rest = digits[len(groups[0]) :] if groups[0] in _IDD_GROUPS else digits[2:]
            if 7 <= len(rest) <= 15 and rest[0] != "0":
                return "intl" if many else "word"
            if digits[:2] == "00":
                return None
        # NANP: (415) 555-0132, 415-555-0132, 415.555.0132, 1-800-555-0132; with spaces only after a phone word
        nanp = digits[1:] if n == 11 and digits[0] == "1" else digits
        if len(nanp) == 10 and nanp[0] in "23456789" and nanp[3] in "23456789":
            tail = lengths[-3:]
            if tail == [3, 3, 4] and ("(" in candidate or seps in ({"-"}, {"."})):
                return "national"
            if tail == [3, 3, 4] or not many:
                return "word"
        if digits[0] == "0":  # trunk prefix 0: UK, DE, FR, NL, SE, CH, JP, CN, KR, IN, BR, AR, AU (and IT)
            if not 9 <= n <= 12:
                return None
            if many and (1 not in lengths or candidate[0] == "("):
                return "national"
            return "word"
        if digits[0] == "8" and n == 11 and groups[0] == "8" and ("(" in candidate or "-" in seps):
            return "national"  # Russia's trunk 8: 8 (495) 123-45-67
        if candidate[0] == "(" and 10 <= n <= 11 and lengths[0] in (2, 3) and len(groups) >= 3:
            return "national"  # Brazil/Mexico: (11) 91234-5678, (55) 1234-5678
        if 9 <= n <= 13 and lengths.count(1) == (lengths[0] == 1):
            return "word"  # ES 912 345 678, PL, IT mobile, IN, MX, CN 138 1234 5678, bare runs; not 978-3-16-148410-0
        return None
