"""Progress of curate/dedup/tokenize: rank counters, the line they make, and the executor that shows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from datatrove.data import Document

from pipeline import progress


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _doc(i: int, file: str | None = None, offset: int | None = None) -> Document:
    metadata = {}
    if file is not None:
        metadata["file"] = file
    if offset is not None:
        metadata["offset"] = offset
    return Document(text=f"document {i}", id=str(i), metadata=metadata)


def test_counter_passes_documents_on_and_writes_its_rank_file(tmp_path: Path) -> None:
    clock = FakeClock()
    counter = progress.ProgressCounter(str(tmp_path), every_s=1.0, clock=clock)
    docs = [_doc(0, "a.warc.gz", 10), _doc(1, "a.warc.gz", 500), _doc(2, "b.warc.gz", 20)]
    out = counter(iter(docs), rank=3)
    assert next(out).id == "0"
    state = json.loads((tmp_path / "00003.json").read_text())
    assert state["docs"] == 0 and not state["done"]  # written at the start, then at most once a second
    clock.now = 1.5
    assert next(out).id == "1"
    state = json.loads((tmp_path / "00003.json").read_text())
    assert (state["docs"], state["file"], state["offset"], state["files"]) == (2, "a.warc.gz", 500, 0)
    assert [d.id for d in out] == ["2"]
    state = json.loads((tmp_path / "00003.json").read_text())
    assert state == {"docs": 3, "files": 1, "file": "b.warc.gz", "offset": 20, "done": True}


def test_snapshot_sums_ranks_and_reads_the_input_share_from_offsets(tmp_path: Path) -> None:
    (tmp_path / "00000.json").write_text(json.dumps({"docs": 40, "files": 1, "offset": 0, "done": True}))
    (tmp_path / "00001.json").write_text(json.dumps({"docs": 10, "files": 1, "file": "d", "offset": 250}))
    rank_files = [[("a", 300), ("c", 100)], [("b", 100), ("d", 500)]]
    snapshot = progress.read_progress(str(tmp_path), 2, rank_files)
    assert (snapshot.docs, snapshot.ranks_done, snapshot.ranks) == (50, 1, 2)
    assert snapshot.fraction == pytest.approx((400 + 100 + 250) / 1000)


def test_log_lines_come_at_the_interval_with_rate_and_eta(tmp_path: Path) -> None:
    clock, lines = FakeClock(), []
    monitor = progress.ProgressMonitor(
        "dedup filter",
        str(tmp_path),
        2,
        total_docs=1000,
        display="log",
        clock=clock,
        emit=lines.append,
        log_every_s=30,
    )
    (tmp_path / "00000.json").write_text(json.dumps({"docs": 100}))
    clock.now = 10
    monitor.poll()
    assert lines == []  # not before the interval
    (tmp_path / "00001.json").write_text(json.dumps({"docs": 200, "done": True}))
    clock.now = 30
    monitor.poll()
    assert lines == ["dedup filter: 300 docs of 1,000, 10 docs/s, 1/2 ranks done, ETA 01:10"]
    clock.now = 40
    monitor.finish()
    assert lines[-1] == "dedup filter: 300 docs in 00:40 (8 docs/s), done"


def test_a_short_stage_logs_its_one_closing_line(tmp_path: Path) -> None:
    clock, lines = FakeClock(), []
    monitor = progress.ProgressMonitor("curate web", str(tmp_path), 1, display="log", clock=clock, emit=lines.append)
    (tmp_path / "00000.json").write_text(json.dumps({"docs": 20, "done": True}))
    clock.now = 2
    monitor.poll()
    assert lines == []  # no interval line before the interval
    monitor.finish()
    assert lines == ["curate web: 20 docs in 00:02 (10 docs/s), done"]  # the console contract: one line per stage


def test_eta_ignores_documents_of_ranks_finished_before_a_resume(tmp_path: Path) -> None:
    start = progress.Snapshot(docs=500, ranks=2, fraction=0.5)
    now = progress.Snapshot(docs=600, ranks=2, fraction=0.6)
    # 0.1 of the input in 10 s: 40 s left, not the 10 s that counting the resumed half as speed would say
    assert progress.eta_seconds(now, start, 10.0, None) == pytest.approx(40.0)
    assert progress.eta_seconds(now, start, 10.0, 1100) == pytest.approx(50.0)


def test_enable_picks_log_lines_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKENMILL_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "_mode", "off")
    assert progress.enable() == "log"  # pytest captures stderr: not a terminal
    monkeypatch.setenv("TOKENMILL_PROGRESS", "off")
    assert progress.enable() == "off"
    monkeypatch.delenv("TOKENMILL_PROGRESS")
    with pytest.raises(ValueError):
        progress.enable("loud")
    with progress.shown("bar") as mode:
        assert mode == "bar" == progress.mode()
    assert progress.mode() == "off"  # a command's switch ends with the command


def _jsonl(folder: Path, name: str, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / name, "w", encoding="utf-8") as handle:
        for i in range(count):
            handle.write(json.dumps({"id": f"{name}-{i}", "text": f"text {i}"}) + "\n")


def test_executor_counts_every_rank_and_keeps_datatrove_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    _jsonl(tmp_path / "in", "a.jsonl", 7)
    _jsonl(tmp_path / "in", "b.jsonl", 5)
    monkeypatch.setattr(progress, "_mode", "log")
    pipeline = [JsonlReader(str(tmp_path / "in")), JsonlWriter(str(tmp_path / "out"))]
    logs = tmp_path / "logs"
    executor = progress.ProgressExecutor(pipeline=pipeline, tasks=2, workers=1, logging_dir=str(logs), label="t")
    executor.run()
    ranks = [json.loads((logs / "progress" / f"{r:05d}.json").read_text()) for r in range(2)]
    assert sorted(r["docs"] for r in ranks) == [5, 7] and all(r["done"] for r in ranks)
    stats = json.loads((logs / "stats.json").read_text())
    assert len(stats) == 2  # the counter is not a step: datatrove's stats list the reader and the writer only
    err = capfd.readouterr().err
    assert "PIPELINE" not in err and "Stats" not in err  # the per-rank blocks went to the log files only
    assert "PIPELINE" in (logs / "logs" / "task_00000.log").read_text()

    import datatrove.executor.base as base

    assert base.add_task_logger.__module__ == "datatrove.utils.logging"  # restored after the run


def test_build_executor_uses_datatrove_unless_progress_is_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.config import ExecutorConfig
    from pipeline.executor import RedactingLocalExecutor, build_executor

    config = ExecutorConfig(tasks=2, workers=1)
    monkeypatch.setattr(progress, "_mode", "off")
    plain = build_executor(config, [], tmp_path / "a")
    # datatrove's, with only executor.json's names redacted (docs/pii.md)
    assert isinstance(plain, RedactingLocalExecutor) and not isinstance(plain, progress.ProgressExecutor)
    monkeypatch.setattr(progress, "_mode", "log")
    shown = build_executor(config, [], tmp_path / "b", job_name="dedup")
    assert isinstance(shown, progress.ProgressExecutor) and shown.label == "dedup b"


def test_the_log_interval_can_be_set_and_a_bad_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKENMILL_PROGRESS_EVERY", "5")
    assert progress.log_every_s_default() == 5.0
    for bad in ("0", "soon"):
        monkeypatch.setenv("TOKENMILL_PROGRESS_EVERY", bad)
        with pytest.raises(ValueError, match="TOKENMILL_PROGRESS_EVERY"):
            progress.log_every_s_default()
