"""Issue 12, item 7: the report as a data engineer reads it, and the plan output's wording."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.accounting import SourceAccount
from pipeline.curate.report.funnel import stage_rows
from pipeline.curate.report.section import curation_section
from pipeline.layout import RunLayout
from pipeline.report import demote_headings, rebase_images, without_images
from pipeline.wording import pct


def web_account() -> SourceAccount:
    return SourceAccount(
        source="web",
        read=1000,
        kept_curated=640,
        kept_final=600,
        dropped={
            "extract": {"http_status": 100},
            "quality": {"gopher_short_doc": 200, "c4_too_few_sentences": 60},
            "dedup": {"exact_duplicate": 40},
        },
        examples={
            "dedup/exact_duplicate": [
                {
                    "id": "rec-7",
                    "url": "http://example.org/a?page=2",
                    "score": None,
                    "snippet": "same text",
                    "duplicate_of": "rec-3",
                }
            ],
            "extract/binary_payload": [{"id": "rec-9", "score": 0.6, "snippet": "PNG\x00\x1a\x07 data"}],
        },
        input_files={"listed": 5, "with_documents": 4, "skipped_by_extension": {"pdf": 1}, "empty": 0},
        pii={"email": 12, "phone": 3},
    )


NO_ROUTING = {"routed_in": 0, "routed_out": 0}


def test_stage_rows_give_in_out_and_the_share_of_what_was_read() -> None:
    rows = {r["stage"]: r for r in stage_rows(web_account())}
    assert rows["extract"] == {"stage": "extract", "in": 1000, "out": 900, "dropped": 100} | NO_ROUTING
    assert rows["quality"] == {"stage": "quality", "in": 900, "out": 640, "dropped": 260} | NO_ROUTING
    assert rows["dedup"]["out"] == 600
    assert pct(640, 1000) == "64.0 %" and pct(1000, 1000) == "100 %" and pct(0, 7) == "0 %" and pct(1, 0) == "—"
    assert pct(2, 3) == "66.7 %"  # rounded, never 66.66666666666667


def test_curation_section_tables(tmp_path: Path) -> None:
    layout = RunLayout.at(tmp_path / "run")
    markdown, payload = curation_section(layout, [web_account()])
    assert "| quality | 900 | 260 |  | 640 | 64.0 % |" in markdown  # stage: in, dropped, routed, out, % of read
    assert "| quality | gopher_short_doc | 200 | 20.0 % |" in markdown
    assert "### PII replacements by type" in markdown and "| web | 12 | 3 | 15 |" in markdown
    assert "| web | 5 | 4 | 0 | .pdf 1 |" in markdown
    example = next(line for line in markdown.splitlines() if "rec-7" in line)
    assert "<http://example.org/a?page=2>" in example and "duplicate of `rec-3`" in example
    assert "PNG\ufffd\ufffd\ufffd data" in markdown and "\x00" not in markdown  # report.md stays text
    assert payload["pii"] == {"web": {"email": 12, "phone": 3}}
    assert payload["stages"]["web"][1] == {"stage": "extract", "in": 1000, "out": 900, "dropped": 100} | NO_ROUTING
    assert "### Warnings" in markdown and "1 input files skipped by extension (.pdf 1)" in markdown
    assert not any("rule " in w for w in payload["warnings"])  # no rule drops more than half of web
    json.dumps(payload)  # report.json can hold it


def test_nested_headings_and_images_for_the_prefect_ui() -> None:
    plan_md = "# Training plan: tiny\n\n## Verdict\n\n```\n# not a heading\n```\n\n![plan](plots/plan.png)\n"
    demoted = demote_headings(plan_md)
    assert demoted.startswith("## Training plan: tiny\n") and "\n### Verdict\n" in demoted
    assert "\n# not a heading\n" in demoted  # fenced code is left alone
    assert "![plan]" not in without_images(plan_md) and "## Verdict" in without_images(plan_md)
    assert rebase_images("![loss](plots/loss.png) ![x](http://h/x.png)", "train") == (
        "![loss](train/plots/loss.png) ![x](http://h/x.png)"
    )


def test_token_table_and_rounded_summary() -> None:
    from flows.run_summary import run_summary
    from pipeline.shards.format import ShardManifest
    from pipeline.tokenize.report import shards_markdown

    manifest = {
        "dtype": "uint16",
        "vocab_size": 32000,
        "sources": {
            "finance": {
                "requested_share": 0.5,
                "achieved_share": 0.4987,
                "repeats": 3.1416,
                "documents": {"train": 50, "heldout": 5, "mixed": 157},
                "tokens": {"train": 20000, "heldout": 2100, "mixed": 62832},
            }
        },
        "totals": {"train_tokens": 125000, "train_documents": 900, "heldout_tokens": 9000, "heldout_documents": 40},
        "warnings": [],
    }
    table = shards_markdown(ShardManifest.from_dict(manifest))
    assert "| finance | 20,000 | 62,832 | 3.14 | 50.0 % → 49.9 % | 2,100 | 50 / 5 / 157 |" in table
    assert "upsampled repeats are extra copies of the same documents" in table
    assert "`{" not in table  # no raw JSON in a cell
    summary = run_summary({"tokenize": manifest, "train": {"step": 40, "final_loss": 7.123456789}})
    assert "| final loss | 7.123 |" in summary and "| train tokens | 125,000 |" in summary


def test_plan_says_what_fits_means_and_puts_blocking_first() -> None:
    from training.plan.planner import plan
    from training.plan.report import memory_verdict, render_markdown

    no_shape = plan(125e6, 2.75e12)  # a parameter count only: activations cannot be estimated
    assert "activations not counted" in memory_verdict(no_shape.memory)
    assert "activations estimated" in memory_verdict(plan("tiny", 1e6).memory)
    markdown = render_markdown(no_shape, png=None, blocking=["fewer tokens than the recipe minimum: example"])
    verdict_part = markdown.split("## Verdict", 1)[1].split("## Size", 1)[0]
    assert verdict_part.index("**Blocking**") < verdict_part.index(f"- {no_shape.verdicts[0]}")
    assert "activations not counted" in markdown.split("## Memory per GPU", 1)[1]
    assert "C = 6·N·D" in markdown and "training FLOPs (palm convention)" in markdown


def test_plan_cli_prints_blocking_first_and_the_activation_caveat() -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    blocked = CliRunner().invoke(app, ["plan", "--params", "175B", "--tokens", "300B"])  # does not fit on one H100
    assert blocked.exit_code == 0, blocked.output
    out = blocked.output
    assert out.index("blocking:") < out.index("compute-optimal") < out.index("• under-trained")
    assert "activations not counted" in out  # a parameter count only: no shape for activations
    assert "Chinchilla convention" in out
    shaped = CliRunner().invoke(app, ["plan", "--model", "1b", "--gpu", "H200", "--tokens", "22B"])
    assert "fits; activations estimated" in " ".join(shaped.output.split())


def test_stage_artifacts_have_descriptions_and_no_image_links(tmp_path: Path, monkeypatch) -> None:
    import flows.artifacts as artifacts

    published = []
    monkeypatch.setattr(artifacts, "create_markdown_artifact", lambda **kw: published.append(kw))
    layout = RunLayout.at(tmp_path)
    (tmp_path / "plan.md").write_text("# Training plan: x\n\n## Where the plan sits\n\n![plan](plots/plan.png)\n")
    _markdown, summary = curation_section(RunLayout.at(tmp_path / "run"), [web_account()])
    summary["warnings"] = ["web: something"]
    artifacts.publish_stage_artifacts(layout, {"curation": summary})
    assert {a["key"] for a in published} == {"curation-funnel", "training-plan"}
    for artifact in published:
        assert artifact["description"] and "![" not in artifact["markdown"]
    funnel = next(a for a in published if a["key"] == "curation-funnel")["markdown"]
    assert "⚠ web: something" in funnel and "| web | quality | gopher_short_doc | 200 | 20.0 % |" in funnel
    # the same per-stage and PII tables as report.md
    assert "#### web: documents in → out per stage" in funnel and "| quality | 900 | 260 |  | 640 | 64.0 % |" in funnel
    assert "PII replacements by type" in funnel and "| web | 12 | 3 | 15 |" in funnel


def test_demo_saves_the_generated_text_and_names_the_sample(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from flows.commands.demo import record_demo
    from pipeline.report import write_report

    layout = RunLayout.at(tmp_path / "run")
    layout.root.mkdir()
    write_report(layout, "demo", {"curation": ("## Curation\n", {})})
    info = SimpleNamespace(pages=400, domain_docs=60)
    record_demo(str(layout.root), str(tmp_path / "sample"), info, "The company reported", "The company reported a")
    assert (layout.root / "generated_sample.txt").read_text().endswith("The company reported a\n")
    report = layout.report_md.read_text()
    assert "## Demo" in report and str(tmp_path / "sample") in report and "(generated_sample.txt)" in report
    assert json.loads(layout.report_json.read_text())["demo"]["generated_file"] == "generated_sample.txt"
