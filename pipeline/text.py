"""Word, line and paragraph splitting shared by the filter stages, aware of scripts written without spaces.

Why hand-written (measured, docs/reference.md): datatrove's ``split_into_words`` runs a spaCy (or jieba, or nltk)
tokenizer chosen for one fixed language per step; on 2 KB English pages that was ~80 % of the Gopher
filters' CPU, and a regex splitter made the same keep/drop decisions 3.8x faster. tokenmill also needs
one split that works for every document of a multilingual source, whatever ``metadata["language"]`` says.

The splitter imitates spaCy's English tokenizer where the quality rules can see it:

* words are runs of letters, digits, marks and ``_``, joined through ``.``, ``'``, ``’`` and ``/`` between
  word characters (``U.S``, ``3.5``, ``don't``, ``and/or``), and through ``,``/``:`` between digits
  (``1,000``, ``10:30``); URLs and e-mail addresses stay whole;
* every other non-space character is its own token (``(``, ``.``, ``#``, ``—``), except runs of periods or hyphens;
* abbreviations keep their period (``U.S.``, ``e.g.``, ``F.``, ``Mr.``) so they do not end a sentence;
* scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar) are cut into
  short fixed units: two characters for Han/kana (Chinese words average ~1.7 characters), three for the
  South-East Asian scripts. Word-count thresholds then mean roughly the same amount of text as in English,
  so a normal Chinese article passes ``min_doc_words`` and a one-line spam page does not.

Hangul is space-delimited and is split like any alphabetic script.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import filterfalse

import regex

# Characters of scripts written without spaces between words, as explicit Unicode blocks so that the
# stdlib ``re`` can search for them (``regex``'s \p{Han} classes cost ~20 µs per 2 KB search, measured once with
# timeit on a 2-core VM):
# CJK radicals, 々〆〇, Hiragana, Katakana (with ー), Han (BMP, compatibility, supplementary planes),
# half-width Katakana; then Thai, Lao, Myanmar, Khmer.
_CJK = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3041-\u3096\u3099-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_SEA = "\u0e00-\u0eff\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f\u1780-\u17ff\u19e0-\u19ff"
_HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7ff"
_WORD_CHAR = rf"[[\p{{L}}\p{{M}}\p{{N}}_]--[{_CJK}{_SEA}]]"

# what joins word pieces into one token: ' ’ / always, '.' unless it is "end.Start" (spaCy splits
# a period between a lower- and an upper-case letter), ',' and ':' between digits
_JOINER = r"(?:['’/]|(?<!\p{Ll})\.|\.(?!\p{Lu})|(?<=\d)[,:](?=\d))"

# abbreviations that keep their period, so that "Mr. Smith" or "e.g. this" does not end a sentence
_TITLES = (
    "Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Mt|vs|etc|Inc|Ltd|Co|Corp|Gen|Gov|Sen|Rep|Rev"
    "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)

_TOKEN_RE = regex.compile(
    rf"""
    (?:https?://|www\.)\S+?(?=[.,;:!?)\]"'»”’]*(?:\s|$))        # URLs stay one token, trailing punctuation not
    |[\w.+-]+@[\w-]+(?:\.[\w-]+)+                             # e-mail addresses
    |[{_CJK}]{{1,2}}                                          # Han/kana: two-character units
    |[{_SEA}]{{1,3}}                                          # Thai, Lao, Khmer, Myanmar: three
    |(?:\p{{L}}\.)+(?!{_WORD_CHAR}|\.)                            # U.S. e.g. a.m. z.B. F. keep their period
    |(?:{_TITLES})\.(?!{_WORD_CHAR}|\.)                            # Mr. Dr. Inc. Jan.
    |{_WORD_CHAR}+(?:{_JOINER}{_WORD_CHAR}+)*                   # words (don't, 3.5, 1,000, and/or)
    |\.{{2,}}|-{{2,}}                                           # so are '...' and '--'
    |\S                                                       # any other character alone
    """,
    regex.VERSION1 | regex.VERBOSE,
)
_NOSPACE_RE = re.compile(f"[{_CJK}{_SEA}]")
_HANGUL_RE = re.compile(f"[{_HANGUL}]")
_UNSPACED_RE = re.compile(f"[{_CJK}{_SEA}{_HANGUL}]")
_NOSPACE_UNIT_RE = re.compile(f"[{_CJK}]{{1,2}}|[{_SEA}]{{1,3}}")
_HANGUL_WORD_RE = regex.compile(rf"(?=[{_HANGUL}]){_WORD_CHAR}+", regex.VERSION1)


#: languages whose text has no spaces between words: stop words are looked up as substrings.
NO_SPACE_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo", "yue", "wuu"})


_TITLE_SET = frozenset(_TITLES.split("|"))
_TRAILING_MARKS = frozenset(',.;:!?)"')


def split_words(text: str) -> list[str]:
    """Tokens of ``text`` (words and single punctuation marks), never containing whitespace.

    Same result as running the token regex over the whole text, but ~3x faster (benchmarks/micro_timings.py):
    tokens never span whitespace, so the text is cut with ``str.split`` and the regex only runs on the pieces that
    are not
    a plain word or a plain word plus one trailing mark (``word,`` ``word.``). Text in a no-space script
    goes through the regex whole (its pieces are long runs that need cutting anyway).
    """
    if has_no_space_script(text):
        return _TOKEN_RE.findall(text)
    out: list[str] = []
    append, extend, findall = out.append, out.extend, _TOKEN_RE.findall
    for piece in text.split():
        if piece.isalnum():
            append(piece)
            continue
        last = piece[-1]
        if last in _TRAILING_MARKS and piece[:-1].isalnum():
            if last == "." and (len(piece) == 2 and piece[0].isalpha() or piece[:-1] in _TITLE_SET):
                append(piece)  # 'F.' 'Mr.': abbreviations keep their period
            else:
                append(piece[:-1])
                append(last)
            continue
        extend(findall(piece))
    return out


@lru_cache(maxsize=1)
def punctuation_set() -> frozenset[str]:
    """datatrove's punctuation characters: a token made only of these is a 'symbol', not a word."""
    from datatrove.utils.text import PUNCTUATION_SET

    return frozenset(PUNCTUATION_SET)


@lru_cache(maxsize=1)
def terminal_punctuation() -> tuple[str, ...]:
    """datatrove's sentence-final marks of every script (。！？ ؟ ۔ । ॥ …), as an ``endswith`` tuple."""
    from datatrove.utils.text import TERMINAL_PUNCTUATION

    return tuple(sorted(TERMINAL_PUNCTUATION))


def is_symbol(token: str) -> bool:
    """A token with no character outside the punctuation set (``.``, ``...``, ``—``)."""
    punct = punctuation_set()
    return all(ch in punct for ch in token)


def has_no_space_script(text: str) -> bool:
    """Whether ``text`` holds Han, kana, Thai, Lao, Khmer or Myanmar characters."""
    return not text.isascii() and _NOSPACE_RE.search(text) is not None


@dataclass
class WordStats:
    """The counts the quality rules need from one word split."""

    words: list[str]
    non_symbol: list[str]
    #: non-symbol tokens that are fixed-size units of a no-space script, or Hangul words
    n_unspaced: int = 0
    unspaced_chars: int = 0
    #: the words and their total length that the average-word-length rule may use
    spaced_words: int = field(init=False)
    spaced_chars: int = field(init=False)

    def __post_init__(self) -> None:
        self.spaced_words = len(self.non_symbol) - self.n_unspaced
        self.spaced_chars = sum(map(len, self.non_symbol)) - self.unspaced_chars


def word_stats(text: str, words: list[str] | None = None) -> WordStats:
    """Split ``text`` once and count what the Gopher rules need.

    Units of no-space scripts and Hangul words are counted apart: their length in characters says nothing
    about junk the way a 2-letter or 25-letter Latin 'word' does, so the average-word-length rule skips them.
    """
    if words is None:
        words = split_words(text)
    punct = punctuation_set()
    # only a token that starts with a punctuation character can be a symbol ('.', '...', '__')
    non_symbol = [w for w in words if w[0] not in punct or (len(w) > 1 and not is_symbol(w))]
    n_unspaced = unspaced_chars = 0
    if not text.isascii():
        units = _NOSPACE_UNIT_RE.findall(text) if _NOSPACE_RE.search(text) else []
        hangul = _HANGUL_WORD_RE.findall(text) if _HANGUL_RE.search(text) else []
        n_unspaced = len(units) + len(hangul)
        unspaced_chars = sum(map(len, units)) + sum(map(len, hangul))
    return WordStats(words, non_symbol, n_unspaced, unspaced_chars)


def line_words(line: str) -> tuple[int, int]:
    """(words, longest word) of one line, as C4 counts them: whitespace-separated pieces, except that a
    no-space script counts in units (a Chinese sentence is neither one word nor one 1,000-character word)."""
    if not has_no_space_script(line):
        pieces = line.split()
        return len(pieces), max(map(len, pieces), default=0)
    units = _NOSPACE_UNIT_RE.findall(line)
    rest = _NOSPACE_RE.sub(" ", line).split()
    return len(units) + len(rest), max(map(len, rest), default=2 if units else 0)


def count_sentences(tokens: list[str], sentence_end: frozenset[str]) -> int:
    """Sentences in a line's tokens, the way spaCy's sentencizer counts them.

    A sentence starts at the first non-punctuation token after a token that is a sentence-final mark;
    ``...`` and marks inside words (``3.5``, ``U.S.``) are not such tokens.
    """
    if sentence_end.isdisjoint(tokens):
        return 1
    sentences, seen_end = 1, False
    for token in tokens:
        if token in sentence_end:
            seen_end = True
        elif seen_end and not unicodedata.category(token[0]).startswith("P"):
            sentences += 1
            seen_end = False
    return sentences


#: what may follow a line's last sentence: closing quotes and brackets (all punctuation), spaces
_SENTENCE_CLOSERS = ")\"'»”’] \t"


@lru_cache(maxsize=8)
def _sentence_tail(sentence_end: frozenset[str]) -> str:
    return "".join(sorted(sentence_end)) + _SENTENCE_CLOSERS


def line_sentences(line: str, sentence_end: frozenset[str]) -> int:
    """``count_sentences(split_words(line), sentence_end)``, without splitting a line whose only sentence-final
    marks are at its end (two lines of three in the real-text set): a line is one sentence unless a final-mark
    token is followed by a token that starts with no punctuation. Every final mark is one character, so with
    none left once the closing run (final marks, closing quotes and brackets, spaces) is stripped, the final-mark
    tokens all lie in that run, and every token after them is made of its characters: punctuation or another
    final mark, which starts no sentence. Tokens never start in that run and reach back into the text before it.
    """
    if sentence_end.isdisjoint(line.rstrip(_sentence_tail(sentence_end))):
        return 1
    return count_sentences(split_words(line), sentence_end)


def split_paragraphs(text: str) -> list[str]:
    """``re.split(r"\n{2,}", text.strip())`` — Gopher's paragraphs — with ``str.split`` (~5x faster,
    benchmarks/micro_timings.py)."""
    stripped = text.strip()
    if "\n\n\n" not in stripped:
        return stripped.split("\n\n")
    # runs of 3+ newlines leave empty pieces or pieces starting with '\n'; the stripped text has no
    # paragraph at either end that could be legitimately empty
    return [piece.lstrip("\n") for piece in stripped.split("\n\n") if piece.strip("\n")]


def split_lines(text: str) -> list[str]:
    """``re.split(r"\n+", text)`` — Gopher's lines, with the empty first/last line when the text starts/ends
    with a newline — with ``str.split`` (~6x faster, benchmarks/micro_timings.py)."""
    lines = [line for line in text.split("\n") if line]
    if text.startswith("\n"):
        lines.insert(0, "")
    if text.endswith("\n"):
        lines.append("")
    return lines or [""]


def lid_units(text: str, min_chars: int = 40, max_chars: int | None = None) -> list[str]:
    """Pieces of text for language ID: non-empty lines, short ones merged with the next line.

    Extracted web text puts each block element (paragraph, heading, menu item) on its own line, so a
    line is the natural paragraph. Lines shorter than ``min_chars`` (menus, headings, "Share") are
    merged forward until the piece is long enough: fastText is unreliable on three words. No piece holds
    a newline (fastText's ``predict`` refuses them). ``max_chars`` caps the text examined on huge
    documents (a book needs no more than its first 100k characters to be identified).
    """
    units: list[str] = []
    pending: list[str] = []
    pending_chars = 0
    seen = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        pending.append(line)
        pending_chars += len(line)
        seen += len(line)
        if pending_chars >= min_chars:
            units.append(" ".join(pending))
            pending, pending_chars = [], 0
        if max_chars is not None and seen >= max_chars:
            break
    if pending:
        if units and pending_chars < min_chars:
            units[-1] = units[-1] + " " + " ".join(pending)
        else:
            units.append(" ".join(pending))
    return units


#: a word of code or of a command line: brackets, assignment, quotes, a comment or shell sigil, an underscore,
#: or a dotted name (``ctx.getServiceManager()``, ``os.path``); prose has few such words
#: the characters of ``_CODE_MARK`` (the dot of a dotted name included): counting them bounds the code words
_CODE_CHARS = '()[]{}=<>;#$"\\_.'
_CODE_MARK = re.compile(r"[()\[\]{}=<>;#$\"\\_]|\w\.\w")
_CODE_CHAR_RE = re.compile("[" + re.escape(_CODE_CHARS) + "]")
#: the share of a paragraph's words that makes it code
CODE_WORD_SHARE = 0.4


def looks_like_code(unit: str) -> bool:
    """Whether at least ``CODE_WORD_SHARE`` of a paragraph's whitespace-separated words are words of code.

    Why: language ID on a page that mixes prose with program code or commands lets the code vote, and fastText
    calls code English at low confidence (0.2-0.5): a Danish page on Python macros was labelled English at 0.34
    and dropped. Measured on the real-text set (docs/filters.md): leaving such paragraphs out changes the
    decision on 10 of 1,500 real pages, each to the page's own language, and on none of the spam pages.
    """
    # a code word holds at least one mark: one pass over the text settles prose, the words are looked at only
    # when there are marks enough. Splitting into words was most of the cost (3.8 of 4.6 µs a paragraph of the
    # real-text set), so prose is settled against a lower bound of the word count first: a run of k spaces
    # adds k to count(" ") and k // 2 to count("  "), so count(" ") - 2 * count("  ") is at most the number of
    # runs, and there are at least that many words less one (leading and trailing runs)
    marks = len(_CODE_CHAR_RE.findall(unit))
    if marks < CODE_WORD_SHARE * (unit.count(" ") - 2 * unit.count("  ") - 1):
        return False
    words = unit.split()
    need = CODE_WORD_SHARE * len(words)
    if not words or marks < need:
        return False
    return sum(1 for word in words if _CODE_MARK.search(word)) >= need


# ---------------------------------------------------------------- Unicode normalisation after extraction

#: characters with no width that only change rendering or hyphenation: soft hyphen, Arabic letter mark,
#: Mongolian vowel separator, zero-width space, left-to-right/right-to-left marks, bidi embeddings and
#: isolates, word joiner, invisible math operators, deprecated format controls, BOM / zero-width no-break space.
#: U+200C/U+200D (zero-width non-joiner / joiner) are kept: they spell Persian and Indic words and emoji.
INVISIBLE_CHARS = (
    "\u00ad\u061c\u180e\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"
)


#: the space separators (Unicode category Zs) other than U+0020; a test checks the list against ``unicodedata``
SPACE_CHARS = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"


def _normalise_table() -> dict[int, str | None]:
    table: dict[int, str | None] = {ord(ch): None for ch in INVISIBLE_CHARS}
    table.update({ord(ch): " " for ch in SPACE_CHARS})
    # every other line break str.splitlines() knows, so that split("\n") and splitlines() see the same lines
    table.update({0x0B: "\n", 0x0C: "\n", 0x1C: "\n", 0x1D: "\n", 0x1E: "\n", 0x85: "\n"})
    table.update({0x2028: "\n", 0x2029: "\n\n", 0x0D: "\n"})
    return table


_NORMALISE_TABLE = _normalise_table()
_NORMALISE_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_NORMALISE_TABLE)) + "]")


