"""One run lock for every command that writes (issue 19 item 5).

Seen on main b7eca32: ``dedup``, ``tokenize`` and ``train`` took no lock (two concurrent ``dedup`` or ``tokenize``
on one output crashed with tracebacks; two ``train`` logged every step twice), kill -9 of ``dedup`` left a child
alive for 90 s, and after SIGTERM rank workers kept writing for 10-40 s after the lock was released. The
holder here is a subprocess that holds the lock until its stdin closes: no timing decides who wins.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from pipeline.lock import LOCK_NAME, RunDirError, check_free, hold
from tests.helpers.processes import descendants

ROOT = Path(__file__).parents[2]

HOLDER = """
import sys
from pipeline.lock import hold
with hold(sys.argv[1], sys.argv[2]):
    print("held", flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def held_by_another_process(folder: Path, command: str):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), command], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout.readline().strip() == b"held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def expected_refusal(holder: subprocess.Popen, command: str) -> str:
    return rf"is being written by pid {holder.pid} on {re.escape(socket.gethostname())} \({command}, started "


def _jsonl(path: Path, rows: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(3000)]
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(rows):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(60, 120)))
            handle.write(json.dumps({"id": f"{path.stem}-{i}", "text": text}) + "\n")
    return path


def cli_args(command: str, tmp_path: Path, output: Path) -> list[str]:
    """Arguments that reach the command's lock: every input it checks first exists."""
    if command == "dedup":
        return ["dedup", "--input", str(_jsonl(tmp_path / "d.jsonl", 5)), "--output", str(output), "--prefect", "off"]
    if command == "tokenize":
        from tests.helpers.tokenize import write_run

        write_run(tmp_path / "run", {"web": 10}, seed=1, files=1)
        return ["tokenize", "--input", str(tmp_path / "run"), "--output", str(output), "--vocab-size", "300"]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("A short note a person wrote about the weather.\n", encoding="utf-8")
    if command == "curate":
        recipe = str(ROOT / "configs" / "domain.yaml")
        return ["curate", recipe, "--input", str(docs), "--output", str(output), "--prefect", "off"]
    if command == "pipeline":
        recipe = tmp_path / "recipe.yaml"
        source = {"name": "d", "kind": "folder", "path": str(docs)}
        recipe.write_text(json.dumps({"name": "t", "output_dir": str(output), "sources": [source]}), encoding="utf-8")
        return ["pipeline", str(recipe), "--output", str(output)]
    raise AssertionError(command)


@pytest.mark.parametrize("command", ["dedup", "tokenize", "curate", "pipeline"])
def test_a_second_command_on_one_output_exits_2_naming_the_holder(tmp_path: Path, command: str) -> None:
    output = tmp_path / "out"
    args = cli_args(command, tmp_path, output)
    with held_by_another_process(output, command) as holder:
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and re.search(expected_refusal(holder, command), lines[0]), result.output
        assert sorted(p.name for p in output.iterdir()) == [LOCK_NAME]  # nothing written beside the lock


def test_train_ladder_and_ablate_take_the_lock(tmp_path: Path) -> None:
    """The library entry points (what the CLI, the flows and the deployments call) refuse a held folder before
    reading anything: no shards exist here, and the refusal names the holder, not the missing shards."""
    from tests.helpers.train import config
    from training.ablate import load_ablate_config, run_ablation
    from training.ladder import load_ladder_config, run_ladder
    from training.recipe import load_recipe
    from training.train import run_training

    output = tmp_path / "out"
    with held_by_another_process(output, "train") as holder:
        with pytest.raises(RunDirError, match=expected_refusal(holder, "train")):
            run_training(config(tmp_path / "no-shards", output))
        ladder = load_ladder_config({"shards": str(tmp_path / "no-shards"), "output": str(output)})
        with pytest.raises(RunDirError, match=expected_refusal(holder, "train")):
            run_ladder(ladder)
        recipe = load_recipe(ROOT / "configs" / "demo.yaml")
        with pytest.raises(RunDirError, match=expected_refusal(holder, "train")):
            run_ablation(recipe, output, load_ablate_config(recipe.ablate))
    assert not any(p.name != LOCK_NAME for p in output.iterdir())


