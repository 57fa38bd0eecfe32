"""Heuristic quality filters: Gopher quality, Gopher repetition, C4 and FineWeb rules in one pass.

The rules and their default thresholds are datatrove 0.10.1's (``GopherQualityFilter``,
``GopherRepetitionFilter``, ``C4QualityFilter``, ``FineWebQualityFilter``); the rule names are datatrove's
reasons (C4 and FineWeb ones prefixed ``c4_`` / ``fineweb_``). Why not call those classes (measured,
DESIGN.md): they split words with spaCy for one fixed language per step (~80 % of their CPU), so a
multilingual source would need one step per language, and they return a reason but no score. Here the
text is split once per document (``pipeline.text``, a regex splitter that made the same decisions 3.8x
faster), each rule returns ``(rule, score)`` so drop rows carry the failing metric, and the language comes
from each document's ``metadata["language"]``.

Changes from datatrove, each so that languages other than English are judged fairly:
  * Han/kana/Thai text is cut into 2–3 character units, so word-count rules mean about as much text as in
    English; the average-word-length rule only looks at space-delimited alphabetic words and is skipped
    when those are under half of the document's words (Chinese, Japanese, Korean);
  * the stop-word rule uses a list per language (``STOP_WORDS``; matched as substrings for languages
    written without spaces); a language without a list skips the rule;
  * C4's terminal-punctuation rule also accepts 。！？．｡」』 and Arabic ؟ ۔ and Devanagari । ॥ marks, and
    counts words of no-space scripts in units (a Chinese sentence is not one 'word');
  * a disabled threshold is ``null`` (datatrove: ``None``, ``0`` or ``-1`` depending on the class).

Like datatrove's C4 filter, the C4 rules rewrite the text to the lines they keep (``c4.rewrite_text``);
the FineWeb rules, run after them, see the rewritten text (the order of datatrove's FineWeb recipe).
Metrics kept in ``metadata["quality"]``: words, avg_word_length, alpha_ratio, stop_words, dup_line_frac,
top_2_gram, dup_5_gram, c4_sentences, line_punct_ratio, short_line_ratio, char_dup_ratio, list_ratio.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import compress, filterfalse
from typing import Any

from datatrove.data import Document
from pydantic import Field

from pipeline.base import AccountedStep, Drop
from pipeline.config_base import StrictModel
from pipeline.text import (
    NO_SPACE_LANGUAGES,
    count_sentences,
    line_words,
    split_lines,
    split_paragraphs,
    split_words,
    terminal_punctuation,
    word_stats,
)

#: A failed rule: (rule name, the metric that failed it).
Failure = tuple[str, float | None]

#: Small lists of the most frequent function words; a normal page holds at least two of them.
STOP_WORDS: dict[str, list[str]] = {
    "en": ["the", "be", "to", "of", "and", "that", "have", "with"],  # datatrove / Gopher
    "de": ["der", "die", "das", "und", "ist", "nicht", "mit", "den", "von", "zu", "sich", "ein", "eine", "auf"],
    "fr": ["le", "la", "les", "de", "des", "et", "est", "un", "une", "que", "dans", "pour", "pas", "du", "en"],
    "es": ["el", "la", "los", "las", "de", "que", "y", "en", "un", "una", "es", "por", "con", "para", "del"],
    "it": ["il", "la", "di", "che", "e", "è", "un", "una", "per", "non", "con", "del", "sono", "della"],
    "pt": ["o", "a", "os", "as", "de", "que", "e", "do", "da", "em", "um", "uma", "para", "com", "não", "é"],
    "nl": ["de", "het", "een", "en", "van", "is", "dat", "niet", "op", "te", "met", "zijn", "voor"],
    "ru": ["и", "в", "не", "на", "что", "с", "по", "это", "как", "он", "к", "из", "а", "для", "от"],
    "uk": ["і", "в", "на", "що", "з", "не", "до", "це", "та", "як", "у", "для", "від"],
    "pl": ["i", "w", "nie", "na", "się", "z", "do", "że", "jest", "to", "jak", "o", "od"],
    "cs": ["a", "v", "se", "na", "je", "že", "s", "z", "do", "to", "o", "i", "pro"],
    "sv": ["och", "i", "att", "det", "som", "en", "på", "är", "av", "för", "med", "till"],
    "tr": ["ve", "bir", "bu", "da", "de", "için", "ile", "olarak", "çok", "daha", "gibi"],
    "ar": ["في", "من", "على", "إلى", "أن", "عن", "هذا", "هذه", "التي", "الذي", "مع", "كان", "ما", "لا"],
    "hi": ["का", "की", "के", "है", "में", "और", "से", "को", "यह", "पर", "हैं", "एक"],
    "ko": ["수", "있다", "있는", "그", "및", "등", "또한", "그리고", "하는", "한다", "것이다", "있습니다"],
    # written without spaces: matched as substrings of the text (simplified and traditional forms)
    "zh": ["的", "了", "是", "在", "和", "有", "不", "这", "這", "也", "就", "都", "与", "與", "一个", "一個"],
    "ja": ["の", "に", "は", "を", "が", "で", "て", "と", "た", "し", "です", "ます", "こと"],
}

#: C4's line endings (datatrove: . ? ! " ') plus the sentence-final marks of CJK, Arabic and Devanagari text.
C4_END_PUNCTUATION = (".", "?", "!", '"', "'", "。", "！", "？", "．", "｡", "」", "』", "؟", "۔", "।", "॥")


class GopherQualityConfig(StrictModel):
    """Gopher quality rules (Rae et al. 2021, appendix A); ``null`` switches a rule off."""

    min_doc_words: int | None = 50
    max_doc_words: int | None = 100_000
    min_avg_word_length: float | None = 3
    max_avg_word_length: float | None = 10
    max_symbol_word_ratio: float | None = Field(default=0.1, description="'#' and ellipses per word")
    max_bullet_lines_ratio: float | None = 0.9
    max_ellipsis_lines_ratio: float | None = 0.3
    min_alpha_words_ratio: float | None = Field(
        default=0.8, description="least share of words with a letter (datatrove: max_non_alpha_words_ratio)"
    )
    min_stop_words: int | None = 2
    stop_words: dict[str, list[str]] = Field(
        default={}, description="per-language lists that replace the built-in ones; [] switches the rule off"
    )


class GopherRepetitionConfig(StrictModel):
    """Gopher repetition rules (Rae et al. 2021, table A1)."""

    dup_line_frac: float | None = 0.3
    dup_para_frac: float | None = 0.3
    dup_line_char_frac: float | None = 0.2
    dup_para_char_frac: float | None = 0.2
    top_n_grams: list[tuple[int, float]] = [(2, 0.2), (3, 0.18), (4, 0.16)]
    dup_n_grams: list[tuple[int, float]] = [(5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10)]


class C4Config(StrictModel):
    """C4 line and page rules (Raffel et al. 2020), without the bad-words list (it would be a download)."""

    remove_citations: bool = True
    filter_no_terminal_punct: bool = True
    end_punctuation: list[str] = Field(default=list(C4_END_PUNCTUATION), description="line endings that count")
    min_num_sentences: int | None = 5
    min_words_per_line: int | None = 3
    max_word_length: int | None = 1000
    filter_lorem_ipsum: bool = True
    filter_javascript: bool = True
    filter_curly_bracket: bool = True
    filter_policy: bool = True
    rewrite_text: bool = Field(default=True, description="replace the text by the kept lines, as datatrove does")


class FineWebConfig(StrictModel):
    """FineWeb's own rules (Penedo et al. 2024)."""

    line_punct_thr: float | None = 0.12
    line_punct_exclude_zero: bool = False
    stop_chars: list[str] | None = Field(default=None, description="null: datatrove's TERMINAL_PUNCTUATION")
    short_line_thr: float | None = 0.67
    short_line_length: int = 30
    char_duplicates_ratio: float | None = 0.01
    new_line_ratio: float | None = 0.3


