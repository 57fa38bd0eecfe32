"""Heuristic quality filters: Gopher quality, Gopher repetition, C4 and FineWeb rules in one pass.

Two modes, chosen per recipe with ``quality: {compat: ...}``:

* default (no ``compat`` key): **the papers' definitions** — Gopher (Rae et al. 2021, appendix A), C4
  (Raffel et al. 2020, section 2.2, and its reference code ``tensorflow_datasets/text/c4_utils.py``) and
  FineWeb (Penedo et al. 2024, section 3). A word is a whitespace-separated token (``"end."`` is one word,
  ``"("`` is one word), as both Gopher and C4's ``line.split()`` count; lines and paragraphs are the
  non-blank ones; C4 keeps lines of at least 5 words and pages of at least 3 sentences; FineWeb drops at
  >= 10 % of characters in duplicated lines. docs/filters.md lists every rule: paper, default, compat.
* ``compat: datatrove``: datatrove 0.10.1's ``GopherQualityFilter``, ``GopherRepetitionFilter``,
  ``C4QualityFilter`` and ``FineWebQualityFilter`` exactly (their spaCy-style word split, where ``(`` and
  ``.`` are words, which drops most real documentation on the 80 %-alphabetic-words rule; C4 with 3 words
  per line and 5 sentences; FineWeb's 0.01 duplicate-character ratio and its list-ratio rule).

Why not call datatrove's classes (measured, docs/filters.md): they split words with spaCy for one fixed
language per step (~80 % of their CPU), so a multilingual source would need one step per language, and
they return a reason but no score. Here the text is split once per document (``pipeline.text``), each rule
returns ``(rule, score)`` so drop rows carry the failing metric, and the language comes from each
document's ``metadata["language"]``.

Multilingual (both modes): Han/kana/Thai text is cut into 2–3 character units so word-count rules mean
about as much text as in English; the average-word-length rule is skipped where such units or Hangul
words dominate; the stop-word rule uses a list per language (``STOP_WORDS``; substrings for languages
written without spaces); C4 and FineWeb accept the sentence-final marks of other scripts (。！？ ؟ ۔ । ።
។ ။ …). A rule that cannot apply to a language (no stop-word list; Thai and Lao write no sentence-final
marks) is **skipped with a counted note**: the stat ``quality_skipped_<rule>_<language>`` and the rule's
name in ``metadata["quality_skipped"]``, never a silent mass drop and never a silent pass.

Like datatrove's C4 filter, the C4 rules rewrite the text to the lines they keep (``c4.rewrite_text``);
the FineWeb rules, run after them, see the rewritten text (the order of datatrove's FineWeb recipe).
Metrics kept in ``metadata["quality"]``: words, avg_word_length, alpha_ratio, stop_words, dup_line_frac,
top_2_gram, dup_5_gram, c4_sentences, line_punct_ratio, short_line_ratio, char_dup_ratio, list_ratio.

The recipe model (``QualityConfig``, one config per family, ``DATATROVE_DEFAULTS``) is in ``pipeline.curate.config``.
"""

from pipeline.curate.quality.document import Failure
from pipeline.curate.quality.gopher_repetition import NGrams, find_duplicates
from pipeline.curate.quality.stage import QualityStage, Verdict
from pipeline.curate.quality.stop_words import STOP_WORDS

__all__ = [
    "Failure",
    "NGrams",
    "QualityStage",
    "STOP_WORDS",
    "Verdict",
    "find_duplicates",
]
