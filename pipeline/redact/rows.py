"""What a run writes outside the kept text, redacted: drop rows, report examples, read-error details.

Those rows are for people reading why a document went, never training data, so they are always redacted in
full (``default_redactor``), whatever the recipe's ``pii`` section says; snippets are cut *after* redaction
so that no part of a value is shown.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.redact.engine import default_redactor
from pipeline.redact.names import redact_name
from pipeline.redact.url import redact_url

SNIPPET_CHARS = 300

# longer than any value written with spaces (a grouped IBAN is at most 42 characters, a phone with an
# extension about 30) and than the context a detector looks at around a value
REDACTION_MARGIN = 128
# a window is extended to the next whitespace so that no space-free value (a key, a token, an e-mail)
# straddles its end; a run of non-space characters longer than this is not a value and is cut anyway
MAX_TOKEN_CHARS = 4096
_WHITESPACE = re.compile(r"\s")
# a JSON \uXXXX escape (surrogate pairs included): a line that failed to parse keeps them, and
# ``ren\u00e9e@caf\u00e9.example`` is no e-mail address to the detector until it is decoded
_JSON_UNICODE_ESCAPES = re.compile(r"(?:\\u[0-9a-fA-F]{4})+")


def decode_json_escapes(text: str) -> str:
    """``text`` with its JSON ``\\uXXXX`` escapes decoded (an unpaired surrogate stays escaped). Other
    backslash sequences are kept: ``\\n`` in a Windows path or a TeX command is text, not an escape."""
    if "\\u" not in text:
        return text

    def decode(m: re.Match) -> str:
        try:
            decoded = json.loads(f'"{m.group()}"')
        except ValueError:
            return m.group()
        return m.group() if any("\ud800" <= ch <= "\udfff" for ch in decoded) else decoded

    return _JSON_UNICODE_ESCAPES.sub(decode, text)


def cut_at_token(text: str, limit: int, strict: bool = False) -> str:
    """``text[:limit]``, shortened to the last whitespace when the cut falls inside a run of non-space
    characters (half a placeholder or half a token is never shown). ``strict``: with no whitespace to go
    back to, return ``""`` instead of the cut run."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if not cut or cut[-1].isspace() or text[limit].isspace():
        return cut.rstrip()
    for i in range(len(cut) - 1, -1, -1):
        if cut[i].isspace():
            return cut[:i].rstrip()
    return "" if strict else cut


def _window_end(text: str, want: int) -> int:
    if want >= len(text):
        return len(text)
    found = _WHITESPACE.search(text, want, want + MAX_TOKEN_CHARS)
    return found.start() if found else min(len(text), want + MAX_TOKEN_CHARS)


def redacted_snippet(text: str, limit: int = SNIPPET_CHARS, redactor=None, complete: bool = True) -> str:
    """The first ``limit`` characters of ``text`` *after* redaction, with no part of a value left.

    Redacting a prefix and cutting it can show part of a value: one that straddles the window's end is not
    recognised, and placeholders shorter than their values pull it forward into the snippet. So the window
    (``limit + REDACTION_MARGIN``, extended to the next whitespace) is redacted and accepted only when its last
    ``REDACTION_MARGIN`` characters came back unchanged and the redacted text still reaches ``limit +
    REDACTION_MARGIN``: then the cut lies at least the margin before the window's end, before any value the
    end could have split. Otherwise the window doubles (at worst the whole text is redacted once more). The
    cut then goes back to a whitespace (``cut_at_token``).

    ``complete=False``: ``text`` is itself a cut prefix (the end is not the document's end), so it is never
    taken as "whole"; when it is too short to be safe, only its safe part (or nothing) is returned.
    ``redactor``: default ``default_redactor()``.
    """
    if not text:
        return ""
    text = decode_json_escapes(text)
    redactor = redactor or default_redactor()
    want = limit + REDACTION_MARGIN
    while True:
        end = _window_end(text, want)
        head = text[:end]
        redacted = redactor.redact(head)[0]
        at_end = end >= len(text)
        tail_unchanged = redacted.endswith(head[-REDACTION_MARGIN:])
        if at_end and complete:
            return cut_at_token(redacted, limit)
        if tail_unchanged and len(redacted) >= limit + REDACTION_MARGIN:
            return cut_at_token(redacted, limit, strict=not complete)
        if at_end:  # an incomplete text that cannot be shown in full: its part before the margin, or nothing
            safe = len(redacted) - REDACTION_MARGIN if tail_unchanged else 0
            return cut_at_token(redacted, max(0, min(limit, safe)), strict=True) if safe > 0 else ""
        want = 2 * end


def redact_fields(value: Any, limit: int = 1000, redactor=None) -> Any:
    """Strings in ``value`` (also inside lists and dicts) redacted and cut (``redacted_snippet``); other values
    as they are. Used for the extra fields of drop rows (read-error details, file names, ids of duplicates)."""
    if isinstance(value, str):
        return redacted_snippet(value, limit, redactor)
    if isinstance(value, dict):
        return {k: redact_fields(v, limit, redactor) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_fields(v, limit, redactor) for v in value]
    return value


# the fields of a drop row that name it rather than quote the document: labels tokenmill sets, kept as they are
ROW_KEYS_NOT_TEXT = frozenset({"source", "stage", "rule", "score"})
# file names and document ids: the components that hold a value are hashed (``redact_name``), so the row can
# still be traced back to its input by whoever has it
ROW_KEYS_NAMES = frozenset({"id", "file", "duplicate_of"})


def redact_row(row: dict[str, Any], redactor=None) -> dict[str, Any]:
    """A drop row (or a report example taken from one) with every text field redacted: ``url`` through
    ``redact_url``, ``snippet`` cut after redaction (``redacted_snippet``), every other string -- also inside
    lists and dicts -- through ``redact_fields``. ``ROW_KEYS_NOT_TEXT`` are kept as they are; ids and file
    names (``ROW_KEYS_NAMES``) go through ``redact_name``, which keeps them traceable.
    Idempotent: a redacted row comes back unchanged."""
    redactor = redactor or default_redactor()
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in ROW_KEYS_NOT_TEXT or value is None:
            out[key] = value
        elif key in ROW_KEYS_NAMES and isinstance(value, str):
            out[key] = redact_name(value, redactor)
        elif key == "url" and isinstance(value, str):
            out[key] = redact_url(value, redactor)
        elif key == "snippet" and isinstance(value, str):
            out[key] = redacted_snippet(value, redactor=redactor)
        else:
            out[key] = redact_fields(value, redactor=redactor)
    return out
