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
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress, filterfalse, repeat
from typing import Any, Literal

import regex
from datatrove.data import Document
from pydantic import BaseModel, Field, model_validator

from pipeline.base import AccountedStep, Drop
from pipeline.config_base import StrictModel
from pipeline.text import (
    NO_SPACE_LANGUAGES,
    count_sentences,
    has_word_char,
    line_words,
    split_lines,
    split_paragraphs,
    split_words,
    terminal_punctuation,
    unspaced_units,
    whitespace_words,
    word_stats,
)

#: A failed rule: (rule name, the metric that failed it).
Failure = tuple[str, float | None]

#: The most frequent function words of each language; a normal page holds at least two of them.
#: Gopher's English list is the paper's (and datatrove's) eight; the others are written for tokenmill
#: from the commonest words of each language. Matched lower-cased, as whole words (with punctuation
#: around them allowed) in the paper mode; as substrings for languages written without spaces.
STOP_WORDS: dict[str, list[str]] = {
    "en": ["the", "be", "to", "of", "and", "that", "have", "with"],  # Gopher / datatrove
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
    # Korean glues words with particles and endings, so its commonest function morphemes are matched as
    # substrings (는 를 에서 으로 하는 …), as for Chinese and Japanese; a list of nouns has none of them
    "ko": ["는", "를", "에서", "으로", "에게", "하는", "있는", "한다", "합니다", "니다", "하고", "및", "또는", "것"],
    "da": ["og", "i", "at", "er", "det", "en", "til", "af", "på", "med", "for", "som", "den", "de", "ikke", "har"],
    "no": ["og", "i", "er", "det", "på", "til", "en", "av", "for", "som", "med", "at", "ikke", "har", "den", "å"],
    "nn": ["og", "i", "er", "det", "på", "til", "ein", "av", "for", "som", "med", "ikkje", "har", "den", "å"],
    "fi": ["ja", "on", "ei", "se", "että", "oli", "ovat", "tai", "kun", "myös", "mutta", "sen", "jos", "voi"],
    "et": ["ja", "on", "ei", "et", "see", "ka", "oli", "kui", "mis", "või", "aga", "ning", "oma"],
    "hu": ["a", "az", "és", "hogy", "nem", "is", "egy", "van", "meg", "de", "ez", "csak", "már", "mint"],
    "ro": ["și", "şi", "de", "în", "la", "cu", "a", "nu", "că", "pe", "este", "din", "o", "un", "care", "pentru"],
    "ca": ["i", "de", "la", "el", "que", "en", "a", "és", "per", "els", "les", "amb", "no", "un", "una", "del"],
    "gl": ["e", "de", "o", "a", "que", "en", "non", "do", "da", "os", "un", "unha", "con", "para", "é"],
    "hr": ["i", "je", "u", "na", "da", "se", "za", "su", "od", "s", "a", "ne", "koji", "kao", "što", "to"],
    "bs": ["i", "je", "u", "na", "da", "se", "za", "su", "od", "s", "a", "ne", "koji", "kao", "što", "to"],
    # Serbian and Serbo-Croatian are written in Latin and Cyrillic script
    "sr": ["i", "je", "u", "na", "da", "se", "za", "su", "od", "и", "је", "у", "на", "да", "се", "за", "су", "од"],
    "sh": ["i", "je", "u", "na", "da", "se", "za", "su", "od", "и", "је", "у", "на", "да", "се", "за", "су", "од"],
    "sl": ["in", "je", "v", "na", "da", "se", "za", "so", "ki", "z", "pa", "ne", "tudi", "od", "po", "s"],
    "sk": ["a", "v", "na", "je", "sa", "že", "to", "s", "z", "do", "o", "aj", "ako", "pre", "sú", "nie"],
    "bg": ["и", "на", "в", "да", "е", "за", "се", "от", "с", "не", "че", "по", "са", "а", "като", "това"],
    "mk": ["и", "на", "во", "да", "е", "за", "се", "од", "со", "не", "што", "ги", "го", "а", "ќе", "тоа"],
    "be": ["і", "у", "ў", "на", "не", "з", "што", "да", "гэта", "а", "як", "па", "для", "ад"],
    "el": ["και", "το", "η", "της", "του", "να", "σε", "την", "με", "που", "για", "τα", "ο", "οι", "από", "είναι"],
    "lt": ["ir", "yra", "kad", "į", "su", "o", "iš", "bet", "ne", "tai", "jo", "kaip", "buvo", "per"],
    "lv": ["un", "ir", "ar", "par", "no", "uz", "kas", "ka", "lai", "arī", "bet", "nav", "tā", "kā"],
    "he": ["של", "את", "על", "לא", "הוא", "זה", "עם", "גם", "כי", "אם", "היא", "או", "יש", "אבל", "מה", "כל"],
    "fa": ["و", "در", "به", "از", "که", "این", "را", "با", "است", "برای", "آن", "می", "یک", "هم", "تا"],
    "ur": ["کے", "کی", "میں", "ہے", "اور", "سے", "کو", "کا", "نے", "پر", "یہ", "ہیں", "بھی", "کہ"],
    "mr": ["आणि", "आहे", "या", "हे", "की", "ते", "व", "ला", "त्या", "एक", "होते", "मध्ये", "नाही"],
    "ne": ["र", "छ", "को", "मा", "ले", "पनि", "यो", "गर्न", "हो", "भएको", "थियो", "एक", "छन्"],
    "bn": ["এবং", "ও", "এই", "করে", "থেকে", "না", "যে", "একটি", "জন্য", "তার", "ছিল", "করা"],
    "id": ["yang", "dan", "di", "dengan", "untuk", "dari", "ini", "itu", "dalam", "tidak", "akan", "pada", "ke"],
    "ms": ["yang", "dan", "di", "untuk", "dengan", "dari", "ini", "itu", "dalam", "tidak", "akan", "adalah"],
    "tl": ["ang", "ng", "sa", "na", "mga", "at", "ay", "si", "para", "hindi", "ito", "kung", "may"],
    "vi": ["và", "của", "là", "có", "được", "trong", "cho", "không", "những", "một", "các", "với", "này"],
    "sw": ["na", "ya", "wa", "kwa", "ni", "za", "katika", "la", "kuwa", "hii", "cha", "au", "lakini"],
    "af": ["die", "en", "van", "in", "is", "het", "nie", "wat", "om", "te", "dat", "op", "vir", "met"],
    "is": ["og", "að", "í", "á", "er", "sem", "um", "það", "til", "en", "með", "var", "ekki", "af"],
    "ga": ["agus", "an", "na", "ar", "is", "i", "le", "go", "a", "sé", "bhí", "ní", "do", "seo"],
    "cy": ["a", "y", "yn", "i", "ar", "o", "yr", "ac", "mae", "wedi", "bod", "ei", "gan", "ond"],
    "eo": ["la", "kaj", "de", "en", "estas", "al", "ke", "por", "kun", "ne", "ĝi", "sed", "el"],
    "la": ["et", "in", "est", "non", "ad", "cum", "ut", "quod", "sed", "qui", "quae", "ab", "de", "sunt"],
    "sq": ["të", "e", "në", "dhe", "një", "me", "për", "që", "nga", "është", "i", "se", "u", "ka"],
    "az": ["və", "bu", "bir", "üçün", "ilə", "da", "də", "ki", "olan", "olaraq", "çox", "isə"],
    "uz": ["va", "bu", "bir", "uchun", "bilan", "ham", "u", "deb", "edi", "emas", "lekin", "esa"],
    # written without spaces: matched as substrings of the text (simplified and traditional forms)
    "zh": ["的", "了", "是", "在", "和", "有", "不", "这", "這", "也", "就", "都", "与", "與", "一个", "一個"],
    "ja": ["の", "に", "は", "を", "が", "で", "て", "と", "た", "し", "です", "ます", "こと"],
    "yue": ["嘅", "係", "唔", "喺", "咗", "佢", "啲", "的", "是", "有", "就", "都", "了"],
}
#: languages whose stop words are looked for as substrings: no spaces between words, or particles glued on
SUBSTRING_STOP_WORD_LANGUAGES = NO_SPACE_LANGUAGES | {"ko"}
#: languages with no sentence-final punctuation in their script (sentences are separated by spaces):
#: C4's terminal-punctuation and sentence rules and FineWeb's line-punctuation rule are skipped for them.
NO_SENTENCE_MARK_LANGUAGES = frozenset({"th", "lo"})

