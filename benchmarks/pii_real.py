"""PII detection measured on real documents of this machine, with values written in each document's language.

The second evaluation set, beside the standards-built one (``pii_standards.py`` / ``pii_eval.py``). Built at
run time, nothing vendored:

- **documents**: the man pages installed for each language under ``/usr/share/man/<lang>/`` (rendered with
  ``man -l``, as a reader sees them), the first ``--pages`` of each language in sorted order; a language with
  fewer than 3 pages is skipped with a printed reason;
- **planted values** (``--per-type`` per language and type), each written as a person of that language writes
  it, with the language's own words around it: the country's phone numbers in its national format
  (``phonenumbers``' example numbers with random subscriber digits, kept only when valid) or
  internationally, half after the language's word for "phone" and half without one (only the unambiguous
  forms: international, or national with a trunk prefix or bracketed area code); cards of every brand and
  Luhn-valid numbers with no brand after the language's word for "card" (spaced, dashed, dotted, split
  across a line); the country's IBAN (grouped, compact, lower case); e-mail addresses made of words of the
  document itself (a CJK document gets romanised names: CJK local parts are not matched); US SSNs with
  dashes or spaces; public IPs; secret families and assignments. Each value is put on its own line at a
  random paragraph boundary of a real page; it counts as found when the redactor replaces exactly it, with
  its type;
- **clean text**: the same pages without plants (every placeholder but e-mail is false: man pages name
  their authors' addresses), and number-dense files every Debian system has (``/usr/share/zoneinfo``'s
  ``tzdata.zi`` and ``*.tab``, ``/etc/services``, upstream ``changelog.gz`` files).

    python benchmarks/pii_real.py [--pages 40] [--per-type 30] [--seed 0] [--show 10] [--speed]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import os
import random
import re
import string
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: F401  (the repository on sys.path, telemetry off)
import phonenumbers
import pii_standards as S

from pipeline.redact import IBAN_LENGTHS, PIIRedactor

MAN = Path("/usr/share/man")
OVERSTRIKE = re.compile(r".\x08")
TYPES = ("email", "phone", "card", "iban", "ssn", "ip_address", "secret")


@dataclass(frozen=True)
class Language:
    """How a person of this language writes the values: the words before them and the country's formats."""

    man: str  # folder under /usr/share/man
    region: str  # phone numbering plan and IBAN country
    phone: str
    card: str
    email: str
    ip: str
    ssn: str
    cjk: bool = False


LANGUAGES = (
    Language("de", "DE", "Telefon:", "Kreditkarte", "E-Mail:", "Server-Adresse", "US-Sozialversicherungsnummer"),
    Language("fr", "FR", "Téléphone :", "carte bancaire", "courriel :", "adresse IP", "numéro SSN américain"),
    Language("es", "ES", "Teléfono:", "tarjeta", "correo:", "dirección IP", "número SSN"),
    Language("it", "IT", "Telefono:", "carta di credito", "e-mail:", "indirizzo IP", "numero SSN"),
    Language("pt_BR", "BR", "Telefone:", "cartão", "e-mail:", "endereço IP", "número SSN"),
    Language("pt", "PT", "Telefone:", "cartão", "e-mail:", "endereço IP", "número SSN"),
    Language("pl", "PL", "Telefon:", "karta", "e-mail:", "adres IP", "numer SSN"),
    Language("ru", "RU", "Телефон:", "карта", "эл. почта:", "IP-адрес", "номер SSN"),
    Language("uk", "UA", "Телефон:", "картка", "ел. пошта:", "IP-адреса", "номер SSN"),
    Language("nl", "NL", "Telefoon:", "creditcard", "e-mail:", "IP-adres", "SSN-nummer"),
    Language("sv", "SE", "Telefon:", "kortnummer", "e-post:", "IP-adress", "SSN"),
    Language("da", "DK", "Telefon:", "kortnummer", "e-mail:", "IP-adresse", "SSN"),
    Language("fi", "FI", "Puhelin:", "kortin numero", "sähköposti:", "IP-osoite", "SSN"),
    Language("cs", "CZ", "Telefon:", "platební karta", "e-mail:", "IP adresa", "číslo SSN"),
    Language("hu", "HU", "Telefon:", "bankkártya", "e-mail:", "IP-cím", "SSN szám"),
    Language("ro", "RO", "Telefon:", "card", "e-mail:", "adresa IP", "număr SSN"),
    Language("tr", "TR", "Telefon:", "kredi kartı", "e-posta:", "IP adresi", "SSN numarası"),
    Language("id", "ID", "Telepon:", "kartu kredit", "surel:", "alamat IP", "nomor SSN"),
    Language("ja", "JP", "電話:", "カード番号", "メール:", "IPアドレス", "SSN", cjk=True),
    Language("ko", "KR", "전화:", "카드 번호", "이메일:", "IP 주소", "SSN", cjk=True),
    Language("zh_CN", "CN", "电话:", "信用卡", "邮箱:", "IP地址", "SSN", cjk=True),
)
ROMAN_NAMES = ("zhang.wei", "li.na", "wang.fang", "tanaka.yuki", "sato.haruto", "kim.minjun", "park.jiwoo")
IBAN_FALLBACK = "DE"  # countries without an IBAN (JP, KR, CN, ID): their people pay into a German account here


