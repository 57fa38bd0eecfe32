"""A PII evaluation set built from the standards, at run time, seeded — independent of ``sample/``.

Nothing here is vendored text: every value is generated from the published rules that define it, and the
only real text used is what every machine has (Python's own stdlib source, ``/usr/share/doc`` changelogs).

Positives (``positives(seed, per_type)``):
- ``card``: the issuer IIN ranges and lengths of ISO/IEC 7812 as the brands publish them (table
  ``CARD_BRANDS``), Luhn-valid, bare and grouped 4-4-4-4 / 4-6-5 / 4-6-4 / 4-4-5 / 4-4-4-4-3 with spaces
  or dashes;
- ``phone``: ITU-T E.164 country codes with the national numbering plans of 19 countries (``PHONE_PLANS``),
  written internationally (``+``, ``00``, ``011``, ``001``, ``0011``, ``+44 (0)…``) and nationally (trunk
  ``0``/``8``, parentheses, dots, dashes, slashes, spaces, extensions); forms that are only a run of digits,
  or that have no trunk prefix, appear after a phone word (a reader cannot tell them from an id either);
- ``iban``: every country of the SWIFT IBAN registry with its length (BBAN digits/letters per country are
  not modelled: random alphanumerics in the registry length, valid ISO 7064 mod-97), compact and grouped;
- ``ssn`` (SSA ranges), ``email``, ``ip_address`` (public IPv4/IPv6), ``secret`` (token formats and
  assignment forms in code, JSON, YAML and env files, as docs/pii.md documents them).
Each value is embedded in spaced English/European text and written directly against Chinese/Japanese/
Korean text with no space (``电话13812345678请``, ``口座DE89370400440532013000です``).

Clean text (``clean_number_text``): number-dense lines with no personal data — GS1 barcodes (EAN-13, EAN-8,
UPC-A, GTIN-14, ISBN-10/13) with and without a label, labelled record/order/tracking/serial numbers of
10–20 digits (a third of them Luhn-valid inside a card IIN range), dates, times, prices, coordinates,
hashes, UUIDs, version numbers (also four-part), Debian-changelog-like entries.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import random
import string
import sysconfig
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Planted:
    """One positive: ``text`` holds ``secret`` once; a correct redaction replaces exactly ``secret``."""

    kind: str
    form: str  # a short name of the format, for per-format breakdowns
    script: str  # "spaced" or "cjk"
    text: str
    secret: str

    def expected(self, placeholder: str) -> str:
        return self.text.replace(self.secret, placeholder, 1)


# ---------------------------------------------------------------------------------------------------
# check digits
# ---------------------------------------------------------------------------------------------------


def luhn_digit(body: str) -> str:
    """The Luhn (ISO/IEC 7812-1 annex B) check digit for ``body``."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return str((10 - total % 10) % 10)


def gs1_digit(body: str) -> str:
    """The GS1 mod-10 check digit (weights 3,1 from the right) of EAN/UPC/GTIN/SSCC/ISBN-13."""
    total = sum(int(ch) * (3 if i % 2 == 0 else 1) for i, ch in enumerate(reversed(body)))
    return str((10 - total % 10) % 10)


def isbn10_digit(body: str) -> str:
    total = sum(int(ch) * (10 - i) for i, ch in enumerate(body))
    check = (11 - total % 11) % 11
    return "X" if check == 10 else str(check)


def iban_check(country: str, bban: str) -> str:
    numeric = int("".join(str(int(ch, 36)) for ch in bban + country + "00"))
    return f"{country}{98 - numeric % 97:02d}{bban}"


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


# ---------------------------------------------------------------------------------------------------
# cards: (brand, IIN ranges as (low, high) of equal width, lengths)
# ---------------------------------------------------------------------------------------------------

