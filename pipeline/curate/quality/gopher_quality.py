"""Gopher's quality rules (Rae et al. 2021, appendix A): the paper's definitions on whitespace-separated words
(``gopher_quality``) and datatrove's ``GopherQualityFilter`` on spaCy-style tokens beside them
(``gopher_quality_datatrove``, the ``compat: datatrove`` mode)."""

from __future__ import annotations

from itertools import filterfalse
from typing import Any

import regex

from pipeline.curate.config import GopherQualityConfig
from pipeline.curate.quality.document import Failure, Text
from pipeline.curate.quality.stop_words import STOP_WORDS, SUBSTRING_STOP_WORD_LANGUAGES, stop_word_matcher
from pipeline.text import looks_like_code, unspaced_units, whitespace_words, word_stats

#: Gopher's "bullet point": the bullet characters, and '-' / '*' that plain text and Markdown use for them.
BULLETS = ("•", "‣", "◦", "⁃", "▪", "●", "-", "*")

SKIP_AVG = "gopher_avg_word_length"
SKIP_STOP = "gopher_enough_stop_words"

_HAS_LETTER = regex.compile(r"\p{L}").search  # \p{L} is exactly what str.isalpha() calls a letter


def gopher_quality(doc: Text, cfg: GopherQualityConfig, metrics: dict[str, Any]) -> Failure | None:
    """Gopher's quality rules as appendix A of the paper states them, on whitespace-separated words."""
    if doc.compat:
        return gopher_quality_datatrove(doc, cfg, metrics)
    text, words = doc.text, doc.words
    n_words = len(words)
    metrics["words"] = n_words
    if cfg.min_doc_words is not None and n_words < cfg.min_doc_words:
        return "gopher_short_doc", n_words
    if cfg.max_doc_words is not None and n_words > cfg.max_doc_words:
        return "gopher_long_doc", n_words
    n_words = n_words or 1

    # mean word length; CJK units and Hangul words are left out, and the rule is skipped where they dominate
    failure = _mean_length(doc, text, words, cfg, metrics)
    if failure is not None and cfg.skip_code_lines:
        # judged again without the lines of code or commands, whose identifiers are long words
        # (``ctx.getServiceManager()``), and without link targets; only a page that fails pays for finding them
        lines = text.splitlines()
        prose = "\n".join(line for line in lines if not looks_like_code(line))
        prose_words = without_link_targets(whitespace_words(prose))
        if prose_words and prose_words != words:
            failure = _mean_length(doc, prose, prose_words, cfg, metrics)
    if failure is not None:
        return failure

    failure = _symbol_failure(text, n_words, cfg, doc.compat)
    if failure is not None:
        return failure

    if cfg.max_bullet_lines_ratio is not None or cfg.max_ellipsis_lines_ratio is not None:
        lines = [line.strip() for line in text.splitlines()]
        lines = [line for line in lines if line] or [""]  # the document's lines, not the blank ones between
        if cfg.max_bullet_lines_ratio is not None:
            ratio = sum(1 for line in lines if line.startswith(BULLETS)) / len(lines)
            if ratio > cfg.max_bullet_lines_ratio:
                return "gopher_too_many_bullets", ratio
        if cfg.max_ellipsis_lines_ratio is not None:
            ratio = sum(1 for line in lines if line.endswith(("...", "…"))) / len(lines)
            if ratio > cfg.max_ellipsis_lines_ratio:
                return "gopher_too_many_end_ellipsis", ratio

    if cfg.min_alpha_words_ratio is not None:
        # "80 % of words contain at least one alphabetic character": str.isalpha() settles plain words in C;
        # the rest ('end.', '(see', '3.5') go through one C-level regex search each
        rest = list(filterfalse(str.isalpha, words))
        alpha = len(words) - len(rest) + sum(map(bool, map(_HAS_LETTER, rest)))
        ratio = alpha / n_words
        metrics["alpha_ratio"] = round(ratio, 4)
        if ratio < cfg.min_alpha_words_ratio and not _figures(text, ratio, cfg):
            return "gopher_below_alpha_threshold", ratio

    if cfg.min_stop_words is not None:
        matcher = None if doc.language is None else stop_word_matcher(doc.language, cfg.stop_words)
        if matcher is None:
            doc.skip(SKIP_STOP)
        elif matcher:
            found = matcher(text)
            metrics["stop_words"] = found
            if found < cfg.min_stop_words:
                return "gopher_enough_stop_words", found
    return None


