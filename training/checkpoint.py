"""Checkpoints that a run can always restart from, and the stop signals that ask for one.

A checkpoint is ``<output>/checkpoints/step_NNNNNNN/``: accelerate's ``save_state`` (model, optimizer, the RNG
states of python, numpy, torch and CUDA per process; FSDP-sharded when the launch is) plus
``trainer_state.json`` — the step, the data position (``ShardWindows.state_dict``), the shards' manifest
fingerprint, the resolved config and its identity hash, and the size of every file written. The learning rate
is a pure function of the step (``training/schedule.py``), so the step *is* the scheduler state.

Atomicity: everything is written to ``step_NNNNNNN.partial`` and renamed once complete (a rename within one
folder is atomic on POSIX file systems). On start the newest folder that has a readable
``trainer_state.json`` and whose files still have the recorded sizes is used; anything else — a ``.partial``
left by a crash, a folder copied by hand and cut short — is skipped with a warning, never loaded.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import threading
from pathlib import Path
from typing import Any

from pipeline.errors import TokenmillError
from pipeline.ownership import record_of, remove_owned

CHECKPOINTS = "checkpoints"
STATE_FILE = "trainer_state.json"
STATE_VERSION = 1
_NAME = re.compile(r"^step_(\d+)$")


class CheckpointMismatch(TokenmillError, ValueError):
    """A checkpoint written for another config or other shards; resuming would not continue the same run."""


def step_dir(output: str | Path, step: int) -> Path:
    return Path(output) / CHECKPOINTS / f"step_{step:07d}"


def _file_sizes(folder: Path) -> dict[str, int]:
    return {
        path.relative_to(folder).as_posix(): path.stat().st_size
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != STATE_FILE
    }


def read_state(folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(state, None)`` for a complete checkpoint, ``(None, why)`` for anything else."""
    file = folder / STATE_FILE
    if not file.is_file():
        return None, f"no {STATE_FILE} (half-written)"
    try:
        state = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return None, f"{STATE_FILE} unreadable: {error}"
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION or "step" not in state:
        return None, f"{STATE_FILE} is not a tokenmill v{STATE_VERSION} trainer state"
    expected = state.get("files") or {}
    actual = _file_sizes(folder)
    for name, size in expected.items():
        if actual.get(name) != size:
            found = "missing" if name not in actual else f"{actual[name]} bytes"
            return None, f"{name}: {found}, {size} bytes were written (truncated or replaced)"
    return state, None


def find_latest(output: str | Path) -> tuple[Path | None, dict[str, Any] | None, list[str]]:
    """The newest complete checkpoint, its state, and one warning per folder skipped."""
    root = Path(output) / CHECKPOINTS
    warnings: list[str] = []
    if not root.is_dir():
        return None, None, warnings
    candidates = []
    for folder in root.iterdir():
        match = _NAME.match(folder.name)
        if folder.is_dir() and match:
            candidates.append((int(match.group(1)), folder))
        elif folder.name.endswith(".partial"):
            warnings.append(f"{folder}: skipped, an unfinished checkpoint (the run stopped while writing it)")
    for _step, folder in sorted(candidates, reverse=True):
        state, why = read_state(folder)
        if state is not None:
            return folder, state, warnings
        warnings.append(f"{folder}: skipped, {why}")
    return None, None, warnings


def check_resume(state: dict[str, Any], identity: dict[str, Any], fingerprint: str, force: bool) -> list[str]:
    """Refuse a checkpoint of another config or other shards (unless ``force``); return warnings when forced."""
    problems = []
    saved = state.get("identity") or {}
    changed = sorted(key for key in set(saved) | set(identity) if saved.get(key) != identity.get(key))
    if changed:
        listed = ", ".join(f"{key}: {_short(saved.get(key))} → {_short(identity.get(key))}" for key in changed)
        problems.append(f"the config changed since step {state['step']} ({listed})")
    if state.get("fingerprint") != fingerprint:
        problems.append(
            f"the shards changed since step {state['step']} (manifest fingerprint {state.get('fingerprint')} → "
            f"{fingerprint})"
        )
    if problems and not force:
        raise CheckpointMismatch(
            "; ".join(problems) + ". Resuming would not continue the same run: use a new output folder, restore "
            "the old settings, or pass --force (force: true) to continue from this checkpoint anyway"
        )
    return [f"forced: {problem}" for problem in problems]


def _short(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else repr(value)


class _TiedWeightsNotice(logging.Filter):
    """accelerate warns on every save that tied embeddings were stored once; loading re-ties them (the exact
    resume tests compare every loss), so the warning is noise in the training log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Removed shared tensor" not in record.getMessage()


logging.getLogger("accelerate.utils.other").addFilter(_TiedWeightsNotice())


def save_checkpoint(accelerator, output: str | Path, step: int, state: dict[str, Any], keep_last: int) -> Path:
    """Write a checkpoint through ``step_N.partial`` → ``step_N`` (collective: every process calls it)."""
    final = step_dir(output, step)
    partial = final.with_name(final.name + ".partial")
    if accelerator.is_main_process:
        remove_owned(partial, record_of(output))
        partial.mkdir(parents=True)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(partial), safe_serialization=True)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        payload = {"version": STATE_VERSION, **state, "files": _file_sizes(partial)}
        (partial / STATE_FILE).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        _fsync_dir(partial)
        if final.exists():  # the same step saved again (a rerun that finished): replace it
            remove_owned(final, record_of(output))
        os.replace(partial, final)
        prune(output, keep_last)
    accelerator.wait_for_everyone()
    return final


def prune(output: str | Path, keep_last: int) -> list[Path]:
    """Remove all but the ``keep_last`` newest complete checkpoints and any stale ``.partial`` folders."""
    root = Path(output) / CHECKPOINTS
    complete = sorted(
        (int(m.group(1)), p) for p in root.iterdir() if (m := _NAME.match(p.name)) and read_state(p)[0] is not None
    )
    removed = [path for _step, path in complete[:-keep_last]]
    removed += [p for p in root.iterdir() if p.name.endswith(".partial")]
    if removed:
        record = record_of(output)
        for path in removed:
            remove_owned(path, record)
    return removed


def _fsync_dir(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())


class StopRequest:
    """SIGTERM/SIGINT set a flag; the loop checkpoints at the end of the current step and exits cleanly.

    A second SIGINT raises ``KeyboardInterrupt`` at once (an impatient Ctrl-C still works). Handlers are only
    installed from the main thread (Python's rule); elsewhere (a Prefect task thread) signals keep their
    default meaning and the flag stays unset.
    """

    def __init__(self) -> None:
        self.signal: str | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, number: int, _frame: Any) -> None:
        if self.signal is not None and number == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal = signal.Signals(number).name

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGTERM, signal.SIGINT):
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *_exc: Any) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()
