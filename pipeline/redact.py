"""The PII redaction engine: pure text in, text and counts out (no pipeline, no config model).

Used by the PII stage (``pipeline.curate.pii``) and by the accounting code that redacts drop rows and
report examples (``pipeline.base``); it lives apart from the stage so that both import it at the top.

PII removal: replace personal data and credentials with deterministic, typed placeholders.

Why this is written by hand: datatrove's ``PIIFormatter`` covers e-mail and IPv4 only and rotates
through several replacement strings, so the same input gives different outputs (measured: one text
with an e-mail and a public IP gave three different results in three calls) — copies stop being
copies and dedup can no longer match them. Neither phones, cards, IBANs, SSNs nor secrets are
covered there. Here every detector is a compiled regex that proposes candidates plus a cheap check
in Python (``ipaddress``, Luhn, GS1, ISO 7064 mod-97, SSN ranges, phone structure) that accepts them.
``phonenumbers`` (libphonenumber) is not a dependency: it is not installed here, and its matcher parses
every candidate against per-region metadata, which costs far more than the structural rules below; the
standards-built evaluation (``benchmarks/pii_eval.py``) measures what the structural rules reach.

How overlaps are settled: detectors run in a fixed priority order (secret, email, iban, card, ssn,
ip_address, phone) on the original text; a candidate that overlaps an already accepted span is
discarded, and the text is rebuilt once at the end. So a card number is never half-replaced as a
phone, a placeholder is never matched again, and the result depends on the input only.

Context moves a candidate's score, Presidio-style, but only where structure alone cannot decide
(docs/pii.md lists every word and why):
- a phone word (``tel``, ``phone``, ``Telefon``, ``电话``, ``電話`` …) before a number admits the forms
  that are otherwise ids: bare digit runs, national numbers without a trunk prefix;
- an id/barcode label (``order``, ``tracking``, ``serial``, ``EAN``, ``订单号`` …) before a number rejects
  it as a phone or card; a GS1-valid 12/13/14/18-digit run is a barcode unless a card word is near;
- a version word (``version``, ``release``, ``upstream``, ``update`` …) before a dotted quad, or a Debian
  revision after it (``-1``, ``+dfsg``, ``~rc1``), makes it a version, not an IP.

Boundaries are script-aware: Chinese, Japanese and Korean are written without spaces, so a CJK character
next to a number or address is a boundary, while a Latin letter glued to it is not.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

PIIType = Literal["email", "ip_address", "phone", "card", "iban", "ssn", "secret"]
# priority order: an earlier type wins an overlap
PII_TYPES: tuple[str, ...] = ("secret", "email", "iban", "card", "ssn", "ip_address", "phone")
# U+27E8/U+27E9 (mathematical angle brackets): ``<EMAIL>`` is ordinary text in technical docs (man pages,
# git docs, templates), ``⟨EMAIL⟩`` is not, so a reader — or a later filter — can tell a replacement from
# what the author wrote. ``placeholder_format: "<{TYPE}>"`` gives the old ASCII style back.
DEFAULT_PLACEHOLDER_FORMAT = "⟨{TYPE}⟩"


def placeholders_for(fmt: str) -> dict[str, str]:
    """The placeholder of every type under ``fmt`` (``{TYPE}``: upper-case type name, ``{type}``: as spelled)."""
    return {t: fmt.replace("{TYPE}", t.upper()).replace("{type}", t) for t in PII_TYPES}


DEFAULT_PLACEHOLDERS: dict[str, str] = placeholders_for(DEFAULT_PLACEHOLDER_FORMAT)


@dataclass(frozen=True)
class RedactionRules:
    """What ``PIIRedactor`` replaces and with what. ``PIIConfig`` (the recipe's ``pii:`` section) has the same
    three fields and is passed in its place; these defaults are that model's defaults (every type on, the
    default placeholders, public IPs only), so the engine needs no pydantic model to run."""

    types: tuple[str, ...] = PII_TYPES
    placeholders: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_PLACEHOLDERS))
    public_ip_only: bool = True


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


def gs1_valid(digits: str) -> bool:
    """GS1 mod-10 check (weights 3,1 from the right): EAN-8/13, UPC-A, GTIN-14, SSCC-18, ISBN-13."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        total += (ord(ch) - 48) * (3 if i % 2 else 1)
    return total % 10 == 0


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
# scripts written without spaces
# ---------------------------------------------------------------------------------------------------
# Hangul Jamo, CJK radicals … CJK unified ideographs (incl. CJK punctuation, kana), Hangul syllables,
# compatibility ideographs, CJK compatibility forms, half/full-width forms, supplementary ideographs.
_CJK_RANGES = "\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
_CJK_RANGES += "\U00020000-\U0003ffff"
_CJK = re.compile(f"[{_CJK_RANGES}]")