def test_a_lock_whose_holder_was_killed_is_taken_over(tmp_path: Path) -> None:
    output = tmp_path / "out"
    with held_by_another_process(output, "tokenize") as holder, pytest.raises(RunDirError, match="tokenize"):
        check_free(output)
    # kill -9: the kernel dropped the flock; the file naming the dead holder is still there
    assert f'"pid": {holder.pid}' in (output / LOCK_NAME).read_text(encoding="utf-8")
    with hold(output, "dedup"):
        content = json.loads((output / LOCK_NAME).read_text(encoding="utf-8"))
        assert (content["pid"], content["command"]) == (os.getpid(), "dedup")
    assert not (output / LOCK_NAME).exists()


# ------------------------------------------------------------------- no process outlives the command


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (FileNotFoundError, IndexError, ValueError):
        return None


def _dedup_running(tmp_path: Path) -> tuple[subprocess.Popen, dict[int, int | None]]:
    """``tokenmill dedup`` on 4 files with 2 rank workers, once its pool workers run; ``(cli, {pid: parent})``."""
    data = tmp_path / "data"
    data.mkdir()
    for n in range(4):
        _jsonl(data / f"part{n}.jsonl", 4000, seed=n)
    command = [sys.executable, "-m", "flows.cli", "dedup", "--input", str(data), "--output", str(tmp_path / "out")]
    cli = subprocess.Popen(
        [*command, "--tasks", "4", "--workers", "2", "--prefect", "off"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    seen: dict[int, int | None] = {}
    deadline = time.monotonic() + 240
    while cli.poll() is None and time.monotonic() < deadline:
        for pid in descendants(cli.pid) - set(seen):
            seen[pid] = _parent(pid)
        if sum(parent not in (cli.pid, None) for parent in seen.values()) >= 2:  # pool workers (forkserver's)
            break
        time.sleep(0.05)
    assert cli.poll() is None, "dedup ended before its rank workers could be seen"
    return cli, seen


def _wait_gone(pids: set[int], seconds: float) -> set[int]:
    """The pids still alive after at most ``seconds`` (each waited on through its pidfd)."""
    deadline = time.monotonic() + seconds
    alive = set()
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(fd)
        if _alive(pid):
            alive.add(pid)
    return alive


def _kill_all(pids) -> None:
    for pid in pids:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_kill_9_of_dedup_leaves_no_process_alive_10_s_later(tmp_path: Path) -> None:
    cli, seen = _dedup_running(tmp_path)
    try:
        seen.update({pid: _parent(pid) for pid in descendants(cli.pid) - set(seen)})
        cli.kill()
        cli.wait()
        assert _wait_gone(set(seen), 10.0) == set(), "a process of the killed dedup outlived it by 10 s"
        check_free(tmp_path / "out")  # and none keeps its lock
    finally:
        _kill_all(seen)


def test_sigterm_of_dedup_stops_its_workers_before_the_lock_is_released(tmp_path: Path) -> None:
    """SIGTERM unwinds the command through its pool, which terminates and joins the rank workers: when the
    command has exited (and released its lock) no worker of it is left to write."""
    cli, seen = _dedup_running(tmp_path)
    try:
        seen.update({pid: _parent(pid) for pid in descendants(cli.pid) - set(seen)})
        cli.send_signal(signal.SIGTERM)
        assert cli.wait(timeout=120) != 0
        workers = {pid for pid, parent in seen.items() if parent not in (cli.pid, None)}
        assert workers and not {pid for pid in workers if _alive(pid)}, "rank workers outlived the lock"
        check_free(tmp_path / "out")
        assert _wait_gone(set(seen), 10.0) == set()  # the forkserver and resource tracker follow
    finally:
        _kill_all(seen)
