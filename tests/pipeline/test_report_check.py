"""pipeline.report_check finds what does not add up (each check fails on a report made to be wrong)."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.report_check import check_report


def write(run: Path, payload: dict, markdown: str) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    (run / "report.json").write_text(json.dumps(payload))
    (run / "report.md").write_text(markdown)
    return run


ROWS = [
    {"stage": "read", "in": 60, "out": 60, "dropped": 0, "routed_in": 0, "routed_out": 0},
    {"stage": "quality", "in": 60, "out": 58, "dropped": 2, "routed_in": 0, "routed_out": 0},
    {"stage": "routed in", "in": 58, "out": 60, "dropped": 0, "routed_in": 2, "routed_out": 0},
]


def payload(rows: list[dict]) -> dict:
    return {"curation": {"sources": [{"source": "finance", "read": 60, "kept_final": 60}], "stages": {"finance": rows}}}


def test_a_report_that_adds_up_has_no_problems(tmp_path: Path) -> None:
    (tmp_path / "run" / "plots").mkdir(parents=True)
    (tmp_path / "run" / "plots" / "funnel.png").write_bytes(b"png")
    table = "| stage | in | out | % |\n|---|---:|---:|---:|\n| quality | 60 | 58 | 96.7 % |\n"
    md = "![funnel](plots/funnel.png)\n\n" + table
    assert check_report(write(tmp_path / "run", payload(ROWS), md)) == []


def test_the_old_funnel_with_routed_documents_first_is_caught(tmp_path: Path) -> None:
    # what report.md showed before: "routed in 60 → 62" with nothing routed in that row's own numbers
    wrong = [
        {"stage": "routed in", "in": 60, "out": 62, "dropped": 0},
        {"stage": "read", "in": 62, "out": 62, "dropped": 0},
    ]
    problems = check_report(write(tmp_path / "run", payload(wrong), ""))
    assert any("routed in: 60 − 0 + 0 ≠ 62" in p for p in problems) and any("ends at 62" in p for p in problems)


def test_a_broken_image_link_and_a_number_from_nowhere_are_caught(tmp_path: Path) -> None:
    md = "![loss](runs/demo/train/plots/loss.png)\n\n| source | total |\n|---|---:|\n| web | 175 | \n| finance | 60 |\n"
    problems = check_report(write(tmp_path / "run", payload(ROWS), md))
    assert any("runs/demo/train/plots/loss.png does not resolve" in p for p in problems)
    assert any("'175' is not a number of report.json" in p for p in problems)
    assert not any("'60'" in p for p in problems)
