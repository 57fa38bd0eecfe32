"""FineWeb's own rules (Penedo et al. 2024, section 3): the paper's comparisons by default, datatrove's
``FineWebQualityFilter`` under ``compat: datatrove`` (strict comparisons, its defaults, its list-ratio rule)."""

from __future__ import annotations

from typing import Any

from pipeline.curate.config import CLOSING_BRACKETS, COLONS, FineWebConfig
from pipeline.curate.quality.document import NO_SENTENCE_MARK_LANGUAGES, Failure, Text
from pipeline.curate.quality.gopher_repetition import find_duplicates
from pipeline.curate.quality.novelty import adjacent_copies, novel_word_share
from pipeline.text import terminal_punctuation

#: FineWeb's "lines ending with punctuation" adds closing quotes and the Tibetan shad to datatrove's marks.
FINEWEB_EXTRA_STOP_CHARS = ('"', "”", "»", "」", "』", "།", "༎")

SKIP_FW_PUNCT = "fineweb_line_punct_ratio"


class FineWebRules:
    """FineWeb's three rules (Penedo et al. 2024, section 3): drop when lines ending in punctuation are <= 12 %,
    when lines shorter than 30 characters are >= 67 %, when characters in duplicated lines are >= 10 %.
    Compat: datatrove's strict comparisons (< 0.12, <= 30 characters and > 0.67, > 0.01) and its list-ratio rule."""

    def __init__(self, cfg: FineWebConfig, compat: bool = False):
        if cfg.stop_chars is not None:
            chars: tuple[str, ...] = tuple(cfg.stop_chars)
        elif compat:
            chars = terminal_punctuation()
        else:
            chars = tuple(sorted(set(terminal_punctuation()) | set(FINEWEB_EXTRA_STOP_CHARS)))
        if cfg.colon_lines:  # the lines C4's colon_lines keeps are judged as ending in punctuation here too
            chars = tuple(sorted(set(chars) | set(COLONS)))
        self.single_chars = frozenset(chars) if all(len(c) == 1 for c in chars) else None
        self.stop_chars = chars
        self.compat = compat
        # the lines C4's closing_brackets keeps ("… below.)") are judged as ending in punctuation here too
        self.closers = CLOSING_BRACKETS if cfg.closing_brackets else ""

    def _ends(self, line: str) -> bool:
        if self._ends_in_mark(line):
            return True
        if not self.closers:
            return False
        end = line.rstrip(self.closers)  # a mark that is itself a closer (「…」) ended the line above
        return end != line and bool(end) and self._ends_in_mark(end)

    def _ends_in_mark(self, line: str) -> bool:
        if self.single_chars is not None:  # one set lookup instead of endswith over 159 marks
            return line[-1] in self.single_chars
        return line.endswith(self.stop_chars)

    def __call__(self, doc: Text, cfg: FineWebConfig, metrics: dict[str, Any]) -> Failure | None:
        text, compat = doc.text, self.compat
        if compat:
            lines = [line for line in text.split("\n") if line.strip() != ""]
        else:
            lines = [line for line in map(str.strip, text.split("\n")) if line]
        if not lines:
            return "no_text", None
        ratio = sum(1 for line in lines if self._ends(line)) / len(lines)
        metrics["line_punct_ratio"] = round(ratio, 4)
        if cfg.line_punct_thr is not None and doc.language in NO_SENTENCE_MARK_LANGUAGES:
            doc.skip(SKIP_FW_PUNCT)
        elif (
            cfg.line_punct_thr is not None
            and (ratio < cfg.line_punct_thr if compat else ratio <= cfg.line_punct_thr)
            and not (ratio == 0 and cfg.line_punct_exclude_zero)
        ):
            return "fineweb_line_punct_ratio", ratio
        if compat:
            ratio = sum(1 for line in lines if len(line) <= cfg.short_line_length) / len(lines)
        else:
            ratio = sum(1 for line in lines if len(line) < cfg.short_line_length) / len(lines)
        metrics["short_line_ratio"] = round(ratio, 4)
        judged = cfg.short_line_languages is None or doc.language in cfg.short_line_languages
        if (
            cfg.short_line_thr is not None
            and judged
            and (ratio > cfg.short_line_thr if compat else ratio >= cfg.short_line_thr)
        ):
            return "fineweb_short_line_ratio", ratio
        ratio = find_duplicates(lines)[1] / max(len(text) - text.count("\n"), 1)
        metrics["char_dup_ratio"] = round(ratio, 4)
        if cfg.char_duplicates_ratio is not None and (
            ratio > cfg.char_duplicates_ratio if compat else ratio >= cfg.char_duplicates_ratio
        ):
            # a copy right after its line, in the page as written: C4's rewrite removes the headings between
            # entries, which would make one entry's note line follow the previous entry's; a heading that C4
            # removed is not a line this rule judges
            if compat or cfg.min_novel_words is None or _copied_line(lines, doc.original):
                return "fineweb_char_dup_ratio", ratio
            # repeated lines that frame new words: a reference page's entries. Counted on the page as extracted, as
            # Gopher's rules (which run before C4) count it: the rewrite removes the entries' own lines (a member's
            # name, its unpunctuated "Returns:" value) and leaves javadoc's summary and details as each sentence
            # twice, no word outside the repeats
            novel = novel_word_share(doc.original)
            metrics["novel_words"] = round(novel, 4)
            if novel < cfg.min_novel_words:
                return "fineweb_char_dup_ratio", ratio
        if cfg.new_line_ratio is not None and doc.words:
            ratio = text.count("\n") / len(doc.words)
            metrics["list_ratio"] = round(ratio, 4)
            if ratio > cfg.new_line_ratio:
                return "fineweb_list_ratio", ratio
        return None


def _copied_line(lines: list[str], original: str) -> bool:
    """Whether lines of ``lines`` (the lines the rule judges) that directly follow a copy of themselves in
    ``original`` are a paste or a loop (``novelty.adjacent_copies``)."""
    judged = set(lines)
    written = [line for line in map(str.strip, original.split("\n")) if line]
    return adjacent_copies([line if line in judged else "" for line in written], len(original))