#: C4's line endings in datatrove (. ? ! " ') plus the sentence-final marks of CJK, Arabic and Devanagari text.
C4_END_PUNCTUATION_DATATROVE = (".", "?", "!", '"', "'", "。", "！", "？", "．", "｡", "」", "』", "؟", "۔", "।", "॥")
#: C4's line endings as the paper says ("a period, exclamation mark, question mark, or end quotation mark";
#: the reference code: . ? ! "), with typographic closing quotes and the sentence-final marks of other
#: scripts: CJK, Arabic/Urdu, Devanagari/Bengali, Ethiopic, Khmer, Myanmar, Tibetan, Armenian.
C4_END_PUNCTUATION = (
    ".", "?", "!", '"', "”", "“", "»", "。", "！", "？", "．", "｡", "」", "』", "؟", "۔", "।", "॥",
    "።", "፧", "។", "៕", "။", "།", "༎", "։",
)  # fmt: skip
#: Gopher's "bullet point": the bullet characters, and '-' / '*' that plain text and Markdown use for them.
BULLETS = ("•", "‣", "◦", "⁃", "▪", "●", "-", "*")
#: FineWeb's "lines ending with punctuation" adds closing quotes and the Tibetan shad to datatrove's marks.
FINEWEB_EXTRA_STOP_CHARS = ('"', "”", "»", "」", "』", "།", "༎")

