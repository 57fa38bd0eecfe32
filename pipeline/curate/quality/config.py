"""The quality stage's recipe model: the four rule families, each switched off with ``null``, and the mode."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from pipeline.config_base import StrictModel
from pipeline.curate.quality.c4 import DATATROVE_DEFAULTS as C4_DATATROVE
from pipeline.curate.quality.c4 import C4Config
from pipeline.curate.quality.fineweb import DATATROVE_DEFAULTS as FINEWEB_DATATROVE
from pipeline.curate.quality.fineweb import FineWebConfig
from pipeline.curate.quality.gopher_quality import GopherQualityConfig
from pipeline.curate.quality.gopher_repetition import GopherRepetitionConfig

#: What ``compat: datatrove`` changes in the defaults, per family (the rest are equal); the definitions
#: change in code.
DATATROVE_DEFAULTS: dict[str, dict[str, Any]] = {"c4": C4_DATATROVE, "fineweb": FINEWEB_DATATROVE}


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``override``'s keys replaced, recursively into nested mappings (a family set to null is off)."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class QualityConfig(StrictModel):
    """Each rule family can be switched off with ``null``. Default: the papers' definitions and thresholds;
    ``compat: datatrove``: datatrove 0.10.1's definitions, with its defaults for every threshold not set."""

    compat: Literal["datatrove"] | None = Field(
        default=None, description="null: the papers' rules; datatrove: datatrove 0.10.1's exact behaviour"
    )
    gopher_quality: GopherQualityConfig | None = GopherQualityConfig()
    gopher_repetition: GopherRepetitionConfig | None = GopherRepetitionConfig()
    c4: C4Config | None = C4Config()
    fineweb: FineWebConfig | None = FineWebConfig()
    default_language: str | None = Field(
        default="en", description="language assumed when metadata has none (null: skip the stop-word rule)"
    )
    languages: dict[str, dict[str, Any]] = Field(
        default={},
        description="per-language overrides of the rule families, as FineWeb-2 sets thresholds per language: "
        "{ja: {gopher_repetition: {dup_n_grams: [[5, 0.3]]}}}; merged into the settings above",
    )

    @model_validator(mode="after")
    def _check_languages(self) -> QualityConfig:
        for language in self.languages:
            self.for_language(language)  # a bad key or value fails at load time, not on the first document
        return self

    def for_language(self, language: str | None) -> QualityConfig:
        """The settings one language is judged with: these, with the language's overrides merged in."""
        override = self.languages.get(language or "")
        if not override:
            return self
        merged = _merge(self.model_dump(exclude={"languages"}), override)
        return QualityConfig.model_validate(merged)

    @model_validator(mode="before")
    @classmethod
    def _datatrove_defaults(cls, data: Any) -> Any:
        """Under ``compat: datatrove`` a threshold the recipe leaves out takes datatrove's default, not the paper's."""
        if not isinstance(data, dict) or data.get("compat") != "datatrove":
            return data
        data = dict(data)
        for family, defaults in DATATROVE_DEFAULTS.items():
            given = data.get(family, {})
            if given is None:
                continue  # family switched off
            if isinstance(given, BaseModel):
                given = given.model_dump(exclude_unset=True)
            if isinstance(given, dict):
                data[family] = {**defaults, **given}
        return data
