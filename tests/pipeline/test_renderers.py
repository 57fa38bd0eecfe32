"""One renderer per object: the markdown tables and the CLI tables come from the same row functions."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pipeline.accounting import SourceAccount
from pipeline.curate.report.funnel import source_rows
from pipeline.curate.report.section import funnel_markdown
from pipeline.dedup.config import DedupConfig, recipe_dedup_settings
from pipeline.dedup.result import DedupResult, SourceCounts, dedup_report_md, dedup_source_rows
from pipeline.shards.format import MANIFEST, ShardError, ShardManifest
from pipeline.tokenize.report import shard_rows, shards_markdown


def test_funnel_rows_are_the_reports_rows_in_pipeline_order() -> None:
    account = SourceAccount(source="web", read=10, kept_final=6, dropped={"quality": {"short": 3}, "extract": {"x": 1}})
    summary = {"sources": [account.to_json()], "warnings": ["web: careful"]}
    assert source_rows(summary["sources"]) == [["web", "10", "6", "60.0 %", "4", "✓"]]
    markdown = funnel_markdown(summary)
    assert markdown.startswith("- ⚠ web: careful\n")
    assert "| web | 10 | 6 | 60.0 % | 4 | ✓ |" in markdown
    # extract runs before quality: its rule comes first although the dict lists quality first
    assert markdown.index("| web | extract | x | 1 | 10.0 % |") < markdown.index("| web | quality | short | 3 |")
    broken = SourceAccount(source="web", read=10, kept_final=7, dropped={"quality": {"short": 2}})
    assert source_rows([broken.to_json()])[0][-1] == "✗"


def test_shard_rows_feed_the_markdown_and_mark_missing_figures() -> None:
    manifest = {
        "dtype": "uint16",
        "vocab_size": 300,
        "sources": {
            "web": {
                "requested_share": 1.0,
                "achieved_share": 1.0,
                "repeats": 1.0,
                "bytes_per_token": 3.12345,
                "documents": {"train": 9, "heldout": 1, "mixed": 9},
                "tokens": {"train": 900, "heldout": 100, "mixed": 900},
            },
            "notes": {"tokens": {"train": 5}},
        },
        "warnings": [],
    }
    rows = shard_rows(ShardManifest.from_dict(manifest))
    assert rows[0] == ["web", "900", "900", "1.00", "100.0 % → 100.0 %", "100", "9 / 1 / 9", "3.12"]
    assert rows[1][0] == "notes" and rows[1][2] == "—" and rows[1][-1] == "—"
    assert "| " + " | ".join(rows[0]) + " |" in shards_markdown(ShardManifest.from_dict(manifest))


def test_a_manifest_with_an_unknown_per_source_key_loads_and_renders(tmp_path) -> None:
    """A key a later stage adds to a source entry (here one no reader knows, beside a routed_from) is kept as
    written and reaches neither the fingerprint nor the renderers: the manifest loads, checks and renders."""
    from pipeline.curate.routing import routed_tokens
    from pipeline.shards.format import fingerprint

    entry = {
        "mode": "weight",
        "requested_share": 0.25,
        "achieved_share": 0.2,
        "repeats": 0.8,
        "bytes_per_token": 4.5,
        "documents": {"train": 4, "heldout": 1, "mixed": 3},
        "tokens": {"train": 400, "heldout": 90, "mixed": 320},
        "routed_from": {"web": {"documents": 2, "tokens": 150}},
        "annotated_by": {"stage": "future", "nested": [1, 2]},  # unknown to every reader
    }
    manifest = {
        "dtype": "uint16",
        "vocab_size": 300,
        "tokenizer": {"path": "tokenizer/tokenizer.json", "vocab_size": 300, "eos_id": 0, "sha256": "ab"},
        "sources": {"finance": entry},
        "totals": {"train_tokens": 320, "train_documents": 3, "heldout_tokens": 90, "heldout_documents": 1},
        "splits": {"train": {"files": [{"path": "train/000.ds", "tokens": 320, "documents": 3}]}},
        "warnings": ["source 'finance': careful"],
    }
    manifest["fingerprint"] = fingerprint(manifest)
    (tmp_path / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    loaded = ShardManifest.load(tmp_path)
    source = loaded.sources["finance"]
    assert source.extra["annotated_by"] == {"stage": "future", "nested": [1, 2]}
    assert (source.mode, source.repeats, source.documents.mixed, source.tokens.heldout) == ("weight", 0.8, 3, 90)
    assert routed_tokens(loaded) == {"web": {"finance": 150}}
    assert [f.path for f in loaded.split_files("train", tmp_path)] == ["train/000.ds"]
    assert shard_rows(loaded) == [["finance", "400", "320", "0.80", "25.0 % → 20.0 %", "90", "4 / 1 / 3", "4.50"]]
    markdown = shards_markdown(loaded)
    assert (
        "dtype uint16, vocab 300" in markdown and "| **total** | | **320** | | | **90** | 3 (mixed) / 1 | |" in markdown
    )
    assert markdown.endswith("- ⚠ source 'finance': careful\n") and "annotated_by" not in markdown
    # a malformed routed_from (not an object per origin) is tolerated too: no routed tokens, no crash
    broken = ShardManifest.from_dict({**manifest, "sources": {"finance": {**entry, "routed_from": {"web": 3}}}})
    assert routed_tokens(broken) == {} and shard_rows(broken)[0][0] == "finance"
    no_path = ShardManifest.from_dict({**manifest, "splits": {"train": {"files": [{"tokens": 3}]}}})
    with pytest.raises(ShardError, match="splits.train: a file entry needs path"):
        no_path.split_files("train", tmp_path)


def test_dedup_report_takes_the_result_or_its_dict_and_the_cli_rows_match() -> None:
    result = DedupResult(
        run_name="r",
        output_dir="/tmp/x",
        params={},
        per_source={"web": SourceCounts(input=5, kept=3, dropped={"exact_duplicate": 1, "read:broken": 1})},
    )
    assert dedup_report_md(result.to_dict()) == dedup_report_md(result)
    assert dedup_source_rows(result) == [["web", "5", "3", "1", "0", "1", "0", "0"]]
    assert "| web | 5 | 3 | 1 | 0 | 1 | 0 | 0 |" in dedup_report_md(result)


def test_recipe_dedup_settings_overrides_the_recipe() -> None:
    recipe = SimpleNamespace(
        stages=SimpleNamespace(dedup=DedupConfig(threshold=0.7)),
        sources=[SimpleNamespace(name="web", priority=0), SimpleNamespace(name="finance", priority=2)],
    )
    settings, priorities = recipe_dedup_settings(recipe, {"threshold": 0.9}, {"web": 5})
    assert settings["threshold"] == 0.9 and settings["bands"] == DedupConfig().bands
    assert priorities == {"web": 5, "finance": 2}
    assert recipe_dedup_settings(None, {"rows": 2}) == ({"rows": 2}, {})
    no_stage = SimpleNamespace(stages=SimpleNamespace(dedup=None), sources=[SimpleNamespace(name="a", priority=1)])
    assert recipe_dedup_settings(no_stage) == ({}, {"a": 1})