CARD_BRANDS: tuple[tuple[str, tuple[tuple[int, int], ...], tuple[int, ...]], ...] = (
    ("visa", ((4, 4),), (13, 16, 19)),
    ("mastercard", ((51, 55), (2221, 2720)), (16,)),
    ("amex", ((34, 34), (37, 37)), (15,)),
    ("discover", ((6011, 6011), (644, 649), (65, 65)), (16, 17, 18, 19)),
    ("jcb", ((3528, 3589),), (16, 17, 18, 19)),
    ("jcb15", ((1800, 1800), (2131, 2131)), (15,)),
    ("maestro", ((5018, 5018), (5020, 5020), (5038, 5038), (5893, 5893), (6304, 6304), (6759, 6759), (6761, 6763)),
     (12, 13, 14, 15, 16, 17, 18, 19)),
    ("unionpay", ((62, 62),), (16, 17, 18, 19)),
    ("diners", ((36, 36), (38, 38), (300, 305)), (14, 15, 16, 17, 18, 19)),
    ("mir", ((2200, 2204),), (16, 17, 18, 19)),
    ("troy", ((9792, 9792),), (16,)),
)  # fmt: skip

CARD_GROUPINGS = {12: (4, 4, 4), 13: (4, 4, 5), 14: (4, 6, 4), 15: (4, 6, 5), 16: (4, 4, 4, 4), 17: (4, 4, 4, 5)}
CARD_GROUPINGS |= {18: (4, 4, 4, 6), 19: (4, 4, 4, 4, 3)}


def card_number(rng: random.Random, brand: tuple) -> str:
    _name, ranges, lengths = brand
    low, high = rng.choice(ranges)
    prefix = str(rng.randint(low, high))
    length = rng.choice(lengths)
    body = prefix + _digits(rng, length - len(prefix) - 1)
    return body + luhn_digit(body)


def gen_card(rng: random.Random) -> tuple[str, str, bool]:
    brand = rng.choice(CARD_BRANDS)
    digits = card_number(rng, brand)
    style = rng.choice(["bare", "space", "dash"])
    if style == "bare":
        value = digits
    else:
        sep = " " if style == "space" else "-"
        parts, pos = [], 0
        for size in CARD_GROUPINGS[len(digits)]:
            parts.append(digits[pos : pos + size])
            pos += size
        value = sep.join(parts)
    return f"{brand[0]}/{len(digits)}/{style}", value, False


# ---------------------------------------------------------------------------------------------------
# phones: national numbering plans (ITU-T E.164 country code, trunk prefix, number shapes)
# ---------------------------------------------------------------------------------------------------
# A shape is a string of groups: digits stand for themselves, "N" is 2–9, "M" is 3–9, "d" is 0–9. Spaces split the
# national significant number (NSN) into the groups the country writes. ``area`` is how many groups form
# the area code (bracketed in the parenthesised forms).


@dataclass(frozen=True)
class Plan:
    country: str
    cc: str
    trunk: str  # "" where the country has none (ES, IT, PL, MX, …)
    shapes: tuple[tuple[str, int], ...]  # (NSN shape, groups in the area code)
    seps: tuple[str, ...] = (" ",)  # separators the country writes nationally


