"""A demo recipe pointed at a generated sample, one in-process curation run, and the documents it kept."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import yaml

from pipeline.curate.build import curate_source
from pipeline.curate.report.section import curation_section
from pipeline.report import write_report
from pipeline.run import account_all, prepare_run_dir
from training.recipe import load_recipe

REPO = Path(__file__).resolve().parents[2]


def recipe_file(tmp_path: Path, sample_dir: Path, output: Path, tasks: int = 4) -> Path:
    data = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    data["sources"][0]["path"] = str(sample_dir / "crawl" / "*.warc.gz")
    data["sources"][1]["path"] = str(sample_dir / "domain")
    data["output_dir"] = str(output)
    data["executor"] = {"kind": "local", "tasks": tasks, "workers": 1}
    path = tmp_path / f"{output.name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def run_curation(path: Path):
    recipe = load_recipe(path)
    layout = prepare_run_dir(recipe)
    for source in recipe.sources:
        curate_source(recipe, source, layout)
    accounts = account_all(recipe, layout)
    write_report(layout, recipe.name, {"curation": curation_section(layout, accounts)})
    return layout, accounts


def kept_documents(run_dir: Path) -> list[tuple[str, str]]:
    docs = []
    for path in sorted((run_dir / "curated").glob("*/*.jsonl.gz")):
        with gzip.open(path, "rt") as handle:
            docs += [(d["id"], d["text"]) for d in map(json.loads, handle)]
    return sorted(docs)


def killer_script(rank: int, index: int) -> str:
    """A script that curates the recipe given as its argument and SIGKILLs itself (no cleanup of any kind)
    when rank ``rank`` reaches its ``index``-th document after the last text stage: the resume tests' crash."""
    return textwrap.dedent(
        f"""
        import os, signal, sys
        from datatrove.pipeline.base import PipelineStep
        import pipeline.curate.build as curate_mod
        from training.recipe import load_recipe
        from pipeline.run import prepare_run_dir

        class KillAt(PipelineStep):
            name = "kill"
            def run(self, data, rank=0, world_size=1):
                for position, doc in enumerate(data):
                    if rank == {rank} and position == {index}:
                        os.kill(os.getpid(), signal.SIGKILL)
                    yield doc

        original = curate_mod.build_stages
        curate_mod.build_stages = lambda stages, drops: original(stages, drops) + [KillAt()]
        recipe = load_recipe(sys.argv[1])
        layout = prepare_run_dir(recipe)
        for source in recipe.sources:
            curate_mod.curate_source(recipe, source, layout)
        """
    )


def curate_until_killed(recipe: Path, work: Path, rank: int, index: int) -> None:
    """Run ``killer_script(rank, index)`` on ``recipe`` in a child process and check it died of SIGKILL.

    The child gets its own session: the extractor's sandbox process outlives a SIGKILLed parent, so the whole
    group is killed afterwards. Its output is in ``work/killer.log`` (shown when it did not die as planned).
    """
    script, log = work / "killer.py", work / "killer.log"
    script.write_text(killer_script(rank=rank, index=index))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(log, "wb") as handle:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(recipe)],
            cwd=REPO,
            stdout=handle,
            stderr=handle,
            env=env,
            start_new_session=True,
        )
        returncode = proc.wait(timeout=600)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    assert returncode == -9, log.read_text()[-2000:]


def one_stage_recipe(tmp_path: Path, folder: Path, name: str, **stages: Any):
    """A recipe curating ``folder`` (source ``docs``, one rank) through extract and ``stages`` only (language,
    quality and pii off), written to ``tmp_path/r.yaml`` and loaded: a stage's test run on real text."""
    data = {
        "name": name,
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": "docs", "kind": "folder", "path": str(folder)}],
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
        "stages": {"language": None, "quality": None, "pii": None, **stages},
    }
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_recipe(path)
