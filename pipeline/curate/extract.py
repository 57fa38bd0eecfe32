"""Extraction: HTML → main-content text, and the gate that only lets HTTP-200 HTML through.

Rules this stage drops with:
  read errors passed on by a reader (``metadata["read_error"]``; stage ``read``),
  ``http_status`` (score: the status), ``non_html`` (web records that are not HTML),
  ``binary_payload`` (HTML whose bytes are not text), ``extraction_timeout``, ``extraction_error``,
  ``empty_extraction`` (no main content left).

Every document that passes — extracted HTML and text inputs alike (JSONL, .txt/.md files skip extraction
but not this stage) — then goes through ``pipeline.text.normalize_text`` once: Unicode spaces (the U+00A0
that ``&nbsp;`` becomes, U+2000–U+200A, U+202F, U+3000 …) become ASCII spaces, invisible characters
(zero-width space, soft hyphen, BOM, bidi marks) are removed, line breaks become ``\n``, and the text is
NFC. Later stages can then split words on spaces and lines on ``\n`` and see what a reader sees; the count
of documents changed is the stat ``normalised``.

Extraction runs in datatrove's ``ExtractorSandbox`` (a persistent child process; batches of pages per message,
``pipeline.curate.extract_sandbox``), which is what makes the per-document time limit real: a C extractor
stuck on a pathological page cannot be interrupted from Python, so the child is killed and replaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from datatrove.data import Document
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

from pipeline.base import AccountedStep, Drop, read_error_drop
from pipeline.curate.config import ExtractConfig
from pipeline.curate.link_text import mostly_links
from pipeline.text import normalize_text

if TYPE_CHECKING:
    from pipeline.curate.extract_sandbox import BatchSandbox

HTML_CONTENT_TYPES = ("text/html", "application/xhtml+xml")


#: A page's own table of contents: DocBook/Publican ``div.toc`` (the Debian manuals), MediaWiki ``#toc``,
#: ``.table-of-contents``, Sphinx's ``.contents`` topic, DPUB-ARIA ``doc-toc``. resiliparse's main-content
#: heuristics keep these link lists, and the headings they repeat then count as duplicated lines and n-grams.
TOC_SELECTOR = "div.toc, #toc, .table-of-contents, nav.toc, div.contents.topic, nav.contents, [role=doc-toc]"


#: Where a list is navigation whatever its text: resiliparse's main-content heuristics are right to drop these.
NAVIGATION_SELECTOR = "nav, header, footer, aside, menu, [role=navigation]"


def keep_content_lists(tree) -> int:
    """Turn each bulleted list whose text is mostly not link text, outside navigation, into one block per item
    (without the bullet: an item whose text is a ``<p>`` would leave the bullet alone on a line); returns how
    many lists were kept.

    Why: resiliparse's ``main_content`` drops every ``<ul>`` (measured: a one-item list of a sentence inside
    ``<main>`` is gone; ``<ol>`` and ``<dl>`` stay), which removes the option lists and notes of help-page
    templates (LibreOffice, GIMP and DocBook manuals keep their bullet points in ``<ul>``). A list of links is
    navigation (menus, "see also" hubs) and is still left to resiliparse. Inner lists go first, so an outer
    item carries its converted sub-list.
    """
    kept = 0
    # ``values()``: a node list's Python iteration wraps each node on its own (~10 µs a node, ``ul.query_selector_all``
    # and ``reversed`` over it were most of this function on generated crawls); the list is the same nodes in order
    for ul in reversed(tree.body.query_selector_all("ul").values()):
        # the cheaper tests first: most lists are menus of links, and ``closest`` costs ~9 µs a list
        text = len(ul.text.strip())
        if not text or mostly_links(ul, text) or ul.closest(NAVIGATION_SELECTOR) is not None:
            continue
        parent = ul.parent  # wrapped only here: each node resiliparse hands to Python costs ~2 µs
        if parent is None:
            continue
        block = tree.create_element("div")
        block.inner_html = "".join(f"<div>{li.inner_html}</div>" for li in ul.children.values() if li.tag == "li")
        parent.replace_child(block, ul)
        kept += 1
    return kept


def extract_resiliparse(
    html: str,
    main_content: bool = True,
    links: bool = False,
    alt_texts: bool = False,
    drop_toc: bool = True,
    content_lists: bool = True,
    keep_titled_content: bool = True,
) -> str:
    tree = HTMLTree.parse(html)  # what extract_plain_text would parse anyway; here the TOC can be cut first
    if drop_toc and tree.body is not None:
        for node in tree.body.query_selector_all(TOC_SELECTOR).values():
            if node.parent is not None:  # a TOC nested in a removed one is already gone
                node.parent.remove_child(node)
    if main_content and content_lists and tree.body is not None:
        keep_content_lists(tree)

    def extract() -> str:
        return extract_plain_text(
            tree,
            main_content=main_content,
            alt_texts=alt_texts,
            links=links,
            form_fields=False,
            noscript=False,
            comments=False,
        ).strip()

    text = extract()
    if main_content and keep_titled_content and tree.body is not None:
        text = _with_titled_content(tree, text, extract)
    return text


#: the titled element must bring back this many times the words main-content extraction kept
RESCUE_MIN_GAIN = 3
#: only a page extracted to fewer words is looked at again (twice Gopher's 50-word minimum): finding the title's
#: element and its words costs ~1 ms a page, a quarter of the extraction, so a page that kept its text is not asked
RESCUE_MAX_WORDS = 100


#: a heading's section number ("2.7.3 ", "11.2. "), which a page's <title> leaves out
_SECTION_NUMBER = re.compile(r"^\d+(?:\.\d+)*\.?\s+")


def title_heading(tree):
    """The heading that names the page: the first ``h1``-``h6`` whose text, without a section number, opens the
    page's ``<title>``, else the first that is part of it (a title "Site | Page"), else the first ``h1``, else
    the first ``h2``.

    Why the title: a site header can be the first ``h1`` (Django's documentation: the "Django" logo link), and
    Texinfo's HTML gives a node's title as ``h3``/``h4`` ("2.7.3 Comments and the Help System" under
    ``<title>Comments and the Help System (GNU Octave …)</title>``); documentation generators write the page's
    title into ``<title>``, mostly first and with the site's name after it ("What to read next — Django 3.2.25
    documentation", whose site header "Django 3.2.25 documentation" is part of the title too)."""
    title = " ".join((tree.title or "").split())
    if title:
        headings = []
        for node in tree.body.query_selector_all("h1, h2, h3, h4, h5, h6").values():
            # without its section number and a permalink mark (Sphinx's "¶")
            words = _SECTION_NUMBER.sub("", " ".join(node.text.split())).rstrip("¶§#🔗 ")
            if len(words) >= 3 and words in title:
                if title.startswith(words):
                    return node
                headings.append(node)
        if headings:
            return headings[0]
    return tree.body.query_selector("h1") or tree.body.query_selector("h2")


def _with_titled_content(tree, text: str, extract) -> str:
    """``text``, or the page extracted again with the ``id``/``class`` of the elements around its title removed
    when main-content extraction cut the element that holds the title and most of the text.

    Why: resiliparse's main-content rules drop an element whose id or class names a boilerplate section
    (comments, related links, sharing, search, metadata …), and documentation derives ids from titles:
    PostgreSQL's page on the SQL command ``COMMENT`` is ``<div class="refentry" id="SQL-COMMENT">``, and the
    extracted page was its 13 words of navigation (1,306 with the element). When the outermost element around
    the title (the first ``h1``, else the first ``h2``) has ``RESCUE_MIN_GAIN`` times the words that were kept,
    the page is extracted again without the id, class and ``hidden`` attribute of the title's ancestors (other
    elements keep theirs: a comment thread or a consent box beside the content is still cut), and that text is
    kept if it has ``RESCUE_MIN_GAIN`` times the words. ``hidden``: LibreOffice's help writes a page's text once
    per module inside ``<span hidden="true" class="WRITER">`` and its script shows the one that applies; read
    without the script, the Danish and Hungarian pages were empty. An element that is mostly link text (an
    index, a site map) is left cut. Only a page extracted to fewer than ``RESCUE_MAX_WORDS`` words is looked at:
    what is lost is the whole page."""
    kept = len(text.split())
    if kept >= RESCUE_MAX_WORDS:
        return text
    heading = title_heading(tree)
    if heading is None:
        return text
    chain, node = [], heading.parent
    while node is not None and node != tree.body:
        chain.append(node)
        node = node.parent
    if not chain:
        return text
    titled = chain[-1].text
    if len(titled.split()) < RESCUE_MIN_GAIN * max(1, kept) or mostly_links(chain[-1], len(titled.strip())):
        return text  # kept most of it, or what was cut is a list of links (an index, a site map)
    changed = False
    for node in chain:
        for attribute in ("id", "class", "hidden"):
            if node.hasattr(attribute):
                node.delattr(attribute)
                changed = True
    if not changed:
        return text
    again = extract()
    return again if len(again.split()) >= RESCUE_MIN_GAIN * max(1, kept) else text


def extract_trafilatura(html: str) -> str:
    import trafilatura

    return (trafilatura.extract(html, favor_precision=True, include_comments=False, deduplicate=False) or "").strip()


class _Extractor:
    """The callable the sandbox child runs: picklable, and it returns an extractor's exception instead of
    raising it. datatrove's sandbox re-raises a returned exception in the parent, whereas a raised one kills
    the child (the error text is lost and a new process must be started for the next page)."""

    def __init__(self, config: ExtractConfig):
        self.engine, self.main_content = config.engine, config.main_content
        self.links, self.alt_texts, self.drop_toc = config.links, config.alt_texts, config.drop_toc
        self.content_lists, self.titled = config.keep_content_lists, config.keep_titled_content

    def __call__(self, html: str) -> str | Exception:
        try:
            if self.engine == "trafilatura":
                return extract_trafilatura(html)
            return extract_resiliparse(
                html, self.main_content, self.links, self.alt_texts, self.drop_toc, self.content_lists, self.titled
            )
        except Exception as error:  # noqa: BLE001 - handed to the parent, which records it as a drop
            return error


#: control characters other than \t \n \v \f \r, and U+FFFD (a decoding failure)
_BINARY_CHAR_RE = re.compile("[\x00-\x08\x0e-\x1f\ufffd]")


def binary_ratio(text: str, sample_chars: int = 20_000) -> float:
    """Share of characters in a sample that are control characters or U+FFFD (decoding failures); one regex scan
    (a Python loop over the characters was 0.12 ms of a 4 KB page, a tenth of the extract stage)."""
    sample = text[:sample_chars]
    if not sample:
        return 0.0
    return len(_BINARY_CHAR_RE.findall(sample)) / len(sample)


class ExtractStage(AccountedStep):
    stage = "extract"
    name = "🛢 Extract (HTTP-200 HTML → text)"
    batch_size = 32  # pages per message to the sandbox (pipeline.curate.extract_sandbox)

    def __init__(self, config: ExtractConfig | None = None, drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.config = config or ExtractConfig()
        self._sandbox: BatchSandbox | None = None  # set while a rank runs, by resources()
        self._extract_fn: _Extractor | None = None

    def gate(self, doc: Document) -> Drop | None:
        """Decide, before extraction, whether a record may be extracted at all."""
        meta = doc.metadata
        unread = read_error_drop(doc)
        if unread is not None:
            return unread
        status = meta.get("http_status")
        if status is not None and int(status) != 200:
            return Drop(rule="http_status", score=float(status))
        if meta.get("format") == "html":
            content_type = (meta.get("content_type") or "text/html").split(";")[0].strip().lower()
            if content_type not in HTML_CONTENT_TYPES:
                return Drop(rule="non_html")
            ratio = binary_ratio(doc.text)
            if ratio > self.config.max_binary_ratio:
                return Drop(rule="binary_payload", score=ratio)
        elif meta.get("format") == "binary":
            return Drop(rule="non_html")
        return None

    @contextmanager
    def resources(self) -> Iterator[None]:
        """The extraction sandbox: a persistent child process, replaced when a page hits the time limit; it takes
        a batch of pages per message (``pipeline.curate.extract_sandbox``)."""
        from pipeline.curate.extract_sandbox import BatchSandbox

        self._extract_fn = _Extractor(self.config)
        with BatchSandbox(timeout=self.config.timeout_s) as sandbox:
            self._sandbox = sandbox
            try:
                yield
            finally:
                self._sandbox = None

    def process(self, doc: Document) -> Drop | None:
        return self.process_batch([doc])[0]

    def process_batch(self, docs: list[Document]) -> list[Drop | None]:
        verdicts = [self.gate(doc) for doc in docs]
        html = [i for i, (doc, v) in enumerate(zip(docs, verdicts, strict=True)) if v is None and _is_html(doc)]
        if html:
            if self._sandbox is None or self._extract_fn is None:
                raise RuntimeError("ExtractStage: process() outside resources(): no extraction sandbox")
            results = self._sandbox.process_batch([docs[i].text for i in html], self._extract_fn)
            for i, result in zip(html, results, strict=True):
                verdicts[i] = self._extracted(docs[i], result)
        for doc, verdict in zip(docs, verdicts, strict=True):
            if verdict is None:
                self._finish(doc)
        return [v if v is not None else self._empty(doc) for doc, v in zip(docs, verdicts, strict=True)]

    def _finish(self, doc: Document) -> None:
        text = normalize_text(doc.text)
        if text is not doc.text and text != doc.text:
            doc.text = text
            self.stat_update("normalised")

    @staticmethod
    def _empty(doc: Document) -> Drop | None:
        if not doc.text.strip():
            return Drop(rule="empty_extraction" if _is_html(doc) else "empty")
        return None

    def _extracted(self, doc: Document, result: object) -> Drop | None:
        """The sandbox's answer for one page (datatrove's ``process_document`` raises what it returns here)."""
        if isinstance(result, TimeoutError):
            return Drop(rule="extraction_timeout", score=self.config.timeout_s)
        if isinstance(result, EOFError):
            return Drop(rule="extraction_error", extra={"error": "extractor process died"})
        if isinstance(result, Exception):  # any extractor failure is a counted drop, not a crash
            return Drop(rule="extraction_error", extra={"error": f"{type(result).__name__}: {result}"[:200]})
        doc.metadata["html_chars"] = len(doc.text)
        doc.text = str(result)
        return None


def _is_html(doc: Document) -> bool:
    return doc.metadata.get("format") == "html"