PHONE_PLANS: tuple[Plan, ...] = (
    Plan("US", "1", "", (("Ndd Ndd dddd", 1),), ("-", ".", " ")),
    Plan("CA", "1", "", (("Ndd Ndd dddd", 1),), ("-", ".")),
    Plan("GB", "44", "0", (("20 Nddd dddd", 1), ("7Ndd dddddd", 1), ("1Ndd dddddd", 1), ("161 ddd dddd", 1))),
    Plan("DE", "49", "0", (("30 Nddddddd", 1), ("89 Ndddddd", 1), ("221 Ndddddd", 1), ("15d Nddddddd", 1),
                           ("17d Nddddddd", 1)), (" ", "-", "/")),
    Plan("FR", "33", "0", (("N dd dd dd dd", 1),), (" ", ".", "-")),
    Plan("IT", "39", "", (("06 dddd dddd", 1), ("02 dddd dddd", 1), ("011 ddd dddd", 1), ("3dd ddd dddd", 1)),
         (" ", "-")),
    Plan("ES", "34", "", (("9Nd ddd ddd", 1), ("6dd ddd ddd", 1), ("9N ddd dd dd", 1), ("6dd dd dd dd", 1))),
    Plan("NL", "31", "0", (("20 ddd dddd", 1), ("6 dddddddd", 1), ("10 ddd dddd", 1)), (" ", "-")),
    Plan("PL", "48", "", (("Nd ddd dd dd", 1), ("5dd ddd ddd", 1), ("6dd ddd ddd", 1))),
    Plan("SE", "46", "0", (("8 ddd ddd dd", 1), ("31 dd dd dd", 1), ("70 ddd dd dd", 1)), (" ", "-")),
    Plan("CH", "41", "0", (("44 ddd dd dd", 1), ("79 ddd dd dd", 1), ("22 ddd dd dd", 1))),
    Plan("JP", "81", "0", (("3 dddd dddd", 1), ("90 dddd dddd", 1), ("6 dddd dddd", 1), ("45 ddd dddd", 1)),
         ("-", " ")),
    Plan("CN", "86", "0", (("10 dddd dddd", 1), ("21 dddd dddd", 1), ("755 dddd dddd", 1)), ("-", " ")),
    Plan("CN-mobile", "86", "", (("1Md dddd dddd", 1),), (" ", "-")),
    Plan("KR", "82", "0", (("2 ddd dddd", 1), ("2 dddd dddd", 1), ("10 dddd dddd", 1), ("31 ddd dddd", 1)),
         ("-",)),
    Plan("IN", "91", "0", (("11 dddd dddd", 1), ("22 dddd dddd", 1)), (" ", "-")),
    Plan("IN-mobile", "91", "", (("9dddd ddddd", 1), ("7dddd ddddd", 1)), (" ",)),
    Plan("BR", "55", "0", (("11 9dddd dddd", 1), ("21 Nddd dddd", 1)), ("-",)),
    Plan("MX", "52", "", (("55 dddd dddd", 1), ("81 dddd dddd", 1), ("33 dddd dddd", 1)), (" ",)),
    Plan("AR", "54", "0", (("11 Nddd dddd", 1), ("351 Ndd dddd", 1)), (" ", "-")),
    Plan("AU", "61", "0", (("2 Nddd dddd", 1), ("3 Nddd dddd", 1), ("4dd ddd ddd", 1))),
    Plan("RU", "7", "8", (("495 ddd dd dd", 1), ("812 ddd dd dd", 1), ("9dd ddd dd dd", 1)), ("-", " ")),
)  # fmt: skip

IDD_PREFIXES = ("00", "00", "011", "001", "0011")
EXTENSIONS = (" x{}", " x{}", "x{}", " ext. {}", " ext {}", ", ext. {}", " extension {}")


def _fill(rng: random.Random, shape: str) -> list[str]:
    groups = []
    for group in shape.split():
        pick = {"N": "23456789", "M": "3456789", "d": string.digits}
        groups.append("".join(rng.choice(pick[c]) if c in pick else c for c in group))
    return groups


def gen_phone(rng: random.Random) -> tuple[str, str, bool]:
    """(form, value, needs a phone word in context)."""
    plan = rng.choice(PHONE_PLANS)
    shape, area = rng.choice(plan.shapes)
    groups = _fill(rng, shape)
    style = rng.choice(["intl", "intl", "idd", "national", "national", "national", "paren", "bare"])
    needs_word = False
    sep = rng.choice(plan.seps)
    if plan.cc == "1" and style == "national" and sep == " ":
        needs_word = True  # "415 555 0132" is as much a table row as a phone
    if style == "intl":
        isep = rng.choice([" ", " ", "-", "."]) if plan.cc != "1" else rng.choice([" ", "-", "."])
        variant = rng.random()
        if variant < 0.2 and plan.trunk == "0":
            value = f"+{plan.cc} (0){groups[0]} " + " ".join(groups[1:])
        elif variant < 0.35:
            value = f"+{plan.cc}" + "".join(groups)
        elif variant < 0.5 and plan.cc != "1":
            value = f"+{plan.cc} ({groups[0]}) " + "-".join(groups[1:])
        else:
            value = f"+{plan.cc}{isep}" + isep.join(groups)
    elif style == "idd":
        idd = rng.choice(IDD_PREFIXES)
        glue = rng.choice(["", " "]) if idd == "00" else " "  # 0044 … and 00 44 …; 011 44 …
        value = f"{idd}{glue}{plan.cc} " + " ".join(groups)
    elif style == "paren":
        if plan.cc == "1":
            value = f"({groups[0]}) {groups[1]}-{groups[2]}"
        else:
            trunk = "" if plan.country == "BR" else plan.trunk  # Brazil writes (11) 91234-5678
            value = f"({trunk}{groups[0]}) " + rng.choice([" ", "-"]).join(groups[1:])
            if plan.trunk == "8":
                value = f"8 ({groups[0]}) " + "-".join(groups[1:])  # Russia: 8 (495) 123-45-67
            needs_word = not plan.trunk and plan.country != "MX"
    elif style == "bare":
        value = plan.trunk + "".join(groups)
        needs_word = True
    else:  # national with separators
        if plan.country == "RU":
            value = (
                f"8 ({groups[0]}) {groups[1]}-{groups[2]}-{groups[3]}"
                if rng.random() < 0.5
                else "8-" + "-".join(groups)
            )
        elif plan.cc == "1" and rng.random() < 0.2:
            value = "1-" + "-".join(groups)
        else:
            value = plan.trunk + sep.join(groups)
            needs_word = needs_word or not plan.trunk and plan.cc != "1" and not groups[0].startswith("0")
    if rng.random() < 0.12 and style != "bare":
        value += rng.choice(EXTENSIONS).format(rng.randint(1, 9999))
    return f"{plan.country}/{style}", value, needs_word