_SKIP_AVG = "gopher_avg_word_length"
_SKIP_STOP = "gopher_enough_stop_words"
_SKIP_C4_PUNCT = "c4_terminal_punctuation"
_SKIP_FW_PUNCT = "fineweb_line_punct_ratio"


_HAS_LETTER = regex.compile(r"\p{L}").search  # \p{L} is exactly what str.isalpha() calls a letter


class _StopWords:
    """Counts the distinct stop words of one language in a text: whole words, any case, punctuation around
    them allowed ("The", "(and", "that's"); for languages written without spaces, substrings."""

    def __init__(self, language: str, words: list[str]):
        self.words = sorted({unicodedata.normalize("NFC", w).lower() for w in words})
        self.substring = language in SUBSTRING_STOP_WORD_LANGUAGES
        edge = r"[\p{L}\p{M}\p{N}]"
        self.patterns = [regex.compile(rf"(?<!{edge}){regex.escape(w)}(?!{edge})") for w in self.words]

    def __bool__(self) -> bool:
        return bool(self.words)

    def __call__(self, text: str) -> int:
        if self.substring:
            return sum(1 for w in self.words if w in text)
        lowered = text.lower()
        # the substring test (C speed) settles absent words; the regex only confirms word boundaries
        pairs = zip(self.words, self.patterns, strict=True)
        return sum(1 for w, pattern in pairs if w in lowered and pattern.search(lowered))


_STOP_WORD_CACHE: dict[tuple[str, tuple[str, ...]], _StopWords] = {}


def _stop_word_matcher(language: str, cfg: GopherQualityConfig) -> _StopWords | None:
    """The language's matcher; None when no list exists (the rule is skipped with a note); an empty matcher
    when the recipe switched the rule off for the language with ``[]``."""
    words = cfg.stop_words.get(language, STOP_WORDS.get(language))
    if words is None:
        return None
    key = (language, tuple(words))
    if key not in _STOP_WORD_CACHE:
        _STOP_WORD_CACHE[key] = _StopWords(language, words)
    return _STOP_WORD_CACHE[key]


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
    min_num_sentences: int | None = Field(default=3, description="C4: 3 (datatrove: 5)")
    min_words_per_line: int | None = Field(default=5, description="C4: 5 (datatrove: 3)")
    max_word_length: int | None = 1000
    filter_lorem_ipsum: bool = True
    filter_javascript: bool = True
    filter_curly_bracket: bool = True
    filter_policy: bool = True
    rewrite_text: bool = Field(default=True, description="replace the text by the kept lines, as C4 does")


