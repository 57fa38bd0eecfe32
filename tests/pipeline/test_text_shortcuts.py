"""The text helpers' shortcuts give the answers of the computations they skip, on the constructs that could part
them (sentence marks inside URLs, abbreviations and numbers, closing quotes, runs of spaces, tabs, code)."""

from __future__ import annotations

import random

from pipeline.text import (
    _CODE_MARK,
    CODE_WORD_SHARE,
    count_sentences,
    line_sentences,
    looks_like_code,
    split_words,
    terminal_punctuation,
)

LINES = [
    "",
    "One sentence.",
    "One sentence.)",
    'He said "stop."',
    "First one. Second one.",
    "First one.Second one!",
    "Ends with dots...",
    "Dots... then more",
    "See http://localhost。",
    "See http://example.org/a.b). Next",
    "Written by Mr. Smith",
    "In the U.S. Army and e.g. here",
    "Version 3.5 is out",
    "Question? Answer!",
    "中文句子。第二句。",
    "中文句子。",
    "Trailing space after the end.   ",
    "Tab\tseparated.\tWords",
    "Is it (really)? Yes.",
    "«Bonjour.» Il part.",
]


def test_line_sentences_counts_as_the_tokenizer_does() -> None:
    ends = frozenset(terminal_punctuation())
    rng = random.Random(11)
    alphabet = list("ab Z9.!?…)»”’\"'(。！？ :,-\t") + ["Mr.", "U.S.", "http://x.org", "www.a.b", "3.5", "..."]
    lines = LINES + ["".join(rng.choices(alphabet, k=rng.randint(0, 25))) for _ in range(5000)]
    for line in lines:
        assert line_sentences(line, ends) == count_sentences(split_words(line), ends), repr(line)


def _looks_like_code_by_definition(unit: str) -> bool:
    words = unit.split()
    return bool(words) and sum(1 for w in words if _CODE_MARK.search(w)) >= CODE_WORD_SHARE * len(words)


def test_looks_like_code_is_its_definition() -> None:
    rng = random.Random(13)
    alphabet = list('ab Z_9.=()[]{};#$"\\<>  \t\n') + ["os.path", "x = 1", "word", "  ", "   "]
    units = LINES + ["x = f(y)", "a_b c_d e_f", "foo.bar()  baz  qux", "   ", "(((( ))))", "\t\ta\tb"]
    units += ["".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(5000)]
    for unit in units:
        assert looks_like_code(unit) == _looks_like_code_by_definition(unit), repr(unit)