def _glued(ch: str) -> bool:
    """A character that continues a token: a letter or digit of a script written with spaces."""
    if ch.isascii():
        return ch.isalnum()
    return ch.isalnum() and not _CJK.match(ch)


# ---------------------------------------------------------------------------------------------------
# context words (docs/pii.md says why each is there)
# ---------------------------------------------------------------------------------------------------

# words that introduce a phone number; the number may follow within a few non-digit characters
_PHONE_WORDS = (
    r"phone|telephone|tel|tfn|call|fax|mobile|mob|cell|cellphone|whatsapp|hotline|ph"
    r"|telefon\w*|handy|mobil\w*|rufnummer|durchwahl|t[ée]l[ée]phone|t[ée]l|portable|appelez|appeler"
    r"|tel[ée]fono|m[óo]vil|celular|llame|telefone|cellulare|telefoon|mobiel|bel|kom[óo]rka|tfn"
    r"|телефон\w*|тел|моб\w*|факс"
)
_PHONE_WORDS_CJK = r"电话|電話|手机|手機|座机|致电|传真|傳真|携帯|ファックス|ＴＥＬ|전화|휴대폰|핸드폰|팩스"
# labels of ids, codes and barcodes: a number right after one is not a phone or a card
_ID_WORDS = (
    r"isbn(?:-?1[03])?|issn|ean(?:-?(?:8|13))?|gtin(?:-?1[234])?|upc(?:-?a)?|jan|sscc|barcode|sku|asin|mpn"
    r"|order|invoice|ref|reference|record|serial|s/n|sn|tracking|track|shipment|parcel|consignment"
    r"|transaction|txn|trace|request|req|span|session|job|build|item|article|art|part|model|patent"
    r"|receipt|ticket|case|account|acct|customer|member|policy|contract|doi|po|id|ids|no|nr|num|number"
    r"|bestell\w*|rechnung\w*|kunden\w*|auftrag\w*|artikel\w*|vertrag\w*|sendung\w*"
    r"|commande|facture|r[ée]f[ée]rence|colis|pedido|factura|referencia|n[°º]"
)
_ID_WORDS_CJK = (
    r"订单号?|運單號?|运单号?|快递单号|单号|編號|编号|注文番号|伝票番号|追跡番号|お問い合わせ番号|주문번호|송장번호"
)
_CARD_WORDS = (
    r"card|cards|credit|debit|visa|mastercard|master card|amex|american express|discover|jcb|maestro"
    r"|unionpay|diners|cc|ccn|karte|kreditkarte|carte|tarjeta|cart[ãa]o|carta|kaart|karta|карта"
)
_CARD_WORDS_CJK = r"卡号|信用卡|银行卡|借记卡|卡|カード|카드"
_VERSION_WORDS = (
    r"version|versions|ver|release[sd]?|build|rev|revision|firmware|kernel|upstream|update[sd]?|updating"
    r"|upgrade[sd]?|upgrading|bump(?:ed|s)?|changelog|versi[óo]n|vers[ãa]o|versione|версия|версии"
    r"|policy|standards?|standards-version|complies with"  # Debian policy versions: Standards-Version 4.6.0.1
    r"|section|sections|sect|sec|chapter|clause|paragraph|rfc|spec|§"  # numbered sections: 8.2.4.44, 7.1.1.1
)
_IP_WORDS = r"ip|ips|ipv4|address|addr|host|hostname|server|dns|gateway|proxy|client|remote|peer|inet|nameserver"