class FineWebConfig(StrictModel):
    """FineWeb's own rules (Penedo et al. 2024, section 3)."""

    line_punct_thr: float | None = 0.12
    line_punct_exclude_zero: bool = False
    stop_chars: list[str] | None = Field(default=None, description="null: terminal punctuation of every script")
    short_line_thr: float | None = 0.67
    short_line_length: int = 30
    char_duplicates_ratio: float | None = Field(default=0.1, description="FineWeb: 0.1 (datatrove: 0.01)")
    new_line_ratio: float | None = Field(default=None, description="not a FineWeb rule; datatrove: 0.3")


#: What ``compat: datatrove`` changes in the defaults (the rest are equal); the definitions change in code.
DATATROVE_DEFAULTS: dict[str, dict[str, Any]] = {
    "c4": {"min_num_sentences": 5, "min_words_per_line": 3, "end_punctuation": list(C4_END_PUNCTUATION_DATATROVE)},
    "fineweb": {"char_duplicates_ratio": 0.01, "new_line_ratio": 0.3},
}


class QualityConfig(StrictModel):
    """Each rule family can be switched off with ``null``. Default: the papers' definitions and thresholds;
    ``compat: datatrove``: datatrove 0.10.1's definitions, with its defaults for every threshold not set."""

    compat: Literal["datatrove"] | None = Field(
        default=None, description="null: the papers' rules; datatrove: datatrove 0.10.1's exact behaviour"
    )
    gopher_quality: GopherQualityConfig | None = GopherQualityConfig()
    gopher_repetition: GopherRepetitionConfig | None = GopherRepetitionConfig()
    c4: C4Config | None = C4Config()
    fineweb: FineWebConfig | None = FineWebConfig()
    default_language: str | None = Field(
        default="en", description="language assumed when metadata has none (null: skip the stop-word rule)"
    )

    @model_validator(mode="before")
    @classmethod
    def _datatrove_defaults(cls, data: Any) -> Any:
        """Under ``compat: datatrove`` a threshold the recipe leaves out takes datatrove's default, not the paper's."""
        if not isinstance(data, dict) or data.get("compat") != "datatrove":
            return data
        data = dict(data)
        for family, defaults in DATATROVE_DEFAULTS.items():
            given = data.get(family, {})
            if given is None:
                continue  # family switched off
            if isinstance(given, BaseModel):
                given = given.model_dump(exclude_unset=True)
            if isinstance(given, dict):
                data[family] = {**defaults, **given}
        return data


