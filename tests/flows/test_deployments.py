"""prefect.yaml: deployments that load from the checkout and need no environment variable at deploy time."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_prefect_yaml_has_no_environment_templates_and_every_entrypoint_loads() -> None:
    text = (REPO / "prefect.yaml").read_text(encoding="utf-8")
    # "{{ $VAR }}" resolves to "" when VAR is unset at deploy time: the deploy succeeds, every run then fails
    assert not re.search(r"\{\{\s*\$", text)
    spec = yaml.safe_load(text)
    assert not spec.get("pull"), "without pull steps Prefect records the folder `prefect deploy` ran in"
    from flows.serve import load_flow

    names = set()
    for entry in spec["deployments"]:
        flow = load_flow(entry["entrypoint"], REPO)
        names.add(f"{flow.name}/{entry['name']}")
    assert {
        "curate/nightly-crawl",
        "curate/weekly-crawl",
        "curate/one-off",
        "pipeline/one-off",
        "train/one-off",
        "scaling-ladder/one-off",
    } <= names
