"""Fixtures of the engine tests (test_slurm.py, test_ray.py): one local reference run shared by both."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.engines import curate_and_tokenize, engine_recipe, engine_sample, outputs


@pytest.fixture(scope="session")
def engine_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return engine_sample(tmp_path_factory.mktemp("engine-sample"))


@pytest.fixture(scope="session")
def local_outputs(tmp_path_factory: pytest.TempPathFactory, engine_crawl: Path):
    """The local executor's kept documents and shards: what every engine must reproduce byte for byte."""
    folder = tmp_path_factory.mktemp("engine-local")
    recipe = engine_recipe(folder, engine_crawl, "local", {"kind": "local"})
    curate_and_tokenize(recipe)
    docs, shards = outputs(folder / "local")
    assert docs and any(name.startswith("train/") for name in shards)  # a comparison of nothing proves nothing
    return docs, shards
