"""C4's line and page rules (Raffel et al. 2020, section 2.2): the paper's definitions by default, datatrove's
``C4QualityFilter`` under ``compat: datatrove`` (its defaults in ``pipeline.curate.config.DATATROVE_DEFAULTS``,
its word count before citations are removed)."""

from __future__ import annotations

import re
from itertools import repeat
from typing import Any

from pipeline.curate.config import CLOSING_BRACKETS, COLONS, C4Config
from pipeline.curate.quality.document import NO_SENTENCE_MARK_LANGUAGES, Failure, Text
from pipeline.curate.quality.stop_words import stop_word_matcher
from pipeline.text import count_sentences, line_sentences, line_words, terminal_punctuation

SKIP_C4_PUNCT = "c4_terminal_punctuation"
#: a line that mentions JavaScript is a notice about the reader's browser when it says the script is off or asks
#: to switch it on (javadoc's "JavaScript is disabled on your browser.", Sphinx's "Please activate JavaScript to
#: enable the search functionality.", LibreOffice's "Enable JavaScript in the browser to display ..."); a line of
#: a JavaScript API reference ("Any Node-API call that requires a JavaScript value ...") is not
_JAVASCRIPT_NOTICE = re.compile(
    r"\b(?:enabl\w*|activat\w*|disabled|turn(?:ed)? (?:it )?on|switch(?:ed)? (?:it )?on|browser\w*)\b"
    r"|\brequires? javascript\b|\bwithout javascript\b"
)
#: an unpunctuated line counts as a sentence (``count_unpunctuated_lines``) when it holds this many distinct stop
#: words of its language, Gopher's minimum for a page: "Name of the schema that contains the constraint" (of, the,
#: that) does, "Share this article Facebook X LinkedIn" and "Choose Data - Sort Ascending" do not
FRAGMENT_MIN_STOP_WORDS = 2


#: a hard-wrapped text: its long lines end within this many characters of the wrap width
_WRAP_SLACK = 20
#: a line that starts a new logical line even when the line before it was wrapped: a bullet, a numbered item,
#: an option (``-a``, ``--all``), a heading number
_NEW_ITEM = re.compile(r"(?:[-*•‣◦▪●]\s|\d+[.)]\s|--?\w|\(\w\)\s)")


def wrap_width(lines: list[str]) -> int | None:
    """The width a text was hard-wrapped at, or None when it was not: the 90th percentile of its line lengths,
    when that is 50 to 100 characters and at least a third of the lines end within ``_WRAP_SLACK`` of it (a
    page whose lines are paragraphs, as extracted HTML is, has no such margin; a list of short lines is not
    wrapped text)."""
    lengths = sorted(len(line.rstrip()) for line in lines if line.strip())
    if len(lengths) < 5:
        return None
    width = lengths[int(0.9 * (len(lengths) - 1))]
    near = sum(1 for n in lengths if n >= width - _WRAP_SLACK)
    return width if 50 <= width <= 100 and near * 3 >= len(lengths) else None


def unwrap(text: str) -> str:
    """Join the lines of each hard-wrapped paragraph into one line. A line is continued by the next one when it
    reaches the wrap margin and the next line is not blank, is indented the same way and does not start a new
    item (bullet, option, number): C4's "line" is a paragraph as a browser shows it, and a man page or a
    plain-text manual wraps its paragraphs at 80 columns, so that otherwise most of its lines end mid-sentence
    and C4's terminal-punctuation rule keeps about a sixth of the text (measured: docs/filters.md)."""
    lines = text.split("\n")
    width = wrap_width(lines)
    if width is None:
        return text
    out: list[str] = []
    previous = ""
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if (
            out
            and stripped
            and previous.strip()
            and len(previous.rstrip()) >= width - _WRAP_SLACK
            and indent == len(previous) - len(previous.lstrip())
            and not _NEW_ITEM.match(stripped)
        ):
            out[-1] = f"{out[-1].rstrip()} {stripped}"
        else:
            out.append(line)
        previous = line
    return "\n".join(out)


