"""Gopher's repetition rules (Rae et al. 2021, table A1): duplicate paragraphs, lines and word n-grams. Paper mode
and datatrove's ``GopherRepetitionFilter`` (``compat: datatrove``) differ in how they split paragraphs and lines
and in how repeated n-gram characters are counted (``NGrams.covered_chars`` / ``NGrams.duplicated_chars``)."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from itertools import compress
from typing import Any

from pipeline.curate.config import GopherRepetitionConfig
from pipeline.curate.quality.document import Failure, Text
from pipeline.curate.quality.novelty import adjacent_copies, novel_word_share
from pipeline.text import has_word_char, split_lines, split_paragraphs, whitespace_words

#: a field label: a line of at most this many words that does not end a sentence ("Syntax", "Example:",
#: "Default value", "A", "table_name sql_identifier"; three words are already boilerplate: "Share this page")
LABEL_WORDS = 2
_SENTENCE_END = (".", "!", "?", "。", "！", "？", "؟", "۔", "।")
#: a signature: ``name(arguments)``, as a function reference heads each entry (``DAVERAGE(Database; Field;
#: Criteria)``, ``int fsync(int fd);``); the argument lists repeat from entry to entry
_SIGNATURE = re.compile(r"^[\w .:*&$<>\[\]-]{1,80}\([^()]*\)\s*;?$")


def set_aside(text: str, max_share: float) -> set[str]:
    """The lines of ``text`` (stripped) that the paper-mode duplication measures leave out: field labels that
    occur more than once and signatures. Empty when together they exceed ``max_share`` of the characters: then
    they are what the page is made of (a navigation page, a list of links), and every line counts.

    Why: a function reference, an option list or a database-schema page heads each entry with the same labels
    ("Syntax", "Parameters", "Example"; column headers of each table) and a signature whose argument list recurs;
    counted as duplicate lines, paragraphs and n-grams they drop pages a reader judges good (measured on
    LibreOffice's and PostgreSQL's help pages, docs/filters.md), while the entries' own text still counts.
    """
    lines = [line.strip() for line in text.split("\n")]
    counts = Counter(line for line in lines if line)
    aside = {
        line
        for line, count in counts.items()
        if (count > 1 and len(line.split()) <= LABEL_WORDS and not line.endswith(_SENTENCE_END))
        or (_SIGNATURE.match(line) and len(line.split()) <= 12)
    }
    if not aside or sum(len(line) * counts[line] for line in aside) > max_share * len(text):
        return set()
    return aside


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

    def top_positions(self, n: int) -> list[int]:
        """Positions of the most frequent repeated n-gram (the one ``top_chars`` measures); empty when none
        repeats."""
        positions, keys, repeated = self._level(n)
        if not repeated:
            return []
        top = max(repeated.values())
        gram = next(key for key, count in repeated.items() if count == top)
        return [i for i, key in zip(positions, keys, strict=True) if key == gram]

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


_BLANK_LINES = re.compile(r"\n[^\S\n]*\n\s*")


def repetition_ratios(doc: Text, cfg: GopherRepetitionConfig) -> Iterator[tuple[str, float]]:
    """Each repetition measure of ``doc`` as ``(rule, ratio)``, in the order the rules test them, computed only
    when asked for (the rule stops at the first failure; ``benchmarks/derive_thresholds.py`` takes them all).
    Paper mode: paragraphs are the blocks between blank lines, lines the stripped lines that hold a letter or
    digit, words whitespace-separated, and repeated n-gram characters are counted once however many repeats
    overlap them. Compat: datatrove's splits and left-to-right skip."""
    text = doc.text
    size = len(text) or 1
    aside = set_aside(text, cfg.max_label_share) if cfg.set_aside_labels and not doc.compat else set()
    if doc.compat:
        paragraphs = split_paragraphs(text)
    else:
        paragraphs = [p for p in map(str.strip, _BLANK_LINES.split(text)) if p and p not in aside] or [""]
    dups, dup_chars = find_duplicates(paragraphs)
    yield "dup_para_frac", dups / len(paragraphs)
    yield "dup_para_char_frac", dup_chars / size

    if doc.compat:
        lines = split_lines(text)
    else:  # the lines of text: a line of only punctuation ('|', '-----') is layout, not a line that can repeat
        lines = [line for line in map(str.strip, text.split("\n")) if line and has_word_char(line)]
        lines = [line for line in lines if line not in aside] or [""]
    dups, dup_chars = find_duplicates(lines)
    yield "dup_line_frac", dups / len(lines)
    yield "dup_line_char_frac", dup_chars / size

    words = doc.words
    if aside:  # the n-grams of the entries' text, without the labels and signatures between them
        words = whitespace_words("\n".join(line for line in text.split("\n") if line.strip() not in aside))
    ngrams = NGrams(words)
    for n, _ in cfg.top_n_grams:
        yield f"top_{n}_gram", ngrams.top_chars(n) / size
    repeated = ngrams.duplicated_chars if doc.compat else ngrams.covered_chars
    for n, _ in cfg.dup_n_grams:
        yield f"duplicated_{n}_n_grams", repeated(n) / size