class QualityConfig(StrictModel):
    """Each rule family can be switched off with ``null``; thresholds default to datatrove 0.10.1's."""

    gopher_quality: GopherQualityConfig | None = GopherQualityConfig()
    gopher_repetition: GopherRepetitionConfig | None = GopherRepetitionConfig()
    c4: C4Config | None = C4Config()
    fineweb: FineWebConfig | None = FineWebConfig()
    default_language: str | None = Field(
        default="en", description="language assumed when metadata has none (null: skip the stop-word rule)"
    )


class _Text:
    """One document's text under judgement, split into words once per line (and again after a rewrite)."""

    __slots__ = ("text", "language", "_line_tokens", "_words")

    def __init__(self, text: str, language: str | None):
        self.text = text
        self.language = language
        self._line_tokens: list[list[str]] | None = None
        self._words: list[str] | None = None

    @property
    def line_tokens(self) -> list[list[str]]:
        """Tokens of each line of ``text.splitlines()``; tokens never span lines, so these add up to ``words``."""
        if self._line_tokens is None:
            self._line_tokens = [split_words(line) for line in self.text.splitlines()]
        return self._line_tokens

    @property
    def words(self) -> list[str]:
        if self._words is None:
            self._words = [token for tokens in self.line_tokens for token in tokens]
        return self._words

    def replace(self, text: str, line_tokens: list[list[str]] | None = None) -> None:
        if text != self.text:
            self.text, self._line_tokens, self._words = text, line_tokens, None


