"""A Slurm array task loads ``executor.pik`` only if it is the file the run wrote (issue 19 item 2)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dill

from pipeline.slurm_launch import main


class _Probe:
    """What an array task runs: here it writes a marker."""

    def __init__(self, marker: Path):
        self.marker = marker

    def run(self) -> None:
        self.marker.write_text("ran")


class _Payload:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_the_launcher_runs_the_submitted_file_and_refuses_a_replaced_one(tmp_path: Path, capsys) -> None:
    pickled = tmp_path / "executor.pik"
    pickled.write_bytes(dill.dumps(_Probe(tmp_path / "ran")))
    digest = hashlib.sha256(pickled.read_bytes()).hexdigest()
    assert main([str(pickled), digest]) == 0 and (tmp_path / "ran").read_text() == "ran"

    pickled.write_bytes(dill.dumps(_Payload(tmp_path / "marker")))  # swapped in after submission
    assert main([str(pickled), digest]) == 2
    assert not (tmp_path / "marker").exists()
    assert "changed after the job was submitted" in capsys.readouterr().err


def test_the_batch_script_carries_the_digest_of_the_file_written(tmp_path: Path) -> None:
    from pipeline.slurm import WaitingSlurmExecutor

    executor = WaitingSlurmExecutor(pipeline=[], tasks=1, time="1:00:00", partition="p", logging_dir=str(tmp_path))
    (tmp_path / "executor.pik").write_bytes(b"the pickled executor")
    script = executor.get_launch_file_contents({}, f"launch_pickled_pipeline {tmp_path / 'executor.pik'}")
    digest = hashlib.sha256(b"the pickled executor").hexdigest()
    assert f"python -m pipeline.slurm_launch {tmp_path / 'executor.pik'} {digest}" in script
    assert "launch_pickled_pipeline" not in script