# ---------------------------------------------------------------------------------------------------
# IBANs: every country of the SWIFT IBAN registry, its length
# ---------------------------------------------------------------------------------------------------

# Written out again from the registry on purpose, not imported from pipeline.redact.IBAN_LENGTHS: an
# evaluation that shared the detector's table could never catch a wrong entry in it.
IBAN_REGISTRY_LENGTHS: dict[str, int] = {
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


def gen_iban(rng: random.Random) -> tuple[str, str, bool]:
    country = rng.choice(sorted(IBAN_REGISTRY_LENGTHS))
    length = IBAN_REGISTRY_LENGTHS[country]
    # most registries: bank code letters or digits, then an account number in digits
    letters = rng.choice([0, 0, 4])
    bban = _rand(rng, letters, string.ascii_uppercase) + _digits(rng, length - 4 - letters)
    compact = iban_check(country, bban)
    grouped = rng.random() < 0.5
    value = " ".join(compact[i : i + 4] for i in range(0, len(compact), 4)) if grouped else compact
    return f"{country}/{'grouped' if grouped else 'compact'}", value, False


# ---------------------------------------------------------------------------------------------------
# the other types
# ---------------------------------------------------------------------------------------------------


def gen_ssn(rng: random.Random) -> tuple[str, str, bool]:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return "ssn", f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}", False


def gen_email(rng: random.Random) -> tuple[str, str, bool]:
    first = rng.choice(["alice", "bob", "carol", "dmitri", "eva", "jürgen", "li.wei", "o.connor", "sato", "kim"])
    last = rng.choice(["smith", "meyer", "garcia", "nguyen", "rossi", "tanaka", "wang"])
    local = rng.choice([first, f"{first}.{last}", f"{first}_{last}{rng.randint(1, 99)}", f"{first}+tag", f"{last}-x"])
    domain = rng.choice(
        ["example.com", "mail.example.co.uk", "uni-bonn.de", "xn--bcher-kva.ch", "corp.example.cn", "example.co.jp"]
        + ["163.com", "example.com.br", "post.example.ru", "example.org"]
    )
    return "email", f"{local}@{domain}", False


def gen_ip(rng: random.Random) -> tuple[str, str, bool]:
    while True:
        if rng.random() < 0.5:
            ip = ipaddress.IPv4Address(rng.getrandbits(32))
            value, form = str(ip), "ipv4"
        else:
            hextets = [rng.randint(0x2400, 0x2BFF)] + [rng.choice([0, rng.getrandbits(16)]) for _ in range(7)]
            ip = ipaddress.IPv6Address(":".join(f"{h:x}" for h in hextets))
            value, form = (ip.compressed if rng.random() < 0.7 else ip.exploded), "ipv6"
        if ip.is_global and not (ip.is_private or ip.is_reserved or ip.is_multicast):
            return form, value, False


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _aws_secret(rng: random.Random) -> str:
    return _rand(rng, 40, ALNUM + "/+")


SECRET_KEYS = ("api_key", "apiKey", "API_KEY", "client_secret", "aws_secret_access_key", "db_password", "password")
SECRET_KEYS += ("SECRET_KEY", "auth_token", "access_token", "private_key", "secret")