def find_duplicates(items: list[str]) -> tuple[int, int]:
    """(repeated elements, characters in the repeats) — every copy after the first counts."""
    seen: set[str] = set()
    count = chars = 0
    for item in items:
        if item in seen:
            count += 1
            chars += len(item)
        else:
            seen.add(item)
    return count, chars


class NGrams:
    """Word n-gram repetition of one document, computed level by level over repeated n-grams only.

    Why not datatrove's ``find_top_duplicate`` / ``find_all_duplicate``: they build every n-gram of every
    size as a joined string (9 passes over the document); that was ~80 % of this stage's CPU. An n-gram can
    only occur twice if its (n-1)-gram prefix does, so after one pass over the 2-grams each larger size only
    looks at the positions whose shorter n-gram repeats — usually a handful. Results equal datatrove's
    (n-grams compared as word tuples instead of strings joined without a separator).
    """

    def __init__(self, words: list[str]):
        self.words = words
        # n -> (positions of repeated n-grams in order, their n-grams, count of each repeated n-gram)
        self._levels: dict[int, tuple[list[int], list[tuple[str, ...]], dict[tuple[str, ...], int]]] = {}

    def _level(self, n: int) -> tuple[list[int], list[tuple[str, ...]], dict[tuple[str, ...], int]]:
        if n in self._levels:
            return self._levels[n]
        words = self.words
        if n <= 2:
            grams = list(zip(words, words[1:], strict=False)) if n == 2 else [(w,) for w in words]
            counts = Counter(grams)
            # C-level iteration: positions whose n-gram occurs more than once
            positions = list(compress(range(len(grams)), map((1).__lt__, map(counts.__getitem__, grams))))
            keys = list(map(grams.__getitem__, positions))
        else:
            prev_positions, prev_keys, _ = self._level(n - 1)
            last = len(words) - n
            cand = [
                (i, key + (words[i + n - 1],)) for i, key in zip(prev_positions, prev_keys, strict=True) if i <= last
            ]
            counts = Counter(key for _, key in cand)
            kept = [(i, key) for i, key in cand if counts[key] > 1]
            positions, keys = [i for i, _ in kept], [key for _, key in kept]
        repeated = Counter(keys)  # the repeated n-grams, in order of first occurrence
        self._levels[n] = (positions, keys, repeated)
        return self._levels[n]

    def top_chars(self, n: int) -> int:
        """Characters of the most frequent n-gram (joined by spaces) times its count; on ties the n-gram seen
        first wins, as in datatrove. 0 when the document has fewer than n words."""
        if len(self.words) < n:
            return 0
        _, _, repeated = self._level(n)
        if repeated:
            top = max(repeated.values())
            gram = next(key for key, count in repeated.items() if count == top)  # insertion = document order
        else:
            top, gram = 1, tuple(self.words[:n])
        return (sum(map(len, gram)) + n - 1) * top

    def duplicated_chars(self, n: int) -> int:
        """Characters of the words inside repeated n-grams, scanning left to right and skipping past each repeat
        (datatrove's ``find_all_duplicate``). An n-gram seen once never matches later, so only positions of
        repeated n-grams need visiting; ``resume`` remembers where the last repeat's skip ends."""
        positions, keys, _ = self._level(n)
        seen: set[tuple[str, ...]] = set()
        repeated = resume = 0
        for idx, gram in zip(positions, keys, strict=True):
            if idx < resume:
                continue  # inside the previous repeat: skipped, not remembered
            if gram in seen:
                repeated += sum(map(len, gram))
                resume = idx + n
            else:
                seen.add(gram)
        return repeated


def gopher_quality(doc: _Text, cfg: GopherQualityConfig, metrics: dict[str, Any]) -> Failure | None:
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
    if stats.spaced_words and stats.spaced_words * 2 >= n_non_symbol:
        avg = stats.spaced_chars / stats.spaced_words
        metrics["avg_word_length"] = round(avg, 3)
        if cfg.min_avg_word_length is not None and avg < cfg.min_avg_word_length:
            return "gopher_below_avg_threshold", avg
        if cfg.max_avg_word_length is not None and avg > cfg.max_avg_word_length:
            return "gopher_above_avg_threshold", avg

    if cfg.max_symbol_word_ratio is not None:
        ratio = text.count("#") / n_words
        if ratio > cfg.max_symbol_word_ratio:
            return "gopher_too_many_hashes", ratio
        ratio = (text.count("...") + text.count("…")) / n_words
        if ratio > cfg.max_symbol_word_ratio:
            return "gopher_too_many_ellipsis", ratio

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
            if doc.language in NO_SPACE_LANGUAGES:
                found = sum(1 for w in set(stop_words) if w in text)
            else:
                found = len(set(stop_words).intersection(words))
            metrics["stop_words"] = found
            if found < cfg.min_stop_words:
                return "gopher_enough_stop_words", found
    return None


