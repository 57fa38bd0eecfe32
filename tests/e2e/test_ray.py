"""The same recipe curates on a local Ray instance and keeps the same documents as the local executor."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.curate import kept_documents, recipe_file, run_curation

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sample import generate_sample

    out = tmp_path_factory.mktemp("ray-sample")
    generate_sample(out, seed=11, pages=40, warc_files=2, domain_docs=6)
    return out


def test_ray_executor_matches_local(tmp_path: Path, sample_dir: Path) -> None:
    import yaml

    local_layout, local_accounts = run_curation(recipe_file(tmp_path, sample_dir, tmp_path / "local", tasks=2))

    ray_recipe = recipe_file(tmp_path, sample_dir, tmp_path / "ray", tasks=2)
    data = yaml.safe_load(ray_recipe.read_text())
    data["executor"] = {"kind": "ray", "tasks": 2, "workers": 2, "ray": {"cpus_per_task": 1, "mem_per_cpu_gb": 0.5}}
    ray_recipe.write_text(yaml.safe_dump(data))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        ray_layout, ray_accounts = run_curation(ray_recipe)
    finally:
        ray.shutdown()

    assert kept_documents(ray_layout.root) == kept_documents(local_layout.root)
    assert [a.to_json()["dropped"] for a in ray_accounts] == [a.to_json()["dropped"] for a in local_accounts]
    assert all(a.balanced for a in ray_accounts)
