"""Metrics and the console: the rows of ``metrics.jsonl`` / ``eval.jsonl``, the console line, TensorBoard's
hparams, and the progress display (a bar on a terminal, heartbeat lines in logs)."""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from training.config import TrainConfig
from training.gpus import GIB

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress

METRICS = "metrics.jsonl"
EVAL = "eval.jsonl"


@dataclass
class Meter:
    """Throughput since the last logged row: its time and tokens, and the seconds spent evaluating or saving
    since then (``paused``), which do not count as training time."""

    time: float = field(default_factory=time.time)
    tokens: int = 0
    paused: float = 0.0

    def row(
        self,
        step: int,
        loss: float,
        lr: float,
        grad_norm: Any,
        tokens: int,
        flops_per_token: float,
        peak_flops: float | None,
        world: int,
    ) -> dict[str, Any]:
        """The metrics row for ``step``; restarts the meter."""
        import torch

        now = time.time()
        busy = max(1e-9, now - self.time - self.paused)
        rate = (tokens - self.tokens) / busy
        self.time, self.tokens, self.paused = now, tokens, 0.0
        if torch.cuda.is_available():
            peak = torch.cuda.max_memory_allocated() / GIB
        else:  # CPU: the process's peak resident memory (ru_maxrss is in KiB on Linux)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024**2)
        return {
            "step": step,
            "loss": loss,
            "lr": lr,
            "grad_norm": float(grad_norm),
            "tokens": tokens,
            "tokens_per_s": rate,
            "mfu": rate * flops_per_token / (peak_flops * world) if peak_flops else None,
            "peak_memory_gib": peak,
        }


def format_row(row: dict[str, Any]) -> str:
    mfu = f" mfu {row['mfu']:.1%}" if row.get("mfu") is not None else ""
    return (
        f"step {row['step']:>6} loss {row['loss']:.4f} lr {row['lr']:.2e} grad {row['grad_norm']:.3f} "
        f"{row['tokens_per_s']:,.0f} tok/s{mfu} mem {row['peak_memory_gib']:.2f} GiB"
    )


def append_row(path: Path, row: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a ``metrics.jsonl`` / ``eval.jsonl`` (missing file: none)."""
    path = Path(path)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def truncate_rows(path: Path, step: int) -> None:
    """Drop rows logged after the checkpoint being resumed (they are recomputed, identically)."""
    rows = [r for r in read_rows(path) if r.get("step", 0) <= step]
    if path.exists():
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def hparams(cfg: TrainConfig) -> dict[str, int | float | str | bool]:
    """TensorBoard's hparams take scalars only: the resolved config, anything else as its JSON text."""
    out: dict[str, int | float | str | bool] = {}
    for key, value in cfg.model_dump(mode="json").items():
        out[key] = value if isinstance(value, int | float | str | bool) else json.dumps(value)
    return out


class Say:
    """``say(message)`` prints on the main process only; ``console`` is the console it prints to (shared with the
    progress bar), ``last`` the monotonic time of the last line (``Progress``'s heartbeat reads it)."""

    def __init__(self, main: bool, console: Console) -> None:
        self.main, self.console, self.last = main, console, time.monotonic()

    def __call__(self, message: str) -> None:
        if self.main:
            self.console.print(message)
            self.last = time.monotonic()


def printer(main: bool) -> Say:
    from pipeline.console import make_console

    return Say(main, make_console(highlight=False, soft_wrap=True))


class Progress:
    """Progress on the main process: a rich bar on an interactive terminal; otherwise (logs, Prefect, CI) plain
    lines: an estimate after the first steps, then a line whenever nothing was printed for ``HEARTBEAT_S``.

    Why lines: a 125M model on the CPU takes seconds per step, so ``log_every`` steps can be minutes of
    silence in a log. These lines go to the console only; ``metrics.jsonl`` stays step-based (reruns and
    resumes must write the same rows, which a clock must not decide).
    """

    HEARTBEAT_S = 30.0
    ESTIMATE_AFTER = 3  # steps: the first one pays for warm-up (allocation, compile), a few more average it

    def __init__(
        self,
        main: bool,
        total: int,
        done: int,
        say: Say,
        tokens_per_step: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bar: RichProgress | None = None
        self.say, self.total, self.first, self.tokens_per_step, self.clock = say, total, done, tokens_per_step, clock
        self.lines = main and not say.console.is_terminal
        self.started = clock()
        if main and say.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            columns = (BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
            self.bar = RichProgress("train", *columns, console=say.console)
            self.task = self.bar.add_task("train", total=total, completed=done)

    def __enter__(self) -> Callable[[int], None]:
        if self.bar is not None:
            self.bar.start()
        return self.update

    def update(self, step: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=step)
        elif self.lines and step < self.total:
            now = self.clock()
            done = step - self.first
            if done == self.ESTIMATE_AFTER or now - self.say.last >= self.HEARTBEAT_S:
                self.say(self.line(step, now))

    def line(self, step: int, now: float) -> str:
        per_step = (now - self.started) / max(1, step - self.first)
        rate = f", {self.tokens_per_step / per_step:,.0f} tok/s" if self.tokens_per_step and per_step > 0 else ""
        eta = per_step * (self.total - step)
        return f"step {step}/{self.total}: {per_step:.2f} s/step{rate}, about {duration(eta)} left"

    def __exit__(self, *_exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
