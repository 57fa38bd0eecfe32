"""Progress and ETA across many training runs (an ablation's arms × seeds, a ladder's trunks and branches).

One line per event, to the command's ``say``: a run starts ("run 3/6: raw seed 2, 80 steps"), its step every
``HEARTBEAT_S`` seconds with the whole job's estimate, an evaluation phase begins, a run ends. Runs finished
by an earlier invocation count as done from the start (a resumed job says "2/6 done before"), so the estimate
covers only what is left. The estimate is steps left × the seconds per step measured in this invocation, plus
the evaluations left × their mean time; before the first measured step it says nothing rather than guess.

Separate from ``training.metrics.Progress`` (one run's bar): that one knows only its own steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from training.metrics import duration


@dataclass
class JobProgress:
    """``planned``: the step count of every run the job will train (resumed runs included); ``done_before``: how
    many of them an earlier invocation finished (they are the first ``done_before`` of the plan's order or not:
    only the count matters)."""

    say: Callable[[str], None]
    kind: str
    planned: list[int]
    done_before: int = 0
    evals_per_run: int = 1
    clock: Callable[[], float] = time.monotonic
    HEARTBEAT_S: float = 30.0
    done: int = field(init=False, default=0)
    _steps_left: list[int] = field(init=False, default_factory=list)
    _step_time: float = field(init=False, default=0.0)
    _steps_measured: int = field(init=False, default=0)
    _eval_time: float = field(init=False, default=0.0)
    _evals: int = field(init=False, default=0)
    _run_steps: int = field(init=False, default=0)
    _run_done: int = field(init=False, default=0)
    _last_step: float | None = field(init=False, default=None)
    _last_said: float = field(init=False, default=0.0)
    _label: str = field(init=False, default="")
    _eval_started: float | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.done = self.done_before
        self._steps_left = list(self.planned[self.done_before :])
        before = f" ({self.done_before} done before: resumed)" if self.done_before else ""
        self.say(f"{self.kind}: {len(self.planned)} runs planned{before}")
        self._last_said = self.clock()

    @property
    def total(self) -> int:
        return len(self.planned)

    def eta(self) -> float | None:
        """Seconds left for the whole job, or None before a step was measured."""
        if not self._steps_measured:
            return None
        per_step = self._step_time / self._steps_measured
        current = max(0, self._run_steps - self._run_done)
        later = sum(self._steps_left[1:]) if self._label else sum(self._steps_left)
        evals_left = (len(self._steps_left)) * self.evals_per_run
        per_eval = self._eval_time / self._evals if self._evals else 0.0
        return (current + later) * per_step + evals_left * per_eval

    def _eta_text(self) -> str:
        eta = self.eta()
        return f", about {duration(eta)} left in all" if eta is not None else ""

    def start_run(self, label: str, steps: int) -> None:
        self._label, self._run_steps, self._run_done = label, steps, 0
        self._last_step = None
        self.say(f"{self.kind}: run {self.done + 1}/{self.total}: {label}, {steps} steps{self._eta_text()}")
        self._last_said = self.clock()

    def step(self) -> None:
        """Called after every optimizer step of the current run (``run_training``'s ``on_step``); the time
        between two calls is one step's (the first of a run also holds its set-up, so it is not counted)."""
        now = self.clock()
        self._run_done += 1
        if self._last_step is not None:
            self._step_time += now - self._last_step
            self._steps_measured += 1
        self._last_step = now
        if now - self._last_said >= self.HEARTBEAT_S:
            self.say(
                f"{self.kind}: run {self.done + 1}/{self.total} ({self._label}) step {self._run_done}/"
                f"{self._run_steps}{self._eta_text()}"
            )
            self._last_said = now

    def evaluating(self, what: str) -> None:
        self._eval_started = self.clock()
        self.say(f"{self.kind}: run {self.done + 1}/{self.total} ({self._label}): evaluating {what}")
        self._last_said = self._eval_started

    def end_run(self) -> None:
        now = self.clock()
        if self._eval_started is not None:
            self._eval_time += now - self._eval_started
            self._evals += 1
            self._eval_started = None
        self.done += 1
        if self._steps_left:
            self._steps_left.pop(0)
        self._label = ""
        self.say(f"{self.kind}: {self.done}/{self.total} runs done{self._eta_text()}")
        self._last_said = now

    def on_step(self, _step: int, _info: object) -> None:
        self.step()
