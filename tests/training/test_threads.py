"""training/threads.py: the CPU quota (affinity capped by cgroup cpu.max), ``cpu_threads: auto`` keeping the faster
of the quota and one thread on the first timed steps, the warning for a configured count slower than one thread,
and a real run under ``auto``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.train import config as train_config
from tests.helpers.train import make_shards
from training.config import TrainConfigError, load_train_config
from training.threads import TRIAL_STEPS, ThreadTuner, cpu_quota


def test_quota_reads_the_affinity_mask_and_the_cgroup_limit(tmp_path: Path) -> None:
    affinity = len(os.sched_getaffinity(0))
    limit = tmp_path / "cpu.max"
    limit.write_text("max 100000\n")
    assert cpu_quota(limit) == affinity
    limit.write_text("50000 100000\n")  # half a CPU: one thread
    assert cpu_quota(limit) == 1
    limit.write_text("150000 100000\n")  # 1.5 CPUs: two threads, unless the mask allows fewer
    assert cpu_quota(limit) == min(affinity, 2)
    assert cpu_quota(tmp_path / "missing") == affinity


class Fake:
    """torch's thread setting and a clock whose step time depends on the thread count."""

    def __init__(self, seconds: dict[int, float]) -> None:
        self.threads, self.now, self.seconds, self.history = 8, 0.0, seconds, []

    def set(self, n: int) -> None:
        self.threads = n
        self.history.append(n)

    def run(self, tuner: ThreadTuner, steps: int) -> None:
        for _ in range(steps):
            tuner.before_step()
            self.now += self.seconds[self.threads]
            tuner.after_step()


@pytest.mark.parametrize(("seconds", "chosen"), [({4: 0.5, 1: 0.1}, 1), ({4: 0.05, 1: 0.1}, 4)])
def test_auto_keeps_the_faster_count(seconds: dict[int, float], chosen: int) -> None:
    fake = Fake(seconds)
    tuner = ThreadTuner("auto", fake.set, lambda: fake.threads, quota=4, clock=lambda: fake.now)
    assert fake.threads == 4 and tuner.measuring
    fake.run(tuner, 1 + 2 * TRIAL_STEPS)  # one untimed warm-up step, then each candidate's trial
    assert not tuner.measuring and tuner.chosen == chosen and fake.threads == chosen
    assert tuner.message.startswith("cpu_threads auto: 4 threads") and tuner.message.endswith(f"→ {chosen}")
    assert tuner.warning is None
    fake.run(tuner, 5)
    assert fake.history == [4, 1, chosen]  # settled: no more switching


def test_auto_with_one_cpu_does_not_measure() -> None:
    fake = Fake({1: 0.1})
    tuner = ThreadTuner("auto", fake.set, lambda: fake.threads, quota=1, clock=lambda: fake.now)
    assert not tuner.measuring and fake.threads == 1 and "quota is 1" in tuner.message


@pytest.mark.parametrize("setting", [2, None])
def test_a_configured_count_slower_than_one_thread_is_reported(setting: int | None) -> None:
    fake = Fake({2: 0.5, 8: 0.5, 1: 0.1})
    tuner = ThreadTuner(setting, fake.set, lambda: fake.threads, quota=2, clock=lambda: fake.now)
    fake.run(tuner, 1 + 2 * TRIAL_STEPS)
    configured = setting or 8
    assert tuner.warning.startswith(f"cpu_threads {configured} runs slower than one thread would")
    assert fake.threads == configured  # the configured count is kept
    fast = Fake({2: 0.05, 1: 0.1})
    quiet = ThreadTuner(2, fast.set, lambda: fast.threads, quota=2, clock=lambda: fast.now)
    fast.run(quiet, 1 + 2 * TRIAL_STEPS)
    assert quiet.warning is None and fast.threads == 2


def test_config_default_is_auto_and_bad_values_are_refused(tmp_path: Path) -> None:
    assert load_train_config(None, {"shards": "s", "output": "o"}).cpu_threads == "auto"
    for bad in (0, "many"):
        with pytest.raises(TrainConfigError, match="cpu_threads"):
            load_train_config(None, {"shards": "s", "output": "o", "cpu_threads": bad})


def test_a_run_under_auto_trains_and_says_its_choice(tmp_path: Path) -> None:
    from training.train import run_training

    summary = run_training(
        train_config(make_shards(tmp_path / "data"), tmp_path / "run", cpu_threads="auto", max_steps=8, decay_steps=8)
    )
    assert summary.status == "completed"
    if cpu_quota() > 1:
        assert any(w.startswith("cpu_threads auto:") for w in summary.warnings), summary.warnings