def secret_item(rng: random.Random) -> tuple[str, str, str]:
    """(form, planted text, the part that must be replaced)."""
    choice = rng.randrange(12)
    key = rng.choice(SECRET_KEYS)
    value_kind = rng.choice(["alnum", "slash", "mixed", "hex"])
    if value_kind == "alnum":
        value = _rand(rng, rng.randint(16, 40))
    elif value_kind == "slash":
        value = "/" + _aws_secret(rng)[1:]
    elif value_kind == "mixed":
        value = _aws_secret(rng)
    else:
        value = _rand(rng, rng.choice([32, 40, 64]), "0123456789abcdef")
    if choice == 0:
        return f"assign-spaced/{value_kind}", f"{key} = {value}", value
    if choice == 1:
        return f"assign-quoted/{value_kind}", f'{key} = "{value}"', value
    if choice == 2:
        return f"json/{value_kind}", json.dumps({key: value, "region": "eu-west-1"}), value
    if choice == 3:
        return f"yaml/{value_kind}", f"{key}: {value}", value
    if choice == 4:
        return f"env/{value_kind}", f"{key.upper()}={value}", value
    if choice == 5:
        return "aws-key-id", (v := rng.choice(["AKIA", "ASIA"]) + _rand(rng, 16, UPPER_ALNUM)), v
    if choice == 6:
        return "github", (v := rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + _rand(rng, 36)), v
    if choice == 7:
        return "github-pat", (v := f"github_pat_{_rand(rng, 22)}_{_rand(rng, 59)}"), v
    if choice == 8:
        header = _b64url(b'{"alg":"HS256","typ":"JWT"}')
        body = _b64url(json.dumps({"sub": rng.randint(1, 10**6), "name": "x"}).encode())
        return "jwt", (v := f"{header}.{body}.{_b64url(rng.randbytes(32))}"), v
    if choice == 9:
        return "glpat", (v := "glpat-" + _rand(rng, 20, ALNUM + "_-")), v
    if choice == 10:
        return "slack", (v := f"xox{rng.choice('abposr')}-{rng.randint(10**9, 10**10)}-{_rand(rng, 24)}"), v
    return "bearer", f"Authorization: Bearer {(v := _rand(rng, 32, ALNUM + '-._'))}", v


GENERATORS: dict[str, Callable[[random.Random], tuple[str, str, bool]]] = {
    "card": gen_card,
    "phone": gen_phone,
    "iban": gen_iban,
    "ssn": gen_ssn,
    "email": gen_email,
    "ip_address": gen_ip,
}
TYPES = ("email", "ip_address", "card", "iban", "ssn", "secret", "phone")

# ---------------------------------------------------------------------------------------------------
# contexts
# ---------------------------------------------------------------------------------------------------

SPACED_CONTEXTS = (
    "Contact: {v}.",
    "Please write to {v} if anything is unclear.",
    "The value ({v}) was copied from the form.",
    "first line\n{v}\nlast line",
    "Kontakt: {v}; Antwort binnen 24 Stunden.",
    "<td>{v}</td>",
    "- {v}, sent on 2024-03-15",
    '"{v}"',
    "{v}",
    "Notes: {v} — see above",
    "Merci de nous répondre à {v} avant vendredi.",
    "Los datos ({v}) fueron enviados ayer.",
    "Dane: {v}, proszę sprawdzić.",
)
CJK_CONTEXTS = (
    "请联系{v}谢谢",
    "详情见{v}。",
    "{v}です",
    "口座{v}です",
    "资料：{v}，请查收。",
    "担当者{v}までお願いします",
    "「{v}」をご確認ください",
    "연락처{v}로 보내 주세요",
    "信息{v}已更新",
)
PHONE_SPACED = ("Tel.: {v}", "call {v} today", "Telefon {v}", "téléphone : {v}", "Phone number {v}.")
PHONE_SPACED += ("Mobile: {v} (evenings)", "Fax {v}", "teléfono {v}, horario 9-14")
PHONE_CJK = ("电话{v}请", "電話：{v}まで", "手机{v}。", "联系电话：{v}", "전화{v}로", "TEL{v}（代表）", "携帯{v}")
SECRET_SPACED = ("{v}", "Config:\n{v}\n", "  {v}\n", "set in .env:\n{v}\nthen restart")
SECRET_CJK = ("配置：\n{v}\n然后重启", "設定{v}\n", "{v}\n以上です")


