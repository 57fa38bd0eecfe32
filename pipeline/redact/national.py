"""National phone formats of the 20 most populous countries, from libphonenumber's metadata (``phonenumbers``).

A number written without ``+`` is accepted as a phone when, for one of ``REGIONS``, libphonenumber says it is a
valid number **and** the author grouped its digits as that country writes them (``format_number(…,
NATIONAL)``: Brazil ``(11) 96123-4567``, Japan ``03-1234-5678``, Germany ``030 123456``, Mexico ``222 123
4567``): then the format is unambiguous and no cue word is needed. After a phone word, a valid number of
one of those countries in any grouping is a phone. Why the metadata and not hand-written plans: it is the
numbering plans' published reference, maintained per country; the structural rules in ``phone.py`` stay
the fast path, and this check runs only on what they leave (the cost per candidate is measured in docs/pii.md).

Regions are tried only where the digits can be one of their numbers (national prefix and possible lengths,
precomputed), against the metadata's compiled patterns (``_plans``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from phonenumbers import PhoneMetadata

# UN World Population Prospects 2024, the 20 most populous countries
REGIONS: tuple[str, ...]
REGIONS = (
    "IN",
    "CN",
    "US",
    "ID",
    "PK",
    "NG",
    "BR",
    "BD",
    "RU",
    "ET",
    "MX",
    "JP",
    "EG",
    "PH",
    "CD",
    "VN",
    "IR",
)
REGIONS += ("TR", "DE", "TH")
_GROUPS = re.compile(r"\d+")
# a format's pattern as phonenumbers writes it: capturing groups of digits, "(\d{2})(\d{3,4})"
_DIGIT_GROUP = re.compile(r"\(\\d(?:\{(?P<low>\d+)(?:(?P<comma>,)(?P<high>\d*))?\})?\)")
_DIGIT_GROUP_ROW = re.compile(rf"(?:{_DIGIT_GROUP.pattern})+")


@dataclass(frozen=True)
class _Format:
    leading: re.Pattern | None  # the number's first digits select the format
    pattern: re.Pattern  # the whole national significant number, in groups
    national: str  # the groups as the country writes them, national prefix included ("0\\1 \\2", "(\\1) \\2-\\3")
    # ``national`` split at its group references: literals at even indices, group numbers at odd ones (expanded
    # by hand: ``Match.expand`` parses its template on every call, a tenth of the phone detector's time)
    parts: tuple[str | int, ...]


@dataclass(frozen=True)
class _Plan:
    region: str
    prefix: str  # the national (trunk) prefix, "" where there is none
    lengths: frozenset[int]  # possible lengths of the national significant number
    valid: re.Pattern  # every valid national significant number (libphonenumber's general description)
    formats: tuple[_Format, ...]


@lru_cache(maxsize=1)
def _plans() -> tuple[_Plan, ...]:
    """libphonenumber's metadata of every region in ``REGIONS``, compiled once.

    Read from the metadata rather than through ``phonenumbers.parse``/``format_number``: those cost ~40 µs per
    call and region (measured: 6,500 calls on 300 KB of number-dense text, 1.8 s), a compiled pattern a few µs.
    """
    plans = []
    for region in REGIONS:
        metadata = PhoneMetadata.metadata_for_region(region)
        general = metadata.general_desc if metadata is not None else None
        if metadata is None or general is None or general.national_number_pattern is None:
            raise RuntimeError(f"phonenumbers has no national number metadata for region {region}")
        formats = []
        for fmt in metadata.number_format:
            national = fmt.format
            if national is None:
                raise RuntimeError(f"phonenumbers: a number format of region {region} has no format")
            if fmt.national_prefix_formatting_rule:
                national = national.replace("\\1", fmt.national_prefix_formatting_rule, 1)
            leading = re.compile(fmt.leading_digits_pattern[-1]) if fmt.leading_digits_pattern else None
            parts = tuple(int(p) if i % 2 else p for i, p in enumerate(re.split(r"\\(\d)", national)))
            formats.append(_Format(leading, re.compile(fmt.pattern), national, parts))
        plans.append(
            _Plan(
                region,
                metadata.national_prefix or "",
                frozenset(general.possible_length or ()),
                re.compile(general.national_number_pattern),
                tuple(formats),
            )
        )
    return tuple(plans)


@lru_cache(maxsize=1)
def _by_length() -> dict[int, list[tuple[_Plan, int]]]:
    """Digit count → (plan, length of the national prefix to strip): the only combinations worth a pattern."""
    out: dict[int, list[tuple[_Plan, int]]] = {}
    for plan in _plans():
        for length in plan.lengths:
            out.setdefault(length, []).append((plan, 0))
            if plan.prefix:
                out.setdefault(length + len(plan.prefix), []).append((plan, len(plan.prefix)))
    return out


@lru_cache(maxsize=1)
def _written_forms() -> dict[int, frozenset[tuple[tuple[int, ...], bool]] | None]:
    """Digit count → every (group lengths, bracket or not) that a format of a plan in ``_by_length`` can write, or
    None where a format's pattern is not a row of digit groups (then every grouping is worth the full check).

    Without a cue, a candidate is a phone only when its grouping is such a form (``national_phone``): the check
    against this set replaces the per-plan patterns for most candidates (ISBNs, ids grouped otherwise)."""
    out: dict[int, frozenset[tuple[tuple[int, ...], bool]] | None] = {}
    for length, entries in _by_length().items():
        forms: set[tuple[tuple[int, ...], bool]] = set()
        for plan, prefix_length in entries:
            for fmt in plan.formats:
                found = _format_groupings(fmt, length - prefix_length)
                if found is None:
                    break
                forms |= found
            else:
                continue
            out[length] = None
            break
        else:
            out[length] = frozenset(forms)
    return out


def _format_groupings(fmt: _Format, size: int) -> set[tuple[tuple[int, ...], bool]] | None:
    """The (group lengths, bracket) of ``fmt``'s national form for every split of ``size`` digits its pattern
    admits; None unless the pattern is a row of digit groups (``(\\d{2})(\\d{3,4})``, every format of the 20
    countries in phonenumbers 9.0)."""
    if not _DIGIT_GROUP_ROW.fullmatch(fmt.pattern.pattern):
        return None
    widths = []
    for group in _DIGIT_GROUP.finditer(fmt.pattern.pattern):
        low = int(group["low"] or 1)
        high = low if group["comma"] is None else int(group["high"] or size)  # \d, \d{3}, \d{3,4}, \d{3,}
        widths.append(range(low, min(size, high) + 1))
    out = set()
    for split in itertools.product(*widths):
        if sum(split) == size:
            # parts alternate literal text (str) and group numbers (int)
            written = "".join(part if isinstance(part, str) else "1" * split[part - 1] for part in fmt.parts)
            out.add((tuple(_group_lengths(written)), "(" in written))
    return out


def _group_lengths(text: str) -> list[int]:
    return [len(g) for g in _GROUPS.findall(text)]


def _national_form(plan: _Plan, nsn: str) -> str | None:
    """``nsn`` written as the country writes it nationally (libphonenumber's first matching format)."""
    for fmt in plan.formats:
        if fmt.leading is not None and not fmt.leading.match(nsn):
            continue
        m = fmt.pattern.fullmatch(nsn)
        if m:
            # parts alternate literal text (str) and group numbers (int)
            return "".join(part if isinstance(part, str) else (m.group(part) or "") for part in fmt.parts)
    return None


def _unambiguous(candidate: str, written: list[int], digits: str) -> bool:
    """A grouping that reads as a phone without a cue word: at least 9 digits in 2+ groups, and three groups,
    a bracketed area code or a leading trunk digit (0/8); not a year range. 8-digit local numbers (Brazil's
    ``2345-6789``) and two plain groups (``2003 0523``, ``2001-2007``) are ids and dates as often: cue only."""
    if len(written) < 2 or len(digits) < 9:
        return False
    if len(written) == 2 and written[0] == 4 and digits[:2] in ("19", "20"):
        return False
    return len(written) >= 3 or "(" in candidate or digits[0] in "08"


def national_phone(candidate: str, digits: str, cue: bool) -> bool:
    """``candidate`` (as written, ``digits`` its digits) is a valid national number of one of ``REGIONS``,
    grouped as that country formats it (or in any grouping when ``cue``: a phone word stands before it)."""
    if "/" in candidate:
        return False  # RFC 2047/2243, 1/2: no national format uses a slash
    written = _group_lengths(candidate)
    if not cue:
        if not _unambiguous(candidate, written, digits):
            return False
        forms = _written_forms().get(len(digits))
        if forms is not None and (tuple(written), "(" in candidate) not in forms:
            return False  # no format of any plan writes this grouping (the loop below would find none)
    for plan, prefix_length in _by_length().get(len(digits), ()):
        if prefix_length and not digits.startswith(plan.prefix):
            continue
        nsn = digits[prefix_length:]
        if not plan.valid.fullmatch(nsn):
            continue
        if cue:
            return True
        formatted = _national_form(plan, nsn)
        # same groups as the written form (so also its national prefix, or its absence), same brackets
        if formatted is not None and _group_lengths(formatted) == written and ("(" in formatted) == ("(" in candidate):
            return True
    return False