class _Text:
    """One document's text under judgement. ``words`` are the words the Gopher rules count: whitespace-separated
    in the paper mode, datatrove's spaCy-style tokens under ``compat``. ``line_tokens`` (spaCy-style, per line)
    are what the sentence counter needs; both are computed once, and again only after C4 rewrites the text."""

    __slots__ = ("text", "language", "compat", "skipped", "_line_tokens", "_words")

    def __init__(self, text: str, language: str | None, compat: bool = False):
        self.text = text
        self.language = language
        self.compat = compat
        #: rules that could not apply to this document's language (counted by the stage)
        self.skipped: list[str] = []
        self._line_tokens: list[list[str]] | None = None
        self._words: list[str] | None = None

    @property
    def line_tokens(self) -> list[list[str]]:
        """Tokens of each line of ``text.splitlines()``; tokens never span lines, so these add up to the
        compat mode's ``words``."""
        if self._line_tokens is None:
            self._line_tokens = [split_words(line) for line in self.text.splitlines()]
        return self._line_tokens

    @property
    def words(self) -> list[str]:
        if self._words is None:
            if self.compat:
                self._words = [token for tokens in self.line_tokens for token in tokens]
            else:
                self._words = whitespace_words(self.text)
        return self._words

    @property
    def cached_line_tokens(self) -> list[list[str]] | None:
        """``line_tokens`` if they were computed already, without computing them."""
        return self._line_tokens

    def replace(self, text: str, line_tokens: list[list[str]] | None = None) -> None:
        if text != self.text:
            self.text, self._line_tokens, self._words = text, line_tokens, None

    def skip(self, rule: str) -> None:
        self.skipped.append(rule)


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

    def covered_chars(self, n: int) -> int:
        """Characters of the words covered by a repeat of an n-gram, each word counted once however many
        repeats overlap it — Gopher's "fraction of characters contained within all duplicate n-grams, taking
        care not to count characters that occur in overlapping n-grams more than once". A repeat is every
        occurrence after the first (as for duplicate lines). Unlike ``duplicated_chars`` no n-gram is skipped:
        datatrove's left-to-right skip misses repeats that start inside an earlier one."""
        positions, keys, _ = self._level(n)
        words = self.words
        seen: set[tuple[str, ...]] = set()
        chars = covered_to = 0
        for idx, gram in zip(positions, keys, strict=True):
            if gram not in seen:
                seen.add(gram)
                continue
            start, end = max(idx, covered_to), idx + n  # positions ascend, so the covered words are a prefix
            if start < end:
                chars += sum(map(len, words[start:end]))
                covered_to = end
        return chars


def gopher_quality(doc: _Text, cfg: GopherQualityConfig, metrics: dict[str, Any]) -> Failure | None:
    """Gopher's quality rules as appendix A of the paper states them, on whitespace-separated words."""
    if doc.compat:
        return _gopher_quality_datatrove(doc, cfg, metrics)
    text, words = doc.text, doc.words
    n_words = len(words)
    metrics["words"] = n_words
    if cfg.min_doc_words is not None and n_words < cfg.min_doc_words:
        return "gopher_short_doc", n_words
    if cfg.max_doc_words is not None and n_words > cfg.max_doc_words:
        return "gopher_long_doc", n_words
    n_words = n_words or 1

    # mean word length; CJK units and Hangul words are left out, and the rule is skipped where they dominate
    n_unspaced, unspaced_chars = unspaced_units(text)
    spaced = len(words) - n_unspaced
    if spaced <= 0 or spaced * 2 < len(words):
        doc.skip(_SKIP_AVG)
    elif cfg.min_avg_word_length is not None or cfg.max_avg_word_length is not None:
        failure = _avg_length_failure((sum(map(len, words)) - unspaced_chars) / spaced, cfg, metrics)
        if failure is not None:
            return failure

    failure = _symbol_failure(text, n_words, cfg)
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
        if ratio < cfg.min_alpha_words_ratio:
            return "gopher_below_alpha_threshold", ratio

    if cfg.min_stop_words is not None:
        matcher = None if doc.language is None else _stop_word_matcher(doc.language, cfg)
        if matcher is None:
            doc.skip(_SKIP_STOP)
        elif matcher:
            found = matcher(text)
            metrics["stop_words"] = found
            if found < cfg.min_stop_words:
                return "gopher_enough_stop_words", found
    return None


def _avg_length_failure(avg: float, cfg: GopherQualityConfig, metrics: dict[str, Any]) -> Failure | None:
    """Gopher's mean-word-length bounds (both paths; they differ only in which words they average)."""
    metrics["avg_word_length"] = round(avg, 3)
    if cfg.min_avg_word_length is not None and avg < cfg.min_avg_word_length:
        return "gopher_below_avg_threshold", avg
    if cfg.max_avg_word_length is not None and avg > cfg.max_avg_word_length:
        return "gopher_above_avg_threshold", avg
    return None


def _symbol_failure(text: str, n_words: int, cfg: GopherQualityConfig) -> Failure | None:
    """Gopher's hash and ellipsis to word ratios (both paths; ``n_words`` is each path's word count)."""
    if cfg.max_symbol_word_ratio is not None:
        ratio = text.count("#") / n_words
        if ratio > cfg.max_symbol_word_ratio:
            return "gopher_too_many_hashes", ratio
        ratio = (text.count("...") + text.count("…")) / n_words
        if ratio > cfg.max_symbol_word_ratio:
            return "gopher_too_many_ellipsis", ratio
    return None


