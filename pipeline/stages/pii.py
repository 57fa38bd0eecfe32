"""PII removal: replace personal data and credentials with deterministic, typed placeholders.

The stage never drops a document; it rewrites ``doc.text`` and records what it replaced in
``doc.metadata["pii"]`` (type → count, non-zero types only) and in the datatrove stats as
``pii_<type>``.

Why this is written by hand: datatrove's ``PIIFormatter`` covers e-mail and IPv4 only and rotates
through several replacement strings, so the same input gives different outputs (measured: one text
with an e-mail and a public IP gave three different results in three calls) — copies stop being
copies and dedup can no longer match them. Neither phones, cards, IBANs, SSNs nor secrets are
covered there. Here every detector is a compiled regex that proposes candidates plus a cheap check
in Python (``ipaddress``, Luhn, ISO 7064 mod-97, SSN ranges, phone structure) that accepts them.

How overlaps are settled: detectors run in a fixed priority order (secret, email, iban, card, ssn,
ip_address, phone) on the original text; a candidate that overlaps an already accepted span is
discarded, and the text is rebuilt once at the end. So a card number is never half-replaced as a
phone, a placeholder is never matched again, and the result depends on the input only.

Choices worth knowing (docs/pii.md has the full list):
- A dotted quad that is a valid public IPv4 address is an IP, also when it could be a version,
  unless a version word stands right before it (``version 1.2.3.4``, ``release``, ``build``…) or it
  is glued to a letter (``v1.2.3.4``).
- National phone numbers need separators (``020 7946 0958``); a bare run of 10 digits is an ID, not
  a phone. Candidates inside longer digit runs, or right after words like ``ISBN``/``order``/
  ``invoice``, are kept.
- IBANs are matched in upper case only (the printed and electronic forms are upper case).

Phone rules are structural (a ``+`` or trunk ``0`` or NANP area-code shape, separators, E.164 length),
not numbering-plan data: ``phonenumbers`` would add a dependency and was not needed to reach the
recall the tests ask for. Speed (``python tests/test_pii.py``): ~9k docs of ~1 KB per CPU-second.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Literal
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

from datatrove.data import Document
from pydantic import Field, field_validator

from pipeline.base import AccountedStep, Drop
from pipeline.config_base import StrictModel

PIIType = Literal["email", "ip_address", "phone", "card", "iban", "ssn", "secret"]
# priority order: an earlier type wins an overlap
PII_TYPES: tuple[str, ...] = ("secret", "email", "iban", "card", "ssn", "ip_address", "phone")
DEFAULT_PLACEHOLDERS: dict[str, str] = {
    "email": "<EMAIL>",
    "ip_address": "<IP_ADDRESS>",
    "phone": "<PHONE>",
    "card": "<CARD>",
    "iban": "<IBAN>",
    "ssn": "<SSN>",
    "secret": "<SECRET>",
}


class PIIConfig(StrictModel):
    """Which PII types to replace, and with what."""

    types: list[PIIType] = Field(
        default_factory=lambda: list(PII_TYPES),
        description="types to replace; leave one out to switch it off",
    )
    placeholders: dict[PIIType, str] = Field(
        default_factory=lambda: dict(DEFAULT_PLACEHOLDERS),
        description="replacement text per type; types not given keep the default (<EMAIL>, <PHONE>, …)",
    )
    public_ip_only: bool = Field(
        default=True,
        description="replace only public IPs; private, loopback, link-local, reserved, documentation ranges stay",
    )

    @field_validator("types")
    @classmethod
    def _unique_types(cls, value: list[str]) -> list[str]:
        repeated = sorted({t for t in value if value.count(t) > 1})
        if repeated:
            raise ValueError(f"types listed more than once: {', '.join(repeated)}")
        return value

    @field_validator("placeholders")
    @classmethod
    def _fill_defaults(cls, value: dict[str, str]) -> dict[str, str]:
        # a partial mapping in the recipe overrides only the types it names; config.yaml shows all
        return {**DEFAULT_PLACEHOLDERS, **value}


# ---------------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------------

# ISO 13616 IBAN lengths per country (SWIFT IBAN registry)
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
    "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
    "NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
    "RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
    "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip


def luhn_valid(digits: str) -> bool:
    """Luhn (mod 10) check used by every payment card number."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_brand_ok(digits: str) -> bool:
    """Known issuer prefix (IIN) with a length that brand issues; other Luhn-valid runs are IDs."""
    n = len(digits)
    p2, p3, p4, p6 = int(digits[:2]), int(digits[:3]), int(digits[:4]), int(digits[:6])
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
    if 300 <= p3 <= 305 or p4 == 3095 or p2 in (36, 38, 39):  # Diners Club
        return 14 <= n <= 19
    if p4 == 6011 or 644 <= p3 <= 649 or p2 == 65 or 622126 <= p6 <= 622925:  # Discover
        return 16 <= n <= 19
    if p2 == 62:  # UnionPay
        return 16 <= n <= 19
    if p2 == 50 or 56 <= p2 <= 69:  # Maestro
        return 13 <= n <= 19
    return False


