"""IP addresses: public IPv4 and IPv6 addresses (``ipaddress``), not versions or section numbers.

A dotted quad that starts a line and ends in ``.`` or ``)`` is a section or list number (``18.2.2.1. Scope``).

A version word (``version``, ``release``, ``upstream``, ``update`` …) before a dotted quad, or a Debian
revision after it (``-1``, ``+dfsg``, ``~rc1``), makes it a version, not an IP.
"""

from __future__ import annotations

import bisect
import ipaddress
import re
from collections.abc import Iterator
from functools import lru_cache

from pipeline.redact.numbers import after_last_digit

_ASCII_DIGITS = frozenset("0123456789")

_VERSION_WORDS = (
    r"version|versions|ver|release[sd]?|build|rev|revision|firmware|kernel|upstream|update[sd]?|updating"
    r"|upgrade[sd]?|upgrading|bump(?:ed|s)?|changelog|versi[óo]n|vers[ãa]o|versione|версия|версии"
    r"|policy|standards?|standards-version|complies with"  # Debian policy versions: Standards-Version 4.6.0.1
    r"|section|sections|sect|sec|chapter|clause|paragraph|rfc|spec|§"  # numbered sections: 8.2.4.44, 7.1.1.1
    # "section" in the languages of the man pages: Abschnitt, sectie, sección, sezione, seção, раздел …
    r"|abschnitt\w*|kapitel|sectie|hoofdstuk|secci[óo]n|cap[íi]tulo|sezione|capitolo|se[çc][ãa]o|sec[çc][ãa]o|rozdzia\w*"
    r"|раздел\w*|розділ\w*|глав\w*|avsnitt|afsnit|kohta|luku|fejezet\w*|sec[țt]iun\w*|b[öo]l[üu]m\w*|bagian"
)
# "(since dpkg 1.15.5.4)", "(sinds dpkg …)": the word, a package name, then its version; without the name
# ("desde 8.8.8.8" is "from 8.8.8.8") the number is an address
_SINCE_WORDS = r"since|seit|depuis|desde|sinds|sedan|siden|dal|dalla|od|начиная с|з|sejak|itibaren"
_IP_WORDS = r"ip|ips|ipv4|address|addr|host|hostname|server|dns|gateway|proxy|client|remote|peer|inet|nameserver"
# a substring of every version cue (lower case): the gate in front of the version-cue regex
_VERSION_HINTS: tuple[str, ...]
_VERSION_HINTS = (
    "ver",
    "rel",
    "build",
    "rev",
    "firm",
    "kern",
    "upst",
    "upd",
    "upg",
    "bump",
    "chang",
    "polic",
)
_VERSION_HINTS += ("stand", "compl", "sec", "chap", "claus", "parag", "rfc", "spec", "§", ">", "<", "=", "~")
_VERSION_HINTS += ("версия", "версии", "版本", "バージョン", "버전")
_VERSION_HINTS += ("abschn", "kapit", "secti", "hoofd", "secci", "capí", "capi", "sezio", "seçã", "seca", "rozdz")
_VERSION_HINTS += ("раздел", "розділ", "глав", "avsn", "afsn", "koht", "luku", "fejez", "secți", "böl", "bol")
_VERSION_HINTS += ("bagian", "since", "seit", "depuis", "desde", "sinds", "sedan", "siden", "dal", "od", "начин")
_VERSION_HINTS += ("з", "sejak", "itibaren")


