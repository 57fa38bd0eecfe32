"""End-to-end curation on a small generated crawl: accounting, report, resume after SIGKILL."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.helpers.curate import curate_until_killed, kept_documents, recipe_file, run_curation

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sample import generate_sample

    out = tmp_path_factory.mktemp("sample")
    generate_sample(out, seed=3, pages=80, warc_files=4, domain_docs=12)
    return out


def test_curation_balances_and_reports(tmp_path: Path, sample_dir: Path) -> None:
    layout, accounts = run_curation(recipe_file(tmp_path, sample_dir, tmp_path / "run"))
    by_source = {a.source: a for a in accounts}
    web = by_source["web"]
    assert web.read == 80  # every response record, HTML or not, is read
    assert web.read == web.kept_final + web.dropped_total
    assert 0 < web.kept_final < web.read
    for rule in ("http_status", "non_html"):
        assert web.dropped["extract"].get(rule, 0) > 0, rule
    assert by_source["finance"].kept_final > 0
    report = json.loads(layout.report_json.read_text())
    assert report["curation"]["sources"][0]["balanced"] is True
    assert (layout.plots / "funnel.png").read_bytes()[:4] == b"\x89PNG"
    assert "Examples of dropped documents" in layout.report_md.read_text()
    # every drop row carries stage, rule and an id
    for path in (layout.root / "dropped").rglob("*.jsonl.gz"):
        with gzip.open(path, "rt") as handle:
            for row in map(json.loads, handle):
                assert row["stage"] and row["rule"] and row["id"] is not None


def test_sigkill_then_rerun_equals_uninterrupted(tmp_path: Path, sample_dir: Path) -> None:
    clean_layout, clean_accounts = run_curation(recipe_file(tmp_path, sample_dir, tmp_path / "clean"))

    killed_recipe = recipe_file(tmp_path, sample_dir, tmp_path / "killed")
    curate_until_killed(killed_recipe, tmp_path, rank=2, index=3)
    completions = list((tmp_path / "killed" / "stages" / "curate" / "web" / "logs" / "completions").glob("*"))
    assert len(completions) == 2  # ranks 0 and 1 finished, rank 2 died mid-way

    killed_layout, killed_accounts = run_curation(killed_recipe)
    assert kept_documents(killed_layout.root) == kept_documents(clean_layout.root)
    strip = lambda accounts: [{k: v for k, v in a.to_json().items() if k != "examples"} for a in accounts]  # noqa: E731
    assert strip(killed_accounts) == strip(clean_accounts)
