"""Extraction: HTML → main-content text, and the gate that only lets HTTP-200 HTML through.

Rules this stage drops with:
  read errors passed on by a reader (``metadata["read_error"]``; stage ``read``),
  ``http_status`` (score: the status), ``non_html`` (web records that are not HTML),
  ``binary_payload`` (HTML whose bytes are not text), ``extraction_timeout``, ``extraction_error``,
  ``empty_extraction`` (no main content left).

Extraction runs in datatrove's ``ExtractorSandbox`` (a persistent child process), which is what makes
the per-document time limit real: a C extractor stuck on a pathological page cannot be interrupted from
Python, so the child is killed and replaced.
"""

from __future__ import annotations

from typing import Literal

from datatrove.data import Document, DocumentsPipeline
from pydantic import Field

from pipeline.base import AccountedStep, Drop, DropWriter
from pipeline.config_base import StrictModel

HTML_CONTENT_TYPES = ("text/html", "application/xhtml+xml")


class ExtractConfig(StrictModel):
    engine: Literal["resiliparse", "trafilatura"] = Field(
        default="resiliparse", description="main-content extractor; trafilatura is ~20x slower (DESIGN.md)"
    )
    timeout_s: float = Field(default=5.0, gt=0, description="per-document extraction time limit")
    main_content: bool = Field(default=True, description="resiliparse: drop navigation, footers, boilerplate")
    links: bool = False
    alt_texts: bool = False
    max_binary_ratio: float = Field(
        default=0.02, ge=0, le=1, description="share of control/replacement characters that marks a binary payload"
    )


def extract_resiliparse(html: str, main_content: bool = True, links: bool = False, alt_texts: bool = False) -> str:
    from resiliparse.extract.html2text import extract_plain_text

    return extract_plain_text(
        html,
        main_content=main_content,
        alt_texts=alt_texts,
        links=links,
        form_fields=False,
        noscript=False,
        comments=False,
    ).strip()


def extract_trafilatura(html: str) -> str:
    import trafilatura

    return (trafilatura.extract(html, favor_precision=True, include_comments=False, deduplicate=False) or "").strip()


class _ResiliparseExtractor:
    """Picklable callable for the sandbox child."""

    def __init__(self, main_content: bool, links: bool, alt_texts: bool):
        self.main_content, self.links, self.alt_texts = main_content, links, alt_texts

    def __call__(self, html: str) -> str:
        return extract_resiliparse(html, self.main_content, self.links, self.alt_texts)


def binary_ratio(text: str, sample_chars: int = 20_000) -> float:
    """Share of characters in a sample that are control characters or U+FFFD (decoding failures)."""
    sample = text[:sample_chars]
    if not sample:
        return 0.0
    bad = sum(1 for ch in sample if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\n\r\t\f\v"))
    return bad / len(sample)


class ExtractStage(AccountedStep):
    stage = "extract"
    name = "🛢 Extract (HTTP-200 HTML → text)"

    def __init__(self, config: ExtractConfig | None = None, drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.config = config or ExtractConfig()

    def gate(self, doc: Document) -> Drop | None:
        """Decide, before extraction, whether a record may be extracted at all."""
        meta = doc.metadata
        if meta.get("read_error"):
            extra = {k: meta[k] for k in ("file", "read_error_detail") if meta.get(k) is not None}
            return Drop(rule=str(meta["read_error"]), stage="read", extra=extra)
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

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from datatrove.pipeline.extractors.base import ExtractorSandbox

        if self.config.engine == "trafilatura":
            extract_fn = extract_trafilatura
        else:
            extract_fn = _ResiliparseExtractor(self.config.main_content, self.config.links, self.config.alt_texts)
        with (
            DropWriter(self.drops_dir, self.stage, rank) as drops,
            ExtractorSandbox(timeout=self.config.timeout_s) as sandbox,
        ):
            for doc in data:
                self.stat_update("in")
                with self.track_time():
                    verdict = self.gate(doc)
                    if verdict is None and doc.metadata.get("format") == "html":
                        verdict = self._extract(doc, sandbox, extract_fn)
                    if verdict is None and not doc.text.strip():
                        verdict = Drop(rule="empty_extraction" if doc.metadata.get("format") == "html" else "empty")
                if verdict is None:
                    self.stat_update("kept")
                    yield doc
                else:
                    self.stat_update("dropped", f"dropped_{verdict.rule}")
                    drops.write(_row(doc, self.stage, verdict))

    def _extract(self, doc: Document, sandbox, extract_fn) -> Drop | None:
        raw_chars = len(doc.text)
        try:
            doc.text = sandbox.process_document(doc.text, extract_fn)
        except TimeoutError:
            return Drop(rule="extraction_timeout", score=self.config.timeout_s)
        except EOFError:
            return Drop(rule="extraction_error", extra={"error": "extractor process died"})
        except Exception as error:  # noqa: BLE001 - any extractor failure is a counted drop, not a crash
            return Drop(rule="extraction_error", extra={"error": f"{type(error).__name__}: {error}"[:200]})
        doc.metadata["html_chars"] = raw_chars
        return None


def _row(doc: Document, stage: str, drop: Drop) -> dict:
    from pipeline.base import drop_row

    return drop_row(doc, stage, drop)