# a substring of every version cue (lower case): the gate in front of the version-cue regex
_VERSION_HINTS = ("ver", "rel", "build", "rev", "firm", "kern", "upst", "upd", "upg", "bump", "chang", "polic")
_VERSION_HINTS += ("stand", "compl", "sec", "chap", "claus", "parag", "rfc", "spec", "§", ">", "<", "=", "~")
_VERSION_HINTS += ("версия", "версии", "版本", "バージョン", "버전")
_NOT_SEPARATORS = frozenset("0123456789()+")
_LABEL_SEPARATORS = frozenset(" \t\n.:：#=\"'-/")
_EXT_STARTS = frozenset(" ,xXeE内分转轉")
# a substring of every phone word (lower case): the gate in front of the phone-word regex
_PHONE_HINTS = ("te", "ph", "call", "fax", "mob", "cel", "whats", "hot", "handy", "ruf", "durch", "port", "appel")
_PHONE_HINTS += ("llam", "móvil", "movil", "bel", "kom", "tfn", "тел", "моб", "факс", "电话", "電話", "手机", "手機")
_PHONE_HINTS += ("座机", "致电", "传真", "傳真", "携帯", "ファックス", "ｔｅｌ", "전화", "휴대폰", "핸드폰", "팩스")
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
        cjk = _CJK_RANGES
        # windows worth a closer look: runs of digits and phone/card separators (at least 9 characters)
        self.number_run = re.compile(r"\d[\d \-.()/+]{8,}", a)
        # letters and digits of scripts written with spaces: CJK text glued to an address is a boundary
        w = rf"[^\W{cjk}]"  # a word character that is not CJK
        dw = rf"[^\W_{cjk}]"  # the same without "_" (domain labels start and end with one)
        self.email = re.compile(
            rf"(?<!{w})(?<![.%+-])(?:{w}|[.%+-]){{1,64}}@(?:{dw}(?:(?:{w}|-){{0,61}}{dw})?\.){{1,8}}"
            rf"([^\W\d_{cjk}]{{2,24}})(?!{w}|-)"
        )
        # a dotted quad followed by ".label" is part of a host name (1.0.0.127.in-addr.arpa), not an address
        self.ipv4 = re.compile(r"\d(?<![\w.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?!\w|\.\w)", a)
        # an IPv6 address has "::" or eight groups (six before an IPv4 tail); "12:30:45" has neither
        self.ipv6_hint = re.compile(r"::|[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){5}:")
        self.ipv6 = re.compile(
            r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{0,4})(?![\w:])", a
        )
        self.version_cue = re.compile(
            rf"(?i)(?:(?<![^\W\d_])(?:{_VERSION_WORDS})(?![^\W\d_])|版本|バージョン|버전)[^\d]{{0,16}}$|(?:>=|<=|==|~=|>>|<<)\s*$"
        )
        self.ip_cue = re.compile(rf"(?i)(?<![^\W\d_])(?:{_IP_WORDS})(?![^\W\d_])")
        # one candidate shape for every phone form: groups of digits, "(0)"/"(495)" area codes, separators
        # the lookahead skips, at C speed, pieces shorter than 8 characters (the check rejects those anyway)
        self.phone = re.compile(
            r"(?=[\d+(][\d .\-/()]{7})(?:\+ ?)?(?:\(\d{1,5}\)[ .\-]?)?\d+(?:(?:[ .\-/]|[ .\-]?\(\d{1,5}\)[ .\-]?)\d+)*",
            a,
        )
        self.phone_ext = re.compile(
            r"(?i)(?:[ ]?,?[ ]?(?:x|ext\.?|extn\.?|extension|ext:|durchwahl|poste|anexo|доб\.?)[ ]?"
            r"|[ ]?(?:内線|分机|转|轉))(\d{1,6})(?!\d)"
        )
        self.phone_word = re.compile(
            rf"(?i)(?:(?<![^\W\d_])(?:{_PHONE_WORDS})(?![^\W\d_])|{_PHONE_WORDS_CJK})[^\d\n]{{0,24}}$"
        )
        self.id_label = re.compile(
            rf"(?i)(?:(?<![^\W\d_])(?P<label>{_ID_WORDS})(?:[_\-](?:id|no|nr|num|number|code))?(?![^\W\d_])"
            rf"|{_ID_WORDS_CJK})[\s.:：#=\"'\-/]*(?:(?:no|nr|num|number|id|code|de)(?![^\W\d_])[\s.:#=\"'\-]*)?"
            r"[\s.:：#=\"'\-]*$|#\s*$"
        )
        self.phone_hint = re.compile("|".join(map(re.escape, _PHONE_HINTS)), re.IGNORECASE)
        self.glued_label = re.compile(r"(?i)(?<![A-Za-z])(?:tel|fax|ph|mob|tfn|phone)[.:]?$")
        self.card_word = re.compile(rf"(?i)(?<![^\W_])(?:{_CARD_WORDS})(?![^\W_])|{_CARD_WORDS_CJK}")
        # the start of an IBAN-shaped string right before a number: a mistyped IBAN is not a phone or a card
        self.iban_prefix = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){0,8} ?$")
        self.card = re.compile(r"(?<![\w.,\-/+])\d(?:[ \-]?\d){11,18}(?!\w)", a)
        self.ssn = re.compile(r"(?<![\w\-])(\d{3})-(\d{2})-(\d{4})(?!\w|-\d)", a)
        self.iban_start = re.compile(r"[A-Z](?<![A-Za-z0-9_][A-Z])[A-Z]\d{2} ?[A-Z0-9]{4}", a)
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
            r"(?:\"(?P<dq>[^\"\r\n]{1,256})\"|'(?P<sq>[^'\r\n]{1,256})'"
            rf"|(?P<bare>[^\s\"'`,;(){{}}\[\]<>{cjk}]{{1,256}}))"
        )
        self.identifier = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?", a)
        self.word_pieces = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
        self.path_segment = re.compile(r"[A-Za-z][a-z0-9._\-~]*|[a-z0-9._\-~]+|[A-Z0-9_.\-]+|\.{1,2}|~")
        self.redacted = re.compile(r"[*xX•.\-_#?]+")
        self.digit_groups = re.compile(r"\d+")


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    return _Patterns()