def positives(seed: int = 0, per_type: int = 400) -> list[Planted]:
    """``per_type`` values of each type in spaced text, and as many in CJK text."""
    rng = random.Random(f"pii-standards-{seed}")
    out: list[Planted] = []
    for kind in TYPES:
        for script in ("spaced", "cjk"):
            for _ in range(per_type):
                if kind == "secret":
                    form, planted, secret = secret_item(rng)
                    multiline = "\n" in planted or form.startswith(("json", "yaml", "env", "assign"))
                    contexts = (SECRET_SPACED if script == "spaced" else SECRET_CJK) if multiline else None
                else:
                    form, planted, needs_word = GENERATORS[kind](rng)
                    secret = planted
                    contexts = None
                    if kind == "phone" and (needs_word or rng.random() < 0.3):
                        contexts = PHONE_SPACED if script == "spaced" else PHONE_CJK
                if contexts is None:
                    contexts = SPACED_CONTEXTS if script == "spaced" else CJK_CONTEXTS
                text = rng.choice(contexts).format(v=planted)
                out.append(Planted(kind, form, script, text, secret))
    return out


# ---------------------------------------------------------------------------------------------------
# clean number-dense text
# ---------------------------------------------------------------------------------------------------

ID_LABELS = ("Order", "Order no.", "order #", "Tracking number:", "Serial No.", "S/N:", "Record", "Invoice")
ID_LABELS += ("Transaction ID", "Ref.", "ID:", "Kundennummer", "Bestellnr.", "N° de commande", "Número de pedido")
ID_LABELS += ("订单号：", "注文番号：", "运单号", "Ticket", "Case", "Account no.", "Auftragsnummer")
BARCODE_LABELS = ("EAN", "EAN-13:", "GTIN", "UPC", "Barcode:", "Artikel-Nr.", "item", "SKU", "JAN")


def _card_iin_digits(rng: random.Random, length: int) -> str:
    """A Luhn-valid run of ``length`` digits inside some card IIN range (an id that a naive check calls a card)."""
    prefix = rng.choice(["4", "51", "55", "2221", "6011", "65", "3530", "62", "36", "5018", "2200"])
    body = prefix + _digits(rng, length - len(prefix) - 1)
    return body + luhn_digit(body)


def _ean13(rng: random.Random) -> str:
    body = rng.choice(["400", "401", "425", "450", "490", "500", "590", "690", "760", "800", "871", "930"]) + _digits(
        rng, 9
    )
    return body + gs1_digit(body)


