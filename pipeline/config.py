"""Curation recipe models: a YAML recipe validated by pydantic.

Unknown keys and wrong types are errors; ``load_recipe`` turns pydantic's report into a
``RecipeError`` that names the file and the dotted field path (``sources.0.kind``).
Each stage's config model lives in its package's pydantic-only ``config`` module (``pipeline.curate.config``,
``pipeline.dedup.config``, ``pipeline.tokenize.config``); this file assembles them, so reading a recipe imports
no stage code, and no stage imports this file at run time (tests/e2e/test_architecture.py: the unit order).

``CurationRecipe`` is what ``pipeline/`` reads. The sections that configure training (``plan:``, ``train:``,
``ablate:``) are typed one level up, by ``training.recipe.Recipe(CurationRecipe)``, so that this package
imports nothing from ``training/`` or ``flows/``.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from pipeline.config_base import RecipeError, StrictModel, field_errors, read_yaml
from pipeline.curate.config import (
    ClassifierConfig,
    DecontaminateConfig,
    ExtractConfig,
    LanguageConfig,
    PIIConfig,
    QualityConfig,
    ToxicityConfig,
)
from pipeline.dedup.config import DedupConfig
from pipeline.layout import RUN_HEADER
from pipeline.read.common import DEFAULT_MAX_BYTES
from pipeline.tokenize.config import TokenizeConfig

SOURCE_KINDS = ("warc", "jsonl", "parquet", "hf", "folder")
#: a source that reads nothing itself: it receives the documents a ``classify`` stage routes to it (``mode: route``)
ROUTED_KIND = "routed"


class ReaderOptions(StrictModel):
    """Reader options; each reader uses the ones that apply to its format."""

    text_key: str = "text"
    id_key: str = "id"
    url_key: str = "url"
    recursive: bool = True
    glob: str | None = Field(default=None, description="pattern of files inside a folder path")
    split: str = "train"
    max_bytes: int = Field(
        default=DEFAULT_MAX_BYTES,
        gt=0,
        description="larger records are dropped as read/too_large (8 MiB: one document then costs at most "
        "~130 MB of memory in the stages; docs/readers.md)",
    )
    limit: int = Field(default=-1, description="read at most this many documents per rank (-1: all)")


class SourceConfig(StrictModel):
    name: str
    kind: Literal["warc", "jsonl", "parquet", "hf", "folder", "auto", "routed"] = "auto"
    path: str | None = Field(default=None, description="the input; required unless kind is routed")
    options: ReaderOptions = ReaderOptions()
    weight: float | None = Field(default=None, gt=0, description="mixing weight (tokenize stage)")
    epochs: float | None = Field(default=None, gt=0, description="alternative to weight: repeat count")
    priority: int = Field(default=0, description="dedup keeps the copy from the highest-priority source")
    stages: dict[str, Any] | None = Field(
        default=None, description="per-source stage overrides, merged key by key over the recipe's stages"
    )

    @field_validator("name")
    @classmethod
    def _name_is_identifier(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
            raise ValueError("source names use letters, digits, '_', '.', '-' (they become folder names)")
        return value

    @model_validator(mode="after")
    def _path_matches_kind(self) -> SourceConfig:
        if self.kind == ROUTED_KIND and self.path is not None:
            raise ValueError("a source of kind 'routed' has no path: it receives documents routed by stages.classify")
        if self.kind != ROUTED_KIND and self.path is None:
            raise ValueError(f"source {self.name!r} needs a path (only kind 'routed' has none)")
        return self

    @property
    def routed(self) -> bool:
        """True for a ``kind: routed`` source: no reader, no curation pipeline of its own."""
        return self.kind == ROUTED_KIND


class SlurmOptions(StrictModel):
    partition: str
    time: str = "24:00:00"
    cpus_per_task: int = 1
    mem_per_cpu_gb: int = 2
    qos: str | None = None
    sbatch_args: dict[str, Any] = Field(
        default={},
        description="extra #SBATCH directives, key without '--' (e.g. {account: proj1, constraint: cpu}); an "
        "empty string value is a flag; they override tokenmill's own directives of the same name",
    )
    venv_path: str | None = Field(
        default=None,
        description="the array tasks run `source <venv_path>` first (a venv's bin/activate on the shared "
        "filesystem); default: the activate script of the venv tokenmill runs from, when there is one",
    )
    env_command: str | None = Field(
        default=None,
        description="shell line the array tasks run first instead of venv_path (e.g. 'module load python; "
        "source /shared/venvs/tm/bin/activate')",
    )


class RayOptions(StrictModel):
    address: str | None = Field(default=None, description="None starts a local Ray instance")
    cpus_per_task: int = 1
    mem_per_cpu_gb: float = 2


class ExecutorConfig(StrictModel):
    kind: Literal["local", "slurm", "ray"] = "local"
    tasks: int = Field(default=2, gt=0, description="ranks per source; input files are split across them")
    workers: int = Field(default=-1, description="concurrent ranks (-1: as many as tasks)")
    slurm: SlurmOptions | None = None
    ray: RayOptions | None = None

    @model_validator(mode="after")
    def _slurm_needs_options(self) -> ExecutorConfig:
        if self.kind == "slurm" and self.slurm is None:
            raise ValueError("executor.kind 'slurm' needs an executor.slurm section (at least partition)")
        return self


class StagesConfig(StrictModel):
    """Per-stage parameters; set a stage to ``null`` in YAML to switch it off (extract excepted)."""

    extract: ExtractConfig = ExtractConfig()
    language: LanguageConfig | None = LanguageConfig()
    quality: QualityConfig | None = QualityConfig()
    #: fastText classifiers, in order (docs/classify.md); after quality, before decontaminate and PII
    classify: list[ClassifierConfig] | None = None
    #: off unless set (docs/toxicity.md; `toxicity: {}` for the defaults); after classify, before decontaminate
    toxicity: ToxicityConfig | None = None
    #: off unless the recipe names eval sets (docs/decontaminate.md); runs after quality, before PII
    decontaminate: DecontaminateConfig | None = None
    pii: PIIConfig | None = PIIConfig()
    dedup: DedupConfig | None = None
    tokenize: TokenizeConfig | None = None

    @field_validator("classify")
    @classmethod
    def _unique_classifier_names(cls, value: list | None) -> list | None:
        if value:
            names = [c.name for c in value]
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ValueError(f"classifier names must be unique; repeated: {', '.join(repeated)}")
        return value


class ReportConfig(StrictModel):
    """What the end-of-run report warns about (``report:`` in a recipe)."""

    warn_drop_share: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="warn when one rule drops more than this share of a source's documents (0.5: more than half)",
    )


class CurationRecipe(StrictModel):
    """What curation needs: sources, stages, executor, report; ``load_recipe``/``dump_recipe``/``config_hash``.

    ``plan:``, ``train:`` and ``ablate:`` belong to training, so this model keeps them as opaque mappings:
    a recipe written for ``tokenmill pipeline`` still loads here (pipeline-only callers, tests, benchmarks
    of one stage) without ``pipeline/`` importing ``training/``. ``training.recipe.Recipe`` subclasses this
    model and types them (``plan: PlanOptions``, ``train:`` checked as a ``TrainConfig``, ``ablate:`` as an
    ``AblateConfig``); every command loads that one. Opaque rather than rejected, so no YAML that loads today
    stops loading; opaque rather than dropped, so ``dump_recipe`` and ``config_hash`` still see them. The
    hash of a recipe with a ``plan:`` section differs between the two models (the subclass fills in
    ``PlanOptions``' defaults), which is why run directories are written through ``training.recipe``.
    """

    name: str
    output_dir: str = Field(description="the run directory; relative paths are taken from the working directory")
    sources: list[SourceConfig] = Field(min_length=1)
    stages: StagesConfig = StagesConfig()
    executor: ExecutorConfig = ExecutorConfig()
    report: ReportConfig = Field(default=ReportConfig(), description="end-of-run warnings (docs/report.md)")
    plan: dict[str, Any] | None = Field(default=None, description="budget-check options (docs/plan.md)")
    train: dict[str, Any] | None = Field(
        default=None, description="training options (docs/train.md); shards and output come from the run directory"
    )
    ablate: dict[str, Any] | None = Field(
        default=None, description="`tokenmill ablate` options: raw vs curated arms (docs/scaling.md)"
    )

    @model_validator(mode="after")
    def _unique_source_names(self) -> CurationRecipe:
        names = [s.name for s in self.sources]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"source names must be unique; repeated: {', '.join(duplicates)}")
        return self

    @model_validator(mode="after")
    def _source_overrides_validate(self) -> CurationRecipe:
        for index, source in enumerate(self.sources):
            if source.stages:
                try:
                    self.stages_for(source)
                except ValidationError as error:
                    raise ValueError("; ".join(field_errors(error, f"sources.{index}.stages"))) from None
        return self

    @model_validator(mode="after")
    def _route_targets_exist(self) -> CurationRecipe:
        names = {s.name for s in self.sources}
        for index, source in enumerate(self.sources):
            if source.routed:
                continue  # a routed source runs no stages of its own
            where = f"sources.{index}.stages.classify" if (source.stages or {}).get("classify") else "stages.classify"
            for number, cfg in enumerate(self.stages_for(source).classify or []):
                if cfg.mode != "route":
                    continue
                field = f"{where}.{number}.route_to"
                if cfg.route_to == source.name:
                    raise ValueError(f"{field}: {cfg.route_to!r} is source {source.name!r} itself; name another source")
                if cfg.route_to not in names:
                    raise ValueError(
                        f"{field}: {cfg.route_to!r} (used by source {source.name!r}) is not a source of this recipe; "
                        f"declare it (e.g. kind: routed) or name one of: {', '.join(sorted(names))}"
                    )
        return self

    def route_targets(self, source: SourceConfig) -> list[str]:
        """The sources ``source``'s classifiers route documents into (``mode: route``), in order."""
        found = [c.route_to for c in self.stages_for(source).classify or [] if c.mode == "route" and c.route_to]
        return list(dict.fromkeys(found))

    def stages_for(self, source: SourceConfig) -> StagesConfig:
        """The recipe's stages with ``source.stages`` merged over them (nested mappings merge key by key)."""
        if not source.stages:
            return self.stages
        merged = _deep_merge(self.stages.model_dump(), source.stages)
        return StagesConfig.model_validate(merged)

    def config_hash(self) -> str:
        """Stable hash of the resolved recipe (what ``config.yaml`` records)."""
        # ablate: settings of an experiment run beside the recipe (`tokenmill ablate`), not of the run's outputs
        payload = json.dumps(self.model_dump(mode="json", exclude={"ablate"}), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


R = TypeVar("R", bound=CurationRecipe)


def _deep_merge(base: Any, override: Any) -> Any:
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = _deep_merge(base.get(key), value) if key in base else value
        return merged
    return override


def format_validation_error(error: ValidationError, origin: str) -> str:
    return "\n".join([f"{origin}: invalid recipe", *(f"  {line}" for line in field_errors(error))])


@overload
def parse_recipe(data: Any, origin: str = "<recipe>") -> CurationRecipe: ...
@overload
def parse_recipe(data: Any, origin: str, model: type[R]) -> R: ...


def parse_recipe(data: Any, origin: str = "<recipe>", model: type[CurationRecipe] = CurationRecipe) -> CurationRecipe:
    """Validate an already-loaded mapping as ``model``; errors name ``origin`` and the field path."""
    if not isinstance(data, dict):
        raise RecipeError(f"{origin}: a recipe must be a YAML mapping, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise RecipeError(format_validation_error(error, origin)) from None


@overload
def load_recipe(path: str | Path, overrides: dict[str, Any] | None = None) -> CurationRecipe: ...
@overload
def load_recipe(path: str | Path, overrides: dict[str, Any] | None, model: type[R]) -> R: ...


def load_recipe(
    path: str | Path, overrides: dict[str, Any] | None = None, model: type[CurationRecipe] = CurationRecipe
) -> CurationRecipe:
    """Read and validate a recipe file as ``model``; ``overrides`` are merged on top (top-level keys).

    The default model keeps ``plan:``/``train:``/``ablate:`` opaque; ``training.recipe.load_recipe`` passes
    the subclass that types them.
    """
    path = Path(path)
    data = read_yaml(path, RecipeError, "recipe file")
    if overrides and isinstance(data, dict):
        data = {**data, **overrides}
    return parse_recipe(data, str(path), model)


def dump_recipe(recipe: CurationRecipe, path: str | Path) -> None:
    """Write the resolved recipe (every default filled in) with its hash."""
    payload = recipe.model_dump(mode="json")
    header = f"{RUN_HEADER}; config_hash: {recipe.config_hash()}\n"
    body = yaml.safe_dump(payload, sort_keys=False, allow_unicode=True)
    Path(path).write_text(header + body, encoding="utf-8")
