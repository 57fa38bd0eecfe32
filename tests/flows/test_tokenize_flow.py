"""The Prefect ``tokenize`` flow: recipe weights in, mix summary and artifact out."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.helpers.tokenize import write_run


def test_tokenize_flow_takes_the_mix_from_the_recipe(tmp_path: Path, prefect_harness) -> None:
    from flows.tokenize_flow import tokenize

    write_run(tmp_path / "run", {"web": 120, "finance": 40}, seed=3)
    recipe = {
        "name": "t",
        "output_dir": str(tmp_path / "run"),
        "sources": [
            {"name": "web", "kind": "jsonl", "path": "x", "weight": 0.49},
            {"name": "finance", "kind": "jsonl", "path": "y", "weight": 0.51},
        ],
    }
    recipe_path = tmp_path / "recipe.yaml"
    recipe_path.write_text(yaml.safe_dump(recipe))

    result = tokenize(
        str(tmp_path / "run"), recipe=str(recipe_path), config={"vocab_size": 300, "tasks": 1, "workers": 1}
    )

    assert result["shards"] == str(tmp_path / "run" / "shards") and Path(result["manifest"]).is_file()
    for name, share in (("web", 0.49), ("finance", 0.51)):
        assert abs(result["sources"][name]["achieved_share"] - share) <= 0.01
    assert result["dtype"] == "uint16" and result["totals"]["train_tokens"] > 0

    import asyncio

    from prefect.client.orchestration import get_client

    async def artifact_markdown() -> str:
        async with get_client() as client:
            artifacts = await client.read_latest_artifacts()
            return next(a.data for a in artifacts if a.key == "token-mix")

    assert "| finance |" in asyncio.run(artifact_markdown())
