"""The recipe that spans curation and training: ``Recipe(CurationRecipe)`` types ``plan:``, ``train:``, ``ablate:``.

``pipeline.config.CurationRecipe`` holds what curation reads and keeps these three sections as opaque
mappings, so that ``pipeline/`` imports nothing from ``training/``. This module is the level that knows both:
``plan:`` is a ``PlanOptions``, ``train:`` must validate as a ``TrainConfig`` (it stays the mapping the user
wrote, since the run directory fills in ``shards`` and ``output``: ``train_config()``), and ``ablate:`` must
validate as an ``AblateConfig``. Every command, flow and benchmark loads recipes with ``load_recipe`` here, so
a recipe is checked whole before anything runs, and ``config_hash``/``dump_recipe`` see the typed ``plan:``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from pipeline import config as curation
from pipeline.config import CurationRecipe
from pipeline.config_base import field_errors
from training.ablate import AblateError, load_ablate_config
from training.config import TrainConfig
from training.plan.options import PlanOptions


class Recipe(CurationRecipe):
    """A curation recipe plus the training sections, typed (module docstring)."""

    # the base model keeps plan: as an opaque mapping (pipeline/ cannot import training/); pydantic lets a
    # subclass type the field, which mypy sees as a narrowed mutable attribute
    plan: PlanOptions | None = Field(default=None, description="budget-check options (docs/plan.md)")  # type: ignore[assignment]

    @model_validator(mode="after")
    def _ablate_section_validates(self) -> Recipe:
        if self.ablate is not None:
            try:
                load_ablate_config(self.ablate)
            except AblateError as error:
                raise ValueError(str(error).split("\n", 1)[-1].strip()) from None
        return self

    @model_validator(mode="after")
    def _train_section_validates(self) -> Recipe:
        if self.train is not None:
            self.train_config()
        return self

    def train_config(self, overrides: dict[str, Any] | None = None) -> TrainConfig:
        """The ``train:`` section as a ``TrainConfig`` reading this run's shards and writing ``<run>/train``."""
        root = Path(self.output_dir)
        data = {
            "shards": str(root / "shards"),
            "output": str(root / "train"),
            **(self.train or {}),
            **(overrides or {}),
        }
        try:
            return TrainConfig.model_validate(data)
        except ValidationError as error:
            raise ValueError("; ".join(field_errors(error, "train"))) from None


def parse_recipe(data: Any, origin: str = "<recipe>") -> Recipe:
    """Validate an already-loaded mapping as a ``Recipe``; errors name ``origin`` and the field path."""
    return curation.parse_recipe(data, origin, Recipe)


def load_recipe(path: str | Path, overrides: dict[str, Any] | None = None) -> Recipe:
    """Read and validate a recipe file as a ``Recipe``; ``overrides`` are merged on top (top-level keys)."""
    return curation.load_recipe(path, overrides, Recipe)
