"""The Prefect ``dedup`` flow (recipe lookup, artifact) and ``tokenmill dedup`` on a standalone dataset."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from tests.helpers.dedup import Words, read_drops, read_kept, write_curated


def _latest_artifact(key: str) -> str:
    from prefect.client.orchestration import get_client

    async def read() -> str:
        async with get_client() as client:
            artifacts = await client.read_latest_artifacts()
            return next(a.data for a in artifacts if a.key == key)

    return asyncio.run(read())


def test_flow_dedups_a_run_with_the_recipe_priorities(tmp_path: Path, prefect_harness) -> None:
    from flows.dedup import dedup

    words = Words(7)
    shared = words.doc()
    write_curated(
        tmp_path / "run",
        {
            "web": [("w-shared", shared), ("w-near", words.edit(shared, 0.02)), ("w-own", words.doc())],
            "finance": [("f-shared", shared)],
        },
        files=1,
    )
    recipe = {
        "name": "t",
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": "web", "path": "x", "priority": 0}, {"name": "finance", "path": "y", "priority": 10}],
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
    }
    recipe_path = tmp_path / "recipe.yaml"
    recipe_path.write_text(yaml.safe_dump(recipe))

    result = dedup(recipe=str(recipe_path), config={"threshold": 0.5})

    assert result["accounting_ok"] and result["kept"] == 2
    rows = {row["id"]: row for row in read_drops(tmp_path / "run")}
    assert rows["w-shared"]["duplicate_of"] == "f-shared" and rows["w-near"]["duplicate_of"] == "f-shared"
    assert read_kept(tmp_path / "run") == {"web": {"w-own"}, "finance": {"f-shared"}}
    assert "| web | 3 | 1 | 1 | 1 |" in _latest_artifact("dedup")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_cli_dedups_a_dataset_and_then_the_next_one_against_it(tmp_path: Path, prefect_harness) -> None:
    from flows.cli import app

    words = Words(8)
    docs = [words.doc() for _ in range(6)]
    first = _jsonl(
        tmp_path / "week1.jsonl",
        [{"id": f"a{i}", "text": t} for i, t in enumerate(docs)] + [{"id": "z-copy", "text": docs[0]}],
    )
    second = _jsonl(
        tmp_path / "week2.jsonl", [{"id": "b0", "text": words.edit(docs[1], 0.02)}, {"id": "b1", "text": words.doc()}]
    )
    runner = CliRunner(env={"COLUMNS": "400"})  # rich would wrap long paths in the messages
    assert runner.invoke(app, ["dedup", "--help"]).exit_code == 0  # help text renders (no stray markup)
    index = tmp_path / "index"
    out1 = runner.invoke(app, ["dedup", "--input", str(first), "--output", str(tmp_path / "o1"), "--index", str(index)])
    assert out1.exit_code == 0, out1.output
    assert read_kept(tmp_path / "o1") == {"week1": {f"a{i}" for i in range(6)}}
    assert (tmp_path / "o1" / "dedup_report.md").read_text().startswith("## Deduplication")

    out2 = runner.invoke(
        app, ["dedup", "-i", str(second), "-o", str(tmp_path / "o2"), "--index", str(index), "--source", "crawl"]
    )
    assert out2.exit_code == 0, out2.output
    (row,) = read_drops(tmp_path / "o2")
    assert (row["id"], row["duplicate_of"], row["matched_run"], row["source"]) == ("b0", "a1", "o1", "crawl")

    bad = runner.invoke(app, ["dedup", "-i", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "o3")])
    assert bad.exit_code == 2 and "missing.jsonl: no such file" in _flat(bad.output)
    no_index = runner.invoke(app, ["dedup", "-i", str(first), "-o", str(tmp_path / "o4"), "--rebuild-index"])
    assert no_index.exit_code == 2 and "needs --index" in _flat(no_index.output)
    (index / "index.json").write_text("{broken")
    corrupt = runner.invoke(app, ["dedup", "-i", str(second), "-o", str(tmp_path / "o5"), "--index", str(index)])
    assert corrupt.exit_code == 2 and "index.json: unreadable index manifest" in _flat(corrupt.output)
    assert not (tmp_path / "o5" / "deduped").exists()
