"""Serve the deployments of ``prefect.yaml`` from one process (``tokenmill serve``), for teams without a worker.

The deployment list is read from ``prefect.yaml`` so the worker path and the serve path never drift apart.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import yaml

import flows  # noqa: F401  (telemetry off)
from flows.runtime import repo_root


def load_flow(entrypoint: str, root: Path):
    """Import ``path/to/file.py:function`` relative to ``root`` and return the flow object."""
    path, _, name = entrypoint.partition(":")
    module_name = path.removesuffix(".py").replace("/", ".")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    spec = importlib.util.find_spec(module_name)
    if spec is None:
        raise FileNotFoundError(f"deployment entrypoint {entrypoint}: module {module_name} not found under {root}")
    module = importlib.import_module(module_name)
    return getattr(module, name)


def deployments(prefect_yaml: str | Path | None = None, only: list[str] | None = None) -> list[Any]:
    """RunnerDeployments for every entry of prefect.yaml (or those named ``flow/deployment`` in ``only``)."""
    root = Path(repo_root())
    spec = yaml.safe_load(Path(prefect_yaml or root / "prefect.yaml").read_text(encoding="utf-8"))
    result = []
    for entry in spec.get("deployments", []):
        flow_obj = load_flow(entry["entrypoint"], root)
        full_name = f"{flow_obj.name}/{entry['name']}"
        if only and full_name not in only:
            continue
        schedules = entry.get("schedules") or []
        cron = schedules[0].get("cron") if schedules else None
        result.append(
            flow_obj.to_deployment(
                name=entry["name"],
                description=entry.get("description"),
                parameters=entry.get("parameters") or {},
                cron=cron,
            )
        )
    return result
