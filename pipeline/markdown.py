"""How a name that came from the input (a file name, a document id, a URL, an eval item) is put into report.md.

Such names are whatever the input says: a file called ``*x*.txt`` or ``[click](http://…).txt`` would render as
emphasis or a link, a backtick would end the code span around it, a ``|`` would split a table cell, and an
escape sequence (``\\x1b[2J`` in a file name) would reach a terminal that ``cat``s the report. So every such
name goes through ``md_code`` (a code span: nothing in it is Markdown) or ``md_text`` (plain text with the
Markdown punctuation escaped), and both first make control characters visible as ``\\xNN`` (``show_controls``).
"""

from __future__ import annotations

import re
import unicodedata

#: the characters CommonMark lets a backslash escape that can start or end Markdown syntax
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~^=&$%:\"'])")
_AUTOLINK = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>`\\]*$")


def _visible(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8 (surrogate escape, PEP 383)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def show_controls(text: str) -> str:
    """``text`` with control, format (bidi overrides), separator and surrogate characters shown as ``\\xNN``
    (``\\uNNNN`` above U+00FF); a space stays a space."""
    return "".join(
        ch if ch == " " or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") else _visible(ch)
        for ch in text
    )


def md_code(value: object, table: bool = False) -> str:
    """``value`` as a Markdown code span, whatever backticks it holds (the fence is one longer than its longest
    run); ``table``: inside a table cell, where ``|`` must be escaped even in a code span (GFM)."""
    text = show_controls(str(value))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.strip()):
        text = f" {text} "
    if table:
        text = text.replace("|", "\\|")
    return f"{fence}{text}{fence}" if text else "` `"


def md_text(value: object) -> str:
    """``value`` as plain Markdown text: every punctuation character that could open Markdown syntax is
    backslash-escaped (``|`` too, so it is safe in a table cell)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", show_controls(str(value)))


def md_url(url: object) -> str:
    """A URL as an autolink ``<url>`` when it is a plain one, else as a code span (nothing in it renders)."""
    text = str(url)
    return f"<{text}>" if _AUTOLINK.match(text) and text.isprintable() else md_code(text)


def printable(text: str) -> str:
    """Control and other unprintable characters (a binary payload's snippet) shown as U+FFFD, so report.md
    stays a text file that viewers and ``grep`` treat as text."""
    return "".join(ch if ch.isprintable() or ch == " " else "\ufffd" for ch in text)


def markdown_table(columns: tuple[str, ...], align: str, rows: list[list[str]]) -> list[str]:
    """A markdown table as lines: the header, the ``align`` row (e.g. ``|---|---:|``), one line per row of cells."""
    return ["| " + " | ".join(columns) + " |", align, *("| " + " | ".join(row) + " |" for row in rows)]