def _table_by_replacement() -> list[tuple[re.Pattern[str], str]]:
    """``_NORMALISE_TABLE`` as one character class per replacement ("", " ", "\n", "\n\n"). Applied one after
    the other they give ``str.translate``'s result: no replacement holds a character of any class."""
    groups: dict[str, list[int]] = {}
    for code, replacement in sorted(_NORMALISE_TABLE.items()):
        groups.setdefault(replacement or "", []).append(code)
    assert not any(ord(ch) in _NORMALISE_TABLE for replacement in groups for ch in replacement)
    return [(re.compile("[" + "".join(re.escape(chr(c)) for c in codes) + "]"), rep) for rep, codes in groups.items()]


_NORMALISE_CLASSES = _table_by_replacement()


def _translate(text: str) -> str:
    """``text.translate(_NORMALISE_TABLE)``, a C-level ``re.sub`` per replacement instead: ``translate`` with a
    dict looks up every character of a non-ASCII text (0.33 ms of a 7 KB /usr/share/doc page, ``normalize_text``'s
    whole cost there)."""
    for pattern, replacement in _NORMALISE_CLASSES:
        text = pattern.sub(replacement, text)
    return text


def normalize_text(text: str) -> str:
    """Text with Unicode spaces made ASCII spaces, invisible characters removed and line breaks made ``\\n``,
    in NFC. Run once on every document, right after extraction (and on text inputs, which skip extraction).

    * every space separator (category Zs: U+00A0 from ``&nbsp;``, U+2000–U+200A, U+202F, U+205F, U+3000 …)
      becomes U+0020, so that a page whose words are joined by NBSPs has words;
    * zero-width and bidi format characters (``INVISIBLE_CHARS``: soft hyphen, U+200B, U+2060, U+FEFF …)
      are deleted: ``the\\u200b`` must be the word ``the``;
    * ``\\r\\n``, ``\\r``, U+2028, U+0085, form and vertical feeds become ``\\n`` (U+2029 a blank line), so the
      rules that split on ``\\n`` and those that use ``str.splitlines()`` agree on the lines;
    * NFC composes ``e`` + U+0301 into ``é``, so stop words and duplicates compare equal however typed.

    Why this and not a library: the table comes from the stdlib's ``unicodedata`` (all Zs characters),
    applied with ``str.translate`` only when a search finds something to change (most pages: one C-level scan).
    NFKC would also do the spaces but rewrites full-width letters, ligatures and superscripts (``x²`` → ``x2``),
    changing the text the user keeps; ftfy's ``fix_text`` leaves U+200B and soft hyphens in and also
    re-decodes mojibake and straightens quotes, which is not this stage's job.
    """
    if text.isascii():
        if "\r" in text or "\x0b" in text or "\x0c" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text:
            text = text.replace("\r\n", "\n").translate(_NORMALISE_TABLE)
        return text
    if _NORMALISE_RE.search(text) is not None:
        text = _translate(text.replace("\r\n", "\n"))
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