def render(path: Path) -> str:
    """A man page as ``man -l`` prints it to a file (no pager, no hyphenation, 90 columns)."""
    env = {**os.environ, "MANWIDTH": "90", "MAN_KEEP_FORMATTING": "0", "LANG": "C.UTF-8", "MANPAGER": "cat"}
    done = subprocess.run(
        ["man", "--no-hyphenation", "--no-justification", "-l", str(path)],
        capture_output=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    # overstrike bold/underline (``_\bw``, ``w\bw``) as ``col -b`` removes it
    return OVERSTRIKE.sub("", done.stdout.decode("utf-8", "replace"))


def pages(language: Language, limit: int) -> list[tuple[str, str]]:
    folder = MAN / language.man
    files = sorted(p for p in folder.glob("man*/*.gz") if p.is_file()) if folder.is_dir() else []
    out = []
    for path in files:
        text = render(path)
        if len(text) >= 2000:  # a stub page (".so" to another) says nothing
            out.append((f"{language.man}/{path.name}", text))
        if len(out) >= limit:
            break
    return out


# ---------------------------------------------------------------------------------------------------
# values, as a person of the language writes them
# ---------------------------------------------------------------------------------------------------


def phone_value(rng: random.Random, region: str, cued: bool) -> str:
    fmt = phonenumbers.PhoneNumberFormat
    for _ in range(50):
        kind = rng.choice((phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE))
        example = phonenumbers.example_number_for_type(region, kind)
        if example is None:
            continue
        national = str(example.national_number)
        body = national[:-4] + "".join(rng.choice(string.digits) for _ in range(4))
        number = phonenumbers.parse(body, region) if not body.startswith("0") else example
        if not phonenumbers.is_valid_number(number):
            continue
        written_national = phonenumbers.format_number(number, fmt.NATIONAL)
        written_intl = phonenumbers.format_number(number, fmt.INTERNATIONAL)
        if cued:
            return rng.choice((written_national, written_national, written_intl))
        prefix = phonenumbers.PhoneMetadata.metadata_for_region(region).national_prefix or "("
        unambiguous = written_national.startswith((prefix, "(")) and len(re.findall(r"\d+", written_national)) > 2
        return written_national if unambiguous and rng.random() < 0.6 else written_intl
    raise RuntimeError(f"no valid number for {region}")


def _luhn_complete(body: str) -> str:
    return body + S.luhn_digit(body)


def card_value(rng: random.Random) -> tuple[str, bool]:
    """(value, needs a card word): a brand's card, or a Luhn-valid number outside the brand table."""
    if rng.random() < 0.3:
        digits = _luhn_complete(rng.choice("1789") + "".join(rng.choice(string.digits) for _ in range(14)))
        branded = False
    else:
        digits = S.card_number(rng, rng.choice(S.CARD_BRANDS))
        branded = True
    groups, pos = [], 0
    for size in S.CARD_GROUPINGS[len(digits)]:  # as cards are printed: 4-4-4-4, 4-6-5, 4-4-4-4-3 …
        groups.append(digits[pos : pos + size])
        pos += size
    style = rng.choice(("space", "dash", "bare", "dot", "split") if len(digits) == 16 else ("space", "dash", "bare"))
    if style == "bare":
        return digits, not branded
    if style == "split":
        return " ".join(groups[:2]) + "\n" + " ".join(groups[2:]), not branded
    sep = {"space": " ", "dash": "-", "dot": "."}[style]
    return sep.join(groups), not branded


def iban_value(rng: random.Random, country: str) -> str:
    country = country if country in IBAN_LENGTHS else IBAN_FALLBACK
    bban = "".join(rng.choice(string.digits) for _ in range(IBAN_LENGTHS[country] - 4))
    compact = S.iban_check(country, bban)
    grouped = " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    return rng.choice((grouped, compact, grouped.lower(), grouped))


def email_value(rng: random.Random, words: list[str], cjk: bool) -> str:
    if cjk or len(words) < 3:
        local = rng.choice(ROMAN_NAMES)
    else:
        local = f"{rng.choice(words)}.{rng.choice(words)}" + (f"+{rng.choice(words)}" if rng.random() < 0.2 else "")
    domain = rng.choice(words) if words and not cjk else "example"
    return f"{local}@{domain}.example"


def secret_value(rng: random.Random) -> tuple[str, str]:
    """(line, the secret in it)."""
    alnum = string.ascii_letters + string.digits
    token = "".join(rng.choice(alnum) for _ in range(24))
    kind = rng.randrange(8)
    if kind == 0:
        value = "sk_live_" + token
    elif kind == 1:
        value = "AIza" + "".join(rng.choice(alnum + "-_") for _ in range(35))
    elif kind == 2:
        value = "sk-proj-" + token + "".join(rng.choice(alnum) for _ in range(20))
    elif kind == 3:
        value = "SG." + token[:22] + "." + "".join(rng.choice(alnum) for _ in range(43))
    elif kind == 4:
        value = f"T{rng.randrange(10**8):08d}/B{rng.randrange(10**8):08d}/{token}"
        return f"https://hooks.slack.com/services/{value}", value
    elif kind == 5:
        return f"export API_TOKEN={token}", token
    elif kind == 6:
        return f"api_key = {token}", token
    else:
        value = "ghp_" + token + "".join(rng.choice(alnum) for _ in range(12))
    return value, value


def planted_line(rng: random.Random, language: Language, kind: str, words: list[str]) -> tuple[str, str]:
    """(the line put into the page, the value in it)."""
    if kind == "phone":
        cued = rng.random() < 0.5
        value = phone_value(rng, language.region, cued)
        return (f"{language.phone} {value}" if cued else value), value
    if kind == "card":
        value, needs_word = card_value(rng)
        return (f"{language.card}: {value}" if needs_word or rng.random() < 0.5 else value), value
    if kind == "iban":
        value = iban_value(rng, language.region)
        return f"IBAN: {value}", value
    if kind == "email":
        value = email_value(rng, words, language.cjk)
        return f"{language.email} {value}", value
    if kind == "ssn":
        area, group, serial = rng.randint(1, 665), rng.randint(1, 99), rng.randint(1, 9999)
        sep = rng.choice("- ")
        value = f"{area:03d}{sep}{group:02d}{sep}{serial:04d}"
        return f"{language.ssn}: {value}", value
    if kind == "ip_address":
        value = str(S.gen_ip(rng)[1])
        return f"{language.ip}: {value}", value
    line, value = secret_value(rng)
    return line, value


WORD = re.compile(r"[^\W\d_]{3,12}")


def plant(rng: random.Random, text: str, line: str) -> tuple[str, int]:
    """``text`` with ``line`` on its own line at a random paragraph boundary; the offset of the line."""
    breaks = [m.end() for m in re.finditer(r"\n\n", text)] or [len(text)]
    at = rng.choice(breaks)
    return text[:at] + line + "\n\n" + text[at:], at


def recall(redactor: PIIRedactor, docs: dict[str, list[tuple[str, str]]], per_type: int, seed: int, show: int):
    hits: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    shown = 0
    for language in LANGUAGES:
        pages_ = docs.get(language.man)
        if not pages_:
            continue
        rng = random.Random(f"{seed}-{language.man}")
        for kind in TYPES:
            for _ in range(per_type):
                name, text = rng.choice(pages_)
                words = sorted({w.lower() for w in WORD.findall(text[:5000]) if w.lower().isalpha()})
                line, value = planted_line(rng, language, kind, words)
                planted, at = plant(rng, text, line)
                start = at + line.index(value)
                found = (start, start + len(value), kind) in redactor.find(planted)
                hits[(kind, language.man)][0] += found
                hits[(kind, language.man)][1] += 1
                if not found and shown < show:
                    around = planted[max(0, start - 40) : start + len(value) + 20]
                    print(f"  missed {kind:10s} {name}: {line!r} in {around!r}")
                    shown += 1
    return hits


def number_dense_files() -> list[tuple[str, str]]:
    out = []
    for path in sorted(Path("/usr/share/zoneinfo").glob("*.tab")) + [Path("/usr/share/zoneinfo/tzdata.zi")]:
        if path.is_file():
            out.append((str(path), path.read_text("utf-8", "replace")))
    if Path("/etc/services").is_file():
        out.append(("/etc/services", Path("/etc/services").read_text("utf-8", "replace")))
    for path in sorted(Path("/usr/share/doc").glob("*/changelog.gz"))[:60]:  # upstream changelogs
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as handle:
            out.append((str(path), handle.read(200_000)))
    return out


def false_per_100kb(redactor: PIIRedactor, docs: list[tuple[str, str]], show: int) -> tuple[float, int, str]:
    size, false, by_type, shown = 0, 0, collections.Counter(), 0
    for name, text in docs:
        size += len(text.encode("utf-8"))
        for start, end, kind in redactor.find(text):
            by_type[kind] += 1
            if kind != "email":
                false += 1
                if shown < show:
                    print(f"  false {kind:10s} {name}: {text[start:end]!r} in {text[max(0, start - 30) : end + 15]!r}")
                    shown += 1
    kb = size / 1000
    return (false / kb * 100 if kb else 0.0), false, ", ".join(f"{k} {v}" for k, v in sorted(by_type.items()))


def speed(redactor: PIIRedactor, text: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        redactor.redact(text)
        best = min(best, time.process_time() - start)
    return len(text.encode("utf-8")) / 1e6 / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=40, help="man pages per language (sorted, the first N)")
    parser.add_argument("--per-type", type=int, default=30, help="planted values per language and type")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=0, help="print this many misses and false placeholders")
    parser.add_argument("--speed", action="store_true", help="also print PIIRedactor.redact MB/s (one core)")
    args = parser.parse_args()

    docs: dict[str, list[tuple[str, str]]] = {}
    for language in LANGUAGES:
        found = pages(language, args.pages)
        if len(found) < 3:
            print(f"skipped {language.man}: {len(found)} man pages of 2,000+ characters on this machine (need 3)")
            continue
        docs[language.man] = found
    redactor = PIIRedactor()
    hits = recall(redactor, docs, args.per_type, args.seed, args.show)

    rows: list[tuple[str, str, str]] = []
    for kind in TYPES:
        found = sum(hits[(kind, lang)][0] for lang in docs)
        total = sum(hits[(kind, lang)][1] for lang in docs)
        worst = min(docs, key=lambda lang: hits[(kind, lang)][0] / max(1, hits[(kind, lang)][1]))
        w_found, w_total = hits[(kind, worst)]
        rows.append((f"recall {kind}", f"{found / total:.3f} ({found}/{total})", f"lowest {worst} {w_found}/{w_total}"))
    man_text = [page for pages_ in docs.values() for page in pages_]
    rate, false, detail = false_per_100kb(redactor, man_text, args.show)
    size = sum(len(t.encode()) for _, t in man_text) / 1000
    rows.append(("false per 100 KB: man pages", f"{rate:.2f} ({false} in {size:,.0f} KB)", detail or "none"))
    dense = number_dense_files()
    rate, false, detail = false_per_100kb(redactor, dense, args.show)
    size = sum(len(t.encode()) for _, t in dense) / 1000
    rows.append(("false per 100 KB: number-dense files", f"{rate:.2f} ({false} in {size:,.0f} KB)", detail or "none"))
    if args.speed:
        rows.append(("redact MB/s: man pages", f"{speed(redactor, ''.join(t for _, t in man_text)):.2f}", ""))
        rows.append(("redact MB/s: number-dense files", f"{speed(redactor, ''.join(t for _, t in dense)):.2f}", ""))

    print(f"languages: {len(docs)} ({', '.join(f'{k} {len(v)}' for k, v in docs.items())} pages)")
    header = ("measure", "value", "detail")
    widths = [max(len(r[i]) for r in [*rows, header]) for i in range(3)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