#: a Markdown link's target after its text: ``[Czech](https://salsa.debian.org/...)``, ``model](./GOVERNANCE.md).``
_LINK_TARGET = regex.compile(r"\]\([^)\s]*\)?")


def without_link_targets(words: list[str]) -> list[str]:
    """``words`` without the addresses a reader does not read: a Markdown link keeps its text (``[Czech``), a bare
    URL or ``<https://...>`` is left out.

    Why: a README in Markdown links each item (``*  cs - [Czech](https://salsa.debian.org/manpages-l10n-team/
    manpages-l10n/-/tree/master/po/cs)``) and one address is a "word" of 70 characters: Node.js's and
    manpages-l10n's READMEs averaged 15 and 22 characters a word (docs/filters.md)."""
    out = []
    for word in words:
        if "](" in word:
            word = _LINK_TARGET.sub("", word)
        elif "://" in word or word.startswith("www."):
            continue
        if word:
            out.append(word)
    return out


#: consecutive integers standing one after the other that read as a listing's line numbers (``numbers_lines``)
LINE_NUMBER_RUN = 10


def numbers_lines(text: str, run: int = LINE_NUMBER_RUN) -> bool:
    """Whether ``run`` consecutive integers (n, n+1, …) follow one another as whitespace-separated words: the
    gutter of a source listing (rustdoc's and Doxygen's source pages, code viewers), one number a line or all on
    one line. A table's figures or a tutorial's printed output do not count up one by one."""
    count, previous = 0, -2
    for token in text.split():
        if token.isascii() and token.isdigit():
            value = int(token)
            count = count + 1 if value == previous + 1 else 1
            previous = value
            if count >= run:
                return True
        else:
            count, previous = 0, -2
    return False


def _figures(text: str, ratio: float, cfg: GopherQualityConfig) -> bool:
    """Whether ``figures_alpha_ratio`` keeps a page under Gopher's share of words with a letter: enough of them
    hold one, and the rest are not a listing's line numbers.

    Why: a tutorial's printed example output (pandas' DataFrames: dates and decimals), a benchmark's timings and a
    statistics function's worked example are figures, words without a letter; Gopher's 80 % dropped 35 good
    pages of 28 Debian packages at 0.40-0.80 (pandas' user guide: 13 of 26). Lowering the threshold alone kept
    rustdoc's source pages too (74 of 300 sampled), whose line-number gutter is a quarter of their words."""
    return cfg.figures_alpha_ratio is not None and ratio >= cfg.figures_alpha_ratio and not numbers_lines(text)


def _mean_length(
    doc: Text, text: str, words: list[str], cfg: GopherQualityConfig, metrics: dict[str, Any]
) -> Failure | None:
    """Gopher's mean-word-length rule on ``words`` of ``text`` (paper mode): CJK units and Hangul words left out,
    the rule skipped (counted) where they are the majority."""
    n_unspaced, unspaced_chars = unspaced_units(text)
    spaced = len(words) - n_unspaced
    if spaced <= 0 or spaced * 2 < len(words):
        if SKIP_AVG not in doc.skipped:
            doc.skip(SKIP_AVG)
        return None
    if cfg.min_avg_word_length is None and cfg.max_avg_word_length is None:
        return None
    return _avg_length_failure((sum(map(len, words)) - unspaced_chars) / spaced, cfg, metrics)


def _avg_length_failure(avg: float, cfg: GopherQualityConfig, metrics: dict[str, Any]) -> Failure | None:
    """Gopher's mean-word-length bounds (both paths; they differ only in which words they average)."""
    metrics["avg_word_length"] = round(avg, 3)
    if cfg.min_avg_word_length is not None and avg < cfg.min_avg_word_length:
        return "gopher_below_avg_threshold", avg
    if cfg.max_avg_word_length is not None and avg > cfg.max_avg_word_length:
        return "gopher_above_avg_threshold", avg
    return None