def _clean_line(rng: random.Random) -> str:
    kind = rng.randrange(20)
    if kind == 0:
        code = _ean13(rng)
        return rng.choice([f"{rng.choice(BARCODE_LABELS)} {code}", f"{code} Widget {rng.randint(1, 99)},99 €", code])
    if kind == 1:
        body = _digits(rng, 11)
        upc = body + gs1_digit(body)
        body8 = _digits(rng, 7)
        ean8 = body8 + gs1_digit(body8)
        body14 = rng.choice("012345678") + _digits(rng, 12)
        gtin = body14 + gs1_digit(body14)
        return rng.choice([f"UPC-A {upc}", upc, f"EAN-8: {ean8}", f"GTIN-14 {gtin}", f"({gtin}) pallet", ean8])
    if kind == 2:
        body = "978" + _digits(rng, 9)
        isbn13 = body + gs1_digit(body)
        b10 = _digits(rng, 9)
        isbn10 = b10 + isbn10_digit(b10)
        hy = f"{isbn13[:3]}-{isbn13[3]}-{isbn13[4:8]}-{isbn13[8:12]}-{isbn13[12]}"
        return rng.choice([f"ISBN {isbn13}", f"ISBN-13: {hy}", f"ISBN {isbn10}", isbn13, hy])
    if kind in (3, 4):
        length = rng.randint(10, 20)
        value = (
            _card_iin_digits(rng, length) if rng.random() < 0.34 else rng.choice("123456789") + _digits(rng, length - 1)
        )
        label = rng.choice(ID_LABELS)
        return rng.choice(
            [f"{label} {value}", f'"{rng.choice(["order_id", "record_id", "tracking_id", "txn_id"])}": {value},']
            + [f"{rng.choice(['request_id', 'trace_id', 'serial'])}={value}", f"{label}: {value} shipped"]
        )
    if kind == 5:
        y, m, d = rng.randint(1990, 2030), rng.randint(1, 12), rng.randint(1, 28)
        hh, mm, ss = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
        return rng.choice(
            [f"{y}-{m:02d}-{d:02d} {hh:02d}:{mm:02d}:{ss:02d}", f"{d:02d}.{m:02d}.{y} {hh:02d}:{mm:02d}"]
            + [f"{m:02d}/{d:02d}/{y} {hh}:{mm:02d} PM", f"{y}{m:02d}{d:02d}T{hh:02d}{mm:02d}{ss:02d}Z"]
            + [f"{y}年{m}月{d}日 {hh}:{mm:02d}", f"{d:02d}-{m:02d}-{y}", f"{y}/{m:02d}/{d:02d}"]
        )
    if kind == 6:
        amount = rng.randint(0, 10**7)
        return rng.choice(
            [f"${amount:,}.{rng.randint(0, 99):02d}", f"{amount:,}.00 EUR".replace(",", "."), f"€ {amount / 100:.2f}"]
            + [f"{amount:,} ₽".replace(",", " "), f"¥{amount:,}", f"{amount:,}円", f"total {amount} {amount // 7}"]
        )
    if kind == 7:
        lat, lon = rng.uniform(-90, 90), rng.uniform(-180, 180)
        return rng.choice([f"{lat:.4f}, {lon:.4f}", f"{lat:.6f},{lon:.6f}", f"lat={lat:.5f} lon={lon:.5f}"])
    if kind == 8:
        data = rng.randbytes(16)
        return rng.choice(
            [
                hashlib.md5(data).hexdigest(),
                hashlib.sha1(data).hexdigest(),
                "sha256:" + hashlib.sha256(data).hexdigest(),
            ]
            + [f"commit {hashlib.sha1(data).hexdigest()}", f"md5 {hashlib.md5(data).hexdigest()}  file.tar.gz"]
        )
    if kind == 9:
        return str(uuid.UUID(bytes=rng.randbytes(16), version=4))
    if kind in (10, 11):
        # a four-part version is also a valid IPv4 address: only where something says it is a version (a
        # version word before it, a "v", a Debian revision after it) is it clean text; bare, it is an IP
        dotted = ".".join(str(rng.randint(0, 20)) for _ in range(4))
        three = ".".join(str(rng.randint(0, 20)) for _ in range(3))
        return rng.choice(
            [
                f"upgrading to {dotted}",
                f"version {dotted}",
                f"v{dotted}",
                f"Python {three}",
                three,
                f"Version: {dotted}",
            ]
            + [f"libfoo ({dotted}-1) unstable; urgency=medium", f"New upstream release {dotted}."]
            + [
                f"10.0.{rng.randint(10000, 22631)}.{rng.randint(1, 4000)}",
                f"Bump to {dotted} (Closes: #{rng.randint(10**5, 10**6)})",
            ]
        )
    if kind == 12:
        epoch = rng.choice(["", "1:", "2:"])
        v = f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 30)}.{rng.randint(0, 30)}"
        return rng.choice(
            [f"pkg ({epoch}{v}-{rng.randint(1, 9)}ubuntu{rng.randint(1, 3)}) jammy; urgency=low"]
            + [f"  * Update to {v}+dfsg", f" -- Build Daemon  Mon, {rng.randint(1, 28)} Mar 2024 12:30:45 +0100"]
            + [f"  * Merge {v}~rc{rng.randint(1, 5)} from upstream", f"{v}-{rng.randint(1, 9)}"]
        )
    if kind == 13:
        return " | ".join(str(rng.randint(0, 10 ** rng.randint(1, 7))) for _ in range(rng.randint(3, 8)))
    if kind == 14:
        return rng.choice(
            [f"{rng.randint(0, 100)}.{rng.randint(0, 9)} %", f"{rng.randint(1, 9999)} km", f"{rng.randint(0, 10**9):,}"]
            + [f"+{rng.randint(1, 99)}.{rng.randint(0, 9)}%", f"-{rng.randint(1, 999)}.{rng.randint(0, 99):02d}"]
        )
    if kind == 15:
        hh, mm = rng.randint(0, 23), rng.randint(0, 59)
        return rng.choice(
            [
                f"{hh:02d}:{mm:02d}-{(hh + 1) % 24:02d}:{mm:02d}",
                f"{hh:02d}:{mm:02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}",
            ]
            + [f"T{hh:02d}:{mm:02d}:00+01:00", f"duration {rng.randint(0, 9)}:{mm:02d}:{rng.randint(0, 59):02d}"]
        )
    if kind == 16:
        return rng.choice(
            [
                f"page {rng.randint(1, 999)}-{rng.randint(1, 999)}",
                f"zip {rng.randint(10000, 99999)}-{rng.randint(1000, 9999)}",
            ]
            + [f"Patent US{rng.randint(10**6, 10**7)}", f"DOI 10.{rng.randint(1000, 9999)}/{rng.randint(10**5, 10**7)}"]
            + [
                f"score {rng.randint(0, 9)}-{rng.randint(0, 9)}",
                f"pid {rng.randint(1, 99999)} port {rng.randint(1, 65535)}",
            ]
        )
    if kind == 17:  # log lines with private addresses, ports, byte counts
        return (
            f"{rng.randint(1, 28):02d}/Mar/2024:{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00 +0000 "
            f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)} GET /api/v{rng.randint(1, 3)}/items/"
            f"{rng.randint(1, 10**6)} {rng.choice([200, 304, 404])} {rng.randint(100, 10**6)}"
        )
    if kind == 18:  # numbers in a table
        return "\t".join(
            f"{rng.uniform(0, 10 ** rng.randint(1, 6)):.{rng.randint(0, 3)}f}" for _ in range(rng.randint(3, 7))
        )
    return rng.choice(
        [f"matrix [[{rng.randint(0, 99)}, {rng.randint(0, 99)}], [{rng.randint(0, 99)}, {rng.randint(0, 99)}]]"]
        + [f"0x{rng.getrandbits(32):08x} 0x{rng.getrandbits(64):016x}", f"seed={rng.getrandbits(32)}"]
        + [f"{rng.randint(1, 12)}/{rng.randint(1, 12)} cup, {rng.randint(100, 500)} g"]
    )


