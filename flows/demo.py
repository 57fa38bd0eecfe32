"""The demo: the demo recipe pointed at the generated sample, run by the end-to-end ``pipeline`` flow."""

from __future__ import annotations

from pathlib import Path

import yaml


def demo_recipe(recipe_path: str, sample_dir: str, output: str) -> str:
    """Write a copy of the demo recipe whose sources point at ``sample_dir``; return its path."""
    data = yaml.safe_load(Path(recipe_path).read_text(encoding="utf-8"))
    sample = Path(sample_dir)
    for source in data["sources"]:
        if source["kind"] == "warc":
            source["path"] = str(sample / "crawl" / "*.warc.gz")
        elif source["kind"] == "folder":
            source["path"] = str(sample / "domain")
    data["output_dir"] = output
    Path(output).mkdir(parents=True, exist_ok=True)
    resolved = Path(output) / "demo.recipe.yaml"
    resolved.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(resolved)