#: a hash that opens a hashtag: at the start of a whitespace-separated token, before a letter, digit or '_'
_HASHTAG = regex.compile(r"(?<!\S)#\w")
#: a C preprocessor line, whose '#' is code (C API references list ``#define`` constants by the hundred)
_PREPROCESSOR = regex.compile(
    r"^[ \t]*#(?:include|define|undef|if|ifdef|ifndef|elif|else|endif|pragma|error|warning|line)\b", regex.M
)


def _symbol_failure(text: str, n_words: int, cfg: GopherQualityConfig, compat: bool = False) -> Failure | None:
    """Gopher's hash and ellipsis to word ratios (both paths; ``n_words`` is each path's word count)."""
    if cfg.max_symbol_word_ratio is not None:
        ratio = text.count("#") / n_words
        if ratio > cfg.max_symbol_word_ratio and cfg.hashtags_only and not compat:
            # Gopher's rule is for hashtag spam; a page over it is counted again by its hashtags only: Markdown
            # headings (## Building), rule lines (#####), #include/#define lines of C references and C# or
            # page#anchor are markup or code. Only a page over the threshold pays for the regexes.
            hashtags = len(_HASHTAG.findall(text)) - len(_PREPROCESSOR.findall(text))
            ratio = hashtags / n_words
        if ratio > cfg.max_symbol_word_ratio:
            return "gopher_too_many_hashes", ratio
        ratio = (text.count("...") + text.count("…")) / n_words
        if ratio > cfg.max_symbol_word_ratio:
            return "gopher_too_many_ellipsis", ratio
    return None


def gopher_quality_datatrove(doc: Text, cfg: GopherQualityConfig, metrics: dict[str, Any]) -> Failure | None:
    """datatrove's ``GopherQualityFilter`` on spaCy-style tokens, plus the multilingual changes."""
    text, words = doc.text, doc.words
    stats = word_stats(text, words)
    n_words = len(words) or 1
    n_non_symbol = len(stats.non_symbol)
    metrics["words"] = n_non_symbol
    if cfg.min_doc_words is not None and n_non_symbol < cfg.min_doc_words:
        return "gopher_short_doc", n_non_symbol
    if cfg.max_doc_words is not None and n_non_symbol > cfg.max_doc_words:
        return "gopher_long_doc", n_non_symbol

    # only meaningful on space-delimited alphabetic words; skipped when CJK units or Hangul words dominate
    if not (stats.spaced_words and stats.spaced_words * 2 >= n_non_symbol):
        doc.skip(SKIP_AVG)
    else:
        failure = _avg_length_failure(stats.spaced_chars / stats.spaced_words, cfg, metrics)
        if failure is not None:
            return failure

    failure = _symbol_failure(text, n_words, cfg, compat=True)
    if failure is not None:
        return failure

    lines = text.splitlines() or [""]
    if cfg.max_bullet_lines_ratio is not None:
        ratio = sum(1 for s in lines if s.lstrip().startswith(("•", "-"))) / len(lines)
        if ratio > cfg.max_bullet_lines_ratio:
            return "gopher_too_many_bullets", ratio
    if cfg.max_ellipsis_lines_ratio is not None:
        ratio = sum(1 for s in lines if s.rstrip().endswith(("...", "…"))) / len(lines)
        if ratio > cfg.max_ellipsis_lines_ratio:
            return "gopher_too_many_end_ellipsis", ratio

    if cfg.min_alpha_words_ratio is not None:
        # str.isalpha() settles most words in C; the slow check only runs on digits, marks and mixed tokens
        alpha = sum(map(str.isalpha, words))
        alpha += sum(1 for w in filterfalse(str.isalpha, words) if any(c.isalpha() for c in w))
        ratio = alpha / n_words
        metrics["alpha_ratio"] = round(ratio, 4)
        if ratio < cfg.min_alpha_words_ratio:
            return "gopher_below_alpha_threshold", ratio

    if cfg.min_stop_words is not None and doc.language is not None:
        stop_words = cfg.stop_words.get(doc.language, STOP_WORDS.get(doc.language))
        if stop_words:
            if doc.language in SUBSTRING_STOP_WORD_LANGUAGES:
                found = sum(1 for w in set(stop_words) if w in text)
            else:
                found = len(set(stop_words).intersection(words))
            metrics["stop_words"] = found
            if found < cfg.min_stop_words:
                return "gopher_enough_stop_words", found
        elif stop_words is None:
            doc.skip(SKIP_STOP)
    return None
