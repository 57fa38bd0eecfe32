"""``GuardedLocalExecutor``: ranks run in this process without datatrove's ``multiprocess`` manager
(pipeline.local_executor); a pool run keeps it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import multiprocess
import pytest
from datatrove.pipeline.readers import JsonlReader

from pipeline.jsonl_writer import DocumentWriter
from pipeline.local_executor import GuardedLocalExecutor


def _inputs(folder: Path) -> None:
    folder.mkdir(parents=True)
    for name, count in (("a", 3), ("b", 2)):
        rows = [json.dumps({"id": f"{name}{i}", "text": f"text {i}"}) for i in range(count)]
        (folder / f"{name}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")


def _run(tmp_path: Path, workers: int) -> list[str]:
    out = tmp_path / f"out-{workers}"
    pipeline = [JsonlReader(str(tmp_path / "in")), DocumentWriter(str(out), output_filename="${rank}.jsonl.gz")]
    logs = tmp_path / f"logs-{workers}"
    GuardedLocalExecutor(pipeline=pipeline, tasks=2, workers=workers, logging_dir=str(logs)).run()
    assert len(list((logs / "completions").iterdir())) == 2
    return [gzip.decompress(path.read_bytes()).decode() for path in sorted(out.glob("*.jsonl.gz"))]


def test_ranks_in_this_process_start_no_manager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _inputs(tmp_path / "in")

    def no_manager() -> None:
        raise AssertionError("a multiprocess manager was started for ranks run in this process")

    monkeypatch.setattr(multiprocess, "Manager", no_manager)
    rows = _run(tmp_path, workers=1)
    assert [len(part.splitlines()) for part in rows] == [3, 2]


def test_a_pool_run_keeps_the_manager_and_writes_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _inputs(tmp_path / "in")
    started: list[bool] = []
    real = multiprocess.Manager

    def counted() -> object:
        started.append(True)
        return real()

    in_process = _run(tmp_path, workers=1)
    monkeypatch.setattr(multiprocess, "Manager", counted)
    assert _run(tmp_path, workers=2) == in_process
    assert started == [True]