class _Patterns:
    def __init__(self) -> None:
        a = re.ASCII
        # a dotted quad followed by ".label" is part of a host name (1.0.0.127.in-addr.arpa), not an address
        self.ipv4 = re.compile(r"\d(?<![\w.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?!\w|\.\w)", a)
        # what follows the first octet of every ``ipv4`` match (possessive: giving back a digit puts one where a dot
        # or the end must be, so the same matches). It starts on a dot, which the scan skips to in C: 7x faster than
        # ``ipv4``, which starts on a digit, on number-dense text (``_ipv4_matches``)
        self.ipv4_tail = re.compile(r"\.\d{1,3}+\.\d{1,3}+\.\d{1,3}+(?!\w|\.\w)", a)
        # an IPv6 address has "::" or eight groups (six before an IPv4 tail); "12:30:45" has neither. The pattern
        # below is searched only in the stretches of hex digits, colons and dots that have "::" or six colons
        # (``_ipv6_stretches``): a match lies inside one stretch, and one without either is never replaced
        self.ipv6_hint = re.compile(r"::|:(?:[0-9A-Fa-f.]*:){5}")
        self.stretch_start = re.compile(r"(?s).*[^0-9A-Fa-f:.]")  # from the right: where a stretch begins
        self.stretch = re.compile(r"[0-9A-Fa-f:.]*")
        self.ipv6 = re.compile(
            r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{0,4})(?![\w:])", a
        )
        self.version_cue = re.compile(
            rf"(?i)(?:(?<![^\W\d_])(?:{_VERSION_WORDS})(?![^\W\d_])|版本|バージョン|버전)[^\d]{{0,16}}$|(?:>=|<=|==|~=|>>|<<)\s*$"
            rf"|(?<![^\W\d_])(?:{_SINCE_WORDS})[ \t]+[^\W\d][\w.+\-]*[ \t]+$"
        )
        self.ip_cue = re.compile(rf"(?i)(?<![^\W\d_])(?:{_IP_WORDS})(?![^\W\d_])")
        # case-sensitive copies for an ASCII window written in lower case (the words are lower case): what (?i)
        # matches on ASCII text, 2x faster (the alternations' literals are then rejected on their first character)
        self.version_cue_lower = re.compile(self.version_cue.pattern.removeprefix("(?i)"))
        self.ip_cue_lower = re.compile(self.ip_cue.pattern.removeprefix("(?i)"))
        # the hint gate as one scan (the same substrings): ``any(hint in window …)`` over 60 hints cost 4x more
        self.version_hint = re.compile("|".join(map(re.escape, _VERSION_HINTS)))


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    return _Patterns()


def ip_replaceable(candidate: str, public_only: bool) -> bool:
    """A valid IPv4/IPv6 address that is public (or any valid address when ``public_only`` is off)."""
    if "." in candidate and ":" not in candidate:
        number = _ipv4_int(candidate)
        if number is None:
            return False
        if not public_only:
            return True
        if _in_ranges(number, _IPV4_NOT_PUBLIC):
            # fast path: logs are full of private addresses; ipaddress costs ~2 µs each (benchmarks/micro_timings.py)
            return False
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


def _quad_int(quad: str) -> int | None:
    """``_ipv4_int`` of what the ``ipv4`` pattern matched (four groups of 1–3 ASCII digits), in fewer steps."""
    a, b, c, d = map(int, quad.split("."))
    if a > 255 or b > 255 or c > 255 or d > 255:
        return None
    if "0" in quad and (quad[0] == "0" or ".0" in quad) and _ipv4_int(quad) is None:
        return None  # a leading zero ("010.1.1.1"), which ipaddress refuses
    return ((a * 256 + b) * 256 + c) * 256 + d


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


def _first_octets(ranges: list[tuple[int, int]]) -> tuple[frozenset[int], frozenset[int]]:
    """The first octets whose whole /8 lies in ``ranges``, and those of which only a part does."""
    whole: set[int] = set()
    part: set[int] = set()
    for low, high in ranges:
        for first in range(low >> 24, (high >> 24) + 1):
            covered = low <= first << 24 and ((first + 1) << 24) - 1 <= high
            (whole if covered else part).add(first)
    return frozenset(whole), frozenset(part - whole)


_FIRST_NOT_PUBLIC, _FIRST_PARTLY_PUBLIC = _first_octets(_IPV4_NOT_PUBLIC)
# as written in an address ("010" is no address at all)
_FIRST_NOT_PUBLIC_TEXT = frozenset(map(str, _FIRST_NOT_PUBLIC))


def _ipv4_not_public(number: int) -> bool:
    """``_in_ranges(number, _IPV4_NOT_PUBLIC)``, decided by the first octet where that decides (10., 127., 224.+)."""
    first = number >> 24
    if first in _FIRST_NOT_PUBLIC:
        return True
    return first in _FIRST_PARTLY_PUBLIC and _in_ranges(number, _IPV4_NOT_PUBLIC)


