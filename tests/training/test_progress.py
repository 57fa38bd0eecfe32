"""training/progress.py: runs done of runs planned, the current run's step, the evaluation phase and the whole
job's ETA, from a fake clock; a resumed job counts what an earlier invocation finished."""

from __future__ import annotations

import pytest

from training.progress import JobProgress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_counts_steps_and_evaluations_left() -> None:
    lines: list[str] = []
    clock = Clock()
    job = JobProgress(lines.append, "ablation", [10, 10, 10], done_before=1, clock=clock)
    assert lines[-1] == "ablation: 3 runs planned (1 done before: resumed)"
    assert job.eta() is None  # nothing measured: no guess
    job.start_run("raw seed 2", 10)
    assert lines[-1] == "ablation: run 2/3: raw seed 2, 10 steps"
    for _ in range(10):  # 1 s per step
        clock.now += 1.0
        job.on_step(0, None)
    # 9 steps measured (the first holds the set-up); 0 steps left in this run, 10 in the next, evaluations unknown
    assert job.eta() == pytest.approx(10.0)
    job.evaluating("bits per byte on 2 references")
    assert lines[-1] == "ablation: run 2/3 (raw seed 2): evaluating bits per byte on 2 references"
    clock.now += 5.0
    job.end_run()
    assert job.done == 2
    assert job.eta() == pytest.approx(10 * 1.0 + 1 * 5.0)  # the last run: its steps and one evaluation
    assert lines[-1] == "ablation: 2/3 runs done, about 15 s left in all"


def test_heartbeat_names_the_run_and_step() -> None:
    lines: list[str] = []
    clock = Clock()
    job = JobProgress(lines.append, "ladder", [100], clock=clock)
    job.start_run("size-32 tpp-1", 100)
    for _ in range(40):
        clock.now += 1.0
        job.on_step(0, None)
    assert "ladder: run 1/1 (size-32 tpp-1) step 30/100, about" in "\n".join(lines)
