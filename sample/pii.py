"""Planted PII, secrets and look-alike decoys, generated from a seeded ``random.Random``.

Every value is *valid* for its type (Luhn for cards, ISO 13616 mod-97 for IBANs, SSA rules for SSNs,
globally routable addresses for IPs), so a detector that checks validity must find it; every decoy
is shaped like a PII value but invalid or harmless (a private IP, a Luhn-failing card-like number, an
IBAN with wrong check digits, an SSN with area 000/666/9xx, dates, versions, prices, ISBNs, order
numbers), so a detector must leave it alone. The checksum helpers are a few lines each and are the
definition the tests check against; no library is needed for them.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import string

PII_TYPES = (
    "email",
    "phone",
    "ipv4",
    "ipv6",
    "credit_card",
    "iban",
    "ssn",
    "private_key",
    "aws_access_key",
    "github_token",
    "gitlab_token",
    "slack_token",
    "jwt",
    "api_key",
)
SECRET_TYPES = frozenset(
    {"private_key", "aws_access_key", "github_token", "gitlab_token", "slack_token", "jwt", "api_key"}
)
DECOY_TYPES = (
    "date",
    "version",
    "price",
    "isbn",
    "order_number",
    "card_like",
    "iban_like",
    "ssn_like",
    "private_ip",
)
# Phone layouts used on English pages: the international and national formats a detector must know.
EN_PHONE_FORMATS = (
    "us_intl",
    "uk_intl",
    "de_intl",
    "us_paren",
    "us_dash",
    "uk_national",
    "de_national",
    "fr_national",
)

_ALNUM = string.ascii_letters + string.digits
_UPPER_ALNUM = string.ascii_uppercase + string.digits
_B64 = string.ascii_letters + string.digits + "+/"
_B64URL = string.ascii_letters + string.digits + "-_"
_EMAIL_DOMAINS = (
    "mailbox.org",
    "gmail.com",
    "outlook.com",
    "web.de",
    "gmx.net",
    "yahoo.co.uk",
    "orange.fr",
    "northwind-capital.com",
    "harborlane-bank.co.uk",
    "proton.me",
    "fastmail.com",
    "kestrel-payments.io",
)


def _chars(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


# --- checksums -------------------------------------------------------------------------------


def luhn_valid(number: str) -> bool:
    """Luhn (mod 10) check over the digits of ``number`` (separators ignored)."""
    digits = [int(c) for c in number if c.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return bool(digits) and total % 10 == 0


def _luhn_complete(payload: str) -> str:
    for check in string.digits:
        if luhn_valid(payload + check):
            return payload + check
    raise AssertionError("unreachable: one check digit always satisfies Luhn")


def iban_valid(iban: str) -> bool:
    """ISO 13616 check: move the first four characters to the end, letters → 10..35, mod 97 == 1."""
    compact = iban.replace(" ", "").upper()
    if len(compact) < 15 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _iban_check_digits(country: str, bban: str) -> str:
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{98 - int(numeric) % 97:02d}"


def ssn_valid(ssn: str) -> bool:
    """SSA rules: area not 000, 666 or 900-999; group not 00; serial not 0000."""
    parts = ssn.split("-")
    if len(parts) != 3 or [len(p) for p in parts] != [3, 2, 4] or not all(p.isdigit() for p in parts):
        return False
    area, group, serial = (int(p) for p in parts)
    return area not in (0, 666) and area < 900 and group != 0 and serial != 0


# --- PII values ----------------------------------------------------------------------------------


def email(rng: random.Random, first: str, last: str) -> str:
    first, last = first.lower(), last.lower()
    local = rng.choice(
        (f"{first}.{last}", f"{first[0]}.{last}", f"{first}{last}{rng.randint(1, 99)}", f"{first}_{last}")
    )
    return f"{local}@{rng.choice(_EMAIL_DOMAINS)}"


def phone(rng: random.Random, fmt: str) -> str:
    d = lambda n: _digits(rng, n)  # noqa: E731 - local shorthand
    us_area = rng.choice(("212", "415", "312", "617", "206", "303", "512", "646"))
    us_exchange = str(rng.randint(200, 999))
    formats = {
        "us_intl": lambda: f"+1 {us_area}-{us_exchange}-{d(4)}",
        "us_paren": lambda: f"({us_area}) {us_exchange}-{d(4)}",
        "us_dash": lambda: f"{us_area}-{us_exchange}-{d(4)}",
        "uk_intl": lambda: f"+44 20 7{d(3)} {d(4)}",
        "uk_national": lambda: f"020 7{d(3)} {d(4)}",
        "de_intl": lambda: f"+49 {rng.choice(('30', '40', '89', '69', '221'))} {rng.randint(2, 9)}{d(7)}",
        "de_national": lambda: f"0{rng.choice(('30', '40', '89', '69', '221'))} {rng.randint(2, 9)}{d(7)}",
        "fr_national": lambda: f"0{rng.randint(1, 5)} {d(2)} {d(2)} {d(2)} {d(2)}",
        "fr_intl": lambda: f"+33 {rng.randint(1, 5)} {d(2)} {d(2)} {d(2)} {d(2)}",
        "es_intl": lambda: f"+34 9{d(2)} {d(3)} {d(3)}",
        "ru_intl": lambda: f"+7 495 {d(3)}-{d(2)}-{d(2)}",
        "zh_intl": lambda: f"+86 10 {rng.randint(5, 8)}{d(3)} {d(4)}",
        "ja_national": lambda: f"03-{rng.randint(3, 6)}{d(3)}-{d(4)}",
        "ja_intl": lambda: f"+81 3-{rng.randint(3, 6)}{d(3)}-{d(4)}",
        "ae_intl": lambda: f"+971 4 {rng.randint(2, 4)}{d(2)} {d(4)}",
    }
    return formats[fmt]()


def ipv4_public(rng: random.Random) -> str:
    while True:
        candidate = ipaddress.IPv4Address(
            f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        )
        if candidate.is_global and not candidate.is_multicast:
            return str(candidate)


def ipv6_public(rng: random.Random) -> str:
    prefix = rng.choice(("2a01", "2a02", "2a03", "2600", "2607", "2001:4860", "2a00:1450"))
    groups = prefix.split(":")
    while len(groups) < 8:
        # a few zero groups so that the compressed ``::`` form appears, as in real logs
        groups.append("0" if rng.random() < 0.25 else f"{rng.randint(1, 0xFFFF):x}")
    candidate = ipaddress.IPv6Address(":".join(groups))
    assert candidate.is_global
    return candidate.compressed


def card_number(rng: random.Random, brand: str | None = None) -> str:
    """A Luhn-valid card number with a real brand prefix, grouped as printed (spaces, dashes or none)."""
    brand = brand or rng.choice(("visa16", "visa16", "visa13", "visa19", "mc", "mc2", "amex", "discover"))
    prefix, length = {
        "visa16": ("4", 16),
        "visa13": ("4", 13),
        "visa19": ("4", 19),
        "mc": (f"5{rng.randint(1, 5)}", 16),
        "mc2": (str(rng.randint(2221, 2720)), 16),
        "amex": (rng.choice(("34", "37")), 15),
        "discover": ("6011", 16),
    }[brand]
    digits = _luhn_complete(prefix + _digits(rng, length - len(prefix) - 1))
    return _group_card(rng, digits)


def _group_card(rng: random.Random, digits: str) -> str:
    sep = rng.choice((" ", "-", "", " "))
    if not sep:
        return digits
    sizes = {15: (4, 6, 5), 13: (4, 4, 5), 19: (4, 4, 4, 4, 3)}.get(len(digits), (4, 4, 4, 4))
    out, pos = [], 0
    for size in sizes:
        out.append(digits[pos : pos + size])
        pos += size
    return sep.join(out)


_BBAN = {
    # country: (length, builder) — layouts from the national formats (bank code, branch, account)
    "DE": lambda rng: _digits(rng, 18),
    "GB": lambda rng: _chars(rng, string.ascii_uppercase, 4) + _digits(rng, 14),
    "FR": lambda rng: _digits(rng, 23),
    "ES": lambda rng: _digits(rng, 20),
    "NL": lambda rng: _chars(rng, string.ascii_uppercase, 4) + _digits(rng, 10),
}


def iban(rng: random.Random, country: str | None = None, spaced: bool | None = None) -> str:
    country = country or rng.choice(tuple(_BBAN))
    bban = _BBAN[country](rng)
    compact = country + _iban_check_digits(country, bban) + bban
    return _space_iban(compact) if (rng.random() < 0.5 if spaced is None else spaced) else compact


def _space_iban(compact: str) -> str:
    return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))


def ssn(rng: random.Random) -> str:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            break
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def private_key_block(rng: random.Random) -> str:
    lines = ["MIIE" + _chars(rng, _B64, 60)]
    lines += [_chars(rng, _B64, 64) for _ in range(rng.randint(8, 14))]
    lines.append(_chars(rng, _B64, rng.randint(20, 60)) + "==")
    return "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"


def aws_access_key(rng: random.Random) -> str:
    return "AKIA" + _chars(rng, _UPPER_ALNUM, 16)


def aws_secret_key(rng: random.Random) -> str:
    return _chars(rng, _B64, 40)


def github_token(rng: random.Random) -> str:
    return "ghp_" + _chars(rng, _ALNUM, 36)


def gitlab_token(rng: random.Random) -> str:
    return "glpat-" + _chars(rng, _ALNUM, 20)


def slack_token(rng: random.Random) -> str:
    return f"xoxb-{rng.randint(1, 9)}{_digits(rng, 10)}-{rng.randint(1, 9)}{_digits(rng, 12)}-{_chars(rng, _ALNUM, 24)}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def jwt(rng: random.Random, name: str) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": _digits(rng, 8), "name": name, "iat": 1_700_000_000 + rng.randint(0, 30_000_000)}
    payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{payload}.{_chars(rng, _B64URL, 43)}"


def api_secret(rng: random.Random) -> str:
    return _chars(rng, _ALNUM, rng.choice((32, 36, 40)))


# --- decoys --------------------------------------------------------------------------------------


def date(rng: random.Random, style: str = "iso") -> str:
    y, m, d = rng.randint(2019, 2025), rng.randint(1, 12), rng.randint(1, 28)
    return {"iso": f"{y}-{m:02d}-{d:02d}", "dotted": f"{d:02d}.{m:02d}.{y}", "slashed": f"{d:02d}/{m:02d}/{y}"}[style]


def version(rng: random.Random) -> str:
    core = f"{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 12)}"
    return rng.choice((f"v{core}", core))


def price(rng: random.Random, style: str = "usd") -> str:
    whole, cents = rng.randint(3, 2999), rng.randint(0, 99)
    return {
        "usd": f"${whole:,}.{cents:02d}",
        "gbp": f"£{whole:,}.{cents:02d}",
        "eur": f"€{whole:,}.{cents:02d}",
        "eur_comma": f"{whole},{cents:02d} €",
        "rub": f"{whole} ₽",
        "cny": f"{whole}元",
        "jpy": f"{whole * 10:,}円",
    }[style]


def isbn13(rng: random.Random) -> str:
    body = "978" + str(rng.randint(0, 9)) + _digits(rng, 8)
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(body))
    check = (10 - total % 10) % 10
    return f"{body[:3]}-{body[3]}-{body[4:6]}-{body[6:]}-{check}"


def order_number(rng: random.Random) -> str:
    return rng.choice((f"{rng.choice('ABCKMZ')}-{_digits(rng, 6)}", f"{rng.randint(1, 9)}{_digits(rng, 9)}"))


def card_like(rng: random.Random) -> str:
    """16 digits grouped like a Visa number whose Luhn check fails."""
    valid = _luhn_complete("4" + _digits(rng, 14))
    wrong = valid[:-1] + str((int(valid[-1]) + rng.randint(1, 9)) % 10)
    return " ".join(wrong[i : i + 4] for i in range(0, 16, 4))


def iban_like(rng: random.Random) -> str:
    """An IBAN-shaped string whose mod-97 check fails (check digits off by a few)."""
    country = rng.choice(("DE", "GB", "FR"))
    bban = _BBAN[country](rng)
    good = int(_iban_check_digits(country, bban))
    bad = (good + rng.randint(1, 90)) % 97
    bad = bad if bad >= 2 else bad + 2
    compact = f"{country}{bad:02d}{bban}"
    if iban_valid(compact):  # pragma: no cover - two check-digit values can never both be valid
        compact = f"{country}{(bad + 1) % 97:02d}{bban}"
    return _space_iban(compact) if rng.random() < 0.5 else compact


def ssn_like(rng: random.Random) -> str:
    d = lambda n: _digits(rng, n)  # noqa: E731
    return rng.choice(
        (
            f"000-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}",
            f"666-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}",
            f"9{d(2)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}",
            f"{rng.randint(100, 599)}-00-{rng.randint(1000, 9999)}",
            f"{rng.randint(100, 599)}-{rng.randint(10, 99)}-0000",
        )
    )


def private_ip(rng: random.Random) -> str:
    return rng.choice(
        (
            f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            f"172.{rng.randint(16, 31)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            "127.0.0.1",
            "::1",
            f"fe80::{rng.randint(1, 0xFFFF):x}:{rng.randint(1, 0xFFFF):x}",
            f"fd{rng.randint(0, 255):02x}:{rng.randint(1, 0xFFFF):x}::{rng.randint(1, 0xFF):x}",
        )
    )


def decoy(rng: random.Random, kind: str, date_style: str = "iso", price_style: str = "usd") -> str:
    """One decoy value of ``kind`` (see ``DECOY_TYPES``)."""
    makers = {
        "date": lambda: date(rng, date_style),
        "version": lambda: version(rng),
        "price": lambda: price(rng, price_style),
        "isbn": lambda: isbn13(rng),
        "order_number": lambda: order_number(rng),
        "card_like": lambda: card_like(rng),
        "iban_like": lambda: iban_like(rng),
        "ssn_like": lambda: ssn_like(rng),
        "private_ip": lambda: private_ip(rng),
    }
    return makers[kind]()