def _gopher_quality_datatrove(doc: _Text, cfg: GopherQualityConfig, metrics: dict[str, Any]) -> Failure | None:
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
        doc.skip(_SKIP_AVG)
    else:
        failure = _avg_length_failure(stats.spaced_chars / stats.spaced_words, cfg, metrics)
        if failure is not None:
            return failure

    failure = _symbol_failure(text, n_words, cfg)
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
            doc.skip(_SKIP_STOP)
    return None


_BLANK_LINES = re.compile(r"\n[^\S\n]*\n\s*")


def gopher_repetition(doc: _Text, cfg: GopherRepetitionConfig, metrics: dict[str, Any]) -> Failure | None:
    """Gopher's repetition rules (appendix A, table A1). Paper mode: paragraphs are the blocks between blank
    lines, lines the stripped lines that hold a letter or digit, words whitespace-separated, and repeated
    n-gram characters are counted once however many repeats overlap them. Compat: datatrove's splits and
    left-to-right skip."""
    text = doc.text
    size = len(text) or 1
    if doc.compat:
        paragraphs = split_paragraphs(text)
    else:
        paragraphs = [p for p in map(str.strip, _BLANK_LINES.split(text)) if p] or [""]
    dups, dup_chars = find_duplicates(paragraphs)
    if cfg.dup_para_frac is not None and dups / len(paragraphs) > cfg.dup_para_frac:
        return "dup_para_frac", dups / len(paragraphs)
    if cfg.dup_para_char_frac is not None and dup_chars / size > cfg.dup_para_char_frac:
        return "dup_para_char_frac", dup_chars / size

    if doc.compat:
        lines = split_lines(text)
    else:  # the lines of text: a line of only punctuation ('|', '-----') is layout, not a line that can repeat
        lines = [line for line in map(str.strip, text.split("\n")) if line and has_word_char(line)] or [""]
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

    repeated = ngrams.duplicated_chars if doc.compat else ngrams.covered_chars
    for n, threshold in cfg.dup_n_grams:
        ratio = repeated(n) / size
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
        # a script without sentence-final marks (Thai, Lao) would lose every line: skip, with a note
        no_marks = doc.language in NO_SENTENCE_MARK_LANGUAGES
        terminal_punct = cfg.filter_no_terminal_punct and not no_marks
        min_sentences = None if no_marks else cfg.min_num_sentences
        if no_marks and (cfg.filter_no_terminal_punct or cfg.min_num_sentences is not None):
            doc.skip(_SKIP_C4_PUNCT)
        # tokens are only needed to count sentences: reuse them when compat's word count already split the
        # lines, otherwise split only the lines that survive the line filters
        lines = doc.text.splitlines()
        cached = doc.cached_line_tokens
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
            if terminal_punct and (not line.endswith(self.end_punctuation) or line.endswith("...")):
                continue
            # C4's code counts the words after removing citations, datatrove before
            counted = original if doc.compat else line
            if cfg.min_words_per_line is not None and line_words(counted)[0] < cfg.min_words_per_line:
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
            if min_sentences is not None:
                if tokens is None:
                    tokens = split_words(line)
                sentences += count_sentences(tokens, self.sentence_end)
            kept.append(line)
            kept_tokens.append(tokens)
            complete = complete and tokens is not None
        metrics["c4_sentences"] = sentences
        if min_sentences is not None and sentences < min_sentences:
            return "c4_too_few_sentences", float(sentences)
        if cfg.rewrite_text:
            # kept lines are stripped and non-empty, so they are exactly the new text's lines
            doc.replace("\n".join(kept), kept_tokens if complete else None)
        return None