_IMAGE_TLDS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "tif", "tiff", "avif"})
_NOT_SECRET_VALUES = frozenset(
    {"null", "none", "nil", "true", "false", "undefined", "required", "optional", "string", "str", "int", "bool"}
    | {"text", "empty", "redacted", "hidden", "secret", "password", "token", "changeit", "your_password"}
)
_PLACEHOLDER_PREFIXES = ("<", "⟨", "${", "$(", "{", "%(", "%s", "%d", "%r", "[", "os.", "process.env", "env(", "$")
_PATH_PREFIXES = ("/", "~/", "./", "../")
_BEFORE_NUMBER = " -./,:"
_GENERIC_NUMBER_WORDS = frozenset({"no", "nr", "num", "number", "id", "n°", "nº"})
_IDD_GROUPS = frozenset({"00", "011", "001", "0011", "010", "002", "005", "009"})


def _isolated(text: str, start: int, end: int) -> bool:
    """A number stands alone: not glued to letters, not part of a longer digit run, price or percentage.

    CJK characters are boundaries (``电话13812345678请``): those scripts put no space around numbers.
    """
    if start:
        prev = text[start - 1]
        if _glued(prev) or prev in "_$€£¥#@":
            return False
        if prev in _BEFORE_NUMBER and start >= 2 and text[start - 2].isdigit():
            return False
    if end < len(text):
        nxt = text[end]
        if _glued(nxt) or nxt in "_%€$":
            return False
        if nxt in _BEFORE_NUMBER and end + 1 < len(text) and text[end + 1].isdigit():
            return False
    return True


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


