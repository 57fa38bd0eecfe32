"""The strict pydantic base shared by all config models (kept apart to avoid import cycles)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Base for every config model: unknown keys are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


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
