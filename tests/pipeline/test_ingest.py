"""The ingest ledger (pipeline.ingest): new files only, a killed run finished first, changes reported, one run
per input root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.ingest import IngestError, IngestLedger


@pytest.fixture
def incoming(tmp_path: Path) -> Path:
    folder = tmp_path / "incoming"
    folder.mkdir()
    for name in ("a.warc.gz", "b.warc.gz"):
        (folder / name).write_bytes(name.encode() * 100)
    return folder


def test_a_run_killed_midway_is_finished_first_with_only_its_files(tmp_path: Path, incoming: Path) -> None:
    ledger = IngestLedger(tmp_path / "out", str(incoming / "*.warc.gz"))
    plan = ledger.plan()
    assert plan.files == ["a.warc.gz", "b.warc.gz"] and plan.resume_run is None
    ledger.mark(plan.files, "out/2026-01-01", "started")  # ... and the night is killed here
    (incoming / "c.warc.gz").write_bytes(b"new")

    again = IngestLedger(tmp_path / "out", str(incoming / "*.warc.gz")).plan()
    assert again.resume_run == "out/2026-01-01" and again.files == ["a.warc.gz", "b.warc.gz"]
    assert again.pending == ["c.warc.gz"]  # taken by the run after, not mixed into the resumed one
    ledger.mark(again.files, again.resume_run, "done")
    last = ledger.plan()
    assert last.files == ["c.warc.gz"] and last.resume_run is None and last.already == 2


def test_a_file_changed_after_ingest_is_reported_not_read_and_a_touch_is_no_change(
    tmp_path: Path, incoming: Path
) -> None:
    ledger = IngestLedger(tmp_path / "out", str(incoming / "*.warc.gz"))
    ledger.mark(ledger.plan().files, "out/night-1", "done")
    os.utime(incoming / "a.warc.gz", (1, 1))  # same bytes, other mtime
    (incoming / "b.warc.gz").write_bytes(b"rewritten in place")
    plan = ledger.plan()
    assert plan.files == [] and plan.changed == ["b.warc.gz"] and plan.already == 2


def test_one_run_per_input_root_at_a_time(tmp_path: Path, incoming: Path) -> None:
    ledger = IngestLedger(tmp_path / "out", str(incoming / "*.warc.gz"))
    second = IngestLedger(tmp_path / "out", str(incoming / "*.warc.gz"))
    with ledger.locked(), pytest.raises(IngestError, match="in use by pid"), second.locked():
        pass
    with ledger.locked():  # released with the run
        pass


def test_staged_links_keep_the_root_name_and_the_pattern(tmp_path: Path, incoming: Path) -> None:
    ledger = IngestLedger(tmp_path / "out", str(incoming / "*.warc.gz"))
    plan = ledger.plan()
    staged = ledger.stage(plan, str(tmp_path / "out" / "2026-01-01"))
    assert staged.endswith("/staged/2026-01-01/incoming/*.warc.gz")
    links = sorted(Path(staged).parent.iterdir())
    assert [p.name for p in links] == plan.files and all(p.resolve().parent == incoming for p in links)