def iban_valid(compact: str) -> bool:
    """Country length table plus the ISO 7064 mod-97 check (the remainder must be 1)."""
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def ssn_valid(area: str, group: str, serial: str) -> bool:
    """SSA rules: area not 000, 666 or 900–999; group not 00; serial not 0000."""
    return area != "000" and area != "666" and area[0] != "9" and group != "00" and serial != "0000"


def ip_replaceable(candidate: str, public_only: bool) -> bool:
    """A valid IPv4/IPv6 address that is public (or any valid address when ``public_only`` is off)."""
    import ipaddress

    if "." in candidate and ":" not in candidate:
        number = _ipv4_int(candidate)
        if number is None:
            return False
        if not public_only:
            return True
        if _in_ranges(number, _IPV4_NOT_PUBLIC):
            return False  # fast path: logs are full of private addresses; ipaddress costs ~20 µs each
    try:
        ip = ipaddress.ip_address(candidate)
    except ValueError:
        return False
    if not public_only:
        return True
    return ip.is_global and not (
        ip.is_private or ip.is_reserved or ip.is_multicast or ip.is_loopback or ip.is_link_local or ip.is_unspecified
    )


def _ipv4_int(candidate: str) -> int | None:
    """The address as an integer, or None where ``ipaddress`` would refuse it (octet > 255, leading zero)."""
    number = 0
    for part in candidate.split("."):
        if not part.isdigit() or (len(part) > 1 and part[0] == "0") or int(part) > 255:
            return None
        number = number * 256 + int(part)
    return number


def _ranges(*networks: str) -> list[tuple[int, int]]:
    out = []
    for net in networks:
        address, bits = net.split("/")
        start = _ipv4_int(address) or 0
        out.append((start, start + 2 ** (32 - int(bits)) - 1))
    return sorted(out)


def _in_ranges(number: int, ranges: list[tuple[int, int]]) -> bool:
    i = bisect.bisect_right(ranges, (number, 2**32)) - 1
    return i >= 0 and ranges[i][0] <= number <= ranges[i][1]


# Never public (RFC 6890 special-purpose blocks, multicast, reserved); only a shortcut: addresses outside
# these are still checked with ``ipaddress`` before they are replaced.
_IPV4_NOT_PUBLIC = _ranges(
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.2.0/24",
    "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3",
)  # fmt: skip


# ---------------------------------------------------------------------------------------------------
# patterns (compiled once per process)
# ---------------------------------------------------------------------------------------------------
# Python's regex engine only skips ahead fast when a pattern starts with a plain character or class, so
# lookbehinds sit after the first character, and the costly detectors run only inside small windows
# found by a cheap scan (digit runs, '@', '://', key words) — the whole text is scanned ~5 times, not ~16.