def _after_last_digit(text: str, start: int, reach: int) -> int:
    """The position after the last ASCII digit in the ``reach`` characters before ``start`` (or their start).

    Context words contain no digits, so a context regex need not look past the previous number: in
    number-dense text that window is a few characters instead of 40.
    """
    low = max(0, start - reach)
    i = start
    while i > low and not ("0" <= text[i - 1] <= "9"):
        i -= 1
    return i


def _local_part_char(ch: str) -> bool:
    """A character of an e-mail local part as the e-mail regex takes it: word characters (not CJK), ``.%+-``."""
    if ch.isascii():
        return ch.isalnum() or ch in "_.%+-"
    return (ch.isalnum() or ch == "_") and not _CJK.match(ch)


def _looks_like_date(groups: list[str], candidate: str) -> bool:
    """``01-02-2024 12`` or ``2024-03-15 12``: a date (and the start of a time) that met a phone shape."""
    if len(groups) < 3:
        return False
    a, b, c = (len(g) for g in groups[:3])
    year_last = a <= 2 and b <= 2 and c == 4 and groups[2][:2] in ("19", "20")
    year_first = a == 4 and b <= 2 and c <= 2 and groups[0][:2] in ("19", "20")
    return year_last or year_first


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

    def __init__(self, config: RedactionRules | None = None):
        # a ``PIIConfig`` is accepted too: it has the same three fields (duck-typed, so this module stays pure)
        self.config = config or RedactionRules()
        self.p = _patterns()
        enabled = set(self.config.types)
        self.detectors = [(t, getattr(self, f"_find_{t}")) for t in PII_TYPES if t in enabled]
        self.placeholders = dict(self.config.placeholders)
        self.needs_numbers = bool(enabled & {"card", "ssn", "phone"})

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        """Return the text with every accepted span replaced, and the count per type (non-zero only)."""
        spans = self.find(text)
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

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """The accepted spans as (start, end, type), sorted and non-overlapping (what ``redact`` replaces)."""
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
        return spans

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

    # -- context ----------------------------------------------------------------------------------------

    def _id_label_before(self, text: str, start: int) -> re.Match | None:
        """An id, order, tracking or barcode label ends right before ``start`` (``Order no. ``, ``EAN:``)."""
        low = max(0, start - 40)
        i = start
        while i > low and text[i - 1] in _LABEL_SEPARATORS:
            i -= 1
        # cheap gate: a label ends in a letter (or is "#"); most numbers follow a digit, a bracket, a comma
        if i == low or not (text[i - 1].isalpha() or "#" in text[i:start]):
            return None
        return self.p.id_label.search(text, low, start)

    def _phone_word_before(self, text: str, start: int) -> bool:
        low = _after_last_digit(text, start, 48)  # the word stands between the previous number and this one
        if not self.p.phone_hint.search(text, low, start):
            return False  # cheap gate before the regex (number-dense text asks this thousands of times)
        return bool(self.p.phone_word.search(text, low, start))

    def _card_word_near(self, text: str, start: int, end: int) -> bool:
        line_start = max(text.rfind("\n", 0, start) + 1, start - 48)
        line_end = text.find("\n", end, end + 16)
        after = self.p.card_word.search(text, end, line_end if line_end != -1 else min(len(text), end + 16))
        return bool(after) or bool(self.p.card_word.search(text, line_start, start))

    # -- detectors: each yields (start, end) spans in the original text --------------------------------

    def _find_email(self, text: str, _: list) -> Iterator[tuple[int, int]]:
        if "@" not in text:
            return
        n = len(text)
        for i in _find_all(text, "@"):
            # walk back over the local part and match once there (scanning a window with the regex, which
            # starts with lookbehinds, tried every position: ~2x slower on web pages)
            start = i
            while start > 0 and i - start <= 64 and _local_part_char(text[start - 1]):
                start -= 1
            if start == i or i - start > 64:
                continue
            m = self.p.email.match(text, start, min(n, i + 320))
            if m and m.group(1).lower() not in _IMAGE_TLDS:  # icon@2x.png is a file name
                yield m.span()

    def _find_ip_address(self, text: str, _: list) -> Iterator[tuple[int, int]]:
        public_only = self.config.public_ip_only
        if "." in text:
            for m in self.p.ipv4.finditer(text):
                number = _ipv4_int(m.group())
                if number is None or (public_only and _in_ranges(number, _IPV4_NOT_PUBLIC)):
                    continue  # cheap: not an address, or a private one (logs are full of them)
                # then the version check, which is cheaper than ipaddress's checks of a public address
                if not self._is_version(text, *m.span()) and ip_replaceable(m.group(), public_only):
                    yield m.span()
        if text.count(":") >= 2 and self.p.ipv6_hint.search(text):
            for m in self.p.ipv6.finditer(text):
                candidate = m.group()
                if ("::" in candidate or candidate.count(":") >= 6) and ip_replaceable(candidate, public_only):
                    yield m.span()

    def _is_version(self, text: str, start: int, end: int) -> bool:
        """A dotted quad that is a version: Debian syntax around it, or a version word before it."""
        if start >= 2 and text[start - 1] == ":" and text[start - 2].isdigit():
            return True  # epoch: 1:2.4.1.0
        revision = end + 1 < len(text) and text[end] in "-+~" and text[end + 1].isalnum()
        if revision and not (text[end] == "-" and self.p.ipv4.match(text, end + 1)):  # 1.2.3.4-1.2.3.10: a range
            return True  # revision: 1.2.3.4-1, 1.2.3.4+dfsg, 1.2.3.4~rc1
        line_end = text.find("\n", end)
        if text.find("urgency=", end, line_end if line_end != -1 else len(text)) != -1:
            return True  # a Debian changelog header: pkg (4.8.6.3) unstable; urgency=medium
        low = _after_last_digit(text, start, 40)
        window = text[low:start].lower()
        if not any(hint in window for hint in _VERSION_HINTS):
            return False  # cheap gate: the regex below costs ~50 µs on a 40-character window
        cue = self.p.version_cue.search(text, low, start)
        return bool(cue) and not self.p.ip_cue.search(text, cue.start(), start)

    def _find_phone(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        for pos, endpos in windows:
            for m in self.p.phone.finditer(text, pos, endpos):
                span = self._phone_span(text, m.start(), m.end(), m.group())
                if span:
                    yield span

    def _phone_span(self, text: str, start: int, end: int, candidate: str) -> tuple[int, int] | None:
        """Accept a phone-shaped candidate by its structure, and by context where structure cannot decide."""
        if len(candidate) < 8 or _digit_count(candidate) < 8:
            return None  # most candidates in number-dense text: pieces of dates, times, prices
        groups = self.p.digit_groups.findall(candidate)
        digits = "".join(groups)
        n = len(digits)
        if candidate[0] == "+" and n - candidate.count("(0)") > 15:
            # E.164 has at most 15 digits: what follows belongs to the next number (+44 20 7946 0958 / 030 …)
            kept = cut = 0
            for g in self.p.digit_groups.finditer(candidate):
                if kept + len(g.group()) > 15 + candidate.count("(0)", 0, g.start()):
                    break
                kept += len(g.group())
                cut = g.end()
            if not cut:
                return None
            candidate = candidate[:cut]
            end = start + cut
            groups = self.p.digit_groups.findall(candidate)
            digits = "".join(groups)
        ext = self.p.phone_ext.match(text, end) if end < len(text) and text[end] in _EXT_STARTS else None
        stop = ext.end() if ext else end
        if start and text[start - 1] in "-+~":
            return None  # a minus sign (-013030.000001), a version's "~++20220202101403"
        if stop < len(text) and text[stop] in "+~":
            return None
        if start and text[start - 1].isascii() and text[start - 1].isalpha():
            # glued to a letter: only "TEL03-1234-5678", "Fax:+49…" style labels (common in Japanese text)
            letters = self.p.glued_label.search(text, max(0, start - 8), start)
            if not letters or not _isolated(text, letters.start(), stop):
                return None
        elif not _isolated(text, start, stop):
            return None
        kind = self._phone_shape(candidate, groups, digits)
        if kind is None:
            return None
        if kind == "word" and not self._phone_word_before(text, start):
            return None
        if candidate[0] != "+":
            label = self._id_label_before(text, start)
            # Order no. 030 12345678, #030…; but after a phone word "number"/"no." is the phone's: Phone number 030 …
            if label:
                generic = (label.group("label") or "").lower() in _GENERIC_NUMBER_WORDS
                if not generic or not (kind == "word" or self._phone_word_before(text, start)):
                    return None
        if self._after_iban_prefix(text, start):
            return None
        return start, stop

    def _phone_shape(self, candidate: str, groups: list[str], digits: str) -> str | None:
        """ "intl"/"national" (a phone as written), "word" (a phone only after a phone word) or None."""
        n = len(digits)
        if n > 17:
            return None  # longer than any E.164 number with a 2-digit international prefix
        seps = set(candidate).difference(_NOT_SEPARATORS)
        dotted_quad = len(groups) == 4 and candidate[0] != "+" and all(len(g) <= 3 for g in groups)
        if seps == {"."} and (len(groups) == 2 or dotted_quad):
            return None  # 0123456.12, +35236450.6 are decimals; 016.016.016.016 is a (bad) IPv4 address
        if candidate[0] == "+":
            if "/" in seps:
                return None  # + 9.0.241/242 is a changelog line; E.164 numbers have no slashes
            if "(0)" in candidate:
                n -= 1
            if not 8 <= n <= 15 or not _country_code_ok(digits.replace("0", "", 1) if "(0)" in candidate else digits):
                return None  # E.164: at most 15 digits, an assigned country code (+4294967296 is a number)
            if seps == {"."} and len(groups) > 1 and all(len(g) == 3 for g in groups[1:]):
                return "word"  # +12.345.678 is a signed number with thousands separators, unless "Tel.:"
            return "intl"
        if _looks_like_date(groups, candidate) or candidate.count("/") > 1:
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
            tail = [len(g) for g in groups[-3:]]
            if tail == [3, 3, 4] and ("(" in candidate or seps in ({"-"}, {"."})):
                return "national"
            if tail == [3, 3, 4] or not many:
                return "word"
        if digits[0] == "0":  # trunk prefix 0: UK, DE, FR, NL, SE, CH, JP, CN, KR, IN, BR, AR, AU (and IT)
            if not 9 <= n <= 12:
                return None
            if many and all(len(g) >= 2 for g in groups):
                return "national"
            return "word"
        if digits[0] == "8" and n == 11 and groups[0] == "8" and ("(" in candidate or "-" in seps):
            return "national"  # Russia's trunk 8: 8 (495) 123-45-67
        if candidate[0] == "(" and 10 <= n <= 11 and len(groups[0]) in (2, 3) and len(groups) >= 3:
            return "national"  # Brazil/Mexico: (11) 91234-5678, (55) 1234-5678
        if 9 <= n <= 13 and all(len(g) >= 2 for g in groups[1:]):
            return "word"  # ES 912 345 678, PL, IT mobile, IN, MX, CN 138 1234 5678, bare runs; not 978-3-16-148410-0
        return None

    def _after_iban_prefix(self, text: str, start: int) -> bool:
        return start > 5 and text[start - 1] == " " and bool(self.p.iban_prefix.search(text, max(0, start - 48), start))

    def _find_card(self, text: str, windows: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        for pos, endpos in windows:
            for m in self.p.card.finditer(text, pos, endpos):
                span = self._card_span(m.start(), m.group())
                if span and self._card_context_ok(text, *span):
                    yield span

    def _card_context_ok(self, text: str, start: int, end: int) -> bool:
        """Barcodes and labelled ids are not cards, unless a card word says otherwise."""
        if self._after_iban_prefix(text, start):
            return False
        if start and text[start - 1] in "#@$€£":
            return self._card_word_near(text, start, end)
        digits = text[start:end]
        # GS1 keys (UPC-A, EAN-13, GTIN-14) are printed as bare digits; a grouped 4-6-4 run is a card
        barcode = len(digits) in (12, 13, 14) and digits.isdigit() and gs1_valid(digits)
        if barcode or self._id_label_before(text, start):
            return self._card_word_near(text, start, end)
        return True

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
            if len(digits) < 12:
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
            if len(chars) != length or (pos < n and text[pos].isascii() and text[pos].isalnum()):
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
                    start, end = m.span(1)
                    if end == len(text) or text[end].isspace():
                        while text[end - 1] == ".":
                            end -= 1  # the full stop of the sentence
                    yield start, end
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
        if not self._literal_secret(value) or len(value) < 4:
            return None
        if value.startswith(_PATH_PREFIXES) and self._path_like(value):
            return None  # PWD=/home/user; a random value that starts with "/" is still a secret
        if self.p.identifier.fullmatch(value) and not self._random_looking(value):
            # a name, not a literal: ``password = user_password`` in code, ``the secret: patience`` in prose;
            # only ``KEY=value`` (env files, query strings) and ``key: value`` config lines count
            sep = m.group("sep")
            line_start = text.rfind("\n", 0, m.start()) + 1
            prefix = text[line_start : m.start()].strip(" \t\"'-")
            line_end = text.find("\n", m.end())
            rest = text[m.end() : line_end if line_end != -1 else len(text)].strip()
            # "get_cache_token: Returns the current …" is a docstring line, not a YAML value
            config_line = prefix in ("", "export") and sep.strip() == ":" and (not rest or rest[0] == "#")
            # KEY=value in an env file or shell line, ?password=…&, --password=…; not f(password=name)
            env_line = sep == "=" and (prefix in ("", "export") or text[m.start() - 1 : m.start()] in ("?", "&", "-"))
            called = text[m.end("bare") : m.end("bare") + 1] == "("
            if "." in value or called or not (env_line or config_line):
                return None
        elif value.isdigit() and len(value) < 6:
            return None  # max_token: 4096
        start = m.start("bare")
        return start, start + len(value)

    def _random_looking(self, value: str) -> bool:
        """A run of letters and digits with no word structure (``wJalrXUtnFEMIK7MDENG``, hex), not a name.

        Names split into few long pieces (``userPassword`` → user, Password); random alphanumerics into many
        short ones (measured on 40-character base62 values: ~2 characters per piece; names: ≥ 4).
        """
        if len(value) < 12 or "_" in value or "." in value:
            return False
        return len(value) < 3.5 * len(self.p.word_pieces.findall(value))

    def _path_like(self, value: str) -> bool:
        """``/home/user``, ``./config/db.yaml``: every segment reads as a file or folder name."""
        segments = [s for s in value.split("/") if s]
        return all(self.p.path_segment.fullmatch(s) for s in segments)

    def _literal_secret(self, value: str) -> bool:
        v = value.strip()
        if len(v) < 4 or v.lower() in _NOT_SECRET_VALUES or v.startswith(_PLACEHOLDER_PREFIXES):
            return False
        return not self.p.redacted.fullmatch(v)  # already masked: ****, xxxx


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
