"""The Prefect ``curate`` flow runs a recipe, publishes the funnel artifact and returns the summary."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def test_curate_flow_with_input_override(tmp_path: Path, prefect_harness) -> None:
    from flows.curate import curate
    from sample import generate_sample

    sample = tmp_path / "sample"
    generate_sample(sample, seed=5, pages=30, warc_files=2, domain_docs=4)
    recipe = yaml.safe_load((REPO / "configs" / "web.yaml").read_text())
    recipe["executor"] = {"kind": "local", "tasks": 1, "workers": 1}
    # web.yaml's persistent index is relative (runs/index/web): keep it in this test's folder, not the checkout
    recipe["stages"]["dedup"]["index"] = {"path": str(tmp_path / "index")}
    recipe_path = tmp_path / "web.yaml"
    recipe_path.write_text(yaml.safe_dump(recipe))

    result = curate(str(recipe_path), input=str(sample / "crawl"), output=str(tmp_path / "run"))

    assert [s["source"] for s in result["sources"]] == ["crawl"]
    source = result["sources"][0]
    assert source["balanced"] and source["read"] == source["kept_final"] + source["dropped_total"]
    assert (tmp_path / "run" / "report.md").exists()

    import asyncio

    from prefect.client.orchestration import get_client

    async def artifact_markdown() -> str:
        async with get_client() as client:
            artifact = await client.read_latest_artifacts()
            return next(a.data for a in artifact if a.key == "curation-funnel")

    assert "| crawl |" in asyncio.run(artifact_markdown())


def test_missing_input_fails_fast_naming_the_path(tmp_path: Path, prefect_harness) -> None:
    from flows.curate import curate

    with pytest.raises(FileNotFoundError, match="no/such/crawl"):
        curate(str(REPO / "configs" / "web.yaml"), input=str(tmp_path / "no/such/crawl"), output=str(tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def test_empty_input_folder_fails_before_writing_a_run_dir(tmp_path: Path, prefect_harness) -> None:
    from flows.curate import curate
    from pipeline.read import InputError

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="empty"):
        curate(str(REPO / "configs" / "web.yaml"), input=str(empty), output=str(tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def test_domain_then_web_then_domain_into_one_output_balances(tmp_path: Path, prefect_harness) -> None:
    """A recipe without dedup, run where a deduping recipe ran, clears the dedup rows that no longer apply."""
    import shutil

    from flows.curate import curate
    from sample import generate_sample

    sample = tmp_path / "sample"
    generate_sample(sample, seed=3, pages=20, warc_files=1, domain_docs=8)
    folder = sample / "domain"
    for doc in sorted(p for p in folder.rglob("*") if p.is_file())[:4]:  # exact copies: dedup drops them
        shutil.copy(doc, doc.with_name("copy_" + doc.name))
    run = tmp_path / "run"

    def curate_with(recipe_name: str) -> dict:
        recipe = yaml.safe_load((REPO / "configs" / recipe_name).read_text())
        recipe["executor"] = {"kind": "local", "tasks": 1, "workers": 1}
        recipe["stages"]["language"]["keep"] = None
        if recipe["stages"].get("dedup"):
            recipe["stages"]["dedup"]["index"] = None
        path = tmp_path / recipe_name
        path.write_text(yaml.safe_dump(recipe))
        return curate(str(path), input=str(folder), output=str(run))

    curate_with("domain.yaml")
    web = curate_with("web.yaml")
    assert web["dedup"]["dropped"] > 0 and any((run / "dropped").glob("*/dedup/*"))
    again = curate_with("domain.yaml")
    source = again["sources"][0]
    assert source["balanced"] and source["read"] == source["kept_final"] + source["dropped_total"]
    assert not any((run / "dropped").glob("*/dedup/*")) and not (run / "deduped").exists()