def gopher_repetition(doc: _Text, cfg: GopherRepetitionConfig, metrics: dict[str, Any]) -> Failure | None:
    text = doc.text
    size = len(text)
    paragraphs = split_paragraphs(text)
    dups, dup_chars = find_duplicates(paragraphs)
    if cfg.dup_para_frac is not None and dups / len(paragraphs) > cfg.dup_para_frac:
        return "dup_para_frac", dups / len(paragraphs)
    if cfg.dup_para_char_frac is not None and dup_chars / size > cfg.dup_para_char_frac:
        return "dup_para_char_frac", dup_chars / size

    lines = split_lines(text)
    dups, dup_chars = find_duplicates(lines)
    metrics["dup_line_frac"] = round(dups / len(lines), 4)
    if cfg.dup_line_frac is not None and dups / len(lines) > cfg.dup_line_frac:
        return "dup_line_frac", dups / len(lines)
    if cfg.dup_line_char_frac is not None and dup_chars / size > cfg.dup_line_char_frac:
        return "dup_line_char_frac", dup_chars / size

    ngrams = NGrams(doc.words)
    for n, threshold in cfg.top_n_grams:
        ratio = ngrams.top_chars(n) / size
        if n == 2:
            metrics["top_2_gram"] = round(ratio, 4)
        if ratio > threshold:
            return f"top_{n}_gram", ratio

    for n, threshold in cfg.dup_n_grams:
        ratio = ngrams.duplicated_chars(n) / size
        if n == 5:
            metrics["dup_5_gram"] = round(ratio, 4)
        if ratio > threshold:
            return f"duplicated_{n}_n_grams", ratio
    return None


class _C4Rules:
    """C4's line filter; constants come from datatrove's module (citation pattern, policy phrases)."""

    def __init__(self, cfg: C4Config):
        from datatrove.pipeline.filters.c4_filters import CITATION_REGEX, POLICY_SUBSTRINGS

        self.cfg = cfg
        self.citation_re = CITATION_REGEX
        self.policy = tuple(POLICY_SUBSTRINGS)
        self.end_punctuation = tuple(cfg.end_punctuation)
        self.sentence_end = frozenset(terminal_punctuation())

    def __call__(self, doc: _Text, cfg: C4Config, metrics: dict[str, Any]) -> Failure | None:
        kept: list[str] = []
        kept_tokens: list[list[str]] = []
        sentences = 0
        for raw, tokens in zip(doc.text.splitlines(), doc.line_tokens, strict=True):
            line = original = raw.strip()
            max_len = cfg.max_word_length
            if max_len is not None and len(line) > max_len and line_words(line)[1] > max_len:
                continue
            if cfg.remove_citations and "[" in line:
                cleaned = self.citation_re.sub("", line)
                if cleaned != line:
                    line, tokens = cleaned, split_words(cleaned)
            if cfg.filter_no_terminal_punct and (not line.endswith(self.end_punctuation) or line.endswith("...")):
                continue
            # counted before citations are removed, as datatrove does
            if cfg.min_words_per_line is not None and line_words(original)[0] < cfg.min_words_per_line:
                continue
            lowered = line.lower()
            if cfg.filter_lorem_ipsum and "lorem ipsum" in lowered:
                return "c4_lorem_ipsum", 1.0
            if cfg.filter_javascript and "javascript" in lowered:
                continue
            if cfg.filter_curly_bracket and "{" in line:
                return "c4_curly_bracket", float(line.count("{"))
            if cfg.filter_policy and any(p in lowered for p in self.policy):
                continue
            if cfg.min_num_sentences is not None:
                sentences += count_sentences(tokens, self.sentence_end)
            kept.append(line)
            kept_tokens.append(tokens)
        metrics["c4_sentences"] = sentences
        if cfg.min_num_sentences is not None and sentences < cfg.min_num_sentences:
            return "c4_too_few_sentences", float(sentences)
        if cfg.rewrite_text:
            # kept lines are stripped and non-empty, so they are exactly the new text's lines
            doc.replace("\n".join(kept), kept_tokens)
        return None