def gopher_repetition(doc: Text, cfg: GopherRepetitionConfig, metrics: dict[str, Any]) -> Failure | None:
    """Gopher's repetition rules (appendix A, table A1), on the measures of ``repetition_ratios``. A rule over its
    threshold drops the page unless ``min_novel_words`` says the repeats frame new words (``novelty.py``); the
    share is computed once, on the first rule that fails, and kept in the metrics as ``novel_words``."""
    thresholds: dict[str, float | None] = {
        "dup_para_frac": cfg.dup_para_frac,
        "dup_para_char_frac": cfg.dup_para_char_frac,
        "dup_line_frac": cfg.dup_line_frac,
        "dup_line_char_frac": cfg.dup_line_char_frac,
        **{f"top_{n}_gram": t for n, t in cfg.top_n_grams},
        **{f"duplicated_{n}_n_grams": t for n, t in cfg.dup_n_grams},
    }
    novel: float | None = None
    for rule, ratio in repetition_ratios(doc, cfg):
        if rule in _RECORDED:
            metrics[_RECORDED[rule]] = round(ratio, 4)
        threshold = thresholds[rule]
        if threshold is None or ratio <= threshold:
            continue
        if cfg.min_novel_words is None or doc.compat:
            return rule, ratio
        if rule.startswith("top_") and not opens_lines(doc, cfg, int(rule.split("_")[1])):
            return rule, ratio  # one phrase through the text: keyword stuffing, however new the rest is
        if not rule.startswith("duplicated_") and copied_blocks(doc.text):
            return rule, ratio  # a line or paragraph right after its own copy: pasted twice, not a frame
        if novel is None:
            novel = repeats_frame_new_words(doc, cfg)
            metrics["novel_words"] = round(novel, 4)
        if novel < cfg.min_novel_words:
            return rule, ratio
    return None


def opens_lines(doc: Text, cfg: GopherRepetitionConfig, n: int) -> bool:
    """Whether at least ``cfg.frame_line_share`` of the occurrences of the most frequent ``n``-gram of ``doc`` (as
    the top-n-gram rule measures it, over the whole text, labels set aside) belong to the frame that opens lines:
    the words from the line's start to the occurrence's end open another line too ("Válassza a Formátum",
    "Το επιλεγμένο πεδίο ελέγχου"), or the occurrence runs from the end of one line into the next
    ("menüparancsot. Válassza a Formátum": one instruction's closing word, the next one's opening words).

    Why: a help system's "how to reach this command" page or a control list is one instruction or entry per line,
    each opened by the same words ("Choose Format - Cells", "Válassza a Formátum - Sorok", "Последовательно
    выберите команды Правка - ..."). Where the imperative takes an article or a particle the frame is a longer
    n-gram than in English, and Gopher's top-3-gram rule dropped the Hungarian, Russian, Greek and Vietnamese
    translations of pages whose English ones it keeps (docs/filters.md). Keyword stuffing repeats its phrase
    inside the sentences, after words that differ; a link farm's items open with keywords too, but fill the
    rest from the same few words, which the novelty test that follows still drops."""
    if cfg.frame_line_share is None:
        return False
    aside = set_aside(doc.text, cfg.max_label_share) if cfg.set_aside_labels else set()
    words: list[str] = []
    starts: list[int] = []
    lines: list[list[str]] = []
    for line in doc.text.split("\n"):
        if aside and line.strip() in aside:
            continue
        line_words = whitespace_words(line)
        if line_words:
            starts.append(len(words))
            lines.append(line_words)
            words.extend(line_words)
    positions = NGrams(words).top_positions(n)
    if len(positions) < 2:
        return False
    openings: dict[int, Counter[tuple[str, ...]]] = {}  # length -> how many lines open with each prefix of it

    def framing(p: int) -> bool:
        line = bisect_right(starts, p) - 1
        if line + 1 < len(starts) and starts[line + 1] < p + n:
            return True  # runs into the next line
        size = p + n - starts[line]
        if size not in openings:
            openings[size] = Counter(tuple(candidate[:size]) for candidate in lines if len(candidate) >= size)
        return openings[size][tuple(words[starts[line] : p + n])] > 1

    allowed = len(positions) - cfg.frame_line_share * len(positions)  # occurrences that may lie outside a frame
    outside = 0
    for p in positions:
        outside += not framing(p)
        if outside > allowed:
            return False
    return True


def repeats_frame_new_words(doc: Text, cfg: GopherRepetitionConfig) -> float:
    """``novel_word_share`` of ``doc`` with the labels the measures set aside left out, over the smallest n of
    the duplicated-n-gram rules."""
    aside = set_aside(doc.text, cfg.max_label_share) if cfg.set_aside_labels else set()
    n = min((n for n, _ in cfg.dup_n_grams), default=5)
    return novel_word_share(doc.text, n=n, aside=aside)


def copied_blocks(text: str) -> bool:
    """Whether paragraphs or lines of ``text`` (as the paper-mode measures split them) that directly repeat the one
    before them are a paste or a loop (``novelty.adjacent_copies``)."""
    paragraphs = [p for p in map(str.strip, _BLANK_LINES.split(text)) if p]
    lines = [line for line in map(str.strip, text.split("\n")) if line and has_word_char(line)]
    return adjacent_copies(paragraphs, len(text)) or adjacent_copies(lines, len(text))


#: the measures kept in ``metadata["quality"]`` (under these names) for every document that reaches them
_RECORDED = {"dup_line_frac": "dup_line_frac", "top_2_gram": "top_2_gram", "duplicated_5_n_grams": "dup_5_gram"}
