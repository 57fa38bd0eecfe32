"""The article model shared by web pages and domain documents, and the near-duplicate editor.

An article is a title plus blocks (paragraphs of sentences, sub-headings, code blocks). Sentences that
carry a planted PII value or decoy are marked ``protected`` so the near-duplicate editor never breaks
a planted value: the truth file can then say exactly which values each copy still contains.
"""

from __future__ import annotations

import copy
import math
import random
from dataclasses import dataclass, field
from html import escape

_NO_SPACE_LANGS = frozenset({"zh", "ja"})
_TRAILING = ".,;:!?\"')»”…。、，！？"


@dataclass
class Paragraph:
    sentences: list[str]
    protected: list[bool]


@dataclass
class Heading:
    text: str


@dataclass
class Code:
    text: str


@dataclass
class Article:
    lang: str
    title: str
    byline: str | None = None
    date_text: str | None = None
    blocks: list[Paragraph | Heading | Code] = field(default_factory=list)
    pii: list[dict] = field(default_factory=list)
    decoys: list[dict] = field(default_factory=list)

    def joiner(self) -> str:
        return "" if self.lang in _NO_SPACE_LANGS else " "

    def paragraphs(self) -> list[Paragraph]:
        return [b for b in self.blocks if isinstance(b, Paragraph)]

    def word_count(self) -> int:
        """Whitespace words in the title and paragraphs (the unit the edit rate is measured in)."""
        words = len(self.title.split())
        for para in self.paragraphs():
            words += sum(len(s.split()) for s in para.sentences)
        return words

    def insert_sentence(self, rng: random.Random, sentence: str) -> None:
        """Put a protected sentence at a random position of a random paragraph."""
        paras = self.paragraphs()
        para = paras[rng.randrange(len(paras))]
        pos = rng.randint(0, len(para.sentences))
        para.sentences.insert(pos, sentence)
        para.protected.insert(pos, True)

    def insert_code(self, rng: random.Random, intro: str, code: str) -> None:
        """A protected lead-in paragraph followed by a ``<pre>`` block, after a random block."""
        pos = rng.randint(1, len(self.blocks))
        self.blocks[pos:pos] = [Paragraph([intro], [True]), Code(code)]

    def to_html(self) -> str:
        out = [f"<h1>{escape(self.title, quote=False)}</h1>\n"]
        if self.byline or self.date_text:
            parts = [escape(p, quote=False) for p in (self.byline, self.date_text) if p]
            out.append(f'<p class="byline">{" · ".join(parts)}</p>\n')
        for block in self.blocks:
            if isinstance(block, Paragraph):
                out.append(f"<p>{escape(self.joiner().join(block.sentences), quote=False)}</p>\n")
            elif isinstance(block, Heading):
                out.append(f"<h2>{escape(block.text, quote=False)}</h2>\n")
            else:
                out.append(f"<pre><code>{escape(block.text, quote=False)}</code></pre>\n")
        return "".join(out)

    def to_text(self, markdown: bool = False) -> str:
        """Plain text (or Markdown) of the article, for domain documents."""
        out = [f"# {self.title}" if markdown else self.title, ""]
        if self.byline or self.date_text:
            meta = ", ".join(p for p in (self.byline, self.date_text) if p)
            out += [f"*{meta}*" if markdown else meta, ""]
        for block in self.blocks:
            if isinstance(block, Paragraph):
                out += [self.joiner().join(block.sentences), ""]
            elif isinstance(block, Heading):
                out += [f"## {block.text}" if markdown else block.text, ""]
            else:
                out += ["```", block.text, "```", ""] if markdown else [block.text, ""]
        return "\n".join(out).rstrip() + "\n"


def edit_words(rng: random.Random, article: Article, rate: float, vocabulary: list[str]) -> tuple[Article, float]:
    """A copy of ``article`` with about ``rate`` of its words substituted, deleted or inserted.

    Only unprotected sentences are touched, and trailing punctuation stays in place, so the copy still
    reads like the same text with a few changes — what a re-published or lightly edited page looks like.
    Returns the copy and the realised edit rate (edits / words of the original).
    """
    edited = copy.deepcopy(article)
    total = article.word_count()
    slots = [(para, i) for para in edited.paragraphs() for i, locked in enumerate(para.protected) if not locked]
    if not slots:
        return edited, 0.0
    n_edits = max(1, math.ceil(rate * total))  # ceil: the realised rate never falls below the target
    for _ in range(n_edits):
        para, i = slots[rng.randrange(len(slots))]
        words = para.sentences[i].split(" ")
        j = rng.randrange(len(words))
        op = rng.random()
        if op < 0.5 or len(words) < 4:
            core = words[j].rstrip(_TRAILING)
            tail = words[j][len(core) :]
            choices = [w for w in rng.sample(vocabulary, min(5, len(vocabulary))) if w != core]
            words[j] = (choices[0] if choices else core + "s") + tail
        elif op < 0.75:
            tail = words[j][len(words[j].rstrip(_TRAILING)) :]
            del words[j]
            if tail and j == len(words):  # keep the sentence's final punctuation
                words[-1] = words[-1].rstrip(_TRAILING) + tail
        else:
            words.insert(j, rng.choice(vocabulary))
        para.sentences[i] = " ".join(words)
    return edited, n_edits / total


def vocabulary_of(sentences: list[str] | tuple[str, ...]) -> list[str]:
    """Distinct bare words of a sentence list, in first-seen order (deterministic)."""
    seen: dict[str, None] = {}
    for sentence in sentences:
        for word in sentence.split():
            core = word.strip(_TRAILING + "(“„«")
            if core.isalpha() and len(core) > 2:
                seen.setdefault(core.lower() if core[1:].islower() else core, None)
    return list(seen)