class IPDetector:
    """Dotted quads and IPv6 forms, accepted when public (``public_ip_only``) and not a version."""

    def __init__(self, rules) -> None:
        self.public_only = rules.public_ip_only
        self.p = _patterns()

    def find(self, text: str, _: list) -> Iterator[tuple[int, int]]:
        public_only = self.public_only
        if "." in text:
            # 10.x, 127.x, 224.x and up: never public, skipped on the text of their first octet (logs are full of them)
            for m in self._ipv4_matches(text, _FIRST_NOT_PUBLIC_TEXT if public_only else frozenset()):
                number = _quad_int(m.group())
                if number is None or (public_only and _ipv4_not_public(number)):
                    continue  # cheap: not an address, or a private one (logs are full of them)
                # then the version check, which is cheaper than ipaddress's checks of a public address
                if not self._is_version(text, *m.span()) and ip_replaceable(m.group(), public_only):
                    yield m.span()
        if text.count(":") >= 2:
            for pos, endpos in self._ipv6_stretches(text):
                for m in self.p.ipv6.finditer(text, pos, endpos):
                    candidate = m.group()
                    if ("::" in candidate or candidate.count(":") >= 6) and ip_replaceable(candidate, public_only):
                        yield m.span()

    def _ipv4_matches(self, text: str, skip: frozenset[str] = frozenset()) -> Iterator[re.Match]:
        """The matches of ``ipv4.finditer(text)``, found from their first dot; those whose first octet is written as
        one of ``skip`` left out.

        An ``ipv4`` match starts on a digit with no word character or dot before it, so no match starts inside
        another, and each is ``ipv4.match`` at its start: 1–3 digits before a dot where ``ipv4_tail`` matches. A tail
        match cannot cover the first dot of an address either (it would cover the character before the address,
        then a digit or a dot). So every address is ``ipv4.match`` at the start of the digits before a tail match.
        """
        match, digits = self.p.ipv4.match, _ASCII_DIGITS
        for tail in self.p.ipv4_tail.finditer(text):
            dot = tail.start()
            if not dot or text[dot - 1] not in digits:
                continue
            start = dot - 1
            if start and text[start - 1] in digits:
                start -= 1
                if start and text[start - 1] in digits:
                    start -= 1  # a fourth digit before: ``ipv4``'s lookbehind rejects it
            if skip and text[start:dot] in skip:
                continue
            m = match(text, start)
            if m:
                yield m

    def _ipv6_stretches(self, text: str) -> Iterator[tuple[int, int]]:
        """(start, end + 1) of every maximal stretch of ``[0-9A-Fa-f:.]`` with "::" or six colons, in order.

        The one character after a stretch is included so that the pattern's lookahead sees it, as in the whole
        text; its lookbehind sees before ``pos`` anyway. Searching the whole text instead cost as much as the IPv4
        scan on number-dense text, where every position is a hex digit and times hold colons.
        """
        covered = 0  # no match spans this position: the text's start, or the character after a stretch
        n = len(text)
        for hit in self.p.ipv6_hint.finditer(text):
            if hit.start() < covered:
                continue
            before = self.p.stretch_start.match(text, covered, hit.start())
            stretch = self.p.stretch.match(text, hit.end())  # matches the empty string too: never None here
            end = stretch.end() if stretch else hit.end()
            yield (before.end() if before else covered), min(n, end + 1)
            covered = end

    def _is_version(self, text: str, start: int, end: int) -> bool:
        """A dotted quad that is a version: Debian syntax around it, or a version word before it."""
        if start >= 2 and text[start - 1] == ":" and text[start - 2].isdigit():
            return True  # epoch: 1:2.4.1.0
        if end < len(text) and text[end] in ".)" and not text[text.rfind("\n", 0, start) + 1 : start].strip():
            return True  # a numbered heading or list item: "18.2.2.1. Scope", "1.2.3.4) …" at a line's start
        revision = end + 1 < len(text) and text[end] in "-+~" and text[end + 1].isalnum()
        if revision and not (text[end] == "-" and self.p.ipv4.match(text, end + 1)):  # 1.2.3.4-1.2.3.10: a range
            return True  # revision: 1.2.3.4-1, 1.2.3.4+dfsg, 1.2.3.4~rc1
        line_end = text.find("\n", end)
        if text.find("urgency=", end, line_end if line_end != -1 else len(text)) != -1:
            return True  # a Debian changelog header: pkg (4.8.6.3) unstable; urgency=medium
        low = after_last_digit(text, start, 40)
        before = max(0, low - 1)  # and the character before the window: the words' lookbehinds read it
        window = text[before:start]
        if window.isascii():
            lowered, low = window.lower(), low - before
            if not self.p.version_hint.search(lowered, low):
                return False  # cheap gate: the regex below costs ~50 µs on a 40-character window (measured once)
            cue = self.p.version_cue_lower.search(lowered, low)
            return cue is not None and not self.p.ip_cue_lower.search(lowered, cue.start())
        if not self.p.version_hint.search(text[low:start].lower()):
            return False
        cue = self.p.version_cue.search(text, low, start)
        return cue is not None and not self.p.ip_cue.search(text, cue.start(), start)
