"""The PII redaction engine: pure text in, text and counts out (no pipeline, no config model).

Used by the PII stage (``pipeline.curate.pii``) and by the accounting code that redacts drop rows and
report examples (``pipeline.redact.rows``); it lives apart from the stage so that both import it at the top.

PII removal: replace personal data and credentials with deterministic, typed placeholders.

Why this is written by hand: datatrove's ``PIIFormatter`` covers e-mail and IPv4 only and rotates
through several replacement strings, so the same input gives different outputs (measured: one text
with an e-mail and a public IP gave three different results in three calls) — copies stop being
copies and dedup can no longer match them. Neither phones, cards, IBANs, SSNs nor secrets are
covered there. Here every detector (one module per type, as presidio's recognizers: its patterns, context
words and validation together) is a compiled regex that proposes candidates plus a cheap check in Python
(``ipaddress``, Luhn, GS1, ISO 7064 mod-97, SSN ranges, phone structure) that accepts them.

How overlaps are settled: detectors run in a fixed priority order (secret, email, iban, card, ssn,
ip_address, phone) on the original text; a candidate that overlaps an already accepted span is
discarded, and the text is rebuilt once at the end. So a card number is never half-replaced as a
phone, a placeholder is never matched again, and the result depends on the input only.

Context moves a candidate's score, Presidio-style, but only where structure alone cannot decide
(docs/pii.md lists every word and why; each detector's module says which words it reads).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pipeline.redact.card import CardDetector
from pipeline.redact.email import EmailDetector
from pipeline.redact.iban import IBANDetector
from pipeline.redact.ip import IPDetector
from pipeline.redact.numbers import number_windows
from pipeline.redact.phone import PhoneDetector
from pipeline.redact.secret import SecretDetector
from pipeline.redact.ssn import SSNDetector

PIIType = Literal["email", "ip_address", "phone", "card", "iban", "ssn", "secret"]
# priority order: an earlier type wins an overlap
PII_TYPES: tuple[PIIType, ...] = ("secret", "email", "iban", "card", "ssn", "ip_address", "phone")
DETECTORS = {
    "secret": SecretDetector,
    "email": EmailDetector,
    "iban": IBANDetector,
    "card": CardDetector,
    "ssn": SSNDetector,
    "ip_address": IPDetector,
    "phone": PhoneDetector,
}
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


def _lookalike_pattern(placeholders: dict[str, str]) -> tuple[str, re.Pattern, str] | None:
    """(opening, pattern, closing) of a bracketed text that looks like a placeholder, when every placeholder is
    wrapped in the same pair of non-ASCII brackets (the default ``⟨…⟩``); ``None`` for ASCII formats such as
    ``<{TYPE}>``, whose look-alikes are ordinary text anyway (the user chose them)."""
    values = list(placeholders.values())
    if not values:
        return None
    opening, closing = values[0][0], values[0][-1]
    if opening.isascii() or closing.isascii() or not all(v[0] == opening and v[-1] == closing for v in values):
        return None
    o, c = re.escape(opening), re.escape(closing)
    # up to 200 characters, line breaks included: groff wraps a long ⟨http://…⟩ across lines
    return opening, re.compile(f"{o}([^{o}{c}]{{1,200}}){c}"), closing


class Rules(Protocol):
    """What ``PIIRedactor`` reads of its rules: a ``RedactionRules``, or the recipe's ``PIIConfig`` (the same three
    fields; duck-typed, so this module stays pure)."""

    @property
    def types(self) -> Collection[str]: ...
    @property
    def placeholders(self) -> Mapping[Any, str]: ...  # PIIConfig's keys are PIIType, RedactionRules' str
    @property
    def public_ip_only(self) -> bool: ...


Finder = Callable[[str, list[tuple[int, int]]], Iterator[tuple[int, int]]]


class PIIRedactor:
    """The detectors and the replacement; pure Python, usable without a pipeline."""

    def __init__(self, config: Rules | None = None):
        self.config: Rules = config or RedactionRules()
        enabled = set(self.config.types)
        self.detectors: list[tuple[str, Finder]] = [
            (t, DETECTORS[t](self.config).find) for t in PII_TYPES if t in enabled
        ]
        self.placeholders: dict[str, str] = dict(self.config.placeholders)
        self.needs_numbers = bool(enabled & {"card", "ssn", "phone"})
        self._lookalike = _lookalike_pattern(self.placeholders)
        self._own = frozenset(self.placeholders.values())

    def _escape(self, text: str) -> str:
        """``text`` with bracketed look-alikes of the placeholders (groff's ``⟨ESC⟩``, ``⟨tab⟩``) written as
        ``<ESC>``, so that a ``⟨…⟩`` in the output is always a replacement; the placeholders themselves stay."""
        if self._lookalike is None or self._lookalike[0] not in text:
            return text
        _opening, pattern, _closing = self._lookalike
        return pattern.sub(lambda m: m.group() if m.group() in self._own else f"<{m.group(1)}>", text)

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        """Return the text with every accepted span replaced, and the count per type (non-zero only)."""
        text = self._escape(text)  # same length: only the two bracket characters of a look-alike change
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
        windows = number_windows(text) if self.needs_numbers else []
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


_default_redactor: PIIRedactor | None = None


def default_redactor() -> PIIRedactor:
    """The ``PIIRedactor`` with every type on, for what a run writes outside the kept text: drop rows, report
    examples. It does not depend on the recipe's ``pii`` section (also not on ``pii: null``): those rows are
    for people reading why a document went, never training data, so they are always redacted in full."""
    global _default_redactor
    if _default_redactor is None:
        _default_redactor = PIIRedactor()
    return _default_redactor
