"""PII removal (placeholder config; the stage is being written)."""

from __future__ import annotations

from pipeline.config_base import StrictModel


class PIIConfig(StrictModel):
    pass