# ---------------------------------------------------------------- whitespace words (the papers' definition)

_WS_WORD_RE = re.compile(rf"[{_CJK}]{{1,2}}|[{_SEA}]{{1,3}}|[^\s{_CJK}{_SEA}]+")
_WORD_CHAR_RE = re.compile(r"[^\W_]")
_HAS_WORD_CHAR = _WORD_CHAR_RE.search


def whitespace_words(text: str) -> list[str]:
    """Words as Gopher (Rae et al. 2021) and C4 (``line.split()``) count them: whitespace-separated tokens, so
    ``"end."``, ``"(see"`` and ``"3.5"`` are words and punctuation is not split off. A token made only of
    punctuation or symbols (``—``, ``|``, ``•``, ``*``, ``-``) is a mark between words, not a word: with it
    counted, pydoc's ``|`` gutter or a dash used as a parenthesis would make prose fail the
    80 %-of-words-have-a-letter rule; tables of numbers still fail it (a number is a word without a letter).

    Extension for scripts the papers never saw: runs of Han/kana are cut into 2-character units and Thai,
    Lao, Khmer, Myanmar into 3-character units (as ``split_words`` does), so "50 words" means about as much
    text in Chinese as in English.
    """
    if has_no_space_script(text):
        return [w for w in _WS_WORD_RE.findall(text) if _WORD_CHAR_RE.search(w)]
    words = text.split()
    # most tokens are plain words (isalnum); the rest need one C-level search each, and a token of only
    # punctuation is rare enough that the list is rebuilt only when there is one
    if all(map(_HAS_WORD_CHAR, filterfalse(str.isalnum, words))):
        return words
    return [w for w in words if w.isalnum() or _HAS_WORD_CHAR(w)]


def has_word_char(line: str) -> bool:
    """Whether a line holds a letter or digit (a line of only ``|`` or ``-----`` is layout, not text)."""
    return _WORD_CHAR_RE.search(line) is not None


def unspaced_units(text: str) -> tuple[int, int]:
    """(count, characters) of the no-space-script units and Hangul words in ``text``: the words whose length
    says nothing about junk, which the average-word-length rule leaves out."""
    if text.isascii() or _UNSPACED_RE.search(text) is None:  # one scan settles a page in neither script
        return 0, 0
    units = _NOSPACE_UNIT_RE.findall(text) if _NOSPACE_RE.search(text) else []
    hangul = _HANGUL_WORD_RE.findall(text) if _HANGUL_RE.search(text) else []
    return len(units) + len(hangul), sum(map(len, units)) + sum(map(len, hangul))
