"""The strict pydantic base shared by all config models (kept apart to avoid import cycles)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from pipeline.errors import TokenmillError

#: the fields of the config models that hold a path (or a list of paths, or names that may be files: eval
#: tasks, a model preset or its file), by name, in every model: their values are ``~``-expanded
PATH_FIELDS = frozenset(
    {
        "output_dir",
        "path",
        "venv_path",
        "model",
        "model_path",
        "tokenizer",
        "reference",
        "shards",
        "output",
        "init_from",
        "branch_from",
        "manifest",
        "fit",
        "eval_sets",
        "eval_tasks",
        "tasks",
        "cache_dir",
        "data_files",
    }
)


def expand_home(value: Any) -> Any:
    """``~`` and ``~/x`` (and ``~user/x``) → the home folder, in a string, a ``Path`` or each item of a list;
    anything else unchanged (a name such as a preset or a task never starts with ``~``)."""
    if isinstance(value, str) and value.startswith("~"):
        return os.path.expanduser(value)
    if isinstance(value, Path) and str(value).startswith("~"):
        return value.expanduser()
    if isinstance(value, list):
        return [expand_home(item) for item in value]
    return value


class StrictModel(BaseModel):
    """Base for every config model: unknown keys are errors, assignments are validated, and a path field
    (``PATH_FIELDS``) has ``~`` expanded -- YAML leaves ``output_dir: '~/runs/x'`` to the program, and without
    this a folder named ``~`` appeared in the working directory."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @field_validator("*", mode="before")
    @classmethod
    def _expand_home(cls, value: Any, info: ValidationInfo) -> Any:
        return expand_home(value) if info.field_name in PATH_FIELDS else value


class RecipeError(TokenmillError, ValueError):
    """A recipe that cannot be used; the message names the file and each offending field."""


def field_errors(error: Any, prefix: str = "") -> list[str]:
    """``dotted.field.path: message`` for each problem in a pydantic ``ValidationError``."""
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in (prefix, *item["loc"]) if part != "") or "(top level)"
        lines.append(f"{where}: {'unknown key' if item['type'] == 'extra_forbidden' else item['msg']}")
    return lines


def read_yaml(path: str | Path, error_type: type[Exception], what: str = "file") -> Any:
    """Parse a YAML file; a missing file or bad YAML raises ``error_type`` naming the path."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise error_type(f"{path}: {what} not found")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise error_type(f"{path}: not valid YAML: {error}") from None
