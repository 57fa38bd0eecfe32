"""The PII stage: its recipe section (``PIIConfig``) and the accounted step that applies the redaction engine
(``pipeline.redact``, where the detectors, checks and the reasons they are written by hand are documented).

The stage never drops a document; it rewrites ``doc.text`` and records what it replaced in
``doc.metadata["pii"]`` (type → count, non-zero types only) and in the datatrove stats as
``pii_<type>``.
"""

from __future__ import annotations

from datatrove.data import Document

from pipeline.base import AccountedStep, Drop
from pipeline.curate.config import PIIConfig
from pipeline.redact import (
    PIIRedactor,
    redact_metadata,
    redact_name,
)

__all__ = ["PIIStage"]


class PIIStage(AccountedStep):
    """Replace PII with typed placeholders in the text, ``metadata["url"]`` and the other metadata strings.

    Counts (text and metadata together) go to ``metadata["pii"]`` and ``pii_<type>`` stats. The URL goes
    through ``redact_url`` and every other string in the metadata (recursively) through the redactor, except
    the fields tokenmill sets itself (``METADATA_NOT_TEXT``); numbers are not redacted. The document id and
    ``metadata["file"]`` go through ``redact_name``: a component that holds a value is replaced by its hash.
    Everything follows this stage's ``PIIConfig`` (``types``, placeholders), like the text.
    """

    stage = "pii"
    name = "🔏 PII (typed placeholders)"

    def __init__(self, config: PIIConfig | None = None, drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.config = config or PIIConfig()
        self._redactor: PIIRedactor | None = None

    def setup(self) -> None:
        self._redactor_of_rank()

    def _redactor_of_rank(self) -> PIIRedactor:
        if self._redactor is None:
            self._redactor = PIIRedactor(self.config)
        return self._redactor

    def process(self, doc: Document) -> Drop | None:
        redactor = self._redactor_of_rank()
        text, counts = redactor.redact(doc.text or "")
        doc.text = text
        counts = dict(counts)
        redact_metadata(doc.metadata, redactor, counts)
        # a file name or id that holds a value (``jane.doe@corp.example.txt``): its component hashed, not kept
        doc.id = redact_name(doc.id, self._redactor)
        if isinstance(doc.metadata.get("file"), str):
            doc.metadata["file"] = redact_name(doc.metadata["file"], self._redactor)
        doc.metadata["pii"] = counts
        for kind, n in counts.items():
            self.stat_update(f"pii_{kind}", value=n)
        return None