class C4Rules:
    """C4's line filter; constants come from datatrove's module (citation pattern, policy phrases)."""

    def __init__(self, cfg: C4Config):
        from datatrove.pipeline.filters.c4_filters import CITATION_REGEX, POLICY_SUBSTRINGS

        self.cfg = cfg
        self.citation_re = CITATION_REGEX
        self.policy = tuple(POLICY_SUBSTRINGS)
        # colon_lines: documentation introduces each code example and list with a sentence ending in ':' ("The
        # following example finds the smallest divisor of a given integer:"); C4's marks removed every prose line
        # of such pages and dropped them (docs/filters.md)
        self.end_punctuation = tuple(cfg.end_punctuation) + (COLONS if cfg.colon_lines else ())
        self.sentence_end = frozenset(terminal_punctuation())

    def _ends_sentence(self, line: str, closing_brackets: bool) -> bool:
        """Whether the line ends in one of C4's marks (not an ellipsis), or, with ``closing_brackets``, does so
        once its closing brackets and single quotes are stripped ("… below.)"); a line ending in a mark that is
        itself a closer (「…」) ends as it stands."""
        if line.endswith(self.end_punctuation) and not line.endswith("..."):
            return True
        if not closing_brackets:
            return False
        end = line.rstrip(CLOSING_BRACKETS)
        return end != line and end.endswith(self.end_punctuation) and not end.endswith("...")

    @staticmethod
    def _javascript_line(lowered: str, cfg: C4Config, language: str | None) -> bool:
        """Whether C4's JavaScript rule removes this (lower-cased) line. The notices are recognised in English
        only; a page in another language keeps C4's rule (LibreOffice's Czech "… je nutné povolit v prohlížeči
        JavaScript." is the whole text of its browser-help page)."""
        if "javascript" not in lowered:
            return False
        if not cfg.javascript_notices_only or language != "en":
            return True
        return _JAVASCRIPT_NOTICE.search(lowered) is not None

    def __call__(self, doc: Text, cfg: C4Config, metrics: dict[str, Any]) -> Failure | None:
        kept: list[str] = []
        kept_tokens: list[list[str]] = []
        sentences = fragments = 0  # fragments: sentences on unpunctuated lines, counted but not kept
        # a script without sentence-final marks (Thai, Lao) would lose every line: skip, with a note
        no_marks = doc.language in NO_SENTENCE_MARK_LANGUAGES
        terminal_punct = cfg.filter_no_terminal_punct and not no_marks
        min_sentences = None if no_marks else cfg.min_num_sentences
        # sentences on the lines without a final mark too (FineWeb's configuration): a database-schema page or an
        # option list describes each entry in a fragment ("Name of the schema that contains the constraint")
        count_fragments = cfg.count_unpunctuated_lines and not doc.compat
        # ... when the fragment reads as prose: a menu path, a share bar or a tag list has no function words
        prose = stop_word_matcher(doc.language, {}) if count_fragments and doc.language else None
        if no_marks and (cfg.filter_no_terminal_punct or cfg.min_num_sentences is not None):
            doc.skip(SKIP_C4_PUNCT)
        # tokens are only needed to count sentences: reuse them when compat's word count already split the
        # lines, otherwise split only the lines that survive the line filters
        lines = doc.text.splitlines()
        cached = doc.cached_line_tokens
        if cfg.unwrap_lines:
            unwrapped = unwrap(doc.text)
            if unwrapped != doc.text:
                lines, cached = unwrapped.splitlines(), None
        complete = True
        for raw, tokens in zip(lines, cached if cached is not None else repeat(None, len(lines)), strict=True):
            line = original = raw.strip()
            max_len = cfg.max_word_length
            if max_len is not None and len(line) > max_len and line_words(line)[1] > max_len:
                continue
            if cfg.remove_citations and "[" in line:
                cleaned = self.citation_re.sub("", line)
                if cleaned != line:
                    line, tokens = cleaned, None
            fragment = terminal_punct and not self._ends_sentence(line, cfg.closing_brackets)
            if fragment and not count_fragments:
                continue
            # C4's code counts the words after removing citations, datatrove before
            counted = original if doc.compat else line
            if cfg.min_words_per_line is not None and line_words(counted)[0] < cfg.min_words_per_line:
                continue
            lowered = line.lower()
            if fragment:  # counted, never kept; the line filters that remove lines apply
                if (
                    min_sentences is not None
                    and prose is not None
                    and prose(line) >= FRAGMENT_MIN_STOP_WORDS
                    and not (cfg.filter_javascript and self._javascript_line(lowered, cfg, doc.language))
                    and not (cfg.filter_policy and any(p in lowered for p in self.policy))
                ):
                    fragments += line_sentences(line, self.sentence_end)
                continue
            if cfg.filter_lorem_ipsum and "lorem ipsum" in lowered:
                return "c4_lorem_ipsum", 1.0
            if cfg.filter_javascript and self._javascript_line(lowered, cfg, doc.language):
                continue
            if cfg.filter_curly_bracket and "{" in line:
                return "c4_curly_bracket", float(line.count("{"))
            if cfg.filter_policy and any(p in lowered for p in self.policy):
                continue
            if min_sentences is not None:
                # the tokens a compat word count split are reused; otherwise a line is split only when its
                # sentences cannot be counted without (line_sentences), and the rewrite's tokens are left to be
                # computed if a later rule asks (none does in the paper mode)
                if tokens is None:
                    sentences += line_sentences(line, self.sentence_end)
                else:
                    sentences += count_sentences(tokens, self.sentence_end)
            kept.append(line)
            if tokens is not None:
                kept_tokens.append(tokens)
            complete = complete and tokens is not None
        metrics["c4_sentences"] = sentences  # the sentences of the text as rewritten
        if min_sentences is not None and sentences + fragments < min_sentences:
            return "c4_too_few_sentences", float(sentences + fragments)
        if cfg.rewrite_text:
            if not kept:
                # the line filters removed every line, and the sentence check passed on the removed lines'
                # sentences (count_unpunctuated_lines) or did not run (min_num_sentences null, a script without
                # sentence marks): an index of briefs, a list of headings, code introduced by "…:". Said here, as
                # C4's, rather than left to the next rule, which met an empty text and called it no_text as if
                # extraction had found nothing
                return "c4_no_line_kept", float(fragments)
            # kept lines are stripped and non-empty, so they are exactly the new text's lines
            doc.replace("\n".join(kept), kept_tokens if complete else None)
        return None