def clean_number_text(seed: int = 0, size: int = 200_000) -> str:
    """About ``size`` characters of number-dense lines that hold no personal data."""
    rng = random.Random(f"pii-clean-{seed}")
    lines: list[str] = []
    total = 0
    while total < size:
        line = _clean_line(rng)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


def unlabelled_card_like_ids(seed: int = 0, n: int = 2000, length: int = 16) -> list[str]:
    """Bare random ``length``-digit runs with no label (no standard can tell these from cards; see docs/pii.md)."""
    rng = random.Random(f"pii-bare-{seed}")
    return [rng.choice("123456789") + _digits(rng, length - 1) for _ in range(n)]


# ---------------------------------------------------------------------------------------------------
# real text others wrote, present on every machine
# ---------------------------------------------------------------------------------------------------


def stdlib_sources(limit: int | None = None, stride: int = 1) -> Iterator[tuple[str, str]]:
    """(relative path, text) of Python's own stdlib ``*.py`` files (not site-packages), sorted, every ``stride``-th,
    until ``limit`` characters have been yielded."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts and "dist-packages" not in p.parts)
    total = 0
    for path in files[::stride]:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # a handful of test files are deliberately not UTF-8
        yield str(path.relative_to(root)), text
        total += len(text)
        if limit is not None and total >= limit:
            return


def debian_changelogs(limit: int | None = None) -> Iterator[tuple[str, str]]:
    """(package, text) of the Debian changelogs installed on this machine (``/usr/share/doc/*/changelog.Debian.gz``)."""
    import gzip

    total = 0
    for path in sorted(Path("/usr/share/doc").glob("*/changelog.Debian.gz")):
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
        except (OSError, EOFError):
            continue
        yield path.parent.name, text
        total += len(text)
        if limit is not None and total >= limit:
            return