_SECRET_KEY_NAMES = (
    r"api[_-]?key|apikey|api[_-]?secret|secret(?:[_-]?access)?(?:[_-]?key)?|client[_-]?secret|private[_-]?key"
    r"|access[_-]?key|password|passwd|passphrase|pwd"
    r"|(?:access|auth|refresh|bearer|api|session|oauth|csrf)[_-]?token|token"
)
_KEY_WORDS = ("key", "secret", "pass", "pwd", "token")
_TOKEN_HINTS = ("AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "eyJ")
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class _Patterns:
    def __init__(self) -> None:
        a = re.ASCII
        # windows worth a closer look: runs of digits and phone/card separators (at least 9 characters)
        self.number_run = re.compile(r"\d[\d \-.()/+]{8,}", a)
        self.email = re.compile(
            r"[\w.%+-](?<![\w.%+-][\w.%+-])[\w.%+-]{0,63}@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.){1,8}([^\W\d_]{2,24})"
            r"(?![\w-])"
        )
        self.ipv4 = re.compile(r"\d(?<![\w.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?!\w|\.\d)", a)
        # an IPv6 address has "::" or eight groups (six before an IPv4 tail); "12:30:45" has neither
        self.ipv6_hint = re.compile(r"::|[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){5}:")
        self.ipv6 = re.compile(
            r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{0,4})(?![\w:])", a
        )
        self.version_cue = re.compile(r"(?i)\b(?:version|ver|release|build|rev|firmware|kernel)\.?:?\s*$")
        self.phone_intl = re.compile(r"(?<![\w+])\+\d+(?:[ .\-]?\(\d{1,4}\)[ .\-]?\d+|[ .\-]\d+)*", a)
        self.phone_nanp = re.compile(
            r"(?<![\w+])(?:1[ .\-])?(?:\(\d{3}\) ?\d{3}[ .\-]\d{4}|\d{3}(?P<sep>[.\-])\d{3}(?P=sep)\d{4})", a
        )
        self.phone_trunk = re.compile(r"(?<![\w+])(?:\(0\d{1,4}\) ?|0\d{1,4}[ \-/])\d+(?:[ \-]\d+)*", a)
        self.phone_fr_dots = re.compile(r"(?<![\w+.])0[1-9](?:\.\d{2}){4}", a)
        self.not_phone_cue = re.compile(
            r"(?i)(?:\b(?:isbn(?:-?1[03])?|issn|order|invoice|ref|reference|sku|serial|tracking|item|article|part"
            r"|model|patent|receipt|transaction|ticket|account|acct|doi|case|po|bestell\w*|rechnung\w*|kundennummer|kunden-?nr"
            r"|auftrag\w*|commande|facture|r[ée]f[ée]rence|pedido|factura|referencia)\b[\s.:#\-]*"
            r"(?:(?:no|nr|num|number|id|code)\b[\s.:#\-]*)?|#\s*)$"
        )
        # the start of an IBAN-shaped string right before a number: a mistyped IBAN is not a phone or a card
        self.iban_prefix = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){0,8} ?$")
        self.card = re.compile(r"(?<![\w.,\-/+])\d(?:[ \-]?\d){12,18}(?!\w)", a)
        self.ssn = re.compile(r"(?<![\w\-])(\d{3})-(\d{2})-(\d{4})(?!\w|-\d)", a)
        self.iban_start = re.compile(r"[A-Z](?<!\w[A-Z])[A-Z]\d{2} ?[A-Z0-9]{4}", a)
        self.pem_full = re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,100000}?"
            r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        )
        # a block cut off before its END line: the BEGIN line, header lines and base64 lines after it
        self.pem_open = re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?:\r?\n[A-Za-z][A-Za-z0-9-]*: [^\r\n]*)*"
            r"(?:(?:\r?\n)+[A-Za-z0-9+/=]{16,})*"
        )
        self.tokens = re.compile(
            r"(?<![\w-])(?:(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])|gh[pousr]_[A-Za-z0-9]{36,255}(?!\w)"
            r"|github_pat_\w{22,255}|glpat-[\w\-]{20,255}|xox[abposr]-[A-Za-z0-9\-]{10,255}"
            r"|eyJ[\w\-]{8,}\.eyJ[\w\-]{8,}\.[\w\-]*)",
            a,
        )
        self.auth_header = re.compile(
            r"[Bb](?<!\w[Bb])(?:earer|EARER|asic|ASIC)[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)(?![\w\-.~+/=])", a
        )
        self.url_credentials = re.compile(r"://[^\s/:@]{0,64}:([^\s/@]{1,128})@")
        self.key_word = re.compile(r"(?:key|secret|pass(?:word|wd|phrase)?|pwd|token)[\"']?[ \t]*[=:]")
        self.key_word_any_case = re.compile(self.key_word.pattern, re.IGNORECASE)
        self.assignment = re.compile(
            rf"(?i)(?P<key>(?:[a-z0-9]+[_.-]){{0,6}}(?:{_SECRET_KEY_NAMES}))(?![\w-])[\"']?"
            r"(?P<sep>[ \t]*(?:=>|:=|=|:)[ \t]*)"
            r"(?:\"(?P<dq>[^\"\r\n]{1,256})\"|'(?P<sq>[^'\r\n]{1,256})'|(?P<bare>[^\s\"'`,;(){}\[\]<>]{1,256}))"
        )
        self.identifier = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?", a)
        self.redacted = re.compile(r"[*xX•.\-_#?]+")
        self.phone_groups = re.compile(r"([ .\-]+)")
        self.digit_groups = re.compile(r"\d+")


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    return _Patterns()


_IMAGE_TLDS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "tif", "tiff", "avif"})
_NOT_SECRET_VALUES = frozenset(
    {"null", "none", "nil", "true", "false", "undefined", "required", "optional", "string", "str", "int", "bool"}
    | {"text", "empty", "redacted", "hidden", "secret", "password", "token", "changeit", "your_password"}
)
_PLACEHOLDER_PREFIXES = ("<", "${", "$(", "{{", "%(", "%{", "[", "os.", "process.env", "env(", "$")
_PATH_PREFIXES = ("/", "~/", "./", "../")
_BEFORE_NUMBER = " -./,:"