class _FineWebRules:
    def __init__(self, cfg: FineWebConfig):
        chars = cfg.stop_chars if cfg.stop_chars is not None else terminal_punctuation()
        self.single_chars = frozenset(chars) if all(len(c) == 1 for c in chars) else None
        self.stop_chars = tuple(chars)

    def _ends(self, line: str) -> bool:
        if self.single_chars is not None:  # one set lookup instead of endswith over 159 marks
            return line[-1] in self.single_chars
        return line.endswith(self.stop_chars)

    def __call__(self, doc: _Text, cfg: FineWebConfig, metrics: dict[str, Any]) -> Failure | None:
        text = doc.text
        lines = [line for line in text.split("\n") if line.strip() != ""]
        if not lines:
            return "no_text", None
        ratio = sum(1 for line in lines if self._ends(line)) / len(lines)
        metrics["line_punct_ratio"] = round(ratio, 4)
        if (
            cfg.line_punct_thr is not None
            and ratio < cfg.line_punct_thr
            and not (ratio == 0 and cfg.line_punct_exclude_zero)
        ):
            return "fineweb_line_punct_ratio", ratio
        ratio = sum(1 for line in lines if len(line) <= cfg.short_line_length) / len(lines)
        metrics["short_line_ratio"] = round(ratio, 4)
        if cfg.short_line_thr is not None and ratio > cfg.short_line_thr:
            return "fineweb_short_line_ratio", ratio
        ratio = find_duplicates(lines)[1] / max(len(text) - text.count("\n"), 1)
        metrics["char_dup_ratio"] = round(ratio, 4)
        if cfg.char_duplicates_ratio is not None and ratio > cfg.char_duplicates_ratio:
            return "fineweb_char_dup_ratio", ratio
        if doc.words:
            ratio = text.count("\n") / len(doc.words)
            metrics["list_ratio"] = round(ratio, 4)
            if cfg.new_line_ratio is not None and ratio > cfg.new_line_ratio:
                return "fineweb_list_ratio", ratio
        return None


class QualityStage(AccountedStep):
    """Gopher quality → Gopher repetition → C4 → FineWeb; the first failing rule drops the document."""

    stage = "quality"
    name = "🥇 Quality (Gopher, C4, FineWeb)"

    def __init__(self, config: QualityConfig | None = None, drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.config = config or QualityConfig()
        self._rules: list[tuple[Callable[[_Text, Any, dict[str, Any]], Failure | None], Any]] | None = None

    def setup(self) -> None:
        if self._rules is not None:
            return
        cfg = self.config
        rules: list[tuple[Callable[[_Text, Any, dict[str, Any]], Failure | None], Any]] = []
        if cfg.gopher_quality is not None:
            rules.append((gopher_quality, cfg.gopher_quality))
        if cfg.gopher_repetition is not None:
            rules.append((gopher_repetition, cfg.gopher_repetition))
        if cfg.c4 is not None:
            rules.append((_C4Rules(cfg.c4), cfg.c4))
        if cfg.fineweb is not None:
            rules.append((_FineWebRules(cfg.fineweb), cfg.fineweb))
        self._rules = rules

    def judge(self, text: str, language: str | None) -> tuple[Failure | None, str, dict[str, Any]]:
        """(failure or None, possibly rewritten text, metrics) for one text; the stage's whole decision."""
        self.setup()
        assert self._rules is not None
        metrics: dict[str, Any] = {}
        if not text or not text.strip():
            return ("no_text", None), text, metrics
        doc = _Text(text, language)
        for rule, cfg in self._rules:
            failure = rule(doc, cfg, metrics)
            if failure is not None:
                return failure, doc.text, metrics
        return None, doc.text, metrics

    def process(self, doc: Document) -> Drop | None:
        language = doc.metadata.get("language") or self.config.default_language
        try:
            failure, text, metrics = self.judge(doc.text, language)
        except Exception as error:  # noqa: BLE001 - a document that breaks a rule is a counted drop, not a crash
            return Drop(rule="quality_error", extra={"error": f"{type(error).__name__}: {error}"[:200]})
        doc.metadata["quality"] = metrics
        if failure is not None:
            rule, score = failure
            return Drop(rule=rule, score=score)
        doc.text = text
        return None


__all__ = [
    "C4Config",
    "FineWebConfig",
    "GopherQualityConfig",
    "GopherRepetitionConfig",
    "QualityConfig",
    "QualityStage",
    "STOP_WORDS",
]