class _FineWebRules:
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
        self.single_chars = frozenset(chars) if all(len(c) == 1 for c in chars) else None
        self.stop_chars = chars
        self.compat = compat

    def _ends(self, line: str) -> bool:
        if self.single_chars is not None:  # one set lookup instead of endswith over 159 marks
            return line[-1] in self.single_chars
        return line.endswith(self.stop_chars)

    def __call__(self, doc: _Text, cfg: FineWebConfig, metrics: dict[str, Any]) -> Failure | None:
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
            doc.skip(_SKIP_FW_PUNCT)
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
        if cfg.short_line_thr is not None and (ratio > cfg.short_line_thr if compat else ratio >= cfg.short_line_thr):
            return "fineweb_short_line_ratio", ratio
        ratio = find_duplicates(lines)[1] / max(len(text) - text.count("\n"), 1)
        metrics["char_dup_ratio"] = round(ratio, 4)
        if cfg.char_duplicates_ratio is not None and (
            ratio > cfg.char_duplicates_ratio if compat else ratio >= cfg.char_duplicates_ratio
        ):
            return "fineweb_char_dup_ratio", ratio
        if cfg.new_line_ratio is not None and doc.words:
            ratio = text.count("\n") / len(doc.words)
            metrics["list_ratio"] = round(ratio, 4)
            if ratio > cfg.new_line_ratio:
                return "fineweb_list_ratio", ratio
        return None


@dataclass
class Verdict:
    """What the stage decided about one text."""

    failure: Failure | None
    text: str
    metrics: dict[str, Any]
    #: rules skipped because they cannot judge the document's language (``_SKIP_*`` names)
    skipped: list[str]


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
        compat = cfg.compat == "datatrove"
        rules: list[tuple[Callable[[_Text, Any, dict[str, Any]], Failure | None], Any]] = []
        if cfg.gopher_quality is not None:
            rules.append((gopher_quality, cfg.gopher_quality))
        if cfg.gopher_repetition is not None:
            rules.append((gopher_repetition, cfg.gopher_repetition))
        if cfg.c4 is not None:
            rules.append((_C4Rules(cfg.c4), cfg.c4))
        if cfg.fineweb is not None:
            rules.append((_FineWebRules(cfg.fineweb, compat), cfg.fineweb))
        self._rules = rules

    def assess(self, text: str, language: str | None) -> Verdict:
        """The stage's whole decision on one text, with the rules its language made it skip."""
        self.setup()
        assert self._rules is not None
        metrics: dict[str, Any] = {}
        if not text or not text.strip():
            return Verdict(("no_text", None), text, metrics, [])
        doc = _Text(text, language, compat=self.config.compat == "datatrove")
        for rule, cfg in self._rules:
            failure = rule(doc, cfg, metrics)
            if failure is not None:
                return Verdict(failure, doc.text, metrics, doc.skipped)
        return Verdict(None, doc.text, metrics, doc.skipped)

    def judge(self, text: str, language: str | None) -> tuple[Failure | None, str, dict[str, Any]]:
        """(failure or None, possibly rewritten text, metrics) for one text."""
        verdict = self.assess(text, language)
        return verdict.failure, verdict.text, verdict.metrics

    def process(self, doc: Document) -> Drop | None:
        language = doc.metadata.get("language") or self.config.default_language
        try:
            verdict = self.assess(doc.text, language)
        except Exception as error:  # noqa: BLE001 - a document that breaks a rule is a counted drop, not a crash
            return Drop(rule="quality_error", extra={"error": f"{type(error).__name__}: {error}"[:200]})
        doc.metadata["quality"] = verdict.metrics
        if verdict.skipped:
            # a rule that could not judge this language is counted, per rule and language, never silent
            doc.metadata["quality_skipped"] = verdict.skipped
            for rule in verdict.skipped:
                self.stat_update(f"quality_skipped_{rule}_{language or 'unknown'}")
        if verdict.failure is not None:
            rule, score = verdict.failure
            return Drop(rule=rule, score=score)
        doc.text = verdict.text
        return None


__all__ = [
    "C4Config",
    "FineWebConfig",
    "GopherQualityConfig",
    "GopherRepetitionConfig",
    "QualityConfig",
    "QualityStage",
    "STOP_WORDS",
    "Verdict",
]
