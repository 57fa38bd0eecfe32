"""CPU training threads: ``cpu_threads: auto`` picks the count from the CPU quota and the measured speed of the
first steps, and a configured count that runs slower than one thread is reported.

Why measure: on 2 busy shared cores, torch's default (one OpenMP thread per core) ran the tiny model 50× slower
than one thread (docs/train.md): OpenMP's threads spin-wait for each other and lose whenever a neighbour holds a
core. On an idle machine more threads win. Neither the core count nor the load average says which case holds,
so the first steps are timed under each candidate (real training steps, none wasted) and the faster one is kept.

* **Quota** (``cpu_quota``): the CPUs this process may use, the smaller of its affinity mask
  (``os.sched_getaffinity``) and the cgroup's CPU bandwidth (``cpu.max``, cgroup v2: quota / period, rounded up).
* **auto**: one thread when the quota is 1; otherwise the quota first, then 1 thread, ``TRIAL_STEPS`` timed steps
  each after one untimed warm-up step; the faster is kept for the rest of the run (and said once).
* **a number > 1, or null (torch's default)**: kept; one thread is tried for ``TRIAL_STEPS`` steps after the
  configured count's, and when it was faster by more than ``SLOWER_BY`` a warning says so. The configured
  count is restored.

Thread counts change the order of floating-point sums, so runs that must reproduce each other bit for bit
(the ladder's branches, the tests) set ``cpu_threads: 1``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

TRIAL_STEPS = 3
SLOWER_BY = 1.1  # a configured count is reported when one thread's steps were this much faster
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def cpu_quota(cpu_max: Path = CGROUP_CPU_MAX) -> int:
    """The CPUs this process may run on: its affinity mask, capped by the cgroup v2 CPU bandwidth limit."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text(encoding="utf-8").split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass  # no cgroup v2 limit readable: the affinity mask is the quota
    return max(1, cpus)


@dataclass
class ThreadTuner:
    """Times the first steps under each candidate thread count and settles on one (see the module docstring).

    ``setting``: the config's ``cpu_threads`` (``"auto"``, a number, or None for torch's default);
    ``set_threads``/``get_threads``: torch's (injected so tests can run without timing real work)."""

    setting: int | str | None
    set_threads: Callable[[int], None]
    get_threads: Callable[[], int]
    quota: int = field(default_factory=cpu_quota)
    clock: Callable[[], float] = time.perf_counter
    message: str | None = None
    warning: str | None = None
    chosen: int = 0
    _candidates: list[int] = field(default_factory=list)
    _times: dict[int, list[float]] = field(default_factory=dict)
    _last: float | None = None
    _warmed: bool = False

    def __post_init__(self) -> None:
        configured = self.get_threads() if self.setting is None else self.setting
        if configured == "auto":
            self._candidates = [self.quota, 1] if self.quota > 1 else []
            self.chosen = self.quota if self.quota > 1 else 1
        else:
            self.chosen = int(configured)
            self._candidates = [self.chosen, 1] if self.chosen > 1 else []
        self.set_threads(self._candidates[0] if self._candidates else self.chosen)
        if configured == "auto" and not self._candidates:
            self.message = "cpu_threads auto: 1 thread (the CPU quota is 1)"

    @property
    def measuring(self) -> bool:
        return bool(self._candidates)

    def before_step(self) -> None:
        if self.measuring:
            self._last = self.clock()

    def after_step(self) -> None:
        """Call after every optimizer step; switches the thread count while measuring, then does nothing."""
        if not self.measuring or self._last is None:
            return
        elapsed = self.clock() - self._last
        if not self._warmed:  # the first step allocates and warms caches: not timed
            self._warmed = True
            return
        current = self._candidates[0]
        self._times.setdefault(current, []).append(elapsed)
        if len(self._times[current]) < TRIAL_STEPS:
            return
        self._candidates.pop(0)
        if self._candidates:
            self.set_threads(self._candidates[0])
            return
        self._decide()

    def _decide(self) -> None:
        per_step = {n: sorted(t)[len(t) // 2] for n, t in self._times.items()}  # the median: one slow step is noise
        many = max(per_step)
        rates = ", ".join(f"{n} thread{'s' if n > 1 else ''} {s * 1000:.0f} ms/step" for n, s in per_step.items())
        if self.setting == "auto":
            self.chosen = min(per_step, key=lambda n: per_step[n])
            self.message = f"cpu_threads auto: {rates} (CPU quota {self.quota}) → {self.chosen}"
        elif per_step[1] * SLOWER_BY < per_step[many]:
            self.warning = (
                f"cpu_threads {many} runs slower than one thread would ({rates}): busy or shared cores; set "
                "cpu_threads: 1 or auto"
            )
        self.set_threads(self.chosen)
