"""New words outside a page's repeats: what tells a reference page's repeated phrasing from a template spam page's.

A function reference, an option list or a tool palette repeats one frame per entry ("Draws a connector with one
or more 90-degree angles and a circle at the end point. Click a glue point on an object, drag to a glue point on
another object, and then release."): Gopher's duplicated-n-gram and duplicate-line rules count the frame, and a
reader's good page is dropped. A generated spam page repeats its frames too ("Looking for {kw}? We have the {kw}
you need."), so how much repeats does not tell them apart (measured on the real-text set: LibreOffice help pages
repeat 0.15-0.78 of their characters, generated casino/pharma/SEO pages 0.17-0.43; docs/filters.md). What does:
the words **outside** the repeats. An entry's frame holds that entry's own subject, said once in the page; a
spam template is filled from a short keyword list, so its fillers recur too. ``novel_word_share`` is the share
of the words outside every repeated n-gram that occur exactly once in the page. Only lines of at least
``min_line_words`` words count (a menu, a title, a list of links are lines of a few words, each unique: with them
counted, a navigation bar alone would make a looping page look new). A page that repeats a passage has no new
words outside it (every word of the first copy recurs in the second), however long the passage.

Which rules it can excuse (docs/filters.md): Gopher's duplicated-n-gram rules, and the duplicate-line and
duplicate-paragraph rules of Gopher and FineWeb as long as no line or paragraph directly repeats the one before it
(``adjacent_copies``: a copy-paste or a loop is not an entry's frame, whatever else the page holds). Gopher's
top-n-gram rules only when the dominant n-gram opens the lines it occurs in (``gopher_repetition.opens_lines``: a
list's frame, "Choose Format - ..."); one phrase stuffed through the sentences is keyword stuffing however new the
rest is.

Hand-written (no library measures this); computed only for a page that already fails a repetition rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from itertools import pairwise

from pipeline.text import looks_like_code, whitespace_words

#: stripped from both ends of a word before comparing ("Conector," and "conector" are one word)
_PUNCTUATION = ".,;:!?()[]{}<>\"'`«»“”„‘’‹›。，、；：！？（）「」『』"


#: words of a page in which a word outside the repeats must occur once to be new (``novel_word_share``)
NOVELTY_WINDOW = 2000


def novel_word_share(
    text: str, n: int = 5, min_line_words: int = 5, aside: Collection[str] = (), window: int = NOVELTY_WINDOW
) -> float:
    """Share of the words outside repeated ``n``-grams, on lines of at least ``min_line_words`` words, that occur
    once in their ``window`` of the page's words (case-folded, punctuation stripped). A repeat is every
    occurrence of an n-gram after the first, as in Gopher's duplicated-n-gram measure. Lines in ``aside`` (the
    field labels the repetition rules set aside) are left out. 0.0 when no word lies outside the repeats.

    Why a window: the share of words a text uses once falls as the text grows (Heaps' law), so on a whole page
    of 84,000 words (Postfix's ``postconf(5)``, one entry per parameter) it was 0.032, under the 0.05 that the
    spam pages of at most 1,337 words were measured against; in windows of 2,000 words it is 0.195 (Node.js's
    ``n-api`` 0.049 → 0.15). Pages of up to 2,000 words, every generated spam page among them, are one window:
    their share is what it was."""
    words: list[str] = []
    counted: list[bool] = []
    for line in text.split("\n"):
        if aside and line.strip() in aside:
            continue
        line_words = [w for w in (w.casefold().strip(_PUNCTUATION) for w in whitespace_words(line)) if w]
        words.extend(line_words)
        counted.extend([len(line_words) >= min_line_words] * len(line_words))
    covered = bytearray(len(words))
    seen: set[tuple[str, ...]] = set()
    for i in range(len(words) - n + 1):
        gram = tuple(words[i : i + n])
        if gram in seen:
            covered[i : i + n] = b"\x01" * n
        else:
            seen.add(gram)
    outside = novel = 0
    for start in range(0, len(words), window):
        chunk = words[start : start + window]
        counts = Counter(chunk)
        for word, is_covered, is_counted in zip(
            chunk, covered[start : start + window], counted[start : start + window], strict=True
        ):
            if is_counted and not is_covered:
                outside += 1
                novel += counts[word] == 1
    return novel / outside if outside else 0.0


#: a block of at most this many words that follows its own copy is a table's column or a program's lines, not
#: a paste (the field-label length of ``gopher_repetition.LABEL_WORDS``)
PASTE_MIN_WORDS = 3


def pasted(block: str) -> bool:
    """Whether ``block`` is text that a copy right after it makes a paste or a loop: more than a label's words,
    and not a line of code.

    Why: a reference page's code examples repeat statements in a row (``'hex',``, ``NULL,``,
    ``context.mock.timers.tick(threeSeconds);``, ``if (err) throw err;``), its tables a value down a column
    (``//   102``, ``Yes``), and the adjacency test vetoed the novelty excuse for them (Node.js's API pages
    ``crypto``, ``test``, ``buffer``: ``dup_line_frac`` 0.35-0.45, new words 0.06-0.08); a pasted sentence
    or paragraph has words enough and reads as prose."""
    return len(block.split()) >= PASTE_MIN_WORDS and not looks_like_code(block)


#: copies right after their own block must be at least this share of a page's characters to make it a paste or
#: a loop: one paragraph or line pasted twice in a 68-150 KB licence or pydoc page (GCC's and OpenJDK's Debian
#: copyright files, ``inspect``'s help: 0.02-0.2 % of the characters) or in a 3 KB help page (LibreOffice's "how
#: to reach this command" pages: 1.9-4.1 %) is an editing slip among entries whose repeats frame new words; the
#: looped and pasted spam pages of the real-text set copy 77-95 % (docs/filters.md)
PASTE_MIN_SHARE = 0.05


def adjacent_copies(blocks: list[str], size: int) -> bool:
    """Whether the blocks (lines or paragraphs, stripped) that ``pasted`` accepts and that directly follow a copy
    of themselves hold at least ``PASTE_MIN_SHARE`` of ``size`` characters (the page's)."""
    copied = sum(len(b) for a, b in pairwise(blocks) if a == b and pasted(a))
    return copied > 0 and copied >= PASTE_MIN_SHARE * size
