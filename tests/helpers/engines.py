"""The engine tests' one run: a small crawl through ``tokenmill curate`` (curate → dedup) and ``tokenmill tokenize``
as the README's "Scaling out" commands run it, on any executor, and what it produced.

The cluster scripts are the repository's own (``.ci/slurm_cluster.sh``, ``.ci/ray_cluster.sh``): what the tests
start is what a reader of the README starts.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "flows.cli"]


def engine_sample(out: Path) -> Path:
    """A tiny crawl (2 WARC files, 24 pages with the generator's near-duplicates), the same bytes every time."""
    from sample import generate_sample

    generate_sample(out, seed=11, pages=24, warc_files=2, domain_docs=0)
    return out / "crawl"


def engine_recipe(folder: Path, crawl: Path, name: str, executor: dict[str, Any]) -> Path:
    """configs/demo.yaml's stages on the crawl alone (one source: one job per stage), into ``folder/name``."""
    data = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    for key in ("plan", "train", "ablate"):
        data.pop(key, None)
    data["sources"] = [{"name": "web", "kind": "warc", "path": str(crawl / "*.warc.gz")}]
    data["stages"]["tokenize"] = {"vocab_size": 512, "heldout_share": 0.1, "tasks": 2}
    data["output_dir"] = str(folder / name)
    data["executor"] = {"tasks": 2, "workers": 2, **executor}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def run_dir(recipe: Path) -> Path:
    return Path(yaml.safe_load(recipe.read_text())["output_dir"])


def curate_command(recipe: Path) -> list[str]:
    return [*CLI, "curate", str(recipe), "--prefect", "off"]


def tokenize_command(recipe: Path) -> list[str]:
    out = run_dir(recipe)
    return [*CLI, "tokenize", "-i", str(out), "-o", str(out / "shards"), "--recipe", str(recipe)]


def run(command: list[str], env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    """Run a tokenmill command to its end; a failure shows its stderr tail in the assertion."""
    done = subprocess.run(
        command, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{' '.join(command[3:])} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done


def curate_and_tokenize(recipe: Path, env: dict[str, str] | None = None) -> None:
    run(curate_command(recipe), env)
    run(tokenize_command(recipe), env)


def outputs(out: Path) -> tuple[list[tuple[str, str]], dict[str, bytes]]:
    """What the run kept after dedup (id, text, sorted) and every shard and tokenizer file's bytes."""
    docs = []
    for path in sorted((out / "deduped").glob("**/*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            docs += [(d["id"], d["text"]) for d in map(json.loads, handle)]
    shards = {
        str(path.relative_to(out / "shards")): path.read_bytes()
        for folder in ("train", "heldout", "tokenizer")
        for path in sorted((out / "shards" / folder).glob("**/*"))
        if path.is_file()
    }
    return sorted(docs), shards


def workers(out: Path) -> dict[str, Any]:
    return json.loads((out / "report.json").read_text(encoding="utf-8"))["workers"]
