"""The text one document is judged on, shared by every rule family, and what a failed rule returns."""

from __future__ import annotations

from pipeline.text import split_words, whitespace_words

#: A failed rule: (rule name, the metric that failed it).
Failure = tuple[str, float | None]
#: languages with no sentence-final punctuation in their script (sentences are separated by spaces):
#: C4's terminal-punctuation and sentence rules and FineWeb's line-punctuation rule are skipped for them.
NO_SENTENCE_MARK_LANGUAGES = frozenset({"th", "lo"})


class Text:
    """One document's text under judgement. ``words`` are the words the Gopher rules count: whitespace-separated
    in the paper mode, datatrove's spaCy-style tokens under ``compat``. ``line_tokens`` (spaCy-style, per line)
    are what the sentence counter needs; both are computed once, and again only after C4 rewrites the text."""

    __slots__ = ("text", "original", "language", "compat", "skipped", "_line_tokens", "_words")

    def __init__(self, text: str, language: str | None, compat: bool = False):
        self.text = text
        #: the text as the page was written, before C4 rewrote it to the lines it keeps
        self.original = text
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