def _isolated(text: str, start: int, end: int) -> bool:
    """A number stands alone: not glued to letters, not part of a longer digit run, price or percentage."""
    if start:
        prev = text[start - 1]
        if prev.isalnum() or prev in "_$€£¥#@":
            return False
        if prev in _BEFORE_NUMBER and start >= 2 and text[start - 2].isdigit():
            return False
    if end < len(text):
        nxt = text[end]
        if nxt.isalnum() or nxt in "_%€$":
            return False
        if nxt in _BEFORE_NUMBER and end + 1 < len(text) and text[end + 1].isdigit():
            return False
    return True


_DROP_ASCII_DIGITS = str.maketrans("", "", "0123456789")


def _digit_count(s: str) -> int:
    return len(s) - len(s.translate(_DROP_ASCII_DIGITS))


def _merge(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _find_all(text: str, needle: str) -> Iterator[int]:
    i = text.find(needle)
    while i != -1:
        yield i
        i = text.find(needle, i + 1)


class PIIRedactor:
    """The detectors and the replacement; pure Python, usable without a pipeline."""

    def __init__(self, config: PIIConfig | None = None):
        self.config = config or PIIConfig()
        self.p = _patterns()
        enabled = set(self.config.types)
        self.detectors = [(t, getattr(self, f"_find_{t}")) for t in PII_TYPES if t in enabled]
        self.placeholders = dict(self.config.placeholders)
        self.needs_numbers = bool(enabled & {"card", "ssn", "phone"})

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        """Return the text with every accepted span replaced, and the count per type (non-zero only)."""
        windows = self._number_windows(text) if self.needs_numbers else []
        starts: list[int] = []
        spans: list[tuple[int, int, str]] = []
        for kind, find in self.detectors:
            for start, end in find(text, windows):
                i = bisect.bisect_right(starts, start)
                if i and spans[i - 1][1] > start:
                    continue  # overlaps a span accepted before (higher priority, or further left)
                if i < len(spans) and spans[i][0] < end:
                    continue
                starts.insert(i, start)
                spans.insert(i, (start, end, kind))
        if not spans:
            return text, {}
        counts: dict[str, int] = {}
        parts: list[str] = []
        pos = 0
        for start, end, kind in spans:
            parts.append(text[pos:start])
            parts.append(self.placeholders[kind])
            pos = end
            counts[kind] = counts.get(kind, 0) + 1
        parts.append(text[pos:])
        return "".join(parts), counts

    def _number_windows(self, text: str) -> list[tuple[int, int]]:
        """Stretches that hold at least 8 digits: every phone, card and SSN lies inside one.

        The margins let a pattern start on a ``+`` or ``(`` just before the run and see the characters
        after it (a regex searched with ``endpos`` cannot look past it; lookbehinds do see before ``pos``).
        """
        n = len(text)
        return _merge(
            [
                (max(0, m.start() - 2), min(n, m.end() + 3))
                for m in self.p.number_run.finditer(text)
                if _digit_count(m.group()) >= 8
            ]
        )

    # -- detectors: each yields (start, end) spans in the original text --------------------------------

    def _find_email(self, text: str, _: list) -> Iterator[tuple[int, int]]:
        if "@" not in text:
            return
        n = len(text)
        for pos, endpos in _merge([(max(0, i - 64), min(n, i + 320)) for i in _find_all(text, "@")]):
            for m in self.p.email.finditer(text, pos, endpos):
                if m.group(1).lower() not in _IMAGE_TLDS:  # icon@2x.png is a file name
                    yield m.span()

    def _find_ip_address(self, text: str, _: list) -> Iterator[tuple[int, int]]:
        public_only = self.config.public_ip_only
        if "." in text:
            for m in self.p.ipv4.finditer(text):
                start = m.start()
                if self.p.version_cue.search(text, max(0, start - 20), start):
                    continue  # "version 1.2.3.4"
                if ip_replaceable(m.group(), public_only):
                    yield m.span()
        if text.count(":") >= 2 and self.p.ipv6_hint.search(text):
            for m in self.p.ipv6.finditer(text):
                candidate = m.group()
                if ("::" in candidate or candidate.count(":") >= 6) and ip_replaceable(candidate, public_only):
                    yield m.span()

    def _find_phone(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        p = self.p
        for pos, endpos in windows:
            chunk = text[pos:endpos]  # cheap gates: most windows in number-heavy text (logs, tables) fail them
            if "+" in chunk:
                yield from self._intl_phones(text, pos, endpos)
            if "-" in chunk or "." in chunk or "(" in chunk:
                for m in p.phone_nanp.finditer(text, pos, endpos):
                    area, exchange = self._nanp_parts(m.group())
                    if area[0] in "23456789" and exchange[0] in "23456789" and self._phone_context_ok(text, *m.span()):
                        yield m.span()
            if "0" not in chunk:
                continue
            for m in p.phone_trunk.finditer(text, pos, endpos):
                if self._trunk_phone_ok(m.group()) and self._phone_context_ok(text, *m.span()):
                    yield m.span()
            if "." in chunk:
                for m in p.phone_fr_dots.finditer(text, pos, endpos):
                    if self._phone_context_ok(text, *m.span()):
                        yield m.span()

    def _intl_phones(self, text: str, pos: int, endpos: int) -> Iterator[tuple[int, int]]:
        for m in self.p.phone_intl.finditer(text, pos, endpos):
            span = self._intl_phone_span(m.start(), m.group())
            if span and self._phone_context_ok(text, *span):
                yield span

    def _phone_context_ok(self, text: str, start: int, end: int) -> bool:
        return (
            _isolated(text, start, end)
            and not self.p.not_phone_cue.search(text, max(0, start - 32), start)
            and not self._after_iban_prefix(text, start)
        )

    def _after_iban_prefix(self, text: str, start: int) -> bool:
        return start > 5 and text[start - 1] == " " and bool(self.p.iban_prefix.search(text, max(0, start - 48), start))

    def _intl_phone_span(self, start: int, candidate: str) -> tuple[int, int] | None:
        """``+CC …`` with 8–15 digits (E.164); groups past the 15th digit are left out (a year may follow)."""
        pieces = self.p.phone_groups.split(candidate)  # groups, with the separators between them
        while len(pieces) > 1 and _digit_count("".join(pieces).replace("(0)", "")) > 15:
            pieces = pieces[:-2]
        body = "".join(pieces)
        if not 8 <= _digit_count(body.replace("(0)", "")) <= 15:
            return None
        groups, seps = pieces[::2], set(pieces[1::2])
        if seps == {"."} and len(groups) > 1 and all(len(g) == 3 for g in groups[1:]):
            return None  # +12.345.678 is a signed number with thousands separators
        return start, start + len(body)

    @staticmethod
    def _nanp_parts(candidate: str) -> tuple[str, str]:
        digits = "".join(ch for ch in candidate if ch.isdigit())
        if len(digits) == 11:
            digits = digits[1:]
        return digits[:3], digits[3:6]

    def _trunk_phone_ok(self, candidate: str) -> bool:
        """National numbers with a trunk 0 (UK, DE, FR, …): 10–12 digits in groups of at least two."""
        if candidate.lstrip("(")[1] == "0":  # 00… is an international prefix, not an area code
            return False
        if candidate.count("/") > 1:
            return False  # 03/15/2024 is a date
        groups = self.p.digit_groups.findall(candidate)
        if not 2 <= len(groups) <= 6 or any(len(g) < 2 for g in groups):
            return False
        return 10 <= sum(len(g) for g in groups) <= 12

    def _find_card(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        for pos, endpos in windows:
            for m in self.p.card.finditer(text, pos, endpos):
                span = self._card_span(m.start(), m.group())
                if span and not self._after_iban_prefix(text, span[0]):
                    yield span

    def _card_span(self, start: int, candidate: str) -> tuple[int, int] | None:
        """Try the candidate, then its prefixes at group boundaries (a CVV or a year may follow the number)."""
        seps = {ch for ch in candidate if not ch.isdigit()}
        if len(seps) > 1:
            return None  # mixed separators: not a card as printed or typed
        groups = [(g.group(), g.end()) for g in self.p.digit_groups.finditer(candidate)]
        if seps and (len(groups) < 3 or len(groups[0][0]) != 4 or any(not 3 <= len(g) <= 6 for g, _ in groups[1:])):
            return None  # cards are grouped 4-4-4-4(-3), 4-6-5, 4-6-4; other groupings are ISBNs, IDs, tables
        for n in range(len(groups), 0, -1):
            digits = "".join(g for g, _ in groups[:n])
            if len(digits) < 13:
                break
            if luhn_valid(digits) and card_brand_ok(digits):
                return start, start + groups[n - 1][1]
        return None

    def _find_ssn(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        for pos, endpos in windows:
            if "-" not in text[pos:endpos]:
                continue
            for m in self.p.ssn.finditer(text, pos, endpos):
                if ssn_valid(*m.groups()) and _isolated(text, *m.span()):
                    yield m.span()

    def _find_iban(self, text: str, _: list) -> Iterator[tuple[int, int]]:
        n = len(text)
        for m in self.p.iban_start.finditer(text):
            start = m.start()
            length = IBAN_LENGTHS.get(text[start : start + 2])
            if length is None:
                continue
            chars: list[str] = []
            pos = start
            while pos < n and len(chars) < length:
                ch = text[pos]
                if ch == " " and chars and pos + 1 < n and text[pos + 1] != " ":
                    pos += 1  # single spaces group the printed form
                    continue
                if not (ch.isascii() and (ch.isdigit() or ch.isupper())):
                    break
                chars.append(ch)
                pos += 1
            if len(chars) != length or (pos < n and text[pos].isalnum()):
                continue  # too short, or the run goes on: not this country's IBAN
            if iban_valid("".join(chars)):
                yield start, pos

    def _find_secret(self, text: str, _: list) -> Iterator[tuple[int, int]]:
        p = self.p
        if "PRIVATE KEY" in text:
            for m in p.pem_full.finditer(text):
                yield m.span()
            for m in p.pem_open.finditer(text):
                yield m.span()
        if any(hint in text for hint in _TOKEN_HINTS):
            for m in p.tokens.finditer(text):
                yield m.span()
        if "earer" in text or "asic" in text or "EARER" in text or "ASIC" in text:
            for m in p.auth_header.finditer(text):
                if any(ch.isdigit() for ch in m.group(1)):  # "basic understanding" is prose
                    yield m.span(1)
        for i in _find_all(text, "://"):
            m = p.url_credentials.match(text, i)
            if m and self._literal_secret(m.group(1)):
                yield m.span(1)
        yield from self._find_assignments(text)

    def _find_assignments(self, text: str) -> Iterator[tuple[int, int]]:
        lower = text.lower()
        if not any(word in lower for word in _KEY_WORDS):
            return
        # lower() can change the length (a few rare letters): then search the text itself, ignoring case
        same_length = len(lower) == len(text)
        hits = self.p.key_word.finditer(lower) if same_length else self.p.key_word_any_case.finditer(text)
        for hit in hits:
            start = hit.start()
            while start and text[start - 1] in _IDENT_CHARS and hit.start() - start < 64:
                start -= 1
            while text[start] in "-._":  # --password=…, .secret: …
                start += 1
            m = self.p.assignment.match(text, start)
            if m:
                span = self._assignment_value_span(text, m)
                if span:
                    yield span

    def _assignment_value_span(self, text: str, m: re.Match) -> tuple[int, int] | None:
        """Accept the value of ``key = value`` only when it looks like a literal credential."""
        for group in ("dq", "sq"):
            value = m.group(group)
            if value is not None:
                return m.span(group) if self._literal_secret(value) else None
        value = m.group("bare").rstrip(".")  # a full stop ends the sentence, not the value
        if not self._literal_secret(value) or len(value) < 4 or value.startswith(_PATH_PREFIXES):
            return None
        if self.p.identifier.fullmatch(value):
            # a name, not a literal: ``password = user_password`` in code, ``the secret: patience`` in prose;
            # only ``KEY=value`` (env files, query strings) and ``key: value`` config lines count
            sep = m.group("sep")
            line_start = text.rfind("\n", 0, m.start()) + 1
            prefix = text[line_start : m.start()].strip(" \t\"'-")
            config_line = prefix in ("", "export") and sep.strip() == ":"
            if "." in value or not (sep == "=" or config_line):
                return None
        elif value.isdigit() and len(value) < 6:
            return None  # max_token: 4096
        start = m.start("bare")
        return start, start + len(value)

    def _literal_secret(self, value: str) -> bool:
        v = value.strip()
        if not v or v.lower() in _NOT_SECRET_VALUES or v.startswith(_PLACEHOLDER_PREFIXES):
            return False
        return not self.p.redacted.fullmatch(v)  # already masked: ****, xxxx


class PIIStage(AccountedStep):
    """Replace PII with typed placeholders in the text, ``metadata["url"]`` and the other metadata strings.

    Counts (text and metadata together) go to ``metadata["pii"]`` and ``pii_<type>`` stats. The URL goes
    through ``redact_url`` and every other string in the metadata (recursively) through the redactor, except
    the fields tokenmill sets itself (``METADATA_NOT_TEXT``); numbers and the document id are not redacted.
    Everything follows this stage's ``PIIConfig`` (``types``, placeholders), like the text.
    """

    stage = "pii"
    name = "🔏 PII (typed placeholders)"

    def __init__(self, config: PIIConfig | None = None, drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.config = config or PIIConfig()
        self._redactor: PIIRedactor | None = None

    def setup(self) -> None:
        if self._redactor is None:
            self._redactor = PIIRedactor(self.config)

    def process(self, doc: Document) -> Drop | None:
        if self._redactor is None:
            self.setup()
        text, counts = self._redactor.redact(doc.text or "")
        doc.text = text
        counts = dict(counts)
        redact_metadata(doc.metadata, self._redactor, counts)
        doc.metadata["pii"] = counts
        for kind, n in counts.items():
            self.stat_update(f"pii_{kind}", value=n)
        return None


# ---------------------------------------------------------------------------------------------------
# metadata and URLs
# ---------------------------------------------------------------------------------------------------

# fields tokenmill itself fills with paths, labels, dates and codes: not text anyone wrote in a document
METADATA_NOT_TEXT = frozenset(
    {"source", "format", "file", "content_type", "date", "language", "pii", "read_error", "offset", "http_status"}
)

# query/fragment parameters whose value is a credential whatever it looks like (OAuth, AWS/GCS signed URLs,
# session ids, API keys); compared lower-case with "-" read as "_"
CREDENTIAL_PARAMETERS = frozenset(
    {
        "access_token", "api_key", "apikey", "auth", "auth_token", "authorization", "awsaccesskeyid",
        "client_secret", "code_verifier", "id_token", "jsessionid", "key", "pass", "passwd", "password",
        "phpsessid", "pwd", "refresh_token", "secret", "session", "session_id", "sessionid", "sid", "sig",
        "signature", "token", "x_amz_credential", "x_amz_security_token", "x_amz_signature",
        "x_goog_credential", "x_goog_signature",
    }
)  # fmt: skip

# What a URL component must contain to hold any PII type: "@" or "%"(-encoded "@") for an e-mail, ":"/"=" for
# IPv6 and assignments, 7 digits for a phone/card/IBAN/SSN, a dotted quad for IPv4, a 16-character word run
# for a token. Components without one (``2024``, ``article-000129``) are not given to the redactor: calling
# it on every segment and pair cost 24 µs per generated-crawl URL, an eighth of the PII stage's time per page.
_URL_HINT = re.compile(r"[@%:=]|\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9_]{16,}")


_SEVEN_DIGITS = re.compile(r"(?:\D*\d){7}")  # used with match(): anchored, so it cannot backtrack far
_SEVEN_DIGITS_IN_A_SEGMENT = re.compile(r"\d(?:[^\d/]*\d){6}")


def _may_hold_pii(component: str) -> bool:
    return bool(_URL_HINT.search(component) or _SEVEN_DIGITS.match(component))


# a parameter name that makes its value an assignment-style secret candidate whatever the value looks like
_SECRET_NAME_HINT = re.compile(r"key|secret|pass|pwd|token|auth|sig|session|sid|cred", re.IGNORECASE)


def _add_counts(total: dict[str, int], counts: dict[str, int]) -> None:
    for kind, n in counts.items():
        total[kind] = total.get(kind, 0) + n


def _credential_value(value: str, redactor: PIIRedactor, counts: dict[str, int]) -> str:
    """``value`` redacted as the secret detector redacts ``api_key = "value"`` (so ``types`` without
    ``secret``, an empty value or a placeholder such as ``${TOKEN}`` leave it as it is)."""
    for quote_char in ('"', "'"):
        if quote_char in value:
            continue
        probe = f"api_key = {quote_char}"
        redacted, found = redactor.redact(f"{probe}{value}{quote_char}")
        if found and redacted.startswith(probe) and redacted.endswith(quote_char):
            _add_counts(counts, found)
            return redacted[len(probe) : -1]
        return value
    return value


def _redact_component(raw: str, redactor: PIIRedactor, counts: dict[str, int], plus: bool = False) -> str:
    """One path segment or parameter name/value: decoded, redacted, and percent-encoded again only if it changed."""
    if not raw or not _may_hold_pii(raw):
        return raw
    decoded = unquote_plus(raw) if plus else unquote(raw)
    redacted, found = redactor.redact(decoded)
    if redacted == decoded:
        return raw
    _add_counts(counts, found)
    return quote_plus(redacted, safe="") if plus else quote(redacted, safe="")


def _redact_pairs(raw: str, redactor: PIIRedactor, counts: dict[str, int]) -> str:
    """``a=1&b=2`` (a query, or a fragment holding parameters): each ``name=value`` is redacted as that text,
    so the assignment rules of the secret detector apply (``api_key=…``, ``password=…``); names are kept."""
    out = []
    for pair in raw.split("&"):
        name, eq, value = pair.partition("=")
        if not eq or not value:
            out.append(_redact_component(pair, redactor, counts, plus=True))
            continue
        if not _may_hold_pii(value) and not _may_hold_pii(name) and not _SECRET_NAME_HINT.search(name):
            out.append(pair)
            continue
        name_text, value_text = unquote_plus(name), unquote_plus(value)
        redacted, found = redactor.redact(f"{name_text}={value_text}")
        prefix = f"{name_text}="
        if redacted.startswith(prefix):
            new_value = redacted[len(prefix) :]
            new_name = name
        else:  # the detector took the name too: redact the two halves on their own
            new_name = _redact_component(name, redactor, counts, plus=True)
            new_value, found = redactor.redact(value_text)
            found = dict(found)
        if new_value == value_text and name_text.lower().replace("-", "_") in CREDENTIAL_PARAMETERS:
            new_value = _credential_value(value_text, redactor, found)
        if new_value != value_text:
            _add_counts(counts, found)
            value = quote_plus(new_value, safe="")
        out.append(f"{new_name}={value}")
    return "&".join(out)


def _nothing_to_redact(url: str) -> bool:
    """The common crawl URL (no user info, query or fragment, a path without hints) without ``urlsplit``,
    which is not cached for distinct URLs and was most of the 12 µs a document the URL step cost."""
    if "@" in url or "?" in url or "#" in url:
        return False
    scheme_end = url.find("://")
    path_start = url.find("/", scheme_end + 3) if scheme_end >= 0 else 0
    if path_start < 0:
        return True  # scheme://host[:port] only
    path = url[path_start:]
    return not (_URL_HINT.search(path) or _SEVEN_DIGITS_IN_A_SEGMENT.search(path))


def redact_url(url: str, redactor: PIIRedactor, counts: dict[str, int] | None = None) -> str:
    """A URL with its personal data and credentials replaced, its structure kept.

    - user info: the user name is redacted like text (an e-mail address), the password always as a secret;
    - path segments, query parameter values and the fragment are percent-decoded and redacted like text
      (``/users/jane@example.com``, ``?phone=+44…``); ``name=value`` pairs are redacted as that text, so
      ``api_key=…``/``password=…`` are secrets; the value of a parameter named in ``CREDENTIAL_PARAMETERS``
      (``sig``, ``access_token``, ``X-Amz-Signature``…) is a secret whatever it looks like;
    - scheme, host, port and parameter names are kept (they name the site, which dedup and reports need);
    - a changed component is percent-encoded again, so the result is still a URL and decodes to the
      placeholder; unchanged components keep their bytes.

    Everything goes through ``redactor``, so ``PIIConfig.types`` and placeholders apply as in the text
    (``types`` without ``secret`` keeps passwords and keys). A component that cannot hold any type
    (``_URL_HINT``) is skipped. Counts are added to ``counts``. A string that is not a URL at all is redacted
    as text.
    """
    counts = {} if counts is None else counts
    if not url or _nothing_to_redact(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed "[" in the host
        redacted, found = redactor.redact(url)
        _add_counts(counts, found)
        return redacted
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        user = _redact_component(user, redactor, counts)
        if password:
            decoded = unquote(password)
            secret = _credential_value(decoded, redactor, counts)
            password = password if secret == decoded else quote(secret, safe="")
        netloc = f"{user}{colon}{password}@{hostport}"
    path = parts.path
    # one search over the whole path first (no hint can span a "/"): most paths hold nothing worth a closer look
    if _URL_HINT.search(path) or _SEVEN_DIGITS_IN_A_SEGMENT.search(path):
        path = "/".join(_redact_component(segment, redactor, counts) for segment in path.split("/"))
    query = _redact_pairs(parts.query, redactor, counts) if parts.query else parts.query
    fragment = parts.fragment
    if fragment:
        if "=" in fragment:
            fragment = _redact_pairs(fragment, redactor, counts)
        else:
            fragment = _redact_component(fragment, redactor, counts)
    if (netloc, path, query, fragment) == (parts.netloc, parts.path, parts.query, parts.fragment):
        return url
    return urlunsplit((parts.scheme, netloc, path, query, fragment))


def redact_value(value: object, redactor: PIIRedactor, counts: dict[str, int] | None = None) -> object:
    """Strings (also inside lists and dicts) redacted like text; other values as they are."""
    counts = {} if counts is None else counts
    if isinstance(value, str):
        if not value:
            return value
        redacted, found = redactor.redact(value)
        _add_counts(counts, found)
        return redacted
    if isinstance(value, dict):
        return {k: redact_value(v, redactor, counts) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, redactor, counts) for v in value]
    return value


def redact_metadata(metadata: dict, redactor: PIIRedactor, counts: dict[str, int] | None = None) -> dict:
    """Redact ``metadata`` in place: ``url`` with ``redact_url``, every other field except ``METADATA_NOT_TEXT``
    with ``redact_value``. Returns ``metadata``."""
    counts = {} if counts is None else counts
    for key, value in metadata.items():
        if key in METADATA_NOT_TEXT or value is None or isinstance(value, (bool, int, float)):
            continue
        if key == "url" and isinstance(value, str):
            metadata[key] = redact_url(value, redactor, counts)
        else:
            metadata[key] = redact_value(value, redactor, counts)
    return metadata
